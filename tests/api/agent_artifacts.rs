//! Where the agent fetches artifacts from (ARCHITECTURE.md §19), with the real agent
//! against the real server: an agent without `--artifact-allow-private`
//! refuses an artifact on the provider's own network (here 127.0.0.1, in its
//! IPv4 and IPv6 spellings) before connecting to it, and the lease fails,
//! unbilled, with a reason that names no address, port or hash. The tests
//! that fetch from 127.0.0.1 pass the flag (`agent_security`).

use crate::agent_process::{intervals, Agent};
use crate::fleet::{
    self, create_node, eventually, lease, market, node_view, on_both_databases_fast, place,
};
use crate::helpers::TestApp;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use uuid::Uuid;

/// Serves `body` on 127.0.0.1 and counts the connections it gets.
async fn serve_counting(body: &'static [u8]) -> (u16, Arc<AtomicUsize>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            seen.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf).await;
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = s.write_all(head.as_bytes()).await;
            let _ = s.write_all(body).await;
        }
    });
    (port, count)
}

async fn logs(app: &TestApp, token: &str, id: Uuid) -> String {
    app.get(&format!("/v1/leases/{id}/logs"), Some(token))
        .await
        .body["tail"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

const SCRIPT: &[u8] = b"print('hello')\n";

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

on_both_databases_fast! {
    async fn an_agent_without_allow_private_refuses_loopback_artifacts_and_the_buyer_learns_no_address(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, json!({"name": "sim", "region": "eu-west"})).await;
        let spool = tempfile::tempdir().unwrap();
        let _agent = Agent::start_args(&app, &node.token, spool.path(), &[]).await;
        eventually(20, "the agent to register", || async {
            node_view(&app, &m.provider, node.id).await["status"] == "online"
        })
        .await;
        let (port, connections) = serve_counting(SCRIPT).await;
        // 127.0.0.1, and the IPv4-translated and 6to4 spellings of it.
        for host in ["127.0.0.1", "[::ffff:0:7f00:1]", "[2002:7f00:1::]"] {
            let mut body = fleet::order("on_demand");
            body["command"] = json!("python3 train.py");
            body["artifacts"] = json!([{"url": format!("http://{host}:{port}/train.py"),
                                        "sha256": sha256_hex(SCRIPT), "path": "train.py"}]);
            let id = place(&app, &m.buyer, body).await;
            eventually(20, "the lease to fail", || async {
                lease(&app, &m.buyer, id).await["state"] == "failed"
            })
            .await;
            let failed = lease(&app, &m.buyer, id).await;
            assert_eq!(failed["end_reason"], "agent_failed", "{failed}");
            assert_eq!(failed["failure"], "artifacts[0]: destination not allowed", "{host}: {failed}");
            assert_eq!(
                failed["usage"]["charged"].as_str().unwrap().parse::<rust_decimal::Decimal>().unwrap(),
                rust_decimal::Decimal::ZERO,
                "{failed}"
            );
            assert!(intervals(&app, id).await.is_empty(), "a lease that never ran is never metered");
            eventually(10, "the reason in the logs", || async {
                logs(&app, &m.buyer, id).await.ends_with("[gpuex-agent] failed: artifacts[0]: destination not allowed\n")
            })
            .await;
        }
        assert_eq!(connections.load(Ordering::SeqCst), 0, "the agent never connected to 127.0.0.1");
    }
}
