//! How a workload is started (ARCHITECTURE.md §13, §19): every launcher turns a
//! lease's command into one program, its arguments and a fixed environment
//! of its own, which [`crate::workload`] runs in the lease's working folder.
//! The lease's command and environment never pass through that program's
//! command line or environment: they go in a 0600 launch file (see
//! [`launch_file`]) that only the final exec's side reads.
//!
//! - `process` (trusted single-tenant hosts): `gpuex-agent exec-workload`
//!   joins the lease's cgroups, sets its rlimits, starts a session and drops
//!   to the lease's pool user before it execs `/bin/sh` (see [`exec`]); no
//!   `unsafe` `pre_exec` needed. No namespaces beyond a private `/tmp`: the
//!   workloads of different buyers share the host's view of processes and
//!   files, so this launcher is for hosts whose tenants trust each other.
//! - `sandbox`: the same, but what it execs is bubblewrap (unprivileged, in a
//!   user namespace of the pool user), which gives the command new PID, mount,
//!   IPC, UTS and network namespaces (a networked lease's is its own, made
//!   by the agent with its egress rules, see [`netns`], and joined by the
//!   exec helper before it drops privileges), the host
//!   read-only with the agent's state hidden, a private `/tmp`, and only the
//!   lease's GPU device nodes.
//! - `container`: `docker run` / `podman run` of the order's image with only
//!   the lease's GPUs, its CPU and memory, a read-only root, the working
//!   folder mounted at `/work` and its `outputs/` and `checkpoint/` at
//!   `/outputs` and `/checkpoint` (all on the lease's disk, [`crate::disk`]). The container is named after the lease, so
//!   it is removed by name when the lease ends or after a crash. A
//!   networked lease's container joins the lease's own network namespace
//!   under podman; docker refuses it. Podman gets
//!   the GPUs through a CDI spec the agent writes for the lease ([`cdi`]).
//!   Its rlimits are set from the agent's own (a runtime's defaults can
//!   exceed what the host lets the agent give, and runc then refuses).

pub mod cdi;
pub mod cgroup;
mod container;
pub mod egress;
pub mod exec;
pub mod image;
pub mod launch_file;
pub mod netns;
pub mod userns;

pub use container::{ContainerLauncher, ContainerRuntime};

use crate::config::LauncherKind;
use gpuex_wire::protocol::HostLimits;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use uuid::Uuid;

/// The most processes one lease may have (RLIMIT_NPROC of its pool user):
/// a fork bomb stops there, not at the host's limit.
pub const MAX_PROCESSES: u64 = 4096;

/// One GPU a lease holds, as the launchers need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseGpu {
    pub index: u32,
    pub uuid: String,
    /// The MIG instance's UUID and its GPU- and compute-instance ids.
    pub mig: Option<(String, Option<u32>, Option<u32>)>,
}

/// Everything a launcher needs to know about one workload.
#[derive(Debug, Clone)]
pub struct LaunchSpec<'a> {
    pub lease: Uuid,
    pub command: &'a str,
    /// The lease's working folder (mode 0700, owned by `user`).
    pub workdir: &'a Path,
    /// Host folders a sandbox hides (the agent's state).
    pub hide: &'a [PathBuf],
    /// The pool uid and gid the workload runs as.
    pub user: (u32, u32),
    pub gpus: &'a [LeaseGpu],
    pub limits: Option<HostLimits>,
    pub network: bool,
    pub image: Option<&'a str>,
    /// Where a container sees the lease's `checkpoint/` (default `/checkpoint`).
    pub checkpoint_path: Option<&'a str>,
    /// The lease's cgroups, already created with its limits.
    pub cgroups: &'a [PathBuf],
    /// The final exec's whole environment (checked with
    /// [`launch_file::check_lease_env`]); it goes in the launch file only.
    pub env: &'a BTreeMap<String, String>,
    /// Where the launch file goes (in the agent's 0700 spool).
    pub launch_file: &'a Path,
    /// The workload's address space in bytes (RLIMIT_AS): on the simulated
    /// backend, the slice's GPU memory, which the host's memory stands in
    /// for; `None` on real GPUs, whose partition limits their memory.
    pub address_space: Option<u64>,
}

