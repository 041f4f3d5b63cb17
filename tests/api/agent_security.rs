//! Safe execution on provider hosts (ARCHITECTURE.md §13), with the real agent on the
//! simulated backend: two buyers' workloads on one node cannot read each
//! other's environment, files or folders, signal each other or write outside
//! their folders, and run as pool users; a kill -9 of the agent leaves no
//! workload it does not account for; artifacts are fetched and checked
//! before a lease is provisioned (and billed); orders' artifacts are
//! validated.

use crate::agent_process::{alive, gaps, intervals, work_root, Agent};
use crate::fleet::{
    self, create_node, eventually, lease, market, node_view, on_both_databases_fast, place,
};
use crate::helpers::TestApp;
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use uuid::Uuid;

use crate::uid_pool::fresh_uid_pool as uid_pool;

fn pool_range(pool: &str) -> (u32, u32) {
    let (a, b) = pool.split_once('-').unwrap();
    (a.parse().unwrap(), b.parse().unwrap())
}

/// The live pids carrying `GPUEX_LEASE_ID=lease` (the test runs as root).
fn lease_pids(lease: Uuid) -> Vec<i32> {
    let mark = format!("GPUEX_LEASE_ID={lease}");
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|e| e == mark.as_bytes()))
        })
        .filter(|pid| alive(*pid))
        .collect()
}

/// The root of the lease's processes (its shell, which lives as long as the
/// lease): the one whose parent is not the lease's, the first started if
/// several. Not the lowest pid: pids wrap (at 32,768 on CI hosts), and the
/// lowest may be one of the loop's short `sleep`s, gone a moment later.
fn lease_root(pids: &[i32]) -> i32 {
    let stat = |pid: i32| -> Option<(i32, u64)> {
        let line = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The fields after the name start at field 3: the parent is field 4,
        // the start time field 22.
        let fields: Vec<&str> = line
            .get(line.rfind(')')? + 1..)?
            .split_whitespace()
            .collect();
        Some((fields.get(1)?.parse().ok()?, fields.get(19)?.parse().ok()?))
    };
    *pids
        .iter()
        .min_by_key(|pid| match stat(**pid) {
            Some((parent, started)) => (pids.contains(&parent), started),
            None => (true, u64::MAX),
        })
        .expect("the lease has processes")
}

fn uid_of(pid: i32) -> Option<u32> {
    std::fs::metadata(format!("/proc/{pid}"))
        .ok()
        .map(|m| m.uid())
}

/// The live pids of `uid`.
fn uid_pids(uid: u32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| uid_of(*pid) == Some(uid) && alive(*pid))
        .collect()
}

