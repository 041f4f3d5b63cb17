//! `/internal/market/command`, the replicas' own endpoint (ARCHITECTURE.md §19):
//! a stranger's request is refused from its headers alone, before a byte of
//! its body is read, and costs no memory that stays; a signed message is
//! accepted once, for its epoch, within 30 s, and a captured one replayed,
//! re-dated, re-aimed or altered is refused.

use crate::helpers::{
    postgres_base_url, Backend, TestApp, ADMIN_EMAIL, ADMIN_PASSWORD, JWT_SECRET,
};
use gpuex::cluster::forward::{Forwarded, PATH};
use gpuex::cluster::internal::{InternalKey, EPOCH, KEY_ID, NONCE, SIGNATURE, TIMESTAMP};
use gpuex::engine::Command;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The headers of a POST whose body is announced as `length` bytes.
fn unauthenticated_head(length: usize) -> String {
    format!(
        "POST {PATH} HTTP/1.1\r\nhost: gpuex\r\ncontent-type: application/json\r\n\
         authorization: Bearer nothing-a-replica-would-send\r\ncontent-length: {length}\r\n\r\n"
    )
}

/// Reads an answer's status line and headers (up to the blank line).
async fn read_head(stream: &mut (impl AsyncReadExt + Unpin)) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte).await {
            Ok(1) => head.push(byte[0]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&head).into_owned()
}

fn status_of(head: &str) -> Option<u16> {
    head.split(' ').nth(1)?.parse().ok()
}

mod an_unauthenticated_internal_call_is_refused_before_its_body_is_sent {
    use super::*;

