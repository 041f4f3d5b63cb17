//! The agent's trust boundaries (ARCHITECTURE.md §19), with the real binary as root
//! and, where this host has them, bubblewrap and podman:
//! - an assignment carrying a loader hook (`LD_PRELOAD` of a library built
//!   here) fails with the reason and nothing loads it, whatever the launcher,
//!   while an ordinary variable still reaches the workload;
//! - no command line on the host shows a workload's command or environment,
//!   and none of the agent's helpers (the exec helper, bubblewrap, podman)
//!   carries the lease's environment;
//!
//! The spool's and the token file's modes and a revoked token are in
//! `tokens.rs`.

use super::*;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

use crate::require::{bubblewrap, podman_image, require as available};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Launcher {
    Process,
    Sandbox,
    Container,
}

/// An agent's launcher and what it needs here.
struct Setup {
    args: Vec<String>,
    env: Vec<(String, String)>,
    /// The container's image.
    image: Option<String>,
}

impl Setup {
    fn new(launcher: Launcher) -> Option<Setup> {
        let name = format!("{launcher:?}").to_lowercase();
        let mut setup = Setup {
            args: vec!["--launcher".into(), name],
            env: Vec::new(),
            image: None,
        };
        match launcher {
            Launcher::Process => {}
            Launcher::Sandbox => available("bubblewrap", bubblewrap())?,
            Launcher::Container => {
                let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gpuex-agent-tests");
                std::fs::create_dir_all(&scratch).ok()?;
                let podman = available("podman", podman_image(&scratch))?;
                // The agent itself writes each lease's CDI spec and sets
                // the rlimits podman may hand on: no containers.conf.
                setup.image = Some(podman.image);
                // GPU UUIDs of this agent's own.
                setup.args.push("--hostname".into());
                setup
                    .args
                    .push(format!("trust-{}", Uuid::new_v4().simple()));
            }
        }
        Some(setup)
    }

    fn spawn(&self, server: &FakeServer, spool: &Path) -> AgentProcess {
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        let env: Vec<(&str, &str)> = self
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        spawn_agent_env(server, spool, &args, &env)
    }

    /// Registered.
    async fn registered(&self, server: &FakeServer) {
        wait_for(server, 30, "registration", |s| {
            s.registrations.first().cloned()
        })
        .await;
    }

    /// `start` of `command` with `env`, in the image for a container.
    fn start(&self, lease: Uuid, gpu: u32, command: &str, env: &[(&str, &str)]) -> Assignment {
        let mut assignment = start(lease, Partition::Whole, gpu, command);
        if let AssignmentAction::Start {
            env: lease_env,
            image,
            ..
        } = &mut assignment.action
        {
            *lease_env = env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            image.clone_from(&self.image);
        }
        assignment
    }
}

/// Every pid on the host.
fn all_pids() -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