async fn logs(app: &TestApp, token: &str, id: Uuid) -> String {
    app.get(&format!("/v1/leases/{id}/logs"), Some(token))
        .await
        .body["tail"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

/// What each workload tries against the other once the test tells it who
/// the other is (in `peer`: `PEER_PID=… PEER_DIR=…`). Every attempt prints
/// `blocked …` or `BREACH …`.
fn attacker(peer: &Path, spool: &Path, sandbox: bool) -> String {
    let work = work_root(spool);
    let (spool, work) = (spool.display(), work.display());
    let extra = if sandbox {
        // The host is read-only in the sandbox, world-writable folders too.
        "try touch /var/tmp/gpuex-breach-$ROLE; "
    } else {
        // Under `process` the host's world-writable folders are the lease's
        // own: each workload wrote its file there, and sees none of the other's.
        "theirs=$(ls /tmp /var/tmp /dev/shm 2>/dev/null | grep gpuex-shared- | grep -v gpuex-shared-$ROLE); \
         if [ -n \"$theirs\" ]; then echo \"BREACH shared tmp: $theirs\"; else echo \"blocked shared tmp\"; fi; "
    };
    format!(
        "echo \"whoami uid=$(id -u) gid=$(id -g) home=$HOME\"; echo \"secret-$ROLE\" > mine.txt; \
         for d in /tmp /var/tmp /dev/shm; do echo \"secret-$ROLE\" > $d/gpuex-shared-$ROLE; done; \
         echo \"agent-token=${{GPUEX_AGENT_TOKEN:-none}}\"; \
         while [ ! -f {peer} ]; do sleep 0.1; done; . {peer}; \
         try() {{ if \"$@\" >/dev/null 2>&1; then echo \"BREACH $*\"; else echo \"blocked $*\"; fi; }}; \
         tryls() {{ out=$(ls -a \"$1\" 2>/dev/null) || {{ echo \"blocked ls $1\"; return; }}; \
           case \"$out\" in *leases.json*|*agent_id*|*$(basename $PEER_DIR)*) echo \"BREACH ls $1\";; \
           *) echo \"blocked ls $1 (an empty stand-in)\";; esac; }}; \
         try cat /proc/$PEER_PID/environ; tryls $PEER_DIR; try cat $PEER_DIR/mine.txt; \
         try touch $PEER_DIR/x; try kill -0 $PEER_PID; try kill -TERM $PEER_PID; \
         tryls {spool}; try cat {spool}/leases.json; try cat {spool}/agent_id; try touch {spool}/x; \
         tryls {work}; try touch {work}/x; try touch /etc/gpuex-breach; try touch /usr/gpuex-breach; \
         {extra}echo done-attacks; while true; do sleep 0.2; done",
        peer = peer.display()
    )
}

async fn two_buyers_cannot_reach_each_other(app: TestApp, launcher: &str) {
    let sandbox = launcher == "sandbox";
    if sandbox && crate::require::require("bubblewrap", crate::require::bubblewrap()).is_none() {
        return;
    }
    let m = market(&app).await;
    let (buyer_b, buyer_b_id) = app.user("buyer").await;
    assert!(app
        .credit(&m.admin, buyer_b_id, "1000")
        .await
        .status
        .is_success());
    let node = create_node(
        &app,
        &m.provider,
        json!({"name": "sim", "region": "eu-west"}),
    )
    .await;
    let spool = tempfile::tempdir().unwrap();
    // Peer notes live outside /tmp, which the sandbox replaces, and are
    // world-readable: the workloads only read them.
    let peers = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    std::fs::set_permissions(peers.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let pool = uid_pool();
    let (first, last) = pool_range(&pool);
    let _agent = Agent::start_args(
        &app,
        &node.token,
        spool.path(),
        &["--launcher", launcher, "--uid-pool", &pool],
    )
    .await;
    eventually(20, "the agent to register", || async {
        node_view(&app, &m.provider, node.id).await["status"] == "online"
    })
    .await;

    let mut ids = Vec::new();
    for (role, buyer) in [("a", &m.buyer), ("b", &buyer_b)] {
        let mut body = fleet::order("on_demand");
        body["command"] = json!(attacker(&peers.path().join(role), spool.path(), sandbox));
        body["env"] = json!({"ROLE": role, "SECRET": format!("{role}-secret-value")});
        ids.push(place(&app, buyer, body).await);
    }
    let (a, b) = (ids[0], ids[1]);
    for (id, buyer) in [(a, &m.buyer), (b, &buyer_b)] {
        eventually(15, "the lease to run", || async {
            lease(&app, buyer, id).await["state"] == "running"
        })
        .await;
    }
    // Each workload's pids and folder, as the host sees them.
    let mut info = Vec::new();
    for id in [a, b] {
        let mut pids = Vec::new();
        eventually(15, "the workload's processes", || {
            pids = lease_pids(id);
            let ok = !pids.is_empty();
            async move { ok }
        })
        .await;
        let uids: std::collections::BTreeSet<u32> =
            pids.iter().filter_map(|p| uid_of(*p)).collect();
        assert_eq!(uids.len(), 1, "one user per lease: {uids:?}");
        let uid = *uids.iter().next().unwrap();
        assert!(
            uid != 0 && (first..=last).contains(&uid),
            "uid {uid} is not of the pool {pool}"
        );
        let dir = std::fs::canonicalize(work_root(spool.path()).join(id.to_string())).unwrap();
        let meta = std::fs::metadata(&dir).unwrap();
        assert_eq!(
            meta.permissions().mode() & 0o777,
            0o700,
            "{}",
            dir.display()
        );
        assert_eq!(meta.uid(), uid);
        info.push((id, lease_root(&pids), dir, uid));
    }
    assert_ne!(info[0].3, info[1].3, "two leases never share a user");
    for (me, other) in [(0, 1), (1, 0)] {
        let role = if me == 0 { "a" } else { "b" };
        let (_, pid, dir, _) = &info[other];
        let note = peers.path().join(role);
        std::fs::write(
            note.with_extension("tmp"),
            format!("PEER_PID={pid}\nPEER_DIR={}\n", dir.display()),
        )
        .unwrap();
        std::fs::set_permissions(
            note.with_extension("tmp"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        std::fs::rename(note.with_extension("tmp"), &note).unwrap();
    }
    for (id, buyer) in [(a, &m.buyer), (b, &buyer_b)] {
        eventually(20, "the attacks to finish", || async {
            logs(&app, buyer, id).await.contains("done-attacks")
        })
        .await;
        let tail = logs(&app, buyer, id).await;
        assert!(!tail.contains("BREACH"), "{launcher}: {tail}");
        let blocked = tail.lines().filter(|l| l.starts_with("blocked ")).count();
        assert_eq!(blocked, 15, "{tail}");
        assert!(tail.contains("agent-token=none"), "{tail}");
        assert!(!tail.contains("uid=0 "), "{tail}");
        assert!(!tail.contains("-secret-value"), "{tail}");
    }
    for (_, pid, _, _) in &info {
        assert!(alive(*pid), "a workload was killed by the other");
    }
    assert!(!Path::new("/etc/gpuex-breach").exists() && !Path::new("/usr/gpuex-breach").exists());
    // What the workloads wrote to /tmp and the like stayed in their own.
    for shared in ["/tmp", "/var/tmp", "/dev/shm"] {
        for role in ["a", "b"] {
            let left = Path::new(shared).join(format!("gpuex-shared-{role}"));
            assert!(
                !left.exists(),
                "{launcher}: {} is on the host",
                left.display()
            );
        }
    }

    // The end of a lease takes its processes, its folder and its user's claim.
    let r = app
        .post(
            &format!("/v1/leases/{a}/release"),
            Some(&m.buyer),
            json!({}),
        )
        .await;
    assert!(r.status.is_success(), "{}", r.body);
    let (_, _, dir, uid) = info[0].clone();
    eventually(
        15,
        "the released lease's processes and folder to go",
        || {
            let gone = uid_pids(uid).is_empty() && !dir.exists();
            async move { gone }
        },
    )
    .await;
    assert!(alive(info[1].1), "the other lease runs on");
}

on_both_databases_fast! {
    async fn process_launcher_workloads_of_two_buyers_cannot_reach_each_other(app) {
        two_buyers_cannot_reach_each_other(app, "process").await;
    }

    async fn sandbox_launcher_workloads_of_two_buyers_cannot_reach_each_other(app) {
        two_buyers_cannot_reach_each_other(app, "sandbox").await;
    }
}

/// A workload whose children escape every way a process can: one in the
/// background of its group, one in a new session, one in a new session
/// with a cleared environment (no marks).
const ESCAPING: &str =
    "sleep 300 & setsid sleep 301 & env -i setsid sleep 302 & echo started; wait";

on_both_databases_fast! {
    async fn a_kill_9_of_the_agent_leaves_no_workload_it_does_not_account_for(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, json!({"name": "sim", "region": "eu-west"})).await;
        let spool = tempfile::tempdir().unwrap();
        let pool = uid_pool();
        let args = ["--launcher", "process", "--uid-pool", pool.as_str()];
        let agent = Agent::start_args(&app, &node.token, spool.path(), &args).await;
        eventually(20, "the agent to register", || async {
            node_view(&app, &m.provider, node.id).await["status"] == "online"
        })
        .await;
        let mut ids = Vec::new();
        for _ in 0..2 {
            let mut body = fleet::order("on_demand");
            body["command"] = json!(ESCAPING);
            ids.push(place(&app, &m.buyer, body).await);
        }
        let mut uids = Vec::new();
        for &id in &ids {
            let mut pids = Vec::new();
            eventually(15, "the workload and its children", || {
                pids = lease_pids(id);
                let ok = pids.len() >= 3;
                async move { ok }
            })
            .await;
            uids.push(uid_of(pids[0]).unwrap());
        }
        eventually(15, "usage to accrue", || async {
            crate::agent_process::metered_s(&app, &m.buyer, ids[0]).await >= 1.0
        })
        .await;
        let before: Vec<i32> = uids.iter().flat_map(|u| uid_pids(*u)).collect();
        // The child with a cleared environment carries no marks: only its
        // user tells it is the lease's.
        assert!(before.len() >= 8, "{before:?}");

        agent.kill().await;
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        assert!(before.iter().all(|p| alive(*p)), "a killed agent stops nothing");
        let _agent = Agent::start_args(&app, &node.token, spool.path(), &args).await;
        eventually(20, "what the killed agent left to be ended", || {
            let left: Vec<i32> = before.iter().copied().filter(|p| alive(*p)).collect();
            async move { left.is_empty() }
        })
        .await;
        // The server wants both leases running: the new agent starts them
        // anew, and every process of theirs is one it started.
        for &id in &ids {
            eventually(20, "the lease to run again", || {
                let pids = lease_pids(id);
                let fresh = !pids.is_empty() && pids.iter().all(|p| !before.contains(p));
                async move { fresh }
            })
            .await;
            assert_eq!(lease(&app, &m.buyer, id).await["state"], "running");
        }
        // Billing: every stretch metered once, with at most the gap of the restart.
        tokio::time::sleep(std::time::Duration::from_secs(3)).await;
        for &id in &ids {
            let spans = intervals(&app, id).await;
            let gaps = gaps(&spans);
            assert!(gaps.len() <= 1 && gaps.iter().all(|g| *g < 10_000), "{gaps:?} in {spans:?}");
        }
        let batches = fleet::scalar(&app, "SELECT COUNT(*) FROM usage_batches").await;
        let last = fleet::scalar(&app, "SELECT MAX(seq) FROM usage_batches").await;
        assert_eq!(batches, last, "every seq from 1 applied exactly once");
    }
}

/// Serves `body` at any path on 127.0.0.1, one request per connection.
async fn serve(body: Vec<u8>) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let body = body.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf).await;
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = s.write_all(head.as_bytes()).await;
                let _ = s.write_all(&body).await;
            });
        }
    });
    format!("http://{addr}")
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn example_train_py() -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/train.py")).unwrap()
}