    async fn run(app: TestApp) {
        let address = app.address.trim_start_matches("http://").to_owned();
        let mut stream = TcpStream::connect(&address).await.expect("connect");
        // Four megabytes announced, none sent: the answer can only come
        // from the headers.
        stream
            .write_all(unauthenticated_head(4_000_000).as_bytes())
            .await
            .expect("send the headers");
        let head = tokio::time::timeout(Duration::from_secs(20), read_head(&mut stream))
            .await
            .expect("answered without waiting for the body");
        assert_eq!(status_of(&head), Some(401), "{head}");
        assert!(
            head.to_ascii_lowercase()
                .contains("content-type: application/problem+json"),
            "{head}"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        run(TestApp::spawn(Backend::Sqlite).await).await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        if postgres_base_url().is_none() {
            return;
        }
        run(TestApp::spawn(Backend::Postgres).await).await
    }
}

/// The secret every replica of `app`'s database reads, as an operator
/// would read it; and the epoch that leads now (PostgreSQL).
async fn secret_and_epoch(app: &TestApp) -> (String, i64) {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(&app.database_url)
        .await
        .expect("connect to PostgreSQL");
    let secret: String = sqlx::query_scalar("SELECT value FROM settings WHERE key = 'jwt_secret'")
        .fetch_one(&mut conn)
        .await
        .expect("the secret");
    let epoch: i64 = sqlx::query_scalar("SELECT epoch FROM market_leader WHERE shard = 0")
        .fetch_one(&mut conn)
        .await
        .expect("the leader's epoch");
    (secret, epoch)
}

fn tick() -> Vec<u8> {
    serde_json::to_vec(&Forwarded {
        command: Command::Tick.into(),
        meta: None,
        tell: Vec::new(),
    })
    .expect("a command")
}

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// Sends `body` with `headers` to the internal endpoint.
async fn send(
    app: &TestApp,
    headers: &[(&'static str, String)],
    body: &[u8],
) -> crate::helpers::Reply {
    let mut request = app
        .client
        .post(format!("{}{PATH}", app.address))
        .header("content-type", "application/json")
        .body(body.to_vec());
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    TestApp::reply(request.send().await.expect("request")).await
}

fn with(
    headers: &[(&'static str, String)],
    name: &str,
    value: &str,
) -> Vec<(&'static str, String)> {
    headers
        .iter()
        .map(|(n, v)| {
            (
                *n,
                if *n == name {
                    value.to_owned()
                } else {
                    v.clone()
                },
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_internal_call_is_accepted_once_and_every_forgery_or_replay_is_refused() {
    if postgres_base_url().is_none() {
        return;
    }
    let app = TestApp::spawn(Backend::Postgres).await;
    let (secret, epoch) = secret_and_epoch(&app).await;
    let key = InternalKey::derive(&secret);
    let body = tick();

    // A relay captures this message on its way to the leader ...
    let captured = key.sign(epoch, "POST", PATH, &body, now());
    let accepted = send(&app, &captured, &body).await;
    assert_eq!(accepted.status, 200, "{}", accepted.body);
    assert!(accepted.body["Committed"].is_object(), "{}", accepted.body);
    // ... and sends it again: the nonce was used.
    send(&app, &captured, &body)
        .await
        .assert_code(409, "replayed");

    // Each header missing.
    for name in [KEY_ID, TIMESTAMP, NONCE, EPOCH, SIGNATURE] {
        let fresh = key.sign(epoch, "POST", PATH, &body, now());
        let without: Vec<_> = fresh.into_iter().filter(|(n, _)| *n != name).collect();
        send(&app, &without, &body)
            .await
            .assert_code(401, "unauthorized");
    }
    // No headers at all, or the static bearer token of old.
    send(&app, &[], &body)
        .await
        .assert_code(401, "unauthorized");
    let bearer = [("authorization", "Bearer 0123456789abcdef".to_owned())];
    send(&app, &bearer, &body)
        .await
        .assert_code(401, "unauthorized");
    // Signed with another database's key, or naming this key's id with it.
    let forged = InternalKey::derive(JWT_SECRET).sign(epoch, "POST", PATH, &body, now());
    send(&app, &forged, &body)
        .await
        .assert_code(401, "unauthorized");
    let forged = with(&forged, KEY_ID, key.id());
    send(&app, &forged, &body)
        .await
        .assert_code(401, "unauthorized");
    // Dated 31 s ago or ahead.
    for skew in [-31, 31] {
        let stale = key.sign(epoch, "POST", PATH, &body, now() + skew);
        send(&app, &stale, &body)
            .await
            .assert_code(401, "unauthorized");
    }
    // Meant for another epoch (the last leader's, the next one's).
    for other in [epoch - 1, epoch + 1] {
        let aimed = key.sign(other, "POST", PATH, &body, now());
        send(&app, &aimed, &body)
            .await
            .assert_code(409, "wrong_epoch");
    }
    // The captured headers with a new nonce: the MAC no longer fits; with
    // their own nonce, re-dated: that nonce was used.
    let renamed = with(&captured, NONCE, &"ab".repeat(16));
    send(&app, &renamed, &body)
        .await
        .assert_code(401, "unauthorized");
    let redated = with(&captured, TIMESTAMP, &(now() + 1).to_string());
    send(&app, &redated, &body)
        .await
        .assert_code(409, "replayed");
    // A message the relay held back (never delivered), re-dated: the MAC
    // no longer fits; re-aimed at the next epoch: refused there.
    let held_back = key.sign(epoch, "POST", PATH, &body, now() - 20);
    let redated = with(&held_back, TIMESTAMP, &now().to_string());
    send(&app, &redated, &body)
        .await
        .assert_code(401, "unauthorized");
    let reaimed = with(&held_back, EPOCH, &(epoch + 1).to_string());
    send(&app, &reaimed, &body)
        .await
        .assert_code(409, "wrong_epoch");
    // A fresh signature over another body.
    let fresh = key.sign(epoch, "POST", PATH, &body, now());
    let mut altered = body.clone();
    altered.extend_from_slice(b"    ");
    send(&app, &fresh, &altered)
        .await
        .assert_code(401, "unauthorized");
    // The altered attempt did not use up its nonce: the true message passes.
    let accepted = send(&app, &fresh, &body).await;
    assert_eq!(accepted.status, 200, "{}", accepted.body);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_process_on_sqlite_accepts_no_internal_call_even_signed() {
    let app = TestApp::spawn(Backend::Sqlite).await;
    let path = app.database_url.trim_start_matches("sqlite://").to_owned();
    let secret: String = {
        use sqlx::Connection;
        let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{path}"))
            .await
            .expect("connect to SQLite");
        sqlx::query_scalar("SELECT value FROM settings WHERE key = 'jwt_secret'")
            .fetch_one(&mut conn)
            .await
            .expect("the secret")
    };
    let body = tick();
    let signed = InternalKey::derive(&secret).sign(0, "POST", PATH, &body, now());
    send(&app, &signed, &body)
        .await
        .assert_code(401, "unauthorized");
    app.stop().await;
}

/// The resident memory of process `pid`, in bytes.
fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmRSS");
    kb * 1024
}

/// One stranger's connection: the headers of a 4 MB internal call, then
/// the body, while reading the answer.
async fn flood_one(address: String, body: std::sync::Arc<Vec<u8>>) -> Option<u16> {
    let stream = TcpStream::connect(&address).await.ok()?;
    let (mut reader, mut writer) = stream.into_split();
    let send = async move {
        writer
            .write_all(unauthenticated_head(body.len()).as_bytes())
            .await?;
        // The server closes as soon as it answered: the rest of the body
        // then fails to send, as it should.
        for chunk in body.chunks(64 * 1024) {
            writer.write_all(chunk).await?;
        }
        std::io::Result::Ok(())
    };
    let read = read_head(&mut reader);
    let (_, head) = tokio::join!(send, read);
    status_of(&head)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_unauthenticated_internal_calls_with_large_bodies_leaves_no_memory_behind() {
    let dir = tempfile::tempdir().expect("temp dir");
    let database_url = format!("sqlite://{}", dir.path().join("gpuex.db").display());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let address = format!("127.0.0.1:{port}");
    let mut server = tokio::process::Command::new(env!("CARGO_BIN_EXE_gpuex"))
        .args(["serve", "--listen", &address])
        .env("DATABASE_URL", &database_url)
        .env("GPUEX_JWT_SECRET", JWT_SECRET)
        .env("GPUEX_ADMIN_EMAIL", ADMIN_EMAIL)
        .env("GPUEX_ADMIN_PASSWORD", ADMIN_PASSWORD)
        // The flood comes from one address; the caps are another test's.
        .env("GPUEX_MAX_CONNECTIONS_PER_ADDRESS", "1000")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn gpuex serve");
    let pid = server.id().expect("a pid");
    let app = TestApp::external(&format!("http://{address}"), &database_url);
    let mut ready = false;
    for _ in 0..400 {
        let answer = app
            .client
            .get(format!("{}/readyz", app.address))
            .send()
            .await;
        if answer.is_ok_and(|r| r.status() == 200) {
            ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(ready, "the server did not become ready");
    // Warm up: a few ordinary answers, so what it keeps anyway is counted before.
    for _ in 0..20 {
        assert_eq!(app.get("/healthz", None).await.status, 200);
    }
    let before = rss(pid);

    let body = std::sync::Arc::new(vec![b' '; 4_000_000]);
    let flood: Vec<_> = (0..250)
        .map(|_| tokio::spawn(flood_one(address.clone(), body.clone())))
        .collect();
    let mut statuses = Vec::new();
    for connection in flood {
        statuses.push(connection.await.expect("a flooding connection"));
    }
    assert!(
        statuses.iter().all(|s| *s == Some(401)),
        "every stranger gets 401: {statuses:?}"
    );

    // The server still answers, and its memory is what it was (allowing
    // the allocator a few seconds to hand freed pages back).
    assert_eq!(app.get("/healthz", None).await.status, 200);
    let mut after = rss(pid);
    for _ in 0..50 {
        if after <= before + 50 * 1024 * 1024 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        after = rss(pid);
    }
    assert!(
        after <= before + 50 * 1024 * 1024,
        "resident memory grew from {} MB to {} MB",
        before / (1024 * 1024),
        after / (1024 * 1024)
    );
    server.kill().await.expect("stop the server");
}
