//! How long a workload takes to start, by launcher (issue 36): the real
//! agent (simulated backend) against the agent tests' fake server starts a
//! lease whose command prints the kernel's uptime at its first instruction;
//! the figure is that instant minus the `provisioned` report's `at` (the
//! agent takes it right after it spawned the workload). `process` runs the
//! command through the agent's privilege-drop helper; `container` through
//! `podman run` of a busybox image imported here, with the lease's CDI spec.
//!
//! `cargo bench -p gpuex-agent --bench launch` (root, podman and runc;
//! `GPUEX_BENCH_LAUNCHES`, default 20 a launcher).

#[path = "../tests/agent/fake_server.rs"]
#[allow(dead_code)]
mod fake_server;
#[path = "../../tests/support/require.rs"]
mod require;
#[path = "../../tests/support/uid_pool.rs"]
mod uid_pool;

use fake_server::FakeServer;
use gpuex_wire::protocol::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use uuid::Uuid;

/// Kills the agent when dropped.
struct Agent(Child);

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn_agent(server: &FakeServer, spool: &Path, launcher: &str) -> Agent {
    let fleet = Path::new(env!("CARGO_MANIFEST_DIR")).join("fleets/h100-mig.toml");
    let child = Command::new(env!("CARGO_BIN_EXE_gpuex-agent"))
        .args(["--server", &server.url(), "--backend", "simulated"])
        .arg("--fleet")
        .arg(fleet)
        .arg("--spool")
        .arg(spool)
        .args(["--heartbeat-interval", "1s", "--usage-interval", "1s"])
        .args(["--uid-pool", &uid_pool::uid_pool_of(spool)])
        .args(["--launcher", launcher, "--hostname"])
        .arg(format!("launch-{}", Uuid::new_v4().simple()))
        .env("GPUEX_AGENT_TOKEN", "node-token")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the agent starts");
    Agent(child)
}

/// A start on whole GPU `gpu` (4–7 are whole in the fleet; 0–3 in MIG mode).
fn start(lease: Uuid, gpu: u32, image: Option<&str>) -> Assignment {
    Assignment {
        lease_id: lease,
        action: AssignmentAction::Start {
            placement: AgentPlacement {
                gpus: vec![gpu],
                partition: Partition::Whole,
            },
            // The kernel's uptime at the command's first instruction (busybox's
            // `date` has no sub-second field; uptime is the same clock
            // inside a container, to the hundredth of a second).
            command: Some("echo started=$(cat /proc/uptime)".into()),
            env: BTreeMap::new(),
            end_at: None,
            held: None,
            artifacts: Vec::new(),
            image: image.map(str::to_owned),
            network: false,
            limits: None,
            checkpoint: None,
            registry_auth: None,
        },
    }
}

/// Milliseconds from each lease's `provisioned` to its command's first instruction.
async fn measure(launcher: &str, image: Option<&str>, launches: usize) -> Vec<f64> {
    let server = FakeServer::start().await;
    let spool = tempfile::tempdir().expect("spool");
    let _agent = spawn_agent(&server, &spool.path().join("spool"), launcher);
    let mut taken = Vec::new();
    for n in 0..launches {
        let lease = Uuid::new_v4();
        let gpu = 4 + (n % 4) as u32;
        server.with(|s| s.queued.push(start(lease, gpu, image)));
        let deadline = Instant::now() + Duration::from_secs(60);
        let (provisioned, started) = loop {
            assert!(
                Instant::now() < deadline,
                "{launcher}: lease {lease} never printed"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
            let seen = server.with(|s| {
                let at = s
                    .status_of(lease, |st| {
                        matches!(st, AssignmentStatus::Provisioned { .. })
                    })?
                    .at;
                let line = s.logs.get(&lease)?.tail.lines().find_map(|l| {
                    let uptime = l.strip_prefix("started=")?.split_whitespace().next()?;
                    uptime.parse::<f64>().ok()
                })?;
                Some((at, line))
            });
            if let Some(seen) = seen {
                break seen;
            }
            if let Some(failed) = server
                .with(|s| s.status_of(lease, |st| matches!(st, AssignmentStatus::Failed { .. })))
            {
                panic!("{launcher}: {failed:?}");
            }
        };
        let from = provisioned.timestamp_nanos_opt().expect("a time in range") as f64 / 1e9;
        taken.push((boot_s() + started - from) * 1e3);
    }
    taken
}

/// When the machine booted, in Unix seconds: now less its uptime.
fn boot_s() -> f64 {
    let uptime = std::fs::read_to_string("/proc/uptime").expect("/proc/uptime");
    let up: f64 = uptime
        .split_whitespace()
        .next()
        .and_then(|u| u.parse().ok())
        .expect("an uptime");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs_f64();
    now - up
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at]
}

fn main() {
    let launches: usize = std::env::var("GPUEX_BENCH_LAUNCHES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let scratch = tempfile::tempdir().expect("scratch");
    let podman = require::podman_image(scratch.path()).expect("podman with a busybox image");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    println!("(to 10 ms: /proc/uptime's resolution)");
    println!("| launcher | starts | p50 | p99 |\n| --- | --- | --- | --- |");
    let mut p50s = Vec::new();
    for (launcher, image) in [
        ("process", None),
        ("container", Some(podman.image.as_str())),
    ] {
        let mut taken = runtime.block_on(measure(launcher, image, launches));
        taken.sort_by(f64::total_cmp);
        let (p50, p99) = (percentile(&taken, 0.5), percentile(&taken, 0.99));
        p50s.push(p50);
        println!("| {launcher} | {launches} | {p50:.1} ms | {p99:.1} ms |");
    }
    println!(
        "container / process at p50: {:.0} ms more",
        p50s[1] - p50s[0]
    );
}
