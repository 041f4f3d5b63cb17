//! `gpuex-agent exec-workload`: the step between the agent and a workload.
//! The agent (root) spawns it with a fixed environment (`PATH` and the
//! agent's marks) and a launch file (see [`super::launch_file`]) that holds
//! the lease's command and environment; it reads and deletes that file
//! first, joins the lease's cgroups, limits its processes, starts a new
//! session (so the workload leads its own session and process group), drops
//! to the pool user with no supplementary groups and no way back
//! (`no_new_privs`), and execs the workload in its place: `/bin/sh -c`
//! [`SHELL_SNIPPET`] with the lease's environment, or, for the sandbox,
//! bubblewrap with the fixed environment and everything else (the lease's
//! environment as `--setenv`) in an `--args` memfd. Nothing of the lease's
//! is ever in this process's environment or on a command line. All of it
//! through safe wrappers; the agent's crates forbid `unsafe`, so there is
//! no `pre_exec`.
//!
//! With `--address-space`, the workload's address space is limited
//! (RLIMIT_AS) just before the exec: the simulated backend's stand-in for a
//! slice's GPU memory, so a workload that allocates more than its slice
//! fails as it would on a GPU.
//!
//! With `--netns`, it joins the lease's own network namespace first (see
//! [`super::netns`]); bubblewrap then stays in it.
//!
//! With `--private-tmp`, it first moves into a mount namespace of its own in
//! which the host's world-writable folders (`/tmp`, `/var/tmp`, `/dev/shm`,
//! `/run/lock`, `/dev/mqueue`) are empty tmpfs of the workload's: what it
//! writes there no other tenant sees, and nothing of it is left on the host.

use super::launch_file::{consume, LaunchRequest, COMMAND_VAR, SHELL_SNIPPET};
use anyhow::{bail, Context};
use nix::mount::{mount, MsFlags};
use nix::sched::{setns, unshare, CloneFlags};
use nix::sys::resource::{setrlimit, Resource};
use nix::unistd::{setgid, setgroups, setsid, setuid, Gid, Uid};
use std::ffi::OsString;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

/// The host's world-writable folders, which a private mount namespace replaces.
pub const SHARED_WRITABLE: [&str; 5] = ["/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/dev/mqueue"];

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
    /// RLIMIT_AS of the workload, in bytes: on the simulated backend, the
    /// slice's GPU memory, which the host's memory stands in for.
    #[arg(long)]
    pub address_space: Option<u64>,
    /// The lease's working folder: give the workload private stand-ins for
    /// the host's world-writable folders, kept under it.
    #[arg(long)]
    pub private_tmp: Option<PathBuf>,
    /// A network namespace (`/run/netns/…`, the lease's own, see
    /// [`super::netns`]) to join while still root, before anything runs.
    #[arg(long)]
    pub netns: Option<PathBuf>,
    /// The 0600 file with the workload's command and environment, which
    /// this step reads and deletes before anything else.
    #[arg(long)]
    pub launch_file: Option<PathBuf>,
    /// Run the workload inside this bubblewrap; the arguments after `--` are
    /// bubblewrap's, up to the workload (which this step appends).
    #[arg(long, requires = "launch_file")]
    pub bwrap: Option<PathBuf>,
    /// Bubblewrap's arguments (with `--bwrap`), or, without a launch file, a
    /// program to run as it is with this step's own environment (the
    /// agent's start-up probe).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub program: Vec<OsString>,
}

/// What to exec once privileges are gone.
enum Target {
    /// The workload's shell, with the lease's environment.
    Shell(LaunchRequest),
    /// Bubblewrap with these arguments, then the workload's shell.
    Sandbox(PathBuf, Vec<OsString>, LaunchRequest),
    /// A program as it is (the probe).
    Program(Vec<OsString>),
}