on_both_databases_fast! {
    async fn an_artifact_is_fetched_and_run_and_a_wrong_hash_fails_the_lease_unbilled(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, json!({"name": "sim", "region": "eu-west"})).await;
        let spool = tempfile::tempdir().unwrap();
        let pool = uid_pool();
        // The artifacts are served on 127.0.0.1.
        let args = ["--uid-pool", &pool, "--artifact-allow-private"];
        let _agent = Agent::start_args(&app, &node.token, spool.path(), &args).await;
        eventually(20, "the agent to register", || async {
            node_view(&app, &m.provider, node.id).await["status"] == "online"
        })
        .await;
        let script = example_train_py();
        let base = serve(script.clone()).await;

        let mut body = fleet::order("on_demand");
        body["command"] = json!("python3 train.py --epochs 3 --step-s 0.1");
        body["artifacts"] = json!([{"url": format!("{base}/train.py"), "sha256": sha256_hex(&script), "path": "train.py"}]);
        let good = place(&app, &m.buyer, body).await;
        eventually(20, "the example to train", || async {
            logs(&app, &m.buyer, good).await.contains("epoch 3/3")
        })
        .await;
        let tail = logs(&app, &m.buyer, good).await;
        assert!(tail.contains("sha256 ok"), "the fetch's progress is in the logs: {tail}");

        let mut body = fleet::order("on_demand");
        body["command"] = json!("python3 train.py");
        body["artifacts"] = json!([{"url": format!("{base}/train.py"), "sha256": "0".repeat(64), "path": "train.py"}]);
        let bad = place(&app, &m.buyer, body).await;
        eventually(20, "the lease to fail", || async {
            lease(&app, &m.buyer, bad).await["state"] == "failed"
        })
        .await;
        let failed = lease(&app, &m.buyer, bad).await;
        assert_eq!(failed["end_reason"], "agent_failed", "{failed}");
        // Why, without the hash of what came back.
        assert_eq!(failed["failure"], "artifacts[0]: sha256 mismatch", "{failed}");
        assert_eq!(failed["usage"]["charged"].as_str().unwrap().parse::<rust_decimal::Decimal>().unwrap(), rust_decimal::Decimal::ZERO, "{failed}");
        assert!(intervals(&app, bad).await.is_empty(), "a lease that never ran is never metered");
        eventually(10, "the reason in the logs", || async {
            logs(&app, &m.buyer, bad).await.contains("sha256 mismatch")
        })
        .await;
        let sql = format!("SELECT COUNT(*) FROM charges WHERE lease_id = '{bad}'");
        let charges = fleet::scalar(&app, &sql).await;
        assert_eq!(charges, 0);
    }
}

