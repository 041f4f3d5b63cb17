//! The real `gpuex-agent` binary (simulated backend) against a fake server.

mod fake_server;
mod files;
mod leftovers;
mod lifecycle;
mod network;
#[path = "../../../tests/support/require.rs"]
mod require;
mod slice_memory;
mod tokens;
mod trust;
#[path = "../../../tests/support/uid_pool.rs"]
mod uid_pool;

use chrono::Utc;
use fake_server::{FakeServer, State};
use files::{agent_log, work_root, TempFile};
use gpuex_wire::protocol::*;
use rust_decimal::Decimal;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use uuid::Uuid;

/// A running agent; killed with SIGKILL when dropped.
struct AgentProcess {
    child: Child,
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A scratch spool directory (and its agent log beside it), removed at the end.
struct TempDir(PathBuf);

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        // A killed agent's lease disks stay mounted: detach them first.
        let work = work_root(&self.0);
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        for point in mounts.lines().filter_map(|l| l.split(' ').nth(4)) {
            if Path::new(point).starts_with(&work) {
                let _ = nix::mount::umount2(point, nix::mount::MntFlags::MNT_DETACH);
            }
        }
        let _ = std::fs::remove_dir_all(work);
        let _ = std::fs::remove_file(self.0.with_extension("log"));
    }
}

