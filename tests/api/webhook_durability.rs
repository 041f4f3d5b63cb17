//! The real `gpuex` process SIGKILLed while a delivery is pending: after a
//! restart on the same database the event still arrives, because
//! deliveries are rows, not tasks in memory.

use crate::durability::{call, free_port, priced_admin, start};
use crate::fleet::eventually;
use crate::helpers::{fresh_postgres_database, postgres_base_url};
use crate::webhooks::{assert_signed, waiting_order, Receiver};
use reqwest::Method;
use serde_json::json;
use std::sync::atomic::Ordering;

async fn scenario(database_url: String) {
    let c = reqwest::Client::new();
    let mut server = start(&database_url, free_port()).await;
    let b = server.base.clone();
    let admin = priced_admin(&c, &b).await;
    let credentials = json!({"email": "hooks@kill.test", "password": "a long password"});
    let mut register = credentials.clone();
    register["name"] = json!("x");
    register["role"] = json!("buyer");
    let (status, me) = call(
        &c,
        Method::POST,
        format!("{b}/v1/auth/register"),
        None,
        Some(register),
    )
    .await;
    assert_eq!(status, 201, "{me}");
    call(
        &c,
        Method::POST,
        format!("{b}/v1/admin/credits"),
        Some(&admin),
        Some(json!({"user_id": me["id"], "amount": "100"})),
    )
    .await;
    let (_, login) = call(
        &c,
        Method::POST,
        format!("{b}/v1/auth/login"),
        None,
        Some(credentials.clone()),
    )
    .await;
    let buyer = login["access_token"].as_str().unwrap().to_owned();

    let receiver = Receiver::start().await;
    receiver.status.store(500, Ordering::SeqCst);
    let (status, hook) = call(
        &c,
        Method::POST,
        format!("{b}/v1/webhooks"),
        Some(&buyer),
        Some(json!({"url": receiver.url, "events": ["order.accepted"]})),
    )
    .await;
    assert_eq!(status, 201, "{hook}");
    let (status, order) = call(
        &c,
        Method::POST,
        format!("{b}/v1/orders"),
        Some(&buyer),
        Some(waiting_order(None)),
    )
    .await;
    assert_eq!(status, 201, "{order}");
    eventually(30, "a refused attempt", || async {
        !receiver.got().is_empty()
    })
    .await;
    assert!(receiver.accepted().is_empty());

    server.child.kill().expect("SIGKILL");
    server.child.wait().ok();
    receiver.status.store(200, Ordering::SeqCst);
    let mut server = start(&database_url, free_port()).await;
    let b = server.base.clone();
    eventually(60, "the event after the restart", || async {
        !receiver.accepted().is_empty()
    })
    .await;
    let accepted = receiver.accepted();
    assert_eq!(accepted.len(), 1);
    assert_eq!(accepted[0].event_type, "order.accepted");
    assert_signed(hook["secret"].as_str().unwrap(), &accepted[0]);
    let body: serde_json::Value = serde_json::from_str(&accepted[0].body).unwrap();
    assert_eq!(body["order_id"], order["id"]);

    let (_, login) = call(
        &c,
        Method::POST,
        format!("{b}/v1/auth/login"),
        None,
        Some(credentials),
    )
    .await;
    let buyer = login["access_token"].as_str().unwrap().to_owned();
    let id = hook["id"].as_str().unwrap();
    let (status, page) = call(
        &c,
        Method::GET,
        format!("{b}/v1/webhooks/{id}/deliveries"),
        Some(&buyer),
        None,
    )
    .await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["items"].as_array().unwrap().len(), 1, "{page}");
    assert_eq!(page["items"][0]["state"], "delivered");
    let attempts = page["items"][0]["attempts"].as_array().unwrap();
    assert_eq!(attempts.last().unwrap()["status"], 200, "{page}");
    assert!(
        attempts[..attempts.len() - 1]
            .iter()
            .all(|a| a["status"] == 500),
        "{page}"
    );
    server.child.kill().ok();
    server.child.wait().ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_pending_when_the_server_is_sigkilled_arrives_after_a_restart_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    scenario(format!("sqlite://{}/hooks.db", dir.path().display())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_pending_when_the_server_is_sigkilled_arrives_after_a_restart_on_postgres() {
    if postgres_base_url().is_none() {
        return;
    }
    scenario(fresh_postgres_database().await).await;
}
