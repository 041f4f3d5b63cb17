//! The real `gpuex-agent` (simulated backend) against the real server: a
//! lease runs its command on a MIG slice, its output and usage reach the
//! buyer, a kill -9 of the agent loses and double-counts no usage, an agent
//! stopped for good leaves a lost node, and a preemption notice reaches the
//! workload as SIGTERM before its deadline.

use crate::fleet::{
    self, create_node, eventually, lease, market, node_view, on_both_databases_fast, place,
};
use crate::helpers::TestApp;
use chrono::{DateTime, Duration, DurationRound, Utc};
use rust_decimal::Decimal;
use serde_json::json;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Mutex;
use tokio::process::{Child, Command};
use uuid::Uuid;

/// `target/debug/gpuex-agent`, built once if missing.
pub(crate) fn agent_binary() -> PathBuf {
    static BUILD: Mutex<()> = Mutex::new(());
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    let binary = target.join("debug").join("gpuex-agent");
    let _guard = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    if !binary.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = std::process::Command::new(cargo)
            .args(["build", "-p", "gpuex-agent"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("run cargo build -p gpuex-agent");
        assert!(status.success(), "cargo build -p gpuex-agent failed");
    }
    binary
}

pub(crate) use crate::uid_pool::uid_pool_of;

/// A running agent for one node, with its spool.
pub(crate) struct Agent {
    pub(crate) child: Child,
    /// The leases' folders beside the spool, removed with the agent (also
    /// a killed one: an agent started again on the spool makes it anew).
    work: Option<std::path::PathBuf>,
}

impl Drop for Agent {
    fn drop(&mut self) {
        if let Some(work) = self.work.take() {
            let _ = self.child.start_kill();
            unmount_lease_disks(&work);
            let _ = std::fs::remove_dir_all(work);
        }
    }
}

/// Detach the lease disks a killed agent left mounted under `work` (an
/// agent stopped by SIGTERM unmounts its own).
pub(crate) fn unmount_lease_disks(work: &std::path::Path) {
    let Ok(mounts) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return;
    };
    for point in mounts.lines().filter_map(|l| l.split(' ').nth(4)) {
        let point = std::path::Path::new(point);
        if point.starts_with(work) {
            let _ = nix::mount::umount2(point, nix::mount::MntFlags::MNT_DETACH);
        }
    }
}

/// Where the agent on `spool` puts its leases' folders by default.
pub(crate) fn work_root(spool: &std::path::Path) -> std::path::PathBuf {
    let mut name = spool.file_name().unwrap().to_os_string();
    name.push("-work");
    spool.with_file_name(name)
}

impl Agent {
    pub(crate) async fn start(app: &TestApp, token: &str, spool: &std::path::Path) -> Agent {
        Agent::start_with(app, token, spool, "3s").await
    }

