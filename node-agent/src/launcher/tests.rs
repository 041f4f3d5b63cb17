//! The launchers' command lines.

use super::container::container_name;
use super::*;
use std::path::Path;

fn no_private_images() -> Arc<image::PrivateImages> {
    Arc::new(image::PrivateImages::load("/nonexistent/private-images.json".into()).unwrap())
}

fn no_networks() -> Arc<netns::LeaseNetworks> {
    Arc::new(netns::LeaseNetworks::unavailable(
        "no networks in unit tests",
    ))
}

fn spec<'a>(
    env: &'a BTreeMap<String, String>,
    gpus: &'a [LeaseGpu],
    hide: &'a [PathBuf],
    cgroups: &'a [PathBuf],
) -> LaunchSpec<'a> {
    LaunchSpec {
        lease: Uuid::from_u128(0xabc),
        command: "python3 train.py",
        workdir: Path::new("/var/lib/gpuex/work/l1"),
        hide,
        user: (61005, 61005),
        gpus,
        limits: Some(HostLimits {
            cpu_milli: 2500,
            memory_mib: 8192,
        }),
        network: false,
        checkpoint_path: None,
        image: Some("docker.io/library/python:3.12-slim"),
        cgroups,
        env,
        launch_file: Path::new("/var/lib/gpuex/spool/launch/l1"),
        address_space: None,
    }
}

