//! Command line and environment (`GPUEX_AGENT_*`) settings.

use clap::{Parser, Subcommand, ValueEnum};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// The gpuex node agent: registers this node's GPUs with a gpuex server,
/// carries out its leases (MIG slices, MPS shares, whole GPUs), runs and
/// meters the workloads.
#[derive(Debug, Parser)]
#[command(name = "gpuex-agent", version)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the backend's inventory and one metrics sample as JSON, then exit.
    /// Read-only: creates nothing and changes no GPU setting.
    Probe,
    /// Internal: what the agent runs a workload through. Joins the lease's
    /// cgroups, sets its limits, starts a session, drops to `uid`/`gid` and
    /// execs PROGRAM (see `launcher`).
    #[command(hide = true)]
    ExecWorkload(crate::launcher::exec::ExecArgs),
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Base URL of the gpuex server (plain `http://`; put TLS in front of the server).
    #[arg(long, env = "GPUEX_AGENT_SERVER")]
    pub server: Option<String>,
    /// A file holding the node token shown once by `POST /v1/nodes` (mode
    /// 0600: the agent tightens a wider one it owns and refuses one it does
    /// not). The token never goes on the command line, where every user of
    /// the host can read it; `GPUEX_AGENT_TOKEN` is the other way in.
    #[arg(long, env = "GPUEX_AGENT_TOKEN_FILE")]
    pub token_file: Option<PathBuf>,
    /// How workloads run (ARCHITECTURE.md §13); default `process` on the simulated
    /// backend, `sandbox` on nvml where bubblewrap is installed. `process` is
    /// for trusted single-tenant hosts only: its workloads share the host's
    /// view of processes and files; strangers' workloads need `sandbox` or
    /// `container`.
    #[arg(long, env = "GPUEX_AGENT_LAUNCHER", value_enum)]
    pub launcher: Option<LauncherKind>,
    /// The registries a container's image may come from (`nvcr.io`,
    /// `localhost`, `127.0.0.1:5000`; Docker Hub is `docker.io`), repeated or
    /// comma-separated; none listed: any. An image from another fails its
    /// lease, naming its registry.
    #[arg(
        long = "allow-registry",
        env = "GPUEX_AGENT_ALLOW_REGISTRIES",
        value_delimiter = ','
    )]
    pub allow_registries: Vec<String>,
    /// The image an order without one runs in under the container
    /// launcher (e.g. a CUDA base image); without it such orders fail,
    /// saying so. It must come from an allowed registry.
    #[arg(long, env = "GPUEX_AGENT_DEFAULT_IMAGE")]
    pub default_image: Option<String>,
    /// The block each networked lease's /30 comes from (ARCHITECTURE.md §21: one
    /// veth pair per lease, the host side's address and the lease's); its
    /// traffic leaves the host masqueraded. Must be this agent's alone.
    #[arg(long, env = "GPUEX_AGENT_LEASE_NET_POOL", value_parser = crate::launcher::egress::parse_pool, default_value = "10.251.0.0/16")]
    pub lease_net_pool: ipnet::Ipv4Net,
    /// More ranges a networked lease may not reach (`CIDR,…`), beside the
    /// default ones (private, CGNAT, link-local and metadata, loopback,
    /// multicast, reserved; the host and the server).
    #[arg(long, env = "GPUEX_AGENT_EGRESS_DENY", value_parser = crate::launcher::egress::parse_cidr, value_delimiter = ',')]
    pub egress_deny: Vec<ipnet::IpNet>,
    /// Exceptions to the default denial of private ranges (`CIDR,…`), e.g.
    /// the provider's own package mirror. Never the host or the server.
    #[arg(long, env = "GPUEX_AGENT_EGRESS_ALLOW", value_parser = crate::launcher::egress::parse_cidr, value_delimiter = ',')]
    pub egress_allow: Vec<ipnet::IpNet>,
    /// The uids (and same-numbered gids) workloads run as, `FIRST-LAST`: one
    /// per running lease, never root nor the agent's own. The range must be
    /// this agent's alone and hold no other users (see the README).
    #[arg(long, env = "GPUEX_AGENT_UID_POOL", value_parser = parse_uid_pool, default_value = "61000-61999")]
    pub uid_pool: (u32, u32),
    /// Where the leases' working folders go, outside the spool (default:
    /// `<spool>-work` beside it); every folder above it must be traversable
    /// by others.
    #[arg(long, env = "GPUEX_AGENT_WORK_DIR")]
    pub work_dir: Option<PathBuf>,
    /// Each lease's disk quota in MiB: its working folder, `outputs/` and
    /// `checkpoint/` are one ext4 file system of this size, loop-mounted
    /// (sparse: it takes only what is written). Filling it ends the lease
    /// `disk_quota`. 0 turns quotas off (plain folders), for hosts without
    /// loop devices.
    #[arg(long, env = "GPUEX_AGENT_DISK_QUOTA_MIB", default_value_t = 10_240)]
    pub disk_quota_mib: u64,
    /// How often a running lease's changed `outputs/` files are sent to the
    /// server (a lost node's buyer keeps what the last round sent); they
    /// are sent a last time when the lease ends.
    #[arg(long, env = "GPUEX_AGENT_OUTPUTS_INTERVAL", value_parser = parse_duration, default_value = "60s")]
    pub outputs_interval: Duration,
    /// Where the GPUs' device nodes are; tests point it at `mknod`
    /// stand-ins.
    #[arg(
        long,
        env = "GPUEX_AGENT_DEV_ROOT",
        default_value = "/dev",
        hide = true
    )]
    pub dev_root: PathBuf,
    /// The most an artifact may weigh, in bytes.
    #[arg(long, env = "GPUEX_AGENT_ARTIFACT_MAX_BYTES", default_value_t = 4 << 30)]
    pub artifact_max_bytes: u64,
    /// Let artifacts come from loopback, private, link-local and other
    /// internal addresses (ARCHITECTURE.md §19). Off, an artifact URL whose host
    /// resolves to any of them fails its lease; on only for the demo and
    /// tests, whose artifacts are served on 127.0.0.1.
    #[arg(long, env = "GPUEX_AGENT_ARTIFACT_ALLOW_PRIVATE")]
    pub artifact_allow_private: bool,
    /// Where the GPUs come from.
    #[arg(
        long,
        env = "GPUEX_AGENT_BACKEND",
        value_enum,
        default_value = "nvml",
        global = true
    )]
    pub backend: Backend,
    /// The fleet TOML of the simulated backend.
    #[arg(long, env = "GPUEX_AGENT_FLEET", global = true)]
    pub fleet: Option<PathBuf>,
    /// Host name to register (default: the fleet's, else the machine's).
    #[arg(long, env = "GPUEX_AGENT_HOSTNAME", global = true)]
    pub hostname: Option<String>,
    /// Directory of the usage spool and the agent's persisted state (made
    /// 0700, its files 0600).
    #[arg(long, env = "GPUEX_AGENT_SPOOL", default_value = "./gpuex-agent-spool")]
    pub spool: PathBuf,
    /// Serve `/metrics` (dcgm-exporter format) on this address, e.g. 0.0.0.0:9400.
    #[arg(long, env = "GPUEX_AGENT_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,
    /// Seconds between heartbeats until the server says otherwise.
    #[arg(long, env = "GPUEX_AGENT_HEARTBEAT_INTERVAL", value_parser = parse_duration, default_value = "5s")]
    pub heartbeat_interval: Duration,
    /// How often usage is metered into a batch.
    #[arg(long, env = "GPUEX_AGENT_USAGE_INTERVAL", value_parser = parse_duration, default_value = "10s")]
    pub usage_interval: Duration,
    /// Without the server this long, stop the workloads and register again.
    #[arg(long, env = "GPUEX_AGENT_NODE_TIMEOUT", value_parser = parse_duration, default_value = "30s")]
    pub node_timeout: Duration,
    /// Grace between SIGTERM and SIGKILL when a lease is stopped (not preempted).
    #[arg(long, env = "GPUEX_AGENT_STOP_GRACE", value_parser = parse_duration, default_value = "10s")]
    pub stop_grace: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LauncherKind {
    /// An unprivileged pool user, its own session, folder and limits; for
    /// trusted single-tenant hosts only (no namespaces but a private /tmp).
    Process,
    /// `process` inside bubblewrap: own PID, mount, IPC, UTS (and network) namespaces.
    Sandbox,
    /// The order's image under docker or podman.
    Container,
}