on_both_databases_fast! {
    async fn orders_artifacts_and_image_are_validated_field_by_field(app) {
        let m = market(&app).await;
        let cases: Vec<(Value, &str)> = vec![
            (json!([{"url": "ftp://x/y", "sha256": "a".repeat(64), "path": "x"}]), "artifacts[0].url"),
            (json!([{"url": "http://x/y", "sha256": "abc", "path": "x"}]), "artifacts[0].sha256"),
            (json!([{"url": "http://x/y", "sha256": "a".repeat(64), "path": "../etc/passwd"}]), "artifacts[0].path"),
            (json!([{"url": "http://x/y", "sha256": "a".repeat(64), "path": "/abs"}]), "artifacts[0].path"),
            (json!([{"url": "http://x/y", "sha256": "a".repeat(64), "path": "a"},
                    {"url": "http://x/z", "sha256": "b".repeat(64), "path": "a"}]), "artifacts[1].path"),
            (json!((0..17).map(|i| json!({"url": "http://x/y", "sha256": "a".repeat(64), "path": format!("f{i}")})).collect::<Vec<_>>()), "artifacts"),
        ];
        for (artifacts, field) in cases {
            let mut body = fleet::order("on_demand");
            body["artifacts"] = artifacts;
            let r = app.post("/v1/orders", Some(&m.buyer), body).await;
            assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
            assert!(r.body.to_string().contains(&format!("\"{field}\"")), "{field}: {}", r.body);
        }
        let mut body = fleet::order("on_demand");
        body["image"] = json!("bad image with spaces");
        let r = app.post("/v1/orders", Some(&m.buyer), body).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
        assert!(r.body.to_string().contains("\"image\""), "{}", r.body);
    }
}