fn proc_file(pid: i32, name: &str) -> Vec<u8> {
    std::fs::read(format!("/proc/{pid}/{name}")).unwrap_or_default()
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

/// The program a process runs (its file name).
fn exe_name(pid: i32) -> String {
    std::fs::read_link(format!("/proc/{pid}/exe"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default()
}

/// A shared object whose constructor writes `loaded-<pid>` with its uid and
/// euid into `markers` (world-writable) for every process that loads it.
fn preload_library(markers: &Path) -> Result<PathBuf, String> {
    let source = markers.with_extension("c");
    let library = markers.with_extension("so");
    std::fs::write(
        &source,
        format!(
            "#include <stdio.h>\n#include <unistd.h>\n\
             __attribute__((constructor)) static void gpuex_test_marker(void) {{\n\
               char path[4096];\n\
               snprintf(path, sizeof path, \"{}/loaded-%d\", (int)getpid());\n\
               FILE *f = fopen(path, \"w\");\n\
               if (f) {{ fprintf(f, \"uid=%d euid=%d\\n\", (int)getuid(), (int)geteuid()); fclose(f); }}\n\
             }}\n",
            markers.display()
        ),
    )
    .map_err(|e| e.to_string())?;
    let out = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&library)
        .arg(&source)
        .output()
        .map_err(|e| format!("cc cannot run: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    std::fs::set_permissions(&library, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| e.to_string())?;
    Ok(library)
}

/// What was written to `markers`, file by file.
fn markers_written(markers: &Path) -> Vec<String> {
    std::fs::read_dir(markers)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| {
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            format!("{}: {}", e.file_name().to_string_lossy(), text.trim())
        })
        .collect()
}

async fn a_loader_hook_is_refused_and_loaded_by_no_one(launcher: Launcher) {
    let Some(setup) = Setup::new(launcher) else {
        return;
    };
    let markers = temp_dir("preload-markers");
    std::fs::set_permissions(&*markers, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let Some(library) = available("cc", preload_library(&markers)) else {
        return;
    };
    let _library_files = (
        TempFile(library.clone()),
        TempFile(markers.with_extension("c")),
    );
    // The library works: a process that is given it writes its marker.
    let probe = Command::new("/bin/true")
        .env("LD_PRELOAD", &library)
        .status()
        .unwrap();
    assert!(probe.success());
    assert_eq!(markers_written(&markers).len(), 1, "the library loads");
    for f in std::fs::read_dir(&*markers).unwrap() {
        std::fs::remove_file(f.unwrap().path()).unwrap();
    }

    let server = FakeServer::start().await;
    let spool = temp_dir("preload");
    let _agent = setup.spawn(&server, &spool);
    setup.registered(&server).await;
    let (hooked, plain) = (Uuid::new_v4(), Uuid::new_v4());
    let library = library.display().to_string();
    server.with(|s| {
        s.queued.push(setup.start(
            hooked,
            6,
            "echo hooked-ran",
            &[("LD_PRELOAD", &library), ("GREETING", "hello")],
        ));
        s.queued.push(setup.start(
            plain,
            7,
            "echo \"greeting=$GREETING\"",
            &[("GREETING", "hello")],
        ));
    });
    // Whatever becomes of it (an agent without the fix runs it), it is over
    // soon: its command only echoes.
    let outcome = wait_for(&server, 30, "the hooked lease to fail or end", |s| {
        s.status_of(hooked, |st| {
            matches!(
                st,
                AssignmentStatus::Failed { .. } | AssignmentStatus::Ended { .. }
            )
        })
    })
    .await;
    // No process at all loaded the buyer's library: not root, not the
    // agent's user, not the workload.
    assert_eq!(markers_written(&markers), Vec::<String>::new());
    // An ordinary variable still reaches the workload's final exec.
    let logs = wait_for(&server, 60, "the plain lease's output", |s| {
        s.logs.get(&plain).filter(|l| l.complete).cloned()
    })
    .await;
    assert!(logs.tail.contains("greeting=hello"), "{}", logs.tail);
    assert_eq!(
        outcome.status,
        AssignmentStatus::Failed {
            reason: "refused: env.LD_PRELOAD is a loader or runtime hook, which a workload's \
                     environment may not set"
                .into()
        }
    );
    let statuses = server.with(|s| s.statuses.clone());
    assert!(
        !statuses.iter().any(
            |(id, r)| *id == hooked && matches!(r.status, AssignmentStatus::Provisioned { .. })
        ),
        "the hooked lease was never provisioned (nor billed): {statuses:?}"
    );
}

#[tokio::test]
async fn an_ld_preload_assignment_fails_under_the_process_launcher_and_nothing_loads_it() {
    a_loader_hook_is_refused_and_loaded_by_no_one(Launcher::Process).await;
}

#[tokio::test]
async fn an_ld_preload_assignment_fails_under_the_sandbox_launcher_and_nothing_loads_it() {
    a_loader_hook_is_refused_and_loaded_by_no_one(Launcher::Sandbox).await;
}

#[tokio::test]
async fn an_ld_preload_assignment_fails_under_the_container_launcher_and_nothing_loads_it() {
    a_loader_hook_is_refused_and_loaded_by_no_one(Launcher::Container).await;
}

async fn nothing_on_the_host_shows_the_command_or_the_environment(launcher: Launcher) {
    let Some(setup) = Setup::new(launcher) else {
        return;
    };
    let server = FakeServer::start().await;
    let spool = temp_dir("cmdline");
    let _agent = setup.spawn(&server, &spool);
    setup.registered(&server).await;
    let (secret, marker) = (
        format!("secret-{}", Uuid::new_v4().simple()),
        format!("command-{}", Uuid::new_v4().simple()),
    );
    let lease = Uuid::new_v4();
    let command = format!(": {marker}; echo \"ready $TRUST_SECRET\"; sleep 60");
    server.with(|s| {
        s.queued
            .push(setup.start(lease, 5, &command, &[("TRUST_SECRET", &secret)]))
    });
    // The secret reached the final exec…
    wait_for(&server, 60, "the workload to start", |s| {
        s.logs
            .get(&lease)
            .filter(|l| l.tail.contains(&format!("ready {secret}")))
            .map(|_| ())
    })
    .await;

    // …and no command line on the host shows it or the command.
    let mut leaks = Vec::new();
    for pid in all_pids() {
        let cmdline = proc_file(pid, "cmdline");
        if contains(&cmdline, &secret) || contains(&cmdline, &marker) {
            leaks.push(format!(
                "{pid} ({}): {}",
                exe_name(pid),
                String::from_utf8_lossy(&cmdline).replace('\0', " ")
            ));
        }
    }
    assert_eq!(leaks, Vec::<String>::new(), "command lines that show them");

    // Only the workload's own processes (its pool user's, or in a
    // container's user namespace a uid of the agent's subordinate range;
    // none of the helpers) carry the lease's environment.
    let subordinate: Vec<std::ops::Range<u32>> = std::fs::read_to_string("/etc/subuid")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut parts = l.split(':');
            (parts.next()? == "gpuex-agent").then_some(())?;
            let start: u32 = parts.next()?.parse().ok()?;
            let count: u32 = parts.next()?.parse().ok()?;
            Some(start..start + count)
        })
        .collect();
    let (first, last) = {
        let pool = uid_pool_of(&spool);
        let (a, b) = pool.split_once('-').unwrap();
        (a.parse::<u32>().unwrap(), b.parse::<u32>().unwrap())
    };
    let helpers = [
        "gpuex-agent",
        "bwrap",
        "podman",
        "conmon",
        "runc",
        "crun",
        "docker",
    ];
    let mut carriers = Vec::new();
    for pid in all_pids() {
        if !contains(&proc_file(pid, "environ"), &secret) {
            continue;
        }
        let uid = std::fs::metadata(format!("/proc/{pid}")).map_or(0, |m| m.uid());
        let exe = exe_name(pid);
        let workloads =
            (first..=last).contains(&uid) || subordinate.iter().any(|r| r.contains(&uid));
        if !workloads || helpers.contains(&exe.as_str()) {
            carriers.push(format!("{pid} {exe} uid {uid}"));
        }
    }
    assert_eq!(
        carriers,
        Vec::<String>::new(),
        "helpers with the lease's environment"
    );

    // The spool and its launch files are root's alone: the exec helper
    // consumed its file; a container's stays, 0600, its pool user's.
    let launch = spool.join("launch");
    let meta = std::fs::metadata(&launch).unwrap();
    assert_eq!((meta.mode() & 0o777, meta.uid()), (0o700, 0));
    let files: Vec<(String, u32, u32)> = std::fs::read_dir(&launch)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                m.mode() & 0o777,
                m.uid(),
            )
        })
        .collect();
    if launcher == Launcher::Container {
        assert_eq!(files.len(), 1, "{files:?}");
        assert_eq!(files[0].0, lease.to_string());
        assert_eq!(files[0].1, 0o600);
        // The container's user: its pool uid as the user namespace maps it.
        let uid = files[0].2;
        assert!(
            (first..=last).contains(&uid) || subordinate.iter().any(|r| r.contains(&uid)),
            "{files:?}"
        );
    } else {
        assert_eq!(files, Vec::new(), "the helper consumed its launch file");
    }

    server.with(|s| {
        s.queued.push(Assignment {
            lease_id: lease,
            action: AssignmentAction::Stop,
        })
    });
    wait_for(&server, 30, "ended", |s| ended(s, lease)).await;
    assert_eq!(
        std::fs::read_dir(&launch).unwrap().count(),
        0,
        "no launch file outlives its lease"
    );
}

