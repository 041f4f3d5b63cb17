//! The gpuex node agent (ARCHITECTURE.md §7), run by the `gpuex-agent`
//! binary and by `gpuex agent` (the demo's agents: one build of the
//! `gpuex` binary carries them, so a fresh demo compiles no second crate
//! graph with the agent's own features).
//!
//! It registers this node's GPUs with a gpuex server, heartbeats every few
//! seconds with DCGM-named metrics, carries out the leases the server assigns
//! (MIG instances, MPS shares, whole GPUs), runs each lease's command, meters
//! usage into a crash-safe spool and serves its own `/metrics`.
//!
//! HTTP is plain `http://` through hyper (no TLS stack to compile); put TLS in
//! front of the server when the link leaves the machine room.

mod agent;
mod artifacts;
mod backend;
mod checkpoint;
mod client;
mod config;
mod disk;
mod exporter;
mod launcher;
mod outputs;
mod reaper;
mod slice;
mod spool;
mod workload;

use anyhow::{bail, Context};
use backend::nvml::NvmlBackend;
use backend::simulated::{Fleet, SimulatedBackend};
use backend::{system_hostname, GpuBackend};
use clap::Parser;
use config::{Backend, Cli, Command, LauncherKind, RunArgs};
use launcher::SelfExec;
use std::ffi::OsString;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

/// The exit status of an agent whose node token the server refused (401:
/// revoked, or its node deleted): restarting it with the same token is
/// pointless.
const EXIT_TOKEN_REFUSED: u8 = 3;

/// Run the agent on `args` (the program name first, as `std::env::args_os`
/// gives them). `leading_args` are what comes between this binary and the
/// agent's own arguments when it runs itself again: none for `gpuex-agent`,
/// `agent` for `gpuex agent`.
pub fn run_from(args: Vec<OsString>, leading_args: Vec<OsString>) -> anyhow::Result<ExitCode> {
    let cli = Cli::parse_from(args);
    if let Some(Command::ExecWorkload(args)) = cli.command {
        // The step between the agent and a workload: no runtime, no backend.
        return launcher::exec::run(args).map(|()| ExitCode::SUCCESS);
    }
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(log_level())
        .init();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let backend = open_backend(&cli.run)?;
        match cli.command {
            Some(Command::Probe) => probe(backend).map(|()| ExitCode::SUCCESS),
            Some(Command::ExecWorkload(_)) => Ok(ExitCode::SUCCESS),
            None => run(cli.run, backend, leading_args).await,
        }
    })
}

fn log_level() -> tracing::Level {
    std::env::var("GPUEX_AGENT_LOG")
        .ok()
        .and_then(|l| l.parse().ok())
        .unwrap_or(tracing::Level::INFO)
}

fn open_backend(args: &RunArgs) -> anyhow::Result<Box<dyn GpuBackend>> {
    Ok(match args.backend {
        Backend::Nvml => Box::new(NvmlBackend::open(args.hostname.clone())),
        Backend::Simulated => {
            let Some(path) = &args.fleet else {
                bail!("--backend simulated needs --fleet FILE.toml");
            };
            let fleet = Fleet::load(path)?;
            let hostname = args
                .hostname
                .clone()
                .or_else(|| fleet.hostname.clone())
                .unwrap_or_else(system_hostname);
            Box::new(SimulatedBackend::new(fleet, hostname))
        }
    })
}