/// The program to run and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    /// The program starts its own session (so it already leads its group).
    pub sets_session: bool,
    /// The program's whole environment, fixed by the launcher and never the
    /// lease's ([`crate::workload`] adds the agent's marks).
    pub env: BTreeMap<String, String>,
    /// The lease's command and environment, written before the program starts.
    pub launch: Option<launch_file::LaunchFile>,
    /// The image it runs, by ID (`sha256:…`), for the lease's record.
    pub image_id: Option<String>,
    /// The program hands a SIGTERM on to the workload itself (`podman run`
    /// to the container's init) and must live to relay its output and exit
    /// code: a notice signals it alone (a SIGKILL still takes everything).
    pub relays_signals: bool,
}

/// The `PATH` of the agent's helpers (never the lease's).
pub const HELPER_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The helpers' fixed environment: `PATH` alone.
fn helper_env() -> BTreeMap<String, String> {
    BTreeMap::from([("PATH".to_string(), HELPER_PATH.to_string())])
}

/// A way of starting workloads.
pub trait Launcher: Send + Sync {
    fn kind(&self) -> LauncherKind;
    /// The program that runs `spec`'s command, or why it cannot run here.
    fn plan(&self, spec: &LaunchSpec<'_>) -> Result<Plan, String>;
    /// The lease is over (or was left by a killed agent): remove what the
    /// launcher made outside the process tree. Processes are ended by the
    /// caller, by process group, marks and pool uid.
    fn end(&self, _lease: Uuid) {}
    /// What readies a container's image before the lease starts; `None` for
    /// launchers without images.
    fn images(&self) -> Option<image::Images> {
        None
    }
    /// The image an order without one runs in (`--default-image`).
    fn default_image(&self) -> Option<&str> {
        None
    }
    /// Who a lease's files belong to on the host: its pool uid and gid, or,
    /// in a container's user namespace, what they map to.
    fn host_owner(&self, user: (u32, u32), _network: bool) -> (u32, u32) {
        user
    }
}

/// How the agent runs itself again as the privilege-drop helper
/// (`exec-workload`): its binary, and the arguments that come before the
/// agent's own in it (`agent` when the `gpuex` binary carries the agent).
#[derive(Debug, Clone)]
pub struct SelfExec {
    pub exe: PathBuf,
    pub leading_args: Vec<OsString>,
}

impl SelfExec {
    /// A binary that is the agent itself (`gpuex-agent`).
    #[cfg(test)]
    pub fn binary(exe: impl Into<PathBuf>) -> SelfExec {
        SelfExec {
            exe: exe.into(),
            leading_args: Vec::new(),
        }
    }
}

/// How the agent was told to launch.
pub struct Options {
    /// This agent (the privilege-drop helper).
    pub agent_exe: SelfExec,
    /// The registries a container's image may come from (none listed: any).
    pub allowed_registries: Vec<String>,
    /// What a container runs when the order names no image.
    pub default_image: Option<String>,
    /// Networked leases' namespaces (see [`netns`]).
    pub networks: Arc<netns::LeaseNetworks>,
    /// Where the GPUs' device nodes are.
    pub dev_root: PathBuf,
    /// The pool's uids, which a container's user namespace maps as they are.
    pub uid_pool: (u32, u32),
    /// The agent's own state (pulls' auth files, the private images).
    pub state_dir: PathBuf,
}

/// The launcher for `kind`.
pub fn make(kind: LauncherKind, options: Options) -> Result<Box<dyn Launcher>, String> {
    let Options {
        agent_exe,
        allowed_registries,
        default_image,
        networks,
        dev_root,
        uid_pool,
        state_dir,
    } = options;
    Ok(match kind {
        LauncherKind::Process => Box::new(ProcessLauncher { agent_exe }),
        LauncherKind::Sandbox => {
            let bwrap = find_program("bwrap").ok_or(
                "the sandbox launcher needs bubblewrap (`apt-get install bubblewrap`)".to_string(),
            )?;
            Box::new(SandboxLauncher {
                agent_exe,
                bwrap,
                networks,
                dev_root,
            })
        }
        LauncherKind::Container => {
            let runtime = ContainerRuntime::find()
                .ok_or("the container launcher needs docker or podman on the PATH".to_string())?;
            // docker maps users per daemon (`userns-remap`), not per container.
            let userns = if runtime.podman {
                let mapping =
                    userns::allocate(Path::new("/etc/subuid"), Path::new("/etc/subgid"), uid_pool)?;
                Some(mapping)
            } else {
                None
            };
            let private_images = image::PrivateImages::load(state_dir.join("private-images.json"))?;
            Box::new(ContainerLauncher {
                runtime,
                cdi_dir: PathBuf::from(cdi::SPEC_DIR),
                auth_dir: state_dir.join("registry-auth"),
                private_images: Arc::new(private_images),
                allowed_registries,
                default_image,
                networks,
                dev_root,
                userns,
            })
        }
    })
}

/// `name` on the PATH (or the usual system folders).
pub fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .chain(["/usr/bin".into(), "/bin".into()])
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// `exec-workload --uid U --gid G --nproc N [--address-space B] [--cgroup C]…
/// --launch-file F`,
/// with the launch file that carries the command and environment.
fn exec_prefix(agent_exe: &SelfExec, spec: &LaunchSpec<'_>) -> Plan {
    let mut args = agent_exe.leading_args.clone();
    args.extend(
        [
            "exec-workload",
            "--uid",
            &spec.user.0.to_string(),
            "--gid",
            &spec.user.1.to_string(),
            "--nproc",
            &MAX_PROCESSES.to_string(),
        ]
        .map(OsString::from),
    );
    if let Some(bytes) = spec.address_space {
        args.extend(["--address-space".into(), bytes.to_string().into()]);
    }
    for cg in spec.cgroups {
        args.push("--cgroup".into());
        args.push(cg.into());
    }
    args.push("--launch-file".into());
    args.push(spec.launch_file.into());
    Plan {
        program: agent_exe.exe.clone(),
        args,
        sets_session: true,
        env: helper_env(),
        launch: Some(launch_file::request_file(
            spec.launch_file,
            spec.command,
            spec.env,
        )),
        image_id: None,
        relays_signals: false,
    }
}

fn check_user(spec: &LaunchSpec<'_>) -> Result<(), String> {
    let own = nix::unistd::getuid().as_raw();
    if spec.user.0 == 0 || spec.user.1 == 0 || spec.user.0 == own {
        return Err(format!(
            "uid {} is root or the agent's own: workloads never run as either",
            spec.user.0
        ));
    }
    Ok(())
}

/// An unprivileged pool user of its own, its own session, folder and limits.
pub struct ProcessLauncher {
    agent_exe: SelfExec,
}

impl Launcher for ProcessLauncher {
    fn kind(&self) -> LauncherKind {
        LauncherKind::Process
    }