#[tokio::test]
async fn no_host_command_line_shows_a_process_workloads_command_or_env() {
    nothing_on_the_host_shows_the_command_or_the_environment(Launcher::Process).await;
}

#[tokio::test]
async fn no_host_command_line_shows_a_sandbox_workloads_command_or_env() {
    nothing_on_the_host_shows_the_command_or_the_environment(Launcher::Sandbox).await;
}

#[tokio::test]
async fn no_host_command_line_shows_a_container_workloads_command_or_env() {
    nothing_on_the_host_shows_the_command_or_the_environment(Launcher::Container).await;
}

/// The provider's registries bound what runs: an image from another fails
/// its lease, unbilled (never `provisioned`), naming the registry; an image
/// no registry has fails on its pull; an allowed one runs, by its ID.
#[tokio::test]
async fn only_the_providers_registries_run_and_an_image_runs_by_its_id() {
    let Some(mut setup) = Setup::new(Launcher::Container) else {
        return;
    };
    setup
        .args
        .extend(["--allow-registry".into(), "nvcr.io,localhost".into()]);
    let server = FakeServer::start().await;
    let spool = temp_dir("registries");
    let _agent = setup.spawn(&server, &spool);
    setup.registered(&server).await;
    let (hub, missing, local) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
    server.with(|s| {
        let mut from_hub = setup.start(hub, 5, "echo hub", &[]);
        let mut absent = setup.start(missing, 6, "echo absent", &[]);
        if let AssignmentAction::Start { image, .. } = &mut from_hub.action {
            *image = Some("python:3.12-slim".into());
        }
        if let AssignmentAction::Start { image, .. } = &mut absent.action {
            *image = Some(format!(
                "localhost/gpuex-absent-{}:1",
                Uuid::new_v4().simple()
            ));
        }
        s.queued.extend([
            from_hub,
            absent,
            setup.start(local, 7, "echo local-ran", &[]),
        ]);
    });
    let failed = |lease: Uuid| {
        let server = &server;
        async move {
            wait_for(server, 60, "the lease to fail", |s| {
                s.status_of(lease, |st| {
                    matches!(
                        st,
                        AssignmentStatus::Failed { .. } | AssignmentStatus::Provisioned { .. }
                    )
                })
            })
            .await
            .status
        }
    };
    match failed(hub).await {
        AssignmentStatus::Failed { reason } => assert!(
            reason.contains("images from docker.io are not allowed on this node"),
            "{reason}"
        ),
        other => panic!("an image from Docker Hub ran: {other:?}"),
    }
    match failed(missing).await {
        AssignmentStatus::Failed { reason } => assert!(reason.contains("cannot pull"), "{reason}"),
        other => panic!("a missing image ran: {other:?}"),
    }
    let provisioned = wait_for(&server, 60, "the local image to run", |s| {
        s.status_of(local, |st| {
            matches!(st, AssignmentStatus::Provisioned { .. })
        })
    })
    .await;
    let AssignmentStatus::Provisioned { image_id, .. } = provisioned.status else {
        unreachable!()
    };
    let image = setup.image.as_deref().expect("the test image");
    let inspected = std::process::Command::new("podman")
        .args(["image", "inspect", "--format", "{{.Id}}", image])
        .output()
        .expect("podman image inspect");
    let id = format!(
        "sha256:{}",
        String::from_utf8_lossy(&inspected.stdout).trim()
    );
    assert_eq!(image_id.as_deref(), Some(id.as_str()));
    let logs = wait_for(&server, 60, "the local lease's output", |s| {
        s.logs.get(&local).filter(|l| l.complete).cloned()
    })
    .await;
    assert!(logs.tail.contains("local-ran"), "{}", logs.tail);
}