/// Print the inventory and one sample as JSON. Reads only.
fn probe(mut backend: Box<dyn GpuBackend>) -> anyhow::Result<()> {
    let inventory = backend.inventory()?;
    // NVML utilization needs a moment between samples to mean anything.
    let _ = backend.sample();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let metrics = backend.sample();
    let fields_present: Vec<usize> = metrics.iter().map(|m| m.fields.present()).collect();
    let out = serde_json::json!({
        "backend": backend.kind(),
        "hostname": inventory.hostname,
        "host": inventory.host,
        "gpus": inventory.gpus,
        "metrics": metrics,
        "fields_present": fields_present,
    });
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

/// The node token: from `--token-file`, else `GPUEX_AGENT_TOKEN`; never
/// from the command line, which every user of the host can read in `/proc`.
fn node_token(args: &RunArgs) -> anyhow::Result<String> {
    if let Some(path) = &args.token_file {
        let text = read_secret_file(path)?;
        let token = text.trim().to_string();
        if token.is_empty() {
            bail!("the token file {} is empty", path.display());
        }
        return Ok(token);
    }
    match std::env::var("GPUEX_AGENT_TOKEN") {
        Ok(t) if !t.trim().is_empty() => Ok(t.trim().to_string()),
        _ => bail!("the node token is needed: --token-file FILE or GPUEX_AGENT_TOKEN"),
    }
}

/// A token or key file's text. It must be 0600: one that others may read
/// or write is tightened when it is the agent's own, and refused otherwise
/// (whoever owns it decides who reads it; the agent does not guess).
fn read_secret_file(path: &std::path::Path) -> anyhow::Result<String> {
    use std::io::Read;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let mut file = std::fs::File::open(path)
        .with_context(|| format!("cannot read the token file {}", path.display()))?;
    let meta = file.metadata()?;
    let mode = meta.mode() & 0o7777;
    if mode & 0o077 != 0 {
        let euid = nix::unistd::geteuid().as_raw();
        if meta.uid() != euid {
            bail!(
                "the token file {} is mode {mode:o}, open to other users, and belongs to uid {} \
                 (not the agent's {euid}): make it 0600 (chmod 600 {})",
                path.display(),
                meta.uid(),
                path.display()
            );
        }
        // On the open file: the one checked is the one changed.
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .with_context(|| format!("cannot make the token file {} 0600", path.display()))?;
        tracing::warn!(
            file = %path.display(),
            "the token file was mode {mode:o}, open to other users: made it 600"
        );
    }
    let mut text = String::new();
    file.read_to_string(&mut text)
        .with_context(|| format!("cannot read the token file {}", path.display()))?;
    Ok(text)
}

/// Where the leases' folders go: `--work-dir`, else `<spool>-work` beside
/// the spool. Never inside the spool, which is the agent's alone (0700)
/// and which no workload could reach.
fn work_dir(args: &RunArgs) -> anyhow::Result<std::path::PathBuf> {
    let spool = std::path::absolute(&args.spool)
        .with_context(|| format!("cannot resolve the spool {}", args.spool.display()))?;
    let work = match &args.work_dir {
        Some(w) => std::path::absolute(w)
            .with_context(|| format!("cannot resolve --work-dir {}", w.display()))?,
        None => {
            let Some(name) = spool.file_name() else {
                bail!(
                    "the spool {} has no name to put `-work` after: give --work-dir",
                    spool.display()
                );
            };
            let mut name = name.to_os_string();
            name.push("-work");
            spool.with_file_name(name)
        }
    };
    if work.starts_with(&spool) {
        bail!(
            "--work-dir {} is inside the spool {}, which is the agent's alone (0700) and which \
             workloads cannot reach: put it outside",
            work.display(),
            spool.display()
        );
    }
    Ok(work)
}

/// `--launcher`, or the default: `process` on the simulated backend,
/// `sandbox` on nvml where bubblewrap is installed.
fn launcher_kind(args: &RunArgs) -> LauncherKind {
    args.launcher.unwrap_or(match args.backend {
        Backend::Simulated => LauncherKind::Process,
        Backend::Nvml if launcher::find_program("bwrap").is_some() => LauncherKind::Sandbox,
        Backend::Nvml => LauncherKind::Process,
    })
}

/// Whether bubblewrap can make its namespaces here as a pool user.
fn probe_sandbox(agent: &SelfExec, uid: u32) -> anyhow::Result<()> {
    let bwrap = launcher::find_program("bwrap").context("bubblewrap (bwrap) is not installed")?;
    let out = std::process::Command::new(&agent.exe)
        .args(&agent.leading_args)
        .args([
            "exec-workload",
            "--uid",
            &uid.to_string(),
            "--gid",
            &uid.to_string(),
            "--",
        ])
        .arg(bwrap)
        .args(["--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"])
        .args([
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-net",
            "--",
            "/bin/true",
        ])
        .env_clear()
        .current_dir("/")
        .output()
        .context("cannot run the sandbox probe")?;
    if !out.status.success() {
        bail!(
            "bubblewrap cannot make its namespaces here as uid {uid} (unprivileged user namespaces off?): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

async fn run(
    args: RunArgs,
    backend: Box<dyn GpuBackend>,
    leading_args: Vec<OsString>,
) -> anyhow::Result<ExitCode> {
    let shutdown = shutdown_signal();
    let Some(server) = &args.server else {
        bail!("--server is required (or GPUEX_AGENT_SERVER)");
    };
    let token = node_token(&args)?;
    let client = client::ApiClient::new(server, &token).map_err(anyhow::Error::msg)?;
    let kind = launcher_kind(&args);
    if !nix::unistd::geteuid().is_root() {
        bail!(
            "the {kind:?} launcher runs workloads as the pool's users (--uid-pool), which needs \
             root; run the agent as root (see the README's launchers section)"
        );
    }
    let agent_exe = SelfExec {
        exe: std::env::current_exe().context("cannot find the agent's own binary")?,
        leading_args,
    };
    if kind == LauncherKind::Sandbox {
        probe_sandbox(&agent_exe, args.uid_pool.0)?;
    }
    if let Some(image) = &args.default_image {
        if kind != LauncherKind::Container {
            bail!("--default-image is for the container launcher (this agent runs {kind:?})");
        }
        launcher::image::check_allowed(image, &args.allow_registries)
            .map_err(|why| anyhow::anyhow!("--default-image {image}: {why}"))?;
    }
    let networks = lease_networks(&args, server, kind);
    let options = launcher::Options {
        agent_exe,
        allowed_registries: args.allow_registries.clone(),
        default_image: args.default_image.clone(),
        networks,
        dev_root: args.dev_root.clone(),
        uid_pool: args.uid_pool,
        state_dir: args.spool.clone(),
    };
    let launcher = launcher::make(kind, options).map_err(anyhow::Error::msg)?;
    tracing::info!(launcher = ?kind, uid_pool = ?args.uid_pool, "workloads run through the {kind:?} launcher");
    if kind == LauncherKind::Process {
        tracing::warn!(
            "the process launcher is for trusted single-tenant hosts: workloads share the \
             host's view of processes and files; use --launcher sandbox or container for strangers"
        );
    }
    if args.disk_quota_mib > 0 {
        disk::supported().map_err(|why| {
            anyhow::anyhow!("{why}: lease disk quotas need it (--disk-quota-mib 0 turns them off)")
        })?;
    }
    let snapshot = Arc::new(Mutex::new(exporter::Snapshot::default()));
    if let Some(addr) = args.metrics_listen {
        let local = exporter::serve(addr, snapshot.clone())
            .await
            .with_context(|| format!("cannot serve /metrics on {addr}"))?;
        tracing::info!("serving /metrics on http://{local}/metrics");
    }
    let cfg = agent::AgentConfig {
        heartbeat_interval: args.heartbeat_interval,
        usage_interval: args.usage_interval,
        node_timeout: args.node_timeout,
        stop_grace: args.stop_grace,
        state_dir: args.spool.clone(),
        work_dir: work_dir(&args)?,
        uid_pool: args.uid_pool,
        disk_quota_mib: args.disk_quota_mib,
        outputs_interval: args.outputs_interval,
        artifact_max_bytes: args.artifact_max_bytes,
        artifact_allow_private: args.artifact_allow_private,
    };
    let agent = agent::Agent::new(cfg, client, backend, launcher, snapshot)
        .with_context(|| format!("cannot start with the spool in {}", args.spool.display()))?;
    Ok(match agent.run(shutdown).await {
        agent::Outcome::Stopped => ExitCode::SUCCESS,
        agent::Outcome::TokenRefused => ExitCode::from(EXIT_TOKEN_REFUSED),
    })
}

/// Networked leases' namespaces and egress policy (ARCHITECTURE.md §21), for the
/// launchers with namespaces; the `process` launcher gives none.
fn lease_networks(
    args: &RunArgs,
    server: &str,
    kind: LauncherKind,
) -> Arc<launcher::netns::LeaseNetworks> {
    use launcher::{egress, netns::LeaseNetworks};
    if kind == LauncherKind::Process {
        return Arc::new(LeaseNetworks::unavailable(
            "the process launcher gives workloads no network namespace",
        ));
    }
    let policy = egress::EgressPolicy {
        deny: args.egress_deny.clone(),
        allow: args.egress_allow.clone(),
        server: egress::server_addrs(server),
        resolvers: egress::resolvers(
            &std::fs::read_to_string("/etc/resolv.conf").unwrap_or_default(),
        ),
    };
    Arc::new(LeaseNetworks::start(
        args.lease_net_pool,
        policy,
        &args.spool,
    ))
}

/// SIGTERM or SIGINT. The handlers are installed now, not when the future is
/// first polled: `run` polls it only after recovering the last run's leases,
/// and a signal in that window would otherwise kill the agent halfway through
/// unmounting their disks. Once installed, a signal waits for `run` to notice.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{signal, SignalKind};
    let handlers = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    );
    async move {
        match handlers {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            _ => std::future::pending().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_args(args: &[&str]) -> RunArgs {
        Cli::parse_from(["gpuex-agent"].iter().chain(args)).run
    }

    #[test]
    fn the_leases_folders_go_beside_the_spool_and_never_inside_it() {
        let args = run_args(&["--spool", "/var/lib/gpuex/spool"]);
        assert_eq!(
            work_dir(&args).unwrap(),
            std::path::PathBuf::from("/var/lib/gpuex/spool-work")
        );
        let args = run_args(&["--spool", "/srv/a", "--work-dir", "/srv/work"]);
        assert_eq!(
            work_dir(&args).unwrap(),
            std::path::PathBuf::from("/srv/work")
        );
        let args = run_args(&["--spool", "/srv/a", "--work-dir", "/srv/a/work"]);
        let err = work_dir(&args).unwrap_err().to_string();
        assert!(err.contains("is inside the spool /srv/a"), "{err}");
    }
}
