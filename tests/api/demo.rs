//! `gpuex demo` as a user runs it: its samples run in containers (podman is
//! there under CI), the training job leaves outputs, and when the demo
//! stops its machine it resumes elsewhere from its last checkpoint.

use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};

/// Reads the demo's stdout until a line contains `needle`: every line read.
async fn read_until(
    lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    needle: &str,
    seen: &mut Vec<String>,
    within: Duration,
) {
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, lines.next_line()).await {
            Ok(Ok(Some(line))) => {
                let done = line.contains(needle);
                seen.push(line);
                if done {
                    return;
                }
            }
            _ => panic!("no `{needle}` from the demo:\n{}", seen.join("\n")),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_runs_containers_and_its_training_job_resumes_when_its_machine_stops() {
    let scratch = tempfile::tempdir().unwrap();
    if crate::require::require("podman", crate::require::podman_image(scratch.path())).is_none() {
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let mut demo = tokio::process::Command::new(env!("CARGO_BIN_EXE_gpuex"))
        .args([
            "demo",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--interrupt-after",
            "15",
        ])
        .arg("--data-dir")
        .arg(data.path())
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(demo.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    read_until(&mut lines, "Ctrl-C", &mut seen, Duration::from_secs(120)).await;
    let said = seen.join("\n");
    assert!(said.contains("with the container launcher"), "{said}");
    read_until(&mut lines, "is back", &mut seen, Duration::from_secs(120)).await;
    let said = seen.join("\n");
    let resumed = seen
        .iter()
        .find(|l| l.contains("training resumed on"))
        .unwrap_or_else(|| panic!("{said}"));
    let from: u64 = resumed
        .split("from epoch ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{resumed}"));
    assert!(from >= 1, "it started over: {resumed}");

    // The new lease's outputs: loss.csv goes on from the checkpoint's epoch.
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    let token: Value = http
        .post(format!("{base}/v1/auth/login"))
        .json(&json!({"email": "buyer@gpuex.demo", "password": "demo-buyer-password"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = token["access_token"].as_str().unwrap().to_owned();
    let lease = resumed
        .split("(lease ")
        .nth(1)
        .and_then(|r| r.split(';').next())
        .unwrap_or_else(|| panic!("{resumed}"))
        .to_owned();
    let deadline = Instant::now() + Duration::from_secs(60);
    let csv = loop {
        let r = http
            .get(format!("{base}/v1/leases/{lease}/outputs/loss.csv"))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        if r.status().is_success() {
            break r.text().await.unwrap();
        }
        assert!(Instant::now() < deadline, "no loss.csv from lease {lease}");
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    let first: u64 = csv
        .lines()
        .nth(1)
        .and_then(|l| l.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{csv}"));
    assert_eq!(first, from + 1, "{csv}");

    // Ctrl-C: the agents end their workloads and leave nothing mounted.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(demo.id().unwrap() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(90), demo.wait())
        .await
        .expect("the demo stops")
        .unwrap();
    assert!(status.success(), "{status}");
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let root = data.path().to_string_lossy().into_owned();
    assert!(
        !mounts.contains(&root),
        "lease disks left mounted:\n{mounts}"
    );
}

/// `gpuex agent …` is the agent itself (the demo runs its agents so): its
/// flags, not the client's (`--server` is both), and its subcommands.
#[test]
fn the_gpuex_binary_carries_the_agent() {
    let fleet = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/node-agent/fleets/h100-mig.toml"
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gpuex"))
        .args(["agent", "--backend", "simulated", "--fleet", fleet])
        .args(["--server", "http://127.0.0.1:9", "probe"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let probe: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(probe["backend"], "simulated");
    assert_eq!(probe["gpus"].as_array().map(Vec::len), Some(8), "{probe}");
}
