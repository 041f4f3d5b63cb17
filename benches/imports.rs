//! Job-history imports at size (issue 40): a generated `sacct --parsable2`
//! file of 100,000 and of 1,000,000 jobs, uploaded through `POST
//! /v1/profile/imports` to a `gpuex serve` process on SQLite, streamed as
//! the CLI streams it. Each run reports its time, rows per second, and the
//! server's peak resident memory above what it held before (Linux resets
//! the high-water mark through `/proc/PID/clear_refs`).
//!
//! The baseline, in the same run: reading and SHA-256-hashing the same file
//! in this process, the least any import must do with its bytes.
//!
//! `cargo bench --bench imports` (`GPUEX_BENCH_IMPORT_ROWS=100000,1000000`)

use sha2::{Digest, Sha256};
use std::io::{BufWriter, Read, Write};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::process::{Child, Command};

const ADMIN_EMAIL: &str = "admin@bench.test";
const ADMIN_PASSWORD: &str = "bench-password-1";

/// A deterministic job mix: starts over 30 days, 1 minute to 24 hours,
/// 1 to 8 GPUs of three GRES types (one untyped), 50 accounts.
fn write_sacct(path: &Path, rows: u64) -> u64 {
    let file = std::fs::File::create(path).expect("create the file");
    let mut out = BufWriter::with_capacity(1 << 20, file);
    writeln!(
        out,
        "JobID|JobName|Partition|Account|User|AllocCPUS|State|Start|End|AllocTRES"
    )
    .expect("write");
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let epoch = chrono::DateTime::parse_from_rfc3339("2026-10-01T00:00:00Z")
        .expect("a time")
        .timestamp();
    for id in 0..rows {
        let start = epoch + (next() % (30 * 86_400)) as i64;
        let end = start + 60 + (next() % 86_400) as i64;
        let gpus = 1 + next() % 8;
        let tres = match next() % 3 {
            0 => {
                format!("billing={gpus},cpu=8,gres/gpu:a100={gpus},gres/gpu={gpus},mem=64G,node=1")
            }
            1 => {
                format!("billing={gpus},cpu=8,gres/gpu:h100={gpus},gres/gpu={gpus},mem=64G,node=1")
            }
            _ => format!("billing={gpus},cpu=8,gres/gpu={gpus},mem=64G,node=1"),
        };
        let at = |t: i64| {
            chrono::DateTime::from_timestamp(t, 0)
                .expect("a time")
                .format("%Y-%m-%dT%H:%M:%S")
        };
        writeln!(
            out,
            "{id}|job{id}|gpu|acct{}|user{}|8|COMPLETED|{}|{}|{tres}",
            next() % 50,
            next() % 500,
            at(start),
            at(end)
        )
        .expect("write");
    }
    out.flush().expect("flush");
    std::fs::metadata(path).expect("metadata").len()
}

fn hash_file(path: &Path) -> Duration {
    let started = Instant::now();
    let mut file = std::fs::File::open(path).expect("open");
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 256 * 1024];
    loop {
        let n = file.read(&mut buffer).expect("read");
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    std::hint::black_box(hasher.finalize());
    started.elapsed()
}

/// (VmRSS, VmHWM) of `pid`, in MiB.
fn memory_mib(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn start_server(database: &str) -> (Child, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let listen = format!("127.0.0.1:{port}");
    let child = Command::new(env!("CARGO_BIN_EXE_gpuex"))
        .args(["serve", "--listen", &listen])
        .env("DATABASE_URL", database)
        .env("GPUEX_JWT_SECRET", "bench-secret-known-to-the-bench")
        .env("GPUEX_ADMIN_EMAIL", ADMIN_EMAIL)
        .env("GPUEX_ADMIN_PASSWORD", ADMIN_PASSWORD)
        .env("GPUEX_TOKEN_TTL_S", "3600")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn gpuex serve");
    (child, format!("http://{listen}"))
}

async fn login(client: &reqwest::Client, base: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let r = client
            .post(format!("{base}/v1/auth/login"))
            .json(&serde_json::json!({"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD}))
            .send()
            .await;
        if let Ok(r) = r {
            if r.status().is_success() {
                let body: serde_json::Value = r.json().await.expect("json");
                return body["access_token"].as_str().expect("a token").to_owned();
            }
        }
        assert!(Instant::now() < deadline, "the server did not start");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::main]
async fn main() {
    let sizes: Vec<u64> = std::env::var("GPUEX_BENCH_IMPORT_ROWS")
        .unwrap_or_else(|_| "100000,1000000".to_owned())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let dir = tempfile::tempdir().expect("temp dir");
    let database = format!("sqlite://{}/bench.db?mode=rwc", dir.path().display());
    let (mut server, base) = start_server(&database);
    let pid = server.id().expect("the server's pid");
    let client = reqwest::Client::new();
    let token = login(&client, &base).await;
    println!("rows       MB   import s  rows/s      MB/s   hash s  import÷hash  peak RSS +MiB  bytes/row");
    for rows in sizes {
        let path = dir.path().join(format!("sacct-{rows}.txt"));
        let bytes = write_sacct(&path, rows);
        let hashed = hash_file(&path);
        let before = memory_mib(pid).0;
        // Resets the server's high-water mark to its current RSS.
        let _ = std::fs::write(format!("/proc/{pid}/clear_refs"), "5");
        let started = Instant::now();
        let file = tokio::fs::File::open(&path).await.expect("open");
        let body = reqwest::Body::wrap_stream(tokio_util::io::ReaderStream::new(file));
        let r = client
            .post(format!("{base}/v1/profile/imports?format=slurm"))
            .bearer_auth(&token)
            .header("content-type", "application/octet-stream")
            .body(body)
            .send()
            .await
            .expect("an answer");
        let status = r.status();
        let answer: serde_json::Value = r.json().await.expect("json");
        let took = started.elapsed();
        assert!(status.is_success(), "{status}: {answer}");
        assert_eq!(answer["rows"].as_u64(), Some(rows), "{answer}");
        let peak = memory_mib(pid).1;
        let mb = bytes as f64 / 1e6;
        println!(
            "{rows:<9} {mb:>5.0}  {:>8.2}  {:>9.0}  {:>5.0}  {:>7.2}  {:>10.1}  {:>13.0}  {:>9.1}",
            took.as_secs_f64(),
            rows as f64 / took.as_secs_f64(),
            mb / took.as_secs_f64(),
            hashed.as_secs_f64(),
            took.as_secs_f64() / hashed.as_secs_f64(),
            peak - before,
            (peak - before) * 1024.0 * 1024.0 / rows as f64,
        );
        std::fs::remove_file(&path).expect("remove");
    }
    let _ = server.kill().await;
}