/// `61000-61999`: at least one uid, none of them root.
pub fn parse_uid_pool(s: &str) -> Result<(u32, u32), String> {
    let (a, b) = s
        .split_once('-')
        .ok_or_else(|| format!("`{s}`: use FIRST-LAST, e.g. 61000-61999"))?;
    let first: u32 = a
        .trim()
        .parse()
        .map_err(|_| format!("`{a}` is not a uid"))?;
    let last: u32 = b
        .trim()
        .parse()
        .map_err(|_| format!("`{b}` is not a uid"))?;
    if first == 0 || last < first || last > 4_000_000_000 {
        return Err(format!("`{s}`: FIRST must be above 0 and at most LAST"));
    }
    Ok((first, last))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    Nvml,
    Simulated,
}

/// `250ms`, `5s`, `2m`, `1h`, or bare seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a duration"))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "" | "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(format!("`{s}`: use ms, s, m or h")),
    };
    if !(0.0..=1e9).contains(&secs) {
        return Err(format!("`{s}` is out of range"));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_accept_the_usual_suffixes() {
        assert_eq!(parse_duration("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("30"), Ok(Duration::from_secs(30)));
        assert!(parse_duration("5 parsecs").is_err());
    }

    #[test]
    fn a_uid_pool_is_a_range_without_root() {
        assert_eq!(parse_uid_pool("61000-61999"), Ok((61000, 61999)));
        assert!(parse_uid_pool("0-10").is_err());
        assert!(parse_uid_pool("10-5").is_err());
        assert!(parse_uid_pool("61000").is_err());
    }

    #[test]
    fn the_cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