/// A preemption notice reaches the workload as SIGTERM, which it may use
/// to checkpoint and exit early: in a container too, where a shell would
/// otherwise be PID 1 and ignore it.
#[tokio::test]
async fn a_containers_workload_gets_the_notices_sigterm_and_ends_early() {
    let Some(setup) = Setup::new(Launcher::Container) else {
        return;
    };
    let server = FakeServer::start().await;
    let spool = temp_dir("container-term");
    let _agent = setup.spawn(&server, &spool);
    setup.registered(&server).await;
    let lease = Uuid::new_v4();
    let command = "trap 'echo got-term; exit 0' TERM; echo ready; while true; do sleep 0.1; done";
    server.with(|s| s.queued.push(setup.start(lease, 6, command, &[])));
    wait_for(&server, 60, "the workload to start", |s| {
        s.logs
            .get(&lease)
            .filter(|l| l.tail.contains("ready"))
            .map(|_| ())
    })
    .await;
    let deadline = Utc::now() + chrono::Duration::seconds(30);
    server.with(|s| {
        s.queued.push(Assignment {
            lease_id: lease,
            action: AssignmentAction::Preempt {
                preempt_at: deadline,
            },
        })
    });
    let report = wait_for(&server, 40, "ended", |s| ended(s, lease)).await;
    assert!(
        report.at < deadline - chrono::Duration::seconds(20),
        "ended only at the SIGKILL"
    );
    // podman relays the signal and the workload's own exit code.
    assert_eq!(
        report.status,
        AssignmentStatus::Ended {
            exit_code: Some(0),
            signal: None,
            reason: EndReason::Preempted
        }
    );
    let logs = wait_for(&server, 5, "final logs", |s| {
        s.logs.get(&lease).filter(|l| l.complete).cloned()
    })
    .await;
    assert!(logs.tail.contains("got-term"), "{}", logs.tail);
}

/// An order's image is the code it runs: a node without containers fails
/// the lease, unbilled, rather than run the command on the host instead.
#[tokio::test]
async fn an_image_order_fails_on_a_node_that_runs_no_images() {
    let server = FakeServer::start().await;
    let spool = temp_dir("no-images");
    let _agent = spawn_agent(&server, &spool, &[]);
    wait_for(&server, 20, "registration", |s| {
        s.registrations.first().cloned()
    })
    .await;
    let lease = Uuid::new_v4();
    let mut assignment = start(lease, Partition::Whole, 6, "echo ran-on-the-host");
    if let AssignmentAction::Start { image, .. } = &mut assignment.action {
        *image = Some("nvcr.io/nvidia/cuda:12.4.0-base-ubuntu22.04".into());
    }
    server.with(|s| s.queued.push(assignment));
    let failed = wait_for(&server, 20, "failed", |s| {
        s.status_of(lease, |st| matches!(st, AssignmentStatus::Failed { .. }))
    })
    .await;
    match failed.status {
        AssignmentStatus::Failed { reason } => {
            assert!(reason.contains("runs no images"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    assert!(
        server.with(|s| provisioned(s, lease)).is_none(),
        "it was billed"
    );
}