/// A folder of its own in a world-writable one (workloads run as pool users
/// write files beside it) outside /tmp, which the process launcher replaces
/// with a private one.
fn temp_dir(name: &str) -> TempDir {
    let shared = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gpuex-agent-tests");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::set_permissions(
        &shared,
        std::os::unix::fs::PermissionsExt::from_mode(0o1777),
    )
    .unwrap();
    let dir = shared.join(format!("gpuex-agent-{name}-{}", Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    TempDir(dir)
}

fn fleet(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fleets")
        .join(name)
}

fn spawn_agent(server: &FakeServer, spool: &Path, extra: &[&str]) -> AgentProcess {
    spawn_agent_env(server, spool, extra, &[])
}

/// [`spawn_agent`] with more environment for the agent itself.
fn spawn_agent_env(
    server: &FakeServer,
    spool: &Path,
    extra: &[&str],
    env: &[(&str, &str)],
) -> AgentProcess {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(spool.with_extension("log"))
        .unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_gpuex-agent"))
        .args(["--server", &server.url()])
        .env("GPUEX_AGENT_TOKEN", "node-token")
        .args(["--backend", "simulated"])
        .arg("--fleet")
        .arg(fleet("h100-mig.toml"))
        .arg("--spool")
        .arg(spool)
        .args([
            "--heartbeat-interval",
            "1s",
            "--usage-interval",
            "1s",
            "--stop-grace",
            "2s",
        ])
        .args(["--uid-pool", &uid_pool_of(spool)])
        .args(extra)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    AgentProcess { child }
}

use uid_pool::uid_pool_of;

/// Poll the server state until `f` yields something, or fail after `secs`.
async fn wait_for<T>(
    server: &FakeServer,
    secs: u64,
    what: &str,
    f: impl Fn(&State) -> Option<T>,
) -> T {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = server.with(|s| f(s)) {
            return v;
        }
        if tokio::time::Instant::now() > deadline {
            panic!("timed out waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn start(lease: Uuid, partition: Partition, gpu: u32, command: &str) -> Assignment {
    Assignment {
        lease_id: lease,
        action: AssignmentAction::Start {
            placement: AgentPlacement {
                gpus: vec![gpu],
                partition,
            },
            command: Some(command.to_string()),
            env: BTreeMap::from([("LEASE_NAME".to_string(), "demo".to_string())]),
            end_at: None,
            held: None,
            artifacts: Vec::new(),
            image: None,
            network: false,
            limits: None,
            checkpoint: None,
            registry_auth: None,
        },
    }
}

fn provisioned(s: &State, lease: Uuid) -> Option<String> {
    s.status_of(lease, |st| {
        matches!(st, AssignmentStatus::Provisioned { .. })
    })
    .map(|r| match r.status {
        AssignmentStatus::Provisioned { device, .. } => device,
        _ => unreachable!(),
    })
}

fn ended(s: &State, lease: Uuid) -> Option<StatusReport> {
    s.status_of(lease, |st| matches!(st, AssignmentStatus::Ended { .. }))
}

#[tokio::test]
async fn a_mig_lease_runs_its_command_with_the_mig_uuid_and_is_metered() {
    let server = FakeServer::start().await;
    let spool = temp_dir("mig");
    let _agent = spawn_agent(&server, &spool, &[]);

    let registration = wait_for(&server, 20, "registration", |s| {
        s.registrations.first().cloned()
    })
    .await;
    assert_eq!(registration.backend, BackendKind::Simulated);
    assert_eq!(registration.gpus.len(), 8);
    assert_eq!(
        registration.gpus[0].model.as_deref(),
        Some("H100-SXM5-80GB")
    );
    assert_eq!(registration.gpus[0].mig_mode, Some(MigMode::Enabled));
    assert_eq!(registration.gpus[0].nvlink_peers.len(), 7);

    let lease = Uuid::new_v4();
    let mig = Partition::Mig {
        profile: "1g.10gb".into(),
        start: 2,
    };
    let command = "echo \"devices=$CUDA_VISIBLE_DEVICES lease=$LEASE_NAME\"; sleep 3; echo done";
    server.with(|s| s.queued.push(start(lease, mig, 0, command)));

    let device = wait_for(&server, 10, "provisioned", |s| provisioned(s, lease)).await;
    assert!(device.starts_with("MIG-"), "{device}");
    let report = wait_for(&server, 15, "ended", |s| ended(s, lease)).await;
    assert_eq!(
        report.status,
        AssignmentStatus::Ended {
            exit_code: Some(0),
            signal: None,
            reason: EndReason::Exited
        }
    );

    let logs = wait_for(&server, 5, "the final logs", |s| {
        s.logs.get(&lease).filter(|l| l.complete).cloned()
    })
    .await;
    assert!(
        logs.tail.contains(&format!("devices={device} lease=demo")),
        "{}",
        logs.tail
    );
    assert!(logs.tail.contains("done"));

    // Usage: batches numbered 1, 2, 3 … covering the ~3 s the slice was held.
    let batches = wait_for(&server, 10, "usage for the whole lease", |s| {
        let seconds: Decimal = s
            .applied
            .values()
            .flat_map(|b| &b.records)
            .filter(|r| r.lease_id == lease)
            .map(|r| r.vram_gb_s / Decimal::from(10))
            .sum();
        (seconds >= Decimal::from(3)).then(|| s.applied.clone())
    })
    .await;
    let seqs: Vec<u64> = batches.keys().copied().collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
    let records: Vec<&UsageRecord> = batches.values().flat_map(|b| &b.records).collect();
    for pair in records.windows(2) {
        assert_eq!(
            pair[0].interval_end, pair[1].interval_start,
            "intervals are contiguous"
        );
    }
    for r in &records {
        let secs = (r.interval_end - r.interval_start).num_milliseconds();
        assert_eq!(r.tflops_s, Decimal::new(141_286, 3) * Decimal::new(secs, 3));
    }
    let total: Decimal = records.iter().map(|r| r.vram_gb_s).sum();
    assert!(
        total < Decimal::from(60),
        "{total} vram_gb·s for ~3 s of 10 GB"
    );

    let heartbeat = wait_for(&server, 5, "a heartbeat", |s| s.heartbeats.last().cloned()).await;
    assert!(heartbeat.gpus[0].fields.present() >= 20);
}

#[tokio::test]
async fn a_shared_slice_gets_the_mps_limits_and_an_illegal_mig_placement_fails() {
    let server = FakeServer::start().await;
    let spool = temp_dir("shared");
    let _agent = spawn_agent(&server, &spool, &[]);
    wait_for(&server, 20, "registration", |s| {
        s.registrations.first().cloned()
    })
    .await;

    let shared = Uuid::new_v4();
    let illegal = Uuid::new_v4();
    server.with(|s| {
        s.queued.push(start(
            shared,
            Partition::Shared {
                milli: 250,
                memory_mb: 8000,
            },
            4,
            "echo \"$CUDA_MPS_ACTIVE_THREAD_PERCENTAGE $CUDA_MPS_PINNED_DEVICE_MEM_LIMIT $CUDA_VISIBLE_DEVICES\"",
        ));
        s.queued.push(start(
            illegal,
            Partition::Mig {
                profile: "3g.40gb".into(),
                start: 2,
            },
            0,
            "true",
        ));
    });
    let device = wait_for(&server, 10, "provisioned", |s| provisioned(s, shared)).await;
    let gpu4 = server.with(|s| s.registrations[0].gpus[4].uuid.clone());
    assert_eq!(device, gpu4);
    let logs = wait_for(&server, 10, "logs", |s| {
        s.logs.get(&shared).filter(|l| l.complete).cloned()
    })
    .await;
    assert_eq!(logs.tail.trim(), format!("25 0=7629M {gpu4}"));

    let failed = wait_for(&server, 10, "failed", |s| {
        s.status_of(illegal, |st| matches!(st, AssignmentStatus::Failed { .. }))
    })
    .await;
    let AssignmentStatus::Failed { reason } = failed.status else {
        unreachable!()
    };
    assert!(reason.contains("not legal"), "{reason}");
}

#[tokio::test]
async fn spooled_usage_survives_a_kill_9_and_is_resent_and_applied_once() {
    let server = FakeServer::start().await;
    server.with(|s| s.refuse_usage = true);
    let spool = temp_dir("spool");
    let agent = spawn_agent(&server, &spool, &[]);
    wait_for(&server, 20, "registration", |s| {
        s.registrations.first().cloned()
    })
    .await;

    let lease = Uuid::new_v4();
    server.with(|s| s.queued.push(start(lease, Partition::Whole, 5, "sleep 60")));
    wait_for(&server, 10, "provisioned", |s| provisioned(s, lease)).await;

    // The server refuses usage, so batches pile up in the spool.
    let spooled = |dir: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.starts_with("usage-") && n.ends_with(".json"))
            .collect();
        names.sort();
        names
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while spooled(&spool).len() < 3 {
        assert!(tokio::time::Instant::now() < deadline, "no batches spooled");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    drop(agent); // SIGKILL mid-lease
    let killed_at = Utc::now();
    let before_restart = spooled(&spool);
    assert!(server.with(|s| s.applied.is_empty()));

    server.with(|s| s.refuse_usage = false);
    let _agent = spawn_agent(&server, &spool, &[]);
    let n = before_restart.len() as u64;
    let applied = wait_for(&server, 20, "the spooled batches", |s| {
        (s.applied.len() as u64 >= n).then(|| s.applied.clone())
    })
    .await;
    // Every batch from before the crash arrived, numbered 1..=n, each applied once.
    assert_eq!(
        applied.keys().take(n as usize).copied().collect::<Vec<_>>(),
        (1..=n).collect::<Vec<_>>()
    );
    assert!(applied
        .values()
        .flat_map(|b| &b.records)
        .all(|r| r.lease_id == lease));
    assert_eq!(server.with(|s| s.registrations.len()), 2);

    // No usage lost, none counted twice: from `provisioned` to the crash (less
    // the checkpoint period) in contiguous intervals.
    let provisioned_at = server.with(|s| {
        s.status_of(lease, |st| {
            matches!(st, AssignmentStatus::Provisioned { .. })
        })
        .unwrap()
        .at
    });
    let applied = wait_for(&server, 10, "the stretch metered after the crash", |s| {
        let mut records: Vec<UsageRecord> = s
            .applied
            .values()
            .flat_map(|b| b.records.clone())
            .filter(|r| r.lease_id == lease)
            .collect();
        records.sort_by_key(|r| r.interval_start);
        let last = records.last()?.interval_end;
        (last >= killed_at - chrono::Duration::milliseconds(1500)).then_some(records)
    })
    .await;
    assert_eq!(applied[0].interval_start, provisioned_at);
    for pair in applied.windows(2) {
        assert_eq!(
            pair[0].interval_end, pair[1].interval_start,
            "no gap, no overlap"
        );
    }
    assert!(applied.last().unwrap().interval_end <= killed_at);
    // The spool empties once everything is acknowledged.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !spooled(&spool).is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "spool never emptied"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let posts = server.with(|s| s.usage_posts.clone());
    let mut sorted = posts.clone();
    sorted.sort_unstable();
    assert_eq!(posts, sorted, "batches are sent in seq order");
}

#[tokio::test]
async fn a_preemption_notice_reaches_the_workload_as_sigterm_before_the_deadline() {
    let server = FakeServer::start().await;
    let spool = temp_dir("preempt");
    let _agent = spawn_agent(&server, &spool, &[]);
    wait_for(&server, 20, "registration", |s| {
        s.registrations.first().cloned()
    })
    .await;

    let lease = Uuid::new_v4();
    let command = "trap 'echo got-term; exit 0' TERM; echo ready; while true; do sleep 0.1; done";
    server.with(|s| s.queued.push(start(lease, Partition::Whole, 6, command)));
    wait_for(&server, 10, "the workload to start", |s| {
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
    let report = wait_for(&server, 20, "ended", |s| ended(s, lease)).await;
    assert!(report.at < deadline);
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