    /// `node_timeout`: how long without the server before it stops its workloads.
    async fn start_with(
        app: &TestApp,
        token: &str,
        spool: &std::path::Path,
        node_timeout: &str,
    ) -> Agent {
        let fleet = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/node-agent/fleets/h100-mig.toml"
        );
        Agent::start_fleet(app, token, spool, node_timeout, fleet.as_ref()).await
    }

    /// With the simulated GPUs of `fleet` (a fleet TOML file).
    async fn start_fleet(
        app: &TestApp,
        token: &str,
        spool: &std::path::Path,
        node_timeout: &str,
        fleet: &std::path::Path,
    ) -> Agent {
        Agent::start_full(app, token, spool, node_timeout, fleet, &[], &[]).await
    }

    /// With extra agent arguments (`--launcher`, `--uid-pool`, …).
    pub(crate) async fn start_args(
        app: &TestApp,
        token: &str,
        spool: &std::path::Path,
        extra: &[&str],
    ) -> Agent {
        let fleet = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/node-agent/fleets/h100-mig.toml"
        );
        Agent::start_full(app, token, spool, "3s", fleet.as_ref(), extra, &[]).await
    }

    /// With extra agent arguments and environment (`CONTAINERS_CONF`, …).
    pub(crate) async fn start_args_env(
        app: &TestApp,
        token: &str,
        spool: &std::path::Path,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Agent {
        let fleet = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/node-agent/fleets/h100-mig.toml"
        );
        Agent::start_full(app, token, spool, "3s", fleet.as_ref(), extra, env).await
    }

    async fn start_full(
        app: &TestApp,
        token: &str,
        spool: &std::path::Path,
        node_timeout: &str,
        fleet: &std::path::Path,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Agent {
        // Uids of this spool's agent alone (see `uid_pool_of`), unless the test picks them.
        let pool = uid_pool_of(spool);
        let default_pool = ["--uid-pool", pool.as_str()];
        let pool_args: &[&str] = if extra.contains(&"--uid-pool") {
            &[]
        } else {
            &default_pool
        };
        // Simulated GPU UUIDs follow the hostname; a test that needs its own
        // (a CDI spec of its own GPUs) names one.
        let hostname: &[&str] = if extra.contains(&"--hostname") {
            &[]
        } else {
            &["--hostname", "test-agent"]
        };
        let child = Command::new(agent_binary())
            .args(["--server", &app.address])
            .env("GPUEX_AGENT_TOKEN", token)
            .envs(env.iter().copied())
            .args(["--backend", "simulated"])
            .args(hostname)
            .arg("--fleet")
            .arg(fleet)
            .arg("--spool")
            .arg(spool)
            .args(["--heartbeat-interval", "1s", "--usage-interval", "1s"])
            .args(["--node-timeout", node_timeout, "--stop-grace", "1s"])
            .args(pool_args)
            .args(extra)
            .env("GPUEX_AGENT_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn gpuex-agent");
        Agent {
            child,
            work: Some(work_root(spool)),
        }
    }

    /// kill -9.
    pub(crate) async fn kill(mut self) {
        self.child.kill().await.expect("kill the agent");
    }
}

/// The usage intervals metered for a lease, in order.
pub(crate) async fn intervals(app: &TestApp, lease: Uuid) -> Vec<(DateTime<Utc>, DateTime<Utc>)> {
    use sqlx::Connection;
    const SQL: &str = "SELECT interval_start, interval_end FROM usage_records \
                       WHERE lease_id = $1 ORDER BY interval_start";
    match app.backend {
        crate::helpers::Backend::Sqlite => {
            let mut c = sqlx::SqliteConnection::connect(&app.database_url)
                .await
                .unwrap();
            sqlx::query_as(SQL)
                .bind(lease)
                .fetch_all(&mut c)
                .await
                .unwrap()
        }
        crate::helpers::Backend::Postgres => {
            let mut c = sqlx::PgConnection::connect(&app.database_url)
                .await
                .unwrap();
            sqlx::query_as(SQL)
                .bind(lease)
                .fetch_all(&mut c)
                .await
                .unwrap()
        }
    }
}

/// Asserts the intervals never overlap (nothing counted twice) and returns the gaps (ms).
pub(crate) fn gaps(spans: &[(DateTime<Utc>, DateTime<Utc>)]) -> Vec<i64> {
    let mut gaps = Vec::new();
    for pair in spans.windows(2) {
        let (prev_end, next_start) = (pair[0].1, pair[1].0);
        assert!(next_start >= prev_end, "usage counted twice: {spans:?}");
        if next_start > prev_end {
            gaps.push((next_start - prev_end).num_milliseconds());
        }
    }
    gaps
}