fn strings(args: &[OsString]) -> Vec<String> {
    args.iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

fn has_pair(args: &[String], flag: &str, value: &str) -> bool {
    args.windows(2).any(|w| w[0] == flag && w[1] == value)
}

fn gpus() -> Vec<LeaseGpu> {
    vec![
        LeaseGpu {
            index: 0,
            uuid: "GPU-aaa".into(),
            mig: None,
        },
        LeaseGpu {
            index: 3,
            uuid: "GPU-bbb".into(),
            mig: None,
        },
    ]
}

/// A stand-in container client that answers `image inspect` with an ID.
fn fake_client(dir: &Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let program = dir.join("client");
    std::fs::write(
        &program,
        format!("#!/bin/sh\necho sha256:{}\n", "ab".repeat(32)),
    )
    .unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    program
}

#[test]
fn docker_gets_only_the_leases_gpus_limits_a_read_only_root_and_no_command_or_env() {
    let env: BTreeMap<String, String> = [("SECRET".to_string(), "hunter2".to_string())].into();
    let g = gpus();
    let bin = tempfile::tempdir().unwrap();
    let launcher = ContainerLauncher {
        runtime: ContainerRuntime {
            program: fake_client(bin.path()),
            podman: false,
        },
        cdi_dir: "/nonexistent".into(),
        allowed_registries: vec![],
        auth_dir: "/nonexistent".into(),
        default_image: None,
        private_images: no_private_images(),
        networks: no_networks(),
        dev_root: "/dev".into(),
        userns: None,
    };
    let s = spec(&env, &g, &[], &[]);
    let args = strings(&launcher.run_args(&s, s.image.unwrap()).unwrap());
    assert_eq!(args[0], "run");
    assert!(
        has_pair(&args, "--gpus", "\"device=GPU-aaa,GPU-bbb\""),
        "{args:?}"
    );
    assert!(has_pair(&args, "--cpus", "2.500"), "{args:?}");
    assert!(has_pair(&args, "--memory", "8192m"), "{args:?}");
    assert!(args.contains(&"--read-only".to_string()));
    assert!(
        args.contains(&"--init".to_string()),
        "a stop's SIGTERM reaches the workload"
    );
    assert!(has_pair(&args, "--network", "none"));
    assert!(has_pair(&args, "--user", "61005:61005"));
    assert!(has_pair(&args, "--volume", "/var/lib/gpuex/work/l1:/work"));
    assert!(has_pair(
        &args,
        "--volume",
        "/var/lib/gpuex/spool/launch/l1:/.gpuex-launch.sh:ro"
    ));
    assert!(has_pair(
        &args,
        "--name",
        &container_name(Uuid::from_u128(0xabc))
    ));
    for leak in ["hunter2", "SECRET", "train.py"] {
        assert!(
            !args.iter().any(|a| a.contains(leak)),
            "{leak} on the command line: {args:?}"
        );
    }
    let image_at = args
        .iter()
        .position(|a| a == "docker.io/library/python:3.12-slim")
        .unwrap();
    assert_eq!(&args[image_at + 1..], ["/bin/sh", "/.gpuex-launch.sh"]);
    // The command and the environment are in the launch script, the pool
    // user's (the container runs as it), and nowhere in the client's own
    // environment.
    let plan = launcher.plan(&s).unwrap();
    // It runs the ID the image resolved to, and records it.
    let id = format!("sha256:{}", "ab".repeat(32));
    assert_eq!(plan.image_id.as_deref(), Some(id.as_str()));
    assert!(strings(&plan.args).contains(&id), "{:?}", plan.args);
    assert!(plan.env.keys().all(|k| k != "SECRET"), "{:?}", plan.env);
    assert_eq!(plan.env.get("PATH").map(String::as_str), Some(HELPER_PATH));
    let launch = plan.launch.unwrap();
    assert_eq!(launch.path, Path::new("/var/lib/gpuex/spool/launch/l1"));
    assert_eq!(launch.owner, Some((61005, 61005)));
    let script = String::from_utf8(launch.bytes).unwrap();
    assert!(script.contains("export SECRET='hunter2'\n"), "{script}");
    assert!(script.contains("export HOME='/work'\n"), "{script}");
    assert!(
        script.contains("gpuex_command='python3 train.py'\n"),
        "{script}"
    );
}

#[test]
fn podman_takes_the_leases_own_cdi_device_and_rlimits_the_host_allows() {
    let env = BTreeMap::new();
    let g = vec![LeaseGpu {
        index: 2,
        uuid: "GPU-ccc".into(),
        mig: Some(("MIG-ddd".into(), Some(1), Some(0))),
    }];
    let specs = tempfile::tempdir().unwrap();
    let launcher = ContainerLauncher {
        runtime: ContainerRuntime {
            program: fake_client(specs.path()),
            podman: true,
        },
        cdi_dir: specs.path().into(),
        allowed_registries: vec![],
        auth_dir: "/nonexistent".into(),
        default_image: None,
        private_images: no_private_images(),
        networks: no_networks(),
        dev_root: "/dev".into(),
        userns: Some(super::userns::Mapping {
            root: 100_000,
            pool_first: 61_000,
        }),
    };
    // (A networked lease's `--network`: see
    // a_networked_lease_joins_its_own_namespace_or_is_refused.)
    let s = spec(&env, &g, &[], &[]);
    let plan = launcher.plan(&s).unwrap();
    let args = strings(&plan.args);
    let device = format!("gpuex.dev/lease={}", s.lease);
    assert!(has_pair(&args, "--device", &device), "{args:?}");
    assert!(!args.contains(&"--gpus".to_string()));
    // Root inside is the agent's subordinate uid; the pool's keep their numbers.
    assert!(has_pair(&args, "--uidmap", "0:100000:65536"), "{args:?}");
    assert!(has_pair(&args, "--gidmap", "0:100000:65536"), "{args:?}");
    assert!(has_pair(&args, "--ulimit", "nproc=4096:4096"), "{args:?}");
    let (open_files, _) =
        nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE).unwrap();
    assert!(
        has_pair(
            &args,
            "--ulimit",
            &format!("nofile={open_files}:{open_files}")
        ),
        "{args:?}"
    );
    // The plan wrote the lease's spec, naming the MIG instance; its end removes it.
    let written = cdi::spec_path(specs.path(), s.lease);
    let text = std::fs::read_to_string(&written).unwrap();
    assert!(text.contains("CUDA_VISIBLE_DEVICES=MIG-ddd"), "{text}");
    launcher.end(s.lease);
    assert!(!written.exists());
    // A simulated slice's memory stands in as the container's memory limit
    // (no `as` ulimit exists for containers), the smaller of it and the host's.
    let mut sim = spec(&env, &g, &[], &[]);
    sim.address_space = Some(4_000_000_000);
    let args = strings(&launcher.plan(&sim).unwrap().args);
    assert!(
        has_pair(&args, "--memory", "3814m"),
        "under the host's 8192: {args:?}"
    );
    assert!(!args.iter().any(|a| a.starts_with("as=")), "{args:?}");
    sim.address_space = Some(80_000_000_000);
    let args = strings(&launcher.plan(&sim).unwrap().args);
    assert!(
        has_pair(&args, "--memory", "8192m"),
        "the host's is smaller: {args:?}"
    );
    launcher.end(sim.lease);
}

