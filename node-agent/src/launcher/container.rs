//! The `container` launcher: `podman run` (or `docker run`) of the order's
//! image, confined as the module above describes.

use super::{
    cdi, check_user, find_program, helper_env, image, launch_file, netns, userns, LaunchSpec,
    Launcher, Plan, MAX_PROCESSES,
};
use crate::config::LauncherKind;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use uuid::Uuid;

/// docker or podman.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerRuntime {
    pub program: PathBuf,
    /// podman takes GPUs as CDI names; docker as `--gpus device=UUID`.
    pub podman: bool,
}

impl ContainerRuntime {
    pub fn find() -> Option<ContainerRuntime> {
        if let Some(program) = find_program("podman") {
            return Some(ContainerRuntime {
                program,
                podman: true,
            });
        }
        find_program("docker").map(|program| ContainerRuntime {
            program,
            podman: false,
        })
    }
}

/// What the container client takes from the agent's own environment (how
/// the provider configured it): its daemon, its configuration files.
const CONTAINER_CLIENT_ENV: [&str; 10] = [
    "HOME",
    "XDG_RUNTIME_DIR",
    "XDG_CONFIG_HOME",
    "TMPDIR",
    "DOCKER_HOST",
    "DOCKER_CONFIG",
    "CONTAINER_HOST",
    "CONTAINERS_CONF",
    "CONTAINERS_STORAGE_CONF",
    "CONTAINERS_REGISTRIES_CONF",
];

/// The container client's environment. It runs as root: its environment is
/// the agent's own settings for it (the provider's), never the lease's, nor
/// anything else of the agent's (its node token).
fn client_env() -> BTreeMap<String, String> {
    let mut env = helper_env();
    env.extend(
        CONTAINER_CLIENT_ENV
            .into_iter()
            .filter_map(|k| Some((k.to_string(), std::env::var(k).ok()?))),
    );
    env
}

/// The order's image under docker or podman.
pub struct ContainerLauncher {
    pub runtime: ContainerRuntime,
    /// Where the leases' CDI specs go (podman reads [`cdi::SPEC_DIR`]).
    pub cdi_dir: PathBuf,
    /// The registries images may come from; empty: any.
    pub allowed_registries: Vec<String>,
    /// Where pulls' auth files are written (see [`image`]).
    pub auth_dir: PathBuf,
    /// What runs when the order names no image (`--default-image`).
    pub default_image: Option<String>,
    /// Images pulled with a buyer's credentials.
    pub private_images: Arc<image::PrivateImages>,
    /// Networked leases' namespaces, which podman joins.
    pub networks: Arc<netns::LeaseNetworks>,
    /// Where the GPUs' device nodes are (`/dev`; tests use stand-ins).
    pub dev_root: PathBuf,
    /// The user namespace its containers run in (podman; see [`userns`]).
    pub userns: Option<userns::Mapping>,
}

/// The container's open-file limit: the agent's own, which the host lets
/// it hand on (a runtime's default of 1,048,576 is refused on hosts whose
/// limit is lower).
fn open_files_limit() -> u64 {
    nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .map_or(1024, |(soft, _)| soft)
}

/// Where a container sees the lease folder `folder`: `/outputs`, and the
/// checkpoint where the order says (`/checkpoint` by default).
fn container_folder(spec: &LaunchSpec<'_>, folder: &str) -> String {
    match spec.checkpoint_path {
        Some(path) if folder == "checkpoint" => path.to_owned(),
        _ => format!("/{folder}"),
    }
}

/// The container's name: one per lease, so it can be removed by name.
pub fn container_name(lease: Uuid) -> String {
    format!("gpuex-lease-{lease}")
}