/// Seconds metered so far for a lease.
pub(crate) async fn metered_s(app: &TestApp, buyer: &str, id: Uuid) -> f64 {
    let l = lease(app, buyer, id).await;
    let tflops: f64 = l["usage"]["tflops_s"]
        .as_str()
        .unwrap_or("0")
        .parse()
        .unwrap_or(0.0);
    let per_s: f64 = l["units"]["tflops_h"]
        .as_str()
        .unwrap_or("1")
        .parse()
        .unwrap_or(1.0);
    tflops / per_s
}

const WORKLOAD: &str = "echo \"device=$CUDA_VISIBLE_DEVICES K=$K\"; i=0; while true; do i=$((i+1)); echo tick $i; sleep 0.2; done";

on_both_databases_fast! {
    async fn a_real_agent_runs_the_lease_meters_it_and_survives_a_kill_9(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, json!({"name": "sim", "region": "eu-west"})).await;
        let spool = tempfile::tempdir().unwrap();
        let agent = Agent::start(&app, &node.token, spool.path()).await;
        eventually(20, "the agent to register", || async {
            node_view(&app, &m.provider, node.id).await["status"] == "online"
        })
        .await;
        let mut body = fleet::order("on_demand");
        body["command"] = json!(WORKLOAD);
        let id = place(&app, &m.buyer, body).await;
        assert_eq!(lease(&app, &m.buyer, id).await["state"], "provisioning");
        eventually(15, "the lease to run", || async {
            lease(&app, &m.buyer, id).await["state"] == "running"
        })
        .await;
        let running = lease(&app, &m.buyer, id).await;
        let device = running["device"].as_str().unwrap().to_owned();
        assert!(device.starts_with("MIG-"), "{running}");
        let logs = format!("/v1/leases/{id}/logs");
        eventually(15, "the workload's output", || async {
            let tail = app.get(&logs, Some(&m.buyer)).await.body["tail"].as_str().unwrap_or("").to_owned();
            tail.contains(&format!("device={device} K=V")) && tail.contains("tick 2")
        })
        .await;
        eventually(15, "usage to accrue", || async { metered_s(&app, &m.buyer, id).await >= 2.0 }).await;

        // kill -9 mid-lease, then start it again on the same spool.
        agent.kill().await;
        tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
        let before = metered_s(&app, &m.buyer, id).await;
        let agent = Agent::start(&app, &node.token, spool.path()).await;
        eventually(20, "usage to accrue after the restart", || async {
            metered_s(&app, &m.buyer, id).await >= before + 3.0
        })
        .await;
        assert_eq!(lease(&app, &m.buyer, id).await["state"], "running");
        let spans = intervals(&app, id).await;
        let gaps = gaps(&spans);
        // One gap at most: from the killed process's last checkpoint to the
        // new process's provisioning, while nothing ran.
        assert!(gaps.len() <= 1, "usage lost: gaps {gaps:?} in {spans:?}");
        assert!(gaps.iter().all(|g| *g < 10_000), "gap too long: {gaps:?}");
        let batches = fleet::scalar(&app, "SELECT COUNT(*) FROM usage_batches").await;
        let last = fleet::scalar(&app, "SELECT MAX(seq) FROM usage_batches").await;
        assert_eq!(batches, last, "every seq from 1 applied exactly once");

        // Stopped for good: the node is lost and the lease ends.
        agent.kill().await;
        eventually(15, "the node to be lost", || async {
            node_view(&app, &m.provider, node.id).await["status"] == "lost"
        })
        .await;
        // The row says `lost` first; the engine ends the lease right after.
        eventually(5, "the lease to end", || async {
            lease(&app, &m.buyer, id).await["state"] == "ended"
        })
        .await;
        assert_eq!(lease(&app, &m.buyer, id).await["end_reason"], "node_lost");
    }

    async fn a_server_restart_while_the_agent_spools_applies_every_batch_once(app) {
        let mut app = app;
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, json!({"name": "sim", "region": "eu-west"})).await;
        let spool = tempfile::tempdir().unwrap();
        // The agent keeps its workloads through a server outage shorter than this.
        let _agent = Agent::start_with(&app, &node.token, spool.path(), "30s").await;
        eventually(20, "the agent to register", || async {
            node_view(&app, &m.provider, node.id).await["status"] == "online"
        })
        .await;
        let mut body = fleet::order("on_demand");
        body["command"] = json!(WORKLOAD);
        let id = place(&app, &m.buyer, body).await;
        eventually(15, "usage to accrue", || async { metered_s(&app, &m.buyer, id).await >= 2.0 }).await;

        app.halt().await;
        // The agent meters into its spool while the server is away.
        tokio::time::sleep(std::time::Duration::from_secs(4)).await;
        app.resume().await;
        let before = metered_s(&app, &m.buyer, id).await;
        eventually(20, "the spooled batches to arrive", || async {
            metered_s(&app, &m.buyer, id).await >= before + 5.0
        })
        .await;
        assert_eq!(node_view(&app, &m.provider, node.id).await["status"], "online");
        assert_eq!(lease(&app, &m.buyer, id).await["state"], "running");
        let spans = intervals(&app, id).await;
        assert_eq!(gaps(&spans), Vec::<i64>::new(), "one unbroken run, metered without a hole: {spans:?}");
        let batches = fleet::scalar(&app, "SELECT COUNT(*) FROM usage_batches").await;
        let last = fleet::scalar(&app, "SELECT MAX(seq) FROM usage_batches").await;
        assert_eq!(batches, last, "every seq from 1 applied exactly once");
    }
}