    fn plan(&self, spec: &LaunchSpec<'_>) -> Result<Plan, String> {
        check_user(spec)?;
        let mut plan = exec_prefix(&self.agent_exe, spec);
        // The host's shared /tmp and the like become the lease's own.
        plan.args
            .extend(["--private-tmp".into(), spec.workdir.as_os_str().to_owned()]);
        Ok(plan)
    }
}

/// `process` inside bubblewrap.
pub struct SandboxLauncher {
    agent_exe: SelfExec,
    bwrap: PathBuf,
    /// Networked leases' namespaces, which the exec helper joins.
    networks: Arc<netns::LeaseNetworks>,
    /// Where the GPUs' device nodes are (`/dev`; tests use stand-ins).
    pub dev_root: PathBuf,
}

impl SandboxLauncher {
    /// bubblewrap's arguments for `spec`, up to the command.
    pub fn bwrap_args(spec: &LaunchSpec<'_>, dev_root: &Path) -> Vec<OsString> {
        let mut a: Vec<OsString> = Vec::new();
        let mut push =
            |items: &[&std::ffi::OsStr]| a.extend(items.iter().map(|s| s.to_os_string()));
        push(&[
            "--ro-bind".as_ref(),
            "/".as_ref(),
            "/".as_ref(),
            "--dev".as_ref(),
            "/dev".as_ref(),
            "--proc".as_ref(),
            "/proc".as_ref(),
            "--tmpfs".as_ref(),
            "/tmp".as_ref(),
            "--tmpfs".as_ref(),
            "/dev/shm".as_ref(),
            "--unshare-pid".as_ref(),
            "--unshare-ipc".as_ref(),
            "--unshare-uts".as_ref(),
            "--unshare-cgroup-try".as_ref(),
            "--hostname".as_ref(),
            "gpuex-workload".as_ref(),
            "--die-with-parent".as_ref(),
            "--new-session".as_ref(),
        ]);
        // A networked lease's namespace is the exec helper's already
        // (`--netns`, see [`netns`]): bubblewrap stays in it.
        if !spec.network {
            push(&["--unshare-net".as_ref()]);
        }
        // The agent's state (spool, every lease's folder) is an empty tmpfs
        // inside; only this lease's folder is mounted back, writable.
        for hidden in spec.hide {
            push(&["--tmpfs".as_ref(), hidden.as_os_str()]);
        }
        push(&[
            "--bind".as_ref(),
            spec.workdir.as_os_str(),
            spec.workdir.as_os_str(),
        ]);
        // …and the empty stand-ins are read-only: nothing written there
        // is mistaken for the agent's.
        for hidden in spec.hide {
            push(&["--remount-ro".as_ref(), hidden.as_os_str()]);
        }
        push(&["--chdir".as_ref(), spec.workdir.as_os_str()]);
        for node in gpu_device_nodes(spec.gpus, dev_root) {
            let inside = Path::new("/dev").join(node.strip_prefix(dev_root).unwrap_or(&node));
            push(&["--dev-bind".as_ref(), node.as_os_str(), inside.as_os_str()]);
        }
        a
    }
}

/// The device nodes a lease's workload needs: the driver's shared nodes, each
/// GPU's `/dev/nvidiaN` and, for MIG, the capability nodes of its GPU and
/// compute instance. Only nodes that exist (none on the simulated backend).
pub fn gpu_device_nodes(gpus: &[LeaseGpu], dev_root: &Path) -> Vec<PathBuf> {
    let mut nodes: Vec<PathBuf> = ["nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"]
        .iter()
        .map(|n| dev_root.join(n))
        .collect();
    for g in gpus {
        nodes.push(dev_root.join(format!("nvidia{}", g.index)));
        if let Some((_, Some(gi), ci)) = &g.mig {
            let caps = PathBuf::from(format!(
                "/proc/driver/nvidia/capabilities/gpu{}/mig/gi{gi}",
                g.index
            ));
            let mut files = vec![caps.join("access")];
            if let Some(ci) = ci {
                files.push(caps.join(format!("ci{ci}/access")));
            }
            for f in files {
                if let Some(minor) = std::fs::read_to_string(&f).ok().and_then(|t| {
                    t.lines()
                        .find_map(|l| l.strip_prefix("DeviceFileMinor:"))
                        .and_then(|m| m.trim().parse::<u32>().ok())
                }) {
                    nodes.push(dev_root.join(format!("nvidia-caps/nvidia-cap{minor}")));
                }
            }
        }
    }
    nodes.retain(|n| n.exists());
    nodes
}

impl Launcher for SandboxLauncher {
    fn kind(&self) -> LauncherKind {
        LauncherKind::Sandbox
    }

    fn plan(&self, spec: &LaunchSpec<'_>) -> Result<Plan, String> {
        check_user(spec)?;
        let mut plan = exec_prefix(&self.agent_exe, spec);
        if spec.network {
            let ns = self.networks.create(spec.lease)?;
            plan.args.extend(["--netns".into(), ns.into()]);
        }
        // The helper appends the environment and the final `/bin/sh` and
        // hands bubblewrap all of it through `--args` (see [`exec`]).
        plan.args
            .extend(["--bwrap".into(), self.bwrap.clone().into(), "--".into()]);
        plan.args
            .extend(SandboxLauncher::bwrap_args(spec, &self.dev_root));
        Ok(plan)
    }

    fn end(&self, lease: Uuid) {
        self.networks.remove(lease);
    }
}

#[cfg(test)]
mod tests;