impl ContainerLauncher {
    /// The user namespace a lease's container runs in: podman's, for a
    /// lease without network. A networked lease joins its own network
    /// namespace, which the host's user namespace owns, and runc cannot set
    /// that namespace's sysctls from a container's own (podman sets
    /// `ping_group_range` on every container): it runs as its pool uid
    /// without one, its capabilities dropped all the same.
    fn mapping(&self, network: bool) -> Option<userns::Mapping> {
        self.userns.filter(|_| self.runtime.podman && !network)
    }

    /// The order's image.
    fn image<'a>(&self, spec: &LaunchSpec<'a>) -> Result<&'a str, String> {
        spec.image
            .ok_or("the container launcher runs the order's `image`, and the order has none".into())
    }

    fn image_client(&self) -> image::Images {
        image::Images {
            runtime: self.runtime.clone(),
            env: client_env(),
            allowed_registries: self.allowed_registries.clone(),
            auth_dir: self.auth_dir.clone(),
            private: self.private_images.clone(),
        }
    }

    /// `run …` for `spec`, of `image` (a name, or the ID it resolved to).
    pub fn run_args(&self, spec: &LaunchSpec<'_>, image: &str) -> Result<Vec<OsString>, String> {
        check_user(spec)?;
        let mut a: Vec<OsString> = vec![
            "run".into(),
            "--rm".into(),
            "--name".into(),
            container_name(spec.lease).into(),
            "--label".into(),
            format!("gpuex.lease={}", spec.lease).into(),
            "--user".into(),
        ];
        match self.mapping(spec.network) {
            Some(m) => {
                a.push(format!("{}:{}", m.inside(spec.user.0), m.inside(spec.user.1)).into());
                a.extend(m.args().into_iter().map(OsString::from));
            }
            None => a.push(format!("{}:{}", spec.user.0, spec.user.1).into()),
        }
        a.extend([
            // A tiny init (catatonit, docker-init) as PID 1 hands the
            // workload the SIGTERM of a stop or preemption notice: a shell
            // that is PID 1 itself ignores it and only dies at the SIGKILL.
            "--init".into(),
            "--read-only".into(),
            "--tmpfs".into(),
            "/tmp".into(),
            "--cap-drop".into(),
            "ALL".into(),
            "--security-opt".into(),
            "no-new-privileges".into(),
            "--pids-limit".into(),
            MAX_PROCESSES.to_string().into(),
            "--ulimit".into(),
            format!("nproc={MAX_PROCESSES}:{MAX_PROCESSES}").into(),
            "--ulimit".into(),
            format!("nofile={0}:{0}", open_files_limit()).into(),
            "--volume".into(),
            format!("{}:/work", spec.workdir.display()).into(),
            "--workdir".into(),
            "/work".into(),
        ]);
        // The lease's own folders on its disk, where the buyer expects them.
        for (folder, _) in crate::disk::LEASE_FOLDERS {
            a.push("--volume".into());
            let inside = container_folder(spec, folder);
            a.push(format!("{}:{inside}", spec.workdir.join(folder).display()).into());
        }
        if !spec.network {
            a.extend(["--network".into(), "none".into()]);
        } else if self.runtime.podman {
            // The lease's own namespace, with its egress rules (see [`netns`]).
            a.extend([
                "--network".into(),
                format!("ns:{}", netns::path(spec.lease).display()).into(),
            ]);
        } else {
            return Err(
                "this node runs containers with docker, which cannot join the lease's own \
                 network namespace safely: networked leases need podman here"
                    .into(),
            );
        }
        if let Some(l) = spec.limits {
            a.extend([
                "--cpus".into(),
                format!("{}.{:03}", l.cpu_milli / 1000, l.cpu_milli % 1000).into(),
            ]);
        }
        // The simulated backend's slice memory (`LaunchSpec::address_space`):
        // neither podman nor docker knows an `as` ulimit (`invalid ulimit
        // type: as`), so a container stands it in with `--memory`, which
        // bounds what the workload touches rather than what it maps.
        let slice_mib = spec.address_space.map(|bytes| (bytes >> 20).max(16));
        let memory_mib = match (spec.limits.map(|l| l.memory_mib), slice_mib) {
            (Some(host), Some(slice)) => Some(host.min(slice)),
            (host, slice) => host.or(slice),
        };
        if let Some(mib) = memory_mib {
            a.extend(["--memory".into(), format!("{mib}m").into()]);
        }
        if !spec.gpus.is_empty() {
            if self.runtime.podman {
                // The lease's own spec ([`ContainerLauncher::plan`] writes it).
                a.extend(["--device".into(), cdi::device(spec.lease).into()]);
            } else {
                let ids: Vec<&str> = spec
                    .gpus
                    .iter()
                    .map(|g| {
                        g.mig
                            .as_ref()
                            .map_or(g.uuid.as_str(), |(u, _, _)| u.as_str())
                    })
                    .collect();
                a.extend([
                    "--gpus".into(),
                    format!("\"device={}\"", ids.join(",")).into(),
                ]);
            }
        }
        // The command and environment are in the launch script (0600, the
        // pool user's), mounted read-only: neither is on this command line
        // nor in the client's environment.
        a.extend([
            "--volume".into(),
            format!(
                "{}:{}:ro",
                spec.launch_file.display(),
                launch_file::CONTAINER_SCRIPT
            )
            .into(),
            image.into(),
            "/bin/sh".into(),
            launch_file::CONTAINER_SCRIPT.into(),
        ]);
        Ok(a)
    }
}