/// A workload that forks a child in its group and one that leaves it with
/// `setsid`, ignores SIGTERM, and writes the three pids to `pids`.
fn forking_workload(pids: &std::path::Path) -> String {
    format!(
        "trap '' TERM; sleep 300 & a=$!; setsid sleep 301 & b=$!; echo $$ $a $b > {tmp}; \
         mv {tmp} {out}; while true; do sleep 0.2; done",
        tmp = pids.with_extension("tmp").display(),
        out = pids.display()
    )
}

/// Whether `pid` runs (a zombie waiting for its reaper does not).
pub(crate) fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let after_name = stat.get(stat.rfind(')')? + 1..)?.to_owned();
            after_name.split_whitespace().next().map(|s| s != "Z")
        })
        .unwrap_or(false)
}

on_both_databases_fast! {
    async fn an_agent_stopped_with_sigterm_leaves_nothing_running_and_its_lease_is_charged_to_its_last_heartbeat(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, json!({"name": "sim", "region": "eu-west"})).await;
        let dir = tempfile::tempdir().unwrap();
        let mut agent = Agent::start(&app, &node.token, dir.path()).await;
        eventually(20, "the agent to register", || async {
            node_view(&app, &m.provider, node.id).await["status"] == "online"
        })
        .await;
        // The workload runs as a pool user: it writes where anyone may, outside
        // /tmp (which the process launcher replaces with one of its own).
        let shared = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        std::fs::set_permissions(shared.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
        let pid_file = shared.path().join("workload.pids");
        let mut body = fleet::order("on_demand");
        body["command"] = json!(forking_workload(&pid_file));
        let id = place(&app, &m.buyer, body).await;
        eventually(15, "the workload to start", || async {
            std::fs::read_to_string(&pid_file).is_ok_and(|t| t.split_whitespace().count() == 3)
        })
        .await;
        let pids: Vec<i32> = std::fs::read_to_string(&pid_file).unwrap()
            .split_whitespace().map(|p| p.parse().unwrap()).collect();
        struct Reap(Vec<i32>);
        impl Drop for Reap {
            fn drop(&mut self) {
                for pid in &self.0 {
                    let _ = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status();
                }
            }
        }
        let _reap = Reap(pids.clone());
        eventually(15, "the lease to run", || async {
            lease(&app, &m.buyer, id).await["state"] == "running"
        })
        .await;

        let pid = agent.child.id().unwrap().to_string();
        assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
        let status = tokio::time::timeout(std::time::Duration::from_secs(15), agent.child.wait())
            .await
            .expect("the agent stops within its stop grace")
            .unwrap();
        assert!(status.success(), "{status:?}");
        let left: Vec<i32> = pids.iter().copied().filter(|p| alive(*p)).collect();
        assert!(left.is_empty(), "still running after the agent stopped: {left:?} of {pids:?}");

        // No agent: the node is lost, and the lease charged to its last heartbeat.
        eventually(15, "the lease to end", || async {
            lease(&app, &m.buyer, id).await["state"] == "ended"
        })
        .await;
        let ended = lease(&app, &m.buyer, id).await;
        assert_eq!(ended["end_reason"], "node_lost", "{ended}");
        let last_beat: DateTime<Utc> = node_view(&app, &m.provider, node.id).await["last_heartbeat_at"]
            .as_str().unwrap().parse().unwrap();
        // The lease may have started running after that heartbeat (then
        // nothing at all was charged), so it is the charges that tell; this
        // is the only lease.
        let sql = format!(
            "SELECT COUNT(*) FROM charges WHERE period_end > {} OR kind = 'credit'",
            last_beat.timestamp()
        );
        assert_eq!(fleet::scalar(&app, &sql).await, 0, "{ended}");
        let charged: rust_decimal::Decimal = ended["usage"]["charged"].as_str().unwrap().parse().unwrap();
        assert!(charged >= rust_decimal::Decimal::ZERO, "{ended}");
    }
}

