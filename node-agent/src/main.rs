//! `gpuex-agent`: the gpuex node agent (DESIGN §7).
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
mod client;
mod config;
mod exporter;
mod launcher;
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
use std::sync::{Arc, Mutex};

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    if let Some(Command::ExecWorkload(args)) = cli.command {
        // The step between the agent and a workload: no runtime, no backend.
        return launcher::exec::run(args);
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
            Some(Command::Probe) => probe(backend),
            Some(Command::ExecWorkload(_)) => Ok(()),
            None => run(cli.run, backend).await,
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
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the token file {}", path.display()))?;
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
fn probe_sandbox(exe: &std::path::Path, uid: u32) -> anyhow::Result<()> {
    let bwrap = launcher::find_program("bwrap").context("bubblewrap (bwrap) is not installed")?;
    let out = std::process::Command::new(exe)
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

async fn run(args: RunArgs, backend: Box<dyn GpuBackend>) -> anyhow::Result<()> {
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
    let exe = std::env::current_exe().context("cannot find the agent's own binary")?;
    if kind == LauncherKind::Sandbox {
        probe_sandbox(&exe, args.uid_pool.0)?;
    }
    let launcher = launcher::make(kind, exe).map_err(anyhow::Error::msg)?;
    tracing::info!(launcher = ?kind, uid_pool = ?args.uid_pool, "workloads run through the {kind:?} launcher");
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
        work_dir: args
            .work_dir
            .clone()
            .unwrap_or_else(|| args.spool.join("work")),
        uid_pool: args.uid_pool,
        artifact_max_bytes: args.artifact_max_bytes,
    };
    let agent = agent::Agent::new(cfg, client, backend, launcher, snapshot)
        .with_context(|| format!("cannot start with the spool in {}", args.spool.display()))?;
    agent.run(shutdown_signal()).await;
    Ok(())
}

/// SIGTERM or SIGINT.
async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) {
        (Ok(mut term), Ok(mut int)) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        }
        _ => std::future::pending().await,
    }
}