#[test]
fn a_container_needs_an_allowed_image_and_never_runs_as_root() {
    let env = BTreeMap::new();
    let bin = tempfile::tempdir().unwrap();
    let launcher = ContainerLauncher {
        runtime: ContainerRuntime {
            program: fake_client(bin.path()),
            podman: false,
        },
        cdi_dir: "/nonexistent".into(),
        allowed_registries: vec!["nvcr.io".into()],
        auth_dir: "/nonexistent".into(),
        default_image: None,
        private_images: no_private_images(),
        networks: no_networks(),
        dev_root: "/dev".into(),
        userns: None,
    };
    let mut s = spec(&env, &[], &[], &[]);
    s.image = None;
    assert!(launcher.plan(&s).unwrap_err().contains("image"));
    let s = spec(&env, &[], &[], &[]);
    let refused = launcher.plan(&s).unwrap_err();
    assert!(refused.contains("docker.io are not allowed"), "{refused}");
    let mut s = spec(&env, &[], &[], &[]);
    s.image = Some("nvcr.io/nvidia/cuda:12.4.0-base-ubuntu22.04");
    assert!(launcher.plan(&s).is_ok());
    s.user = (0, 0);
    assert!(launcher.run_args(&s, "x").is_err());
    assert!(launcher.plan(&s).is_err());
}

#[test]
fn the_process_launcher_drops_to_the_pool_user_through_the_agent_with_a_launch_file() {
    let env: BTreeMap<String, String> = [("SECRET".to_string(), "hunter2".to_string())].into();
    let cg = vec![PathBuf::from("/sys/fs/cgroup/gpuex-x/l1")];
    let launcher = ProcessLauncher {
        agent_exe: SelfExec::binary("/usr/bin/gpuex-agent"),
    };
    let plan = launcher.plan(&spec(&env, &[], &[], &cg)).unwrap();
    assert!(plan.sets_session);
    let args = strings(&plan.args);
    assert_eq!(plan.program, PathBuf::from("/usr/bin/gpuex-agent"));
    assert!(has_pair(&args, "--uid", "61005") && has_pair(&args, "--gid", "61005"));
    assert!(has_pair(&args, "--cgroup", "/sys/fs/cgroup/gpuex-x/l1"));
    // The host's /tmp and the like are replaced by the lease's own.
    assert!(has_pair(&args, "--private-tmp", "/var/lib/gpuex/work/l1"));
    assert!(has_pair(
        &args,
        "--launch-file",
        "/var/lib/gpuex/spool/launch/l1"
    ));
    for leak in ["hunter2", "SECRET", "train.py"] {
        assert!(
            !args.iter().any(|a| a.contains(leak)),
            "{leak} on the command line: {args:?}"
        );
    }
    // The helper runs with PATH alone; the lease's command and environment
    // are in the launch file, root's.
    assert_eq!(
        plan.env,
        BTreeMap::from([("PATH".to_string(), HELPER_PATH.to_string())])
    );
    let launch = plan.launch.unwrap();
    assert_eq!(launch.owner, None);
    let request: launch_file::LaunchRequest = serde_json::from_slice(&launch.bytes).unwrap();
    assert_eq!(request.command, "python3 train.py");
    assert_eq!(request.env, env);
    assert!(
        !args.contains(&"--address-space".to_string()),
        "no address-space limit unless the spec has one"
    );
}

#[test]
fn a_simulated_slices_memory_goes_to_the_helper_as_its_address_space_limit() {
    let env = BTreeMap::new();
    let launcher = ProcessLauncher {
        agent_exe: SelfExec::binary("/usr/bin/gpuex-agent"),
    };
    let mut s = spec(&env, &[], &[], &[]);
    s.address_space = Some(10_000_000_000);
    let args = strings(&launcher.plan(&s).unwrap().args);
    assert!(
        has_pair(&args, "--address-space", "10000000000"),
        "{args:?}"
    );
}

#[test]
fn an_agent_inside_the_gpuex_binary_runs_its_helper_as_gpuex_agent_exec_workload() {
    let env = BTreeMap::new();
    let launcher = ProcessLauncher {
        agent_exe: SelfExec {
            exe: "/usr/bin/gpuex".into(),
            leading_args: vec!["agent".into()],
        },
    };
    let plan = launcher.plan(&spec(&env, &[], &[], &[])).unwrap();
    assert_eq!(plan.program, PathBuf::from("/usr/bin/gpuex"));
    assert_eq!(
        strings(&plan.args)[..3],
        ["agent", "exec-workload", "--uid"]
    );
}

#[test]
fn the_sandbox_launcher_hands_bubblewraps_arguments_to_the_helper_without_the_command() {
    let env: BTreeMap<String, String> = [("SECRET".to_string(), "hunter2".to_string())].into();
    let launcher = SandboxLauncher {
        agent_exe: SelfExec::binary("/usr/bin/gpuex-agent"),
        bwrap: "/usr/bin/bwrap".into(),
        networks: no_networks(),
        dev_root: "/dev".into(),
    };
    let plan = launcher.plan(&spec(&env, &[], &[], &[])).unwrap();
    let args = strings(&plan.args);
    let at = args.iter().position(|a| a == "--bwrap").unwrap();
    assert_eq!(args[at + 1..at + 3], ["/usr/bin/bwrap", "--"]);
    assert_eq!(args[at + 3], "--ro-bind", "{args:?}");
    for leak in ["hunter2", "SECRET", "train.py", "/bin/sh"] {
        assert!(
            !args.iter().any(|a| a.contains(leak)),
            "{leak} on the command line: {args:?}"
        );
    }
    assert_eq!(plan.env.keys().collect::<Vec<_>>(), ["PATH"]);
}