/// [`fleet::fast`] with a short preemption notice.
fn short_notice(settings: &mut gpuex::config::Settings) {
    fleet::fast(settings);
    settings.preempt_notice_s = 5;
}

/// Traps SIGTERM and says so.
const TRAPS_TERM: &str =
    "trap 'echo got-sigterm; exit 0' TERM; echo started; while true; do sleep 0.2; done";

/// `on_both_databases_fast!` with [`short_notice`].
mod a_preemption_notice_reaches_the_workload_as_sigterm_before_the_deadline {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        run(TestApp::spawn_with(crate::helpers::Backend::Sqlite, short_notice).await).await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        if crate::helpers::postgres_base_url().is_none() {
            return;
        }
        run(TestApp::spawn_with(crate::helpers::Backend::Postgres, short_notice).await).await
    }

    async fn run(app: TestApp) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, fleet::h100_node(1, "whole")).await;
        // One whole H100, as the node declares it.
        let dir = tempfile::tempdir().unwrap();
        let fleet_file = dir.path().join("one-h100.toml");
        std::fs::write(
            &fleet_file,
            "hostname = \"sim-one-h100\"\n[host]\ncpu_milli = 64000\nmemory_mib = 524288\n\
             [[gpus]]\nmodel = \"H100-SXM5-80GB\"\ncount = 1\n",
        )
        .unwrap();
        let spool = dir.path().join("spool");
        std::fs::create_dir(&spool).unwrap();
        let _agent = Agent::start_fleet(&app, &node.token, &spool, "3s", &fleet_file).await;
        eventually(20, "the agent to register", || async {
            node_view(&app, &m.provider, node.id).await["status"] == "online"
        })
        .await;
        let gpus = node_view(&app, &m.provider, node.id).await["gpus"].clone();
        assert_eq!(gpus.as_array().map(Vec::len), Some(1), "{gpus}");
        assert_eq!(gpus[0]["mode"], "whole", "{gpus}");

        // A spot bid fills at the next auction and its workload starts.
        let mut body = fleet::order("spot");
        body["max_price"] = json!("100");
        body["command"] = json!(TRAPS_TERM);
        let r = app.post("/v1/orders", Some(&m.buyer), body).await;
        assert_eq!(r.status, reqwest::StatusCode::CREATED, "{}", r.body);
        let order_path = format!("/v1/orders/{}", r.body["id"].as_str().unwrap());
        let spot = std::cell::Cell::new(None);
        eventually(15, "the spot auction to fill the bid", || async {
            let o = app.get(&order_path, Some(&m.buyer)).await.body;
            spot.set(o["lease_id"].as_str().and_then(|s| s.parse::<Uuid>().ok()));
            spot.get().is_some()
        })
        .await;
        let spot: Uuid = spot.get().unwrap();
        eventually(15, "the spot lease to run", || async {
            lease(&app, &m.buyer, spot).await["state"] == "running"
        })
        .await;
        let logs = format!("/v1/leases/{spot}/logs");
        let tail = || async {
            app.get(&logs, Some(&m.buyer)).await.body["tail"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        };
        eventually(15, "the spot workload's output", || async {
            tail().await.contains("started")
        })
        .await;
        assert!(!tail().await.contains("got-sigterm"));

        // An on-demand order for the same whole GPU waits on the notice.
        let mut body = fleet::order("on_demand");
        body["max_wait_s"] = json!(60);
        // Short, since the agent is killed at the end and leaves it running.
        body["command"] = json!("echo on-demand; sleep 10");
        let on_demand = place(&app, &m.buyer, body).await;
        let waiting = lease(&app, &m.buyer, on_demand).await;
        assert_eq!(waiting["state"], "pending", "{waiting}");
        assert!(waiting["ready_at"].is_string(), "{waiting}");
        let noticed = lease(&app, &m.buyer, spot).await;
        assert_eq!(noticed["state"], "preempting", "{noticed}");
        let preempt_at: DateTime<Utc> = noticed["preempt_at"]
            .as_str()
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("no preempt_at: {noticed}"));

        // SIGTERM reaches the workload, and its output the buyer, before the deadline.
        let seen_at = std::cell::Cell::new(None);
        eventually(15, "got-sigterm in the spot lease's logs", || async {
            let seen = tail().await.contains("got-sigterm");
            if seen {
                seen_at.set(Some(Utc::now()));
            }
            seen
        })
        .await;
        let seen_at: DateTime<Utc> = seen_at.get().unwrap();
        assert!(
            seen_at < preempt_at,
            "SIGTERM seen at {seen_at}, after the deadline {preempt_at}"
        );

        // The spot lease ends; the on-demand lease takes the GPU.
        eventually(15, "the spot lease to end", || async {
            lease(&app, &m.buyer, spot).await["state"] == "ended"
        })
        .await;
        // The trap's `exit 0`: the workload left on its own before the
        // deadline, so the server records `agent_ended`, not `preempted`;
        // but it was preempted, so the bid is back in the queue.
        let ended = lease(&app, &m.buyer, spot).await;
        assert_eq!(ended["exit_code"], 0, "{ended}");
        assert_eq!(ended["end_reason"], "agent_ended", "{ended}");
        let order = app.get(&order_path, Some(&m.buyer)).await.body;
        assert_eq!(
            order["state"], "open",
            "the preempted bid is queued again: {order}"
        );
        eventually(20, "the on-demand lease to run", || async {
            lease(&app, &m.buyer, on_demand).await["state"] == "running"
        })
        .await;
        let on_demand_logs = format!("/v1/leases/{on_demand}/logs");
        eventually(15, "the on-demand workload's output", || async {
            app.get(&on_demand_logs, Some(&m.buyer)).await.body["tail"]
                .as_str()
                .is_some_and(|t| t.contains("on-demand"))
        })
        .await;
        // The on-demand workload exits by itself; the queued bid fills again.
        eventually(30, "the spot bid to fill again", || async {
            let o = app.get(&order_path, Some(&m.buyer)).await.body;
            o["lease_id"]
                .as_str()
                .and_then(|s| s.parse::<Uuid>().ok())
                .is_some_and(|l| l != spot)
        })
        .await;
    }
}

mod resale;