on_both_databases_fast! {
    async fn the_container_launcher_runs_the_orders_image(app) {
        let scratch = tempfile::tempdir().unwrap();
        let Some(podman) = crate::require::require("podman", crate::require::podman_image(scratch.path())) else {
            return;
        };
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, json!({"name": "sim", "region": "eu-west"})).await;
        let spool = tempfile::tempdir().unwrap();
        let pool = uid_pool();
        // GPU UUIDs of this agent's own. Nothing of podman's is configured
        // here: the agent writes the lease's CDI spec and sets the rlimits
        // podman may hand on itself.
        let hostname = format!("container-{}", Uuid::new_v4().simple());
        let _agent = Agent::start_args_env(
            &app,
            &node.token,
            spool.path(),
            &["--launcher", "container", "--uid-pool", &pool, "--hostname", &hostname],
            &[],
        )
        .await;
        eventually(20, "the agent to register", || async {
            node_view(&app, &m.provider, node.id).await["status"] == "online"
        })
        .await;
        let view = node_view(&app, &m.provider, node.id).await;
        let uuids: Vec<String> = view["gpus"]
            .as_array()
            .expect("the node's GPUs")
            .iter()
            .filter_map(|g| g["uuid"].as_str().map(str::to_owned))
            .collect();
        assert!(!uuids.is_empty(), "{view}");
        let mut body = fleet::order("on_demand");
        body["resources"]["isolation"] = json!("whole");
        body["image"] = json!(podman.image);
        body["command"] = json!("echo uid=$(id -u); echo map; cat /proc/self/uid_map; touch /etc/x 2>/dev/null && echo BREACH; echo done; sleep 1");
        let id = place(&app, &m.buyer, body).await;
        let cdi = std::path::Path::new("/var/run/cdi").join(format!("gpuex-lease-{id}.json"));
        eventually(60, "the container's output", || async {
            let view = lease(&app, &m.buyer, id).await;
            let tail = logs(&app, &m.buyer, id).await;
            assert!(
                tail.contains("done") || !["failed", "ended"].contains(&view["state"].as_str().unwrap_or("")),
                "the container ended without its output: {view}\nlogs: {tail}"
            );
            tail.contains("done")
        })
        .await;
        let tail = logs(&app, &m.buyer, id).await;
        assert!(!tail.contains("BREACH") && !tail.contains("uid=0\n"), "{tail}");
        // A user namespace: root inside is the agent's subordinate uid, never
        // the host's root; the pool's uids keep their numbers.
        let map: Vec<Vec<u64>> = tail
            .split("map\n")
            .nth(1)
            .unwrap_or_default()
            .lines()
            .map(|l| l.split_whitespace().filter_map(|n| n.parse().ok()).collect::<Vec<u64>>())
            .take_while(|f| f.len() == 3)
            .collect();
        let root = map.iter().find(|f| f[0] == 0).unwrap_or_else(|| panic!("no uid map: {tail}"));
        assert!(root[1] >= 100_000, "{tail}");
        let registered = std::fs::read_to_string("/etc/subuid").unwrap_or_default();
        assert!(registered.contains(&format!("gpuex-agent:{}:65536", root[1])), "{registered}");
        // The lease records the image by the ID it ran.
        let inspected = std::process::Command::new("podman")
            .args(["image", "inspect", "--format", "{{.Id}}", &podman.image])
            .output()
            .expect("podman image inspect");
        let image_id = format!("sha256:{}", String::from_utf8_lossy(&inspected.stdout).trim());
        assert_eq!(lease(&app, &m.buyer, id).await["image_id"], json!(image_id));
        // The agent's spec named the lease's GPU; the lease's end removes it.
        let gpu = lease(&app, &m.buyer, id).await["placement"]["gpus"][0]["index"].as_u64();
        assert!(gpu.is_some(), "the lease holds a GPU");
        eventually(30, "the lease's CDI spec to be removed", || async {
            let view = lease(&app, &m.buyer, id).await;
            ["ended", "failed"].contains(&view["state"].as_str().unwrap_or("")) && !cdi.exists()
        })
        .await;
    }
}