#[test]
fn the_sandbox_hides_the_agents_state_and_binds_only_the_leases_devices() {
    let env = BTreeMap::new();
    let dev = std::env::temp_dir().join(format!("gpuex-dev-{}", Uuid::new_v4()));
    std::fs::create_dir_all(&dev).unwrap();
    for n in ["nvidiactl", "nvidia0", "nvidia1", "nvidia3"] {
        std::fs::write(dev.join(n), "").unwrap();
    }
    let hide = vec![PathBuf::from("/var/lib/gpuex")];
    let g = gpus();
    let args = strings(&SandboxLauncher::bwrap_args(
        &spec(&env, &g, &hide, &[]),
        &dev,
    ));
    for flag in [
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-net",
        "--die-with-parent",
    ] {
        assert!(args.contains(&flag.to_string()), "{flag} missing: {args:?}");
    }
    assert!(has_pair(&args, "--tmpfs", "/tmp"));
    assert!(has_pair(&args, "--tmpfs", "/var/lib/gpuex"));
    let hidden_at = args.iter().position(|a| a == "/var/lib/gpuex").unwrap();
    let bound_at = args
        .iter()
        .position(|a| a == "/var/lib/gpuex/work/l1")
        .unwrap();
    assert!(
        bound_at > hidden_at,
        "the working folder is mounted back after the state is hidden"
    );
    let bound: Vec<&String> = args
        .windows(2)
        .filter(|w| w[0] == "--dev-bind")
        .map(|w| &w[1])
        .collect();
    let want: Vec<String> = ["nvidiactl", "nvidia0", "nvidia3"]
        .iter()
        .map(|n| dev.join(n).display().to_string())
        .collect();
    assert_eq!(
        bound,
        want.iter().collect::<Vec<_>>(),
        "only the lease's GPUs"
    );
    let mut s = spec(&env, &g, &hide, &[]);
    s.network = true;
    assert!(!strings(&SandboxLauncher::bwrap_args(&s, &dev)).contains(&"--unshare-net".to_string()));
    let _ = std::fs::remove_dir_all(dev);
}

#[test]
fn a_networked_lease_joins_its_own_namespace_or_is_refused() {
    let env = BTreeMap::new();
    let mut s = spec(&env, &[], &[], &[]);
    s.network = true;
    // podman joins the lease's namespace by path.
    let podman = ContainerLauncher {
        runtime: ContainerRuntime {
            program: "/usr/bin/podman".into(),
            podman: true,
        },
        cdi_dir: "/nonexistent".into(),
        allowed_registries: vec![],
        auth_dir: "/nonexistent".into(),
        default_image: None,
        private_images: no_private_images(),
        networks: no_networks(),
        dev_root: "/dev".into(),
        userns: None,
    };
    let args = strings(&podman.run_args(&s, "sha256:abc").unwrap());
    let at = args.iter().position(|a| a == "--network").unwrap();
    assert_eq!(
        args[at + 1],
        format!("ns:/run/netns/{}", netns::name(s.lease))
    );
    assert!(!args.contains(&"none".to_string()));
    // docker cannot: the lease fails, saying why.
    let docker = ContainerLauncher {
        runtime: ContainerRuntime {
            program: "/usr/bin/docker".into(),
            podman: false,
        },
        ..podman
    };
    let why = docker.run_args(&s, "sha256:abc").unwrap_err();
    assert!(why.contains("docker") && why.contains("podman"), "{why}");
    // Where the node has no lease networks, a networked sandbox lease fails.
    let sandbox = SandboxLauncher {
        agent_exe: SelfExec::binary("/usr/bin/gpuex-agent"),
        bwrap: "/usr/bin/bwrap".into(),
        networks: no_networks(),
        dev_root: "/dev".into(),
    };
    assert_eq!(
        sandbox.plan(&s).unwrap_err(),
        "no networks in unit tests".to_string()
    );
    // Without `network`, no namespace is joined and bubblewrap unshares one.
    s.network = false;
    let args = strings(&sandbox.plan(&s).unwrap().args);
    assert!(!args.contains(&"--netns".to_string()));
    assert!(args.contains(&"--unshare-net".to_string()));
}