/// Never returns on success: the workload replaces this process.
pub fn run(args: ExecArgs) -> anyhow::Result<()> {
    if args.uid == 0 || args.gid == 0 {
        bail!("refusing to run a workload as root");
    }
    // First, while nothing else has happened: the launch file is consumed
    // even when a later step fails.
    let target = match (&args.launch_file, args.bwrap) {
        (Some(file), None) if args.program.is_empty() => Target::Shell(consume(file)?),
        (Some(_), None) => bail!("a launch file carries the command: no program after it"),
        (Some(file), Some(bwrap)) => Target::Sandbox(bwrap, args.program, consume(file)?),
        (None, _) if args.program.is_empty() => bail!("no program to run"),
        (None, _) => Target::Program(args.program),
    };
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
    if let Some(ns) = &args.netns {
        join_netns(ns)?;
    }
    if let Some(workdir) = &args.private_tmp {
        private_tmp(workdir)?;
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
    // Last before the exec, so that only the workload (and bubblewrap, which
    // is small) lives under it, never this step's own work.
    if let Some(n) = args.address_space {
        setrlimit(Resource::RLIMIT_AS, n, n).context("RLIMIT_AS")?;
    }
    match target {
        Target::Shell(request) => {
            let err = std::process::Command::new("/bin/sh")
                .args(["-c", SHELL_SNIPPET])
                .env_clear()
                .envs(&request.env)
                .env(COMMAND_VAR, &request.command)
                .exec();
            Err(err).context("cannot run /bin/sh")
        }
        Target::Sandbox(bwrap, bwrap_args, request) => {
            let args_fd = sandbox_args(bwrap_args, &request)?;
            // Bubblewrap gets this step's own (fixed) environment; the lease's
            // is in the memfd, for the shell inside only.
            let own = ["PATH", crate::reaper::OWNER_VAR, crate::reaper::LEASE_VAR];
            let err = std::process::Command::new(&bwrap)
                .env_clear()
                .envs(std::env::vars_os().filter(|(k, _)| own.iter().any(|o| k == o)))
                .arg("--args")
                .arg(args_fd.as_raw_fd().to_string())
                .args(["--", "/bin/sh", "-c", SHELL_SNIPPET])
                .exec();
            Err(err).with_context(|| format!("cannot run {}", bwrap.display()))
        }
        Target::Program(program) => {
            let Some((program, rest)) = program.split_first() else {
                bail!("no program to run");
            };
            let err = std::process::Command::new(program).args(rest).exec();
            Err(err).with_context(|| format!("cannot run {}", program.to_string_lossy()))
        }
    }
}

/// A memfd (inherited by bubblewrap, which closes it once read) holding
/// `args`, then `--clearenv` and a `--setenv` for each of the lease's
/// variables and the command, NUL-separated as `--args` reads them.
fn sandbox_args(args: Vec<OsString>, request: &LaunchRequest) -> anyhow::Result<std::fs::File> {
    use nix::sys::memfd::{memfd_create, MemFdCreateFlag};
    use std::io::{Seek, Write};
    use std::os::unix::ffi::OsStrExt;
    let fd = memfd_create(c"gpuex-bwrap-args", MemFdCreateFlag::empty())
        .context("cannot make the sandbox's argument memfd")?;
    let mut file = std::fs::File::from(fd);
    let mut data = Vec::new();
    let mut push = |arg: &[u8]| {
        data.extend_from_slice(arg);
        data.push(0);
    };
    for a in &args {
        push(a.as_bytes());
    }
    push(b"--clearenv");
    let command = (COMMAND_VAR.to_string(), request.command.clone());
    for (name, value) in request.env.iter().chain([(&command.0, &command.1)]) {
        push(b"--setenv");
        push(name.as_bytes());
        push(value.as_bytes());
    }
    file.write_all(&data)?;
    file.rewind()?;
    Ok(file)
}

/// Join the lease's network namespace (its egress rules are already in it;
/// the workload, unprivileged there, cannot change them).
fn join_netns(ns: &Path) -> anyhow::Result<()> {
    let file = std::fs::File::open(ns)
        .with_context(|| format!("cannot open the network namespace {}", ns.display()))?;
    setns(&file, CloneFlags::CLONE_NEWNET)
        .with_context(|| format!("cannot join the network namespace {}", ns.display()))
}

/// A mount namespace of this process's own (still root), in which each of
/// [`SHARED_WRITABLE`] is an empty tmpfs (its pages count against the lease's
/// memory limit, and it goes when the workload's last process does). A
/// working folder under one of them (a spool in `/tmp`) is bound back in
/// place from a handle opened before it was covered.
fn private_tmp(workdir: &Path) -> anyhow::Result<()> {
    unshare(CloneFlags::CLONE_NEWNS).context("cannot make a mount namespace for the workload")?;
    // Mounts made here must not propagate back to the host's namespace.
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .context("cannot make the workload's mounts private")?;
    // Opened in the new namespace: a bind's source must be one of its mounts.
    let held = std::fs::File::open(workdir)
        .with_context(|| format!("cannot open {}", workdir.display()))?;
    for shared in SHARED_WRITABLE {
        if !Path::new(shared).is_dir() {
            continue;
        }
        mount(
            Some("tmpfs"),
            shared,
            Some("tmpfs"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
            Some("mode=1777"),
        )
        .with_context(|| format!("cannot put a private {shared} in place"))?;
    }
    if SHARED_WRITABLE.iter().any(|s| workdir.starts_with(s)) {
        std::fs::create_dir_all(workdir)
            .with_context(|| format!("cannot recreate {}", workdir.display()))?;
        let source = format!("/proc/self/fd/{}", held.as_raw_fd());
        mount(
            Some(source.as_str()),
            workdir,
            None::<&str>,
            MsFlags::MS_BIND,
            None::<&str>,
        )
        .with_context(|| format!("cannot bind {} back", workdir.display()))?;
    }
    Ok(())
}