/// The memory cgroup a workload's `/proc/self/cgroup` names, and its limit.
const MEMORY_PROBE: &str = "python3 -c \"import sys; lines = open('/proc/self/cgroup').read().splitlines(); \
    v1 = [l.split(':', 2)[2] for l in lines if l.split(':')[1] == 'memory']; \
    path = '/sys/fs/cgroup/memory' + v1[0] + '/memory.limit_in_bytes' if v1 else '/sys/fs/cgroup' + lines[0].split(':', 2)[2] + '/memory.max'; \
    print('cgroup', path, 'limit', open(path).read().strip(), flush=True); \
    keep = bytearray(int(sys.argv[1]) * 1024 * 1024); print('allocated', len(keep), flush=True)\"";

on_both_databases_fast! {
    async fn a_workload_gets_the_memory_it_bought_and_is_killed_past_it(app) {
        if crate::require::require("cgroups", crate::require::cgroups()).is_none() {
            return;
        }
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, json!({"name": "sim", "region": "eu-west"})).await;
        let spool = tempfile::tempdir().unwrap();
        let pool = uid_pool();
        let args = ["--launcher", "process", "--uid-pool", pool.as_str()];
        let _agent = Agent::start_args(&app, &node.token, spool.path(), &args).await;
        eventually(20, "the agent to register", || async {
            node_view(&app, &m.provider, node.id).await["status"] == "online"
        })
        .await;
        let order = |megabytes: u32| {
            let mut body = fleet::order("on_demand");
            body["resources"]["memory_mib"] = json!(96);
            body["command"] = json!(format!("{MEMORY_PROBE} {megabytes}; echo exit=$?"));
            body
        };
        let within = place(&app, &m.buyer, order(16)).await;
        let beyond = place(&app, &m.buyer, order(400)).await;
        for id in [within, beyond] {
            eventually(30, "the workload to report its cgroup", || async {
                logs(&app, &m.buyer, id).await.contains("exit=")
            })
            .await;
            let tail = logs(&app, &m.buyer, id).await;
            let limit = format!("limit {}", 96 * 1024 * 1024);
            assert!(tail.contains(&limit), "the lease's own memory limit: {tail}");
            assert!(tail.contains(&id.to_string()), "a cgroup named after the lease: {tail}");
        }
        let fine = logs(&app, &m.buyer, within).await;
        assert!(fine.contains("allocated 16777216") && fine.contains("exit=0"), "{fine}");
        let killed = logs(&app, &m.buyer, beyond).await;
        assert!(!killed.contains("allocated 419430400"), "400 MiB in a 96 MiB cgroup: {killed}");
        assert!(killed.contains("exit=137"), "the kernel's OOM killer ends it (SIGKILL): {killed}");
    }
}
