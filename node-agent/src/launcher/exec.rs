//! `gpuex-agent exec-workload`: the step between the agent and a workload.
//! The agent (root) spawns it with the lease's environment only; it joins
//! the lease's cgroups, limits its processes, starts a new session (so the
//! workload leads its own session and process group), drops to the pool
//! user with no supplementary groups and no way back (`no_new_privs`), and
//! execs the workload in its place. All of it through safe wrappers; the
//! agent's crates forbid `unsafe`, so there is no `pre_exec`.

use anyhow::{bail, Context};
use nix::sys::resource::{setrlimit, Resource};
use nix::unistd::{setgid, setgroups, setsid, setuid, Gid, Uid};
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct ExecArgs {
    /// The pool uid to run as (never 0).
    #[arg(long)]
    pub uid: u32,
    /// The pool gid to run as (never 0).
    #[arg(long)]
    pub gid: u32,
    /// A cgroup folder to join before dropping privileges.
    #[arg(long)]
    pub cgroup: Vec<PathBuf>,
    /// RLIMIT_NPROC of the pool user.
    #[arg(long)]
    pub nproc: Option<u64>,
    /// The program and its arguments.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    pub program: Vec<OsString>,
}

/// Never returns on success: the workload replaces this process.
pub fn run(args: ExecArgs) -> anyhow::Result<()> {
    if args.uid == 0 || args.gid == 0 {
        bail!("refusing to run a workload as root");
    }
    let pid = std::process::id().to_string();
    for cg in &args.cgroup {
        let procs = cg.join("cgroup.procs");
        std::fs::write(&procs, &pid).with_context(|| format!("cannot join {}", procs.display()))?;
    }
    // No core dumps: a dump of a tenant's process is its data, on the host.
    setrlimit(Resource::RLIMIT_CORE, 0, 0).context("RLIMIT_CORE")?;
    if let Some(n) = args.nproc {
        setrlimit(Resource::RLIMIT_NPROC, n, n).context("RLIMIT_NPROC")?;
    }
    setsid().context("setsid")?;
    let gid = Gid::from_raw(args.gid);
    setgroups(&[gid]).context("setgroups")?;
    setgid(gid).context("setgid")?;
    setuid(Uid::from_raw(args.uid)).context("setuid")?;
    if nix::unistd::getuid().is_root() || nix::unistd::geteuid().is_root() {
        bail!("still root after setuid");
    }
    if setuid(Uid::from_raw(0)).is_ok() {
        bail!("could regain root after dropping it");
    }
    nix::sys::prctl::set_no_new_privs().context("no_new_privs")?;
    let Some((program, rest)) = args.program.split_first() else {
        bail!("no program to run");
    };
    let err = std::process::Command::new(program).args(rest).exec();
    Err(err).with_context(|| format!("cannot run {}", program.to_string_lossy()))
}