impl Launcher for ContainerLauncher {
    fn kind(&self) -> LauncherKind {
        LauncherKind::Container
    }

    fn plan(&self, spec: &LaunchSpec<'_>) -> Result<Plan, String> {
        let env = client_env();
        check_user(spec)?;
        let image_id = self.image_client().id(self.image(spec)?)?;
        let args = self.run_args(spec, &image_id)?;
        if spec.network {
            self.networks.create(spec.lease)?;
        }
        if self.runtime.podman && !spec.gpus.is_empty() {
            cdi::write(&self.cdi_dir, spec.lease, spec.gpus, &self.dev_root).map_err(|e| {
                self.networks.remove(spec.lease);
                format!(
                    "cannot write the lease's CDI spec in {}: {e}",
                    self.cdi_dir.display()
                )
            })?;
        }
        // Inside, the working folder is /work.
        let mut lease_env = spec.env.clone();
        lease_env.insert("HOME".into(), "/work".into());
        for (folder, var) in crate::disk::LEASE_FOLDERS {
            lease_env.insert(var.into(), container_folder(spec, folder));
        }
        let script = launch_file::container_script(spec.command, &lease_env);
        Ok(Plan {
            program: self.runtime.program.clone(),
            args,
            image_id: Some(image_id),
            relays_signals: true,
            sets_session: false,
            env,
            launch: Some(launch_file::LaunchFile {
                path: spec.launch_file.to_path_buf(),
                bytes: script.into_bytes(),
                owner: Some(self.host_owner(spec.user, spec.network)),
            }),
        })
    }

    fn end(&self, lease: Uuid) {
        // The client's death does not stop the container: remove it by name,
        // at once (the lease is over; podman would otherwise give it 10 s).
        let mut rm = vec!["rm", "--force"];
        if self.runtime.podman {
            rm.extend(["--time", "0"]);
        }
        let _ = std::process::Command::new(&self.runtime.program)
            .args(rm)
            .arg(container_name(lease))
            .env_clear()
            .envs(client_env())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
        cdi::remove(&self.cdi_dir, lease);
        self.networks.remove(lease);
    }

    fn images(&self) -> Option<image::Images> {
        Some(self.image_client())
    }

    fn default_image(&self) -> Option<&str> {
        self.default_image.as_deref()
    }

    fn host_owner(&self, user: (u32, u32), network: bool) -> (u32, u32) {
        match self.mapping(network) {
            Some(m) => (m.on_host(user.0), m.on_host(user.1)),
            None => user,
        }
    }
}
