//! The launchers' command lines.

use super::*;
use std::path::Path;

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
        image: Some("docker.io/library/python:3.12-slim"),
        cgroups,
        env,
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

#[test]
fn docker_gets_only_the_leases_gpus_limits_a_read_only_root_and_env_names_only() {
    let env: BTreeMap<String, String> = [("SECRET".to_string(), "hunter2".to_string())].into();
    let g = gpus();
    let launcher = ContainerLauncher {
        runtime: ContainerRuntime {
            program: "/usr/bin/docker".into(),
            podman: false,
        },
    };
    let args = strings(&launcher.run_args(&spec(&env, &g, &[], &[])).unwrap());
    assert_eq!(args[0], "run");
    assert!(
        has_pair(&args, "--gpus", "\"device=GPU-aaa,GPU-bbb\""),
        "{args:?}"
    );
    assert!(has_pair(&args, "--cpus", "2.500"), "{args:?}");
    assert!(has_pair(&args, "--memory", "8192m"), "{args:?}");
    assert!(args.contains(&"--read-only".to_string()));
    assert!(has_pair(&args, "--network", "none"));
    assert!(has_pair(&args, "--user", "61005:61005"));
    assert!(has_pair(&args, "--volume", "/var/lib/gpuex/work/l1:/work"));
    assert!(has_pair(
        &args,
        "--name",
        &container_name(Uuid::from_u128(0xabc))
    ));
    assert!(has_pair(&args, "--env", "SECRET"));
    assert!(
        !args.iter().any(|a| a.contains("hunter2")),
        "a secret on the command line: {args:?}"
    );
    let image_at = args
        .iter()
        .position(|a| a == "docker.io/library/python:3.12-slim")
        .unwrap();
    assert_eq!(&args[image_at + 1..], ["/bin/sh", "-c", "python3 train.py"]);
}

#[test]
fn podman_takes_cdi_names_and_mig_instances_by_their_uuid() {
    let env = BTreeMap::new();
    let g = vec![LeaseGpu {
        index: 2,
        uuid: "GPU-ccc".into(),
        mig: Some(("MIG-ddd".into(), Some(1), Some(0))),
    }];
    let launcher = ContainerLauncher {
        runtime: ContainerRuntime {
            program: "/usr/bin/podman".into(),
            podman: true,
        },
    };
    let mut s = spec(&env, &g, &[], &[]);
    s.network = true;
    let args = strings(&launcher.run_args(&s).unwrap());
    assert!(
        has_pair(&args, "--device", "nvidia.com/gpu=MIG-ddd"),
        "{args:?}"
    );
    assert!(!args.contains(&"--gpus".to_string()));
    assert!(
        !args.contains(&"none".to_string()),
        "network was asked for: {args:?}"
    );
}

#[test]
fn a_container_needs_an_image_and_never_runs_as_root() {
    let env = BTreeMap::new();
    let launcher = ContainerLauncher {
        runtime: ContainerRuntime {
            program: "docker".into(),
            podman: false,
        },
    };
    let mut s = spec(&env, &[], &[], &[]);
    s.image = None;
    assert!(launcher.run_args(&s).unwrap_err().contains("image"));
    let mut s = spec(&env, &[], &[], &[]);
    s.user = (0, 0);
    assert!(launcher.run_args(&s).is_err());
}

#[test]
fn the_process_launcher_drops_to_the_pool_user_through_the_agent() {
    let env = BTreeMap::new();
    let cg = vec![PathBuf::from("/sys/fs/cgroup/gpuex-x/l1")];
    let launcher = ProcessLauncher {
        agent_exe: "/usr/bin/gpuex-agent".into(),
    };
    let plan = launcher.plan(&spec(&env, &[], &[], &cg)).unwrap();
    assert!(plan.sets_session);
    let args = strings(&plan.args);
    assert_eq!(plan.program, PathBuf::from("/usr/bin/gpuex-agent"));
    assert!(has_pair(&args, "--uid", "61005") && has_pair(&args, "--gid", "61005"));
    assert!(has_pair(&args, "--cgroup", "/sys/fs/cgroup/gpuex-x/l1"));
    // The host's /tmp and the like are replaced by the lease's own.
    assert!(args.iter().any(|a| a == "--private-tmp"));
    assert!(args.ends_with(&[
        "--".into(),
        "/bin/sh".into(),
        "-c".into(),
        "python3 train.py".into()
    ]));
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
