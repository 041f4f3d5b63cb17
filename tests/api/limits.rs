//! Request limits and the login throttle, driven over HTTP: parallel guesses,
//! guesses from elsewhere, trusted proxies, and the API-wide 429.

use crate::helpers::{
    generous_limits, on_both_databases, on_both_databases_with, Backend, Reply, TestApp,
    ADMIN_EMAIL, ADMIN_PASSWORD,
};
use gpuex::config::Settings;
use reqwest::header::HeaderMap;
use serde_json::json;
use std::net::IpAddr;
use tokio::task::JoinSet;

const PASSWORD: &str = "correct horse battery";

/// A login from `client`, forwarded for `forwarded_for` when given.
async fn login(
    app: &TestApp,
    client: &reqwest::Client,
    forwarded_for: Option<&str>,
    email: &str,
    password: &str,
) -> (Reply, HeaderMap) {
    let mut req = client
        .post(format!("{}/v1/auth/login", app.address))
        .json(&json!({"email": email, "password": password}));
    if let Some(xff) = forwarded_for {
        req = req.header("x-forwarded-for", xff);
    }
    let response = req.send().await.expect("login");
    let headers = response.headers().clone();
    (TestApp::reply(response).await, headers)
}

/// Sends `passwords` as parallel logins to `email`: how many were checked
/// (answered 401 or 200) and how many logged in.
async fn parallel_guesses(app: &TestApp, email: &str, passwords: Vec<String>) -> (usize, usize) {
    let mut set = JoinSet::new();
    for password in passwords {
        let (url, client, email) = (
            format!("{}/v1/auth/login", app.address),
            app.client.clone(),
            email.to_owned(),
        );
        set.spawn(async move {
            let r = client
                .post(url)
                .json(&json!({"email": email, "password": password}))
                .send()
                .await
                .expect("login");
            if r.status() == 429 {
                assert!(r.headers().contains_key("retry-after"));
            }
            r.status().as_u16()
        });
    }
    let (mut checked, mut logged_in) = (0, 0);
    while let Some(status) = set.join_next().await {
        match status.expect("task") {
            200 => {
                checked += 1;
                logged_in += 1;
            }
            401 => checked += 1,
            429 => {}
            other => panic!("unexpected status {other}"),
        }
    }
    (checked, logged_in)
}

async fn register(app: &TestApp, role: &str) -> String {
    let email = format!("{role}-{}@example.com", uuid::Uuid::new_v4().simple());
    let r = app
        .post(
            "/v1/auth/register",
            None,
            json!({"email": email, "password": PASSWORD, "name": "T", "role": role}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    email
}

fn behind_a_proxy(settings: &mut Settings) {
    settings.trusted_proxies = vec!["127.0.0.1/32".parse().expect("cidr")];
}

fn default_limits(settings: &mut Settings) {
    let defaults = Settings::with_database("");
    settings.rate_limit_rps = defaults.rate_limit_rps;
    settings.rate_limit_burst = defaults.rate_limit_burst;
    settings.rate_limit_address_rps = defaults.rate_limit_address_rps;
    settings.rate_limit_address_burst = defaults.rate_limit_address_burst;
    settings.register_per_hour = defaults.register_per_hour;
    // These tests flood with up to 150 requests at once from one address to
    // reach the request-rate limits; the connection caps in front of them
    // have their own tests (connections.rs) and must not answer first.
    settings.max_connections_per_address = 1024;
}

on_both_databases! {
    async fn parallel_wrong_guesses_check_no_more_passwords_than_the_allowed_failures(app) {
        let wrong = (0..100).map(|i| format!("wrong password {i}")).collect();
        let (checked, _) = parallel_guesses(&app, ADMIN_EMAIL, wrong).await;
        // The harness's login delay (60 s) refills no cell during the test:
        // exactly the allowed five are checked, however the guesses arrive.
        assert_eq!(checked, 5, "{checked} of 100 parallel guesses were checked");

        // A correct password among 60 parallel guesses is checked only if it
        // is among the first five, and never more than five wrong ones are:
        // its success gives back only its own cell, never a fresh budget.
        // (Whether that one cell reaches a guess still in flight is up to
        // arrival order, so with a success it is four or five.)
        let email = register(&app, "buyer").await;
        let mut guesses: Vec<String> = (0..59).map(|i| format!("wrong password {i}")).collect();
        guesses.insert(31, PASSWORD.to_owned());
        let (checked, logged_in) = parallel_guesses(&app, &email, guesses).await;
        let wrong_checked = checked - logged_in;
        let expected = if logged_in == 0 { 5..=5 } else { 4..=5 };
        assert!(expected.contains(&wrong_checked), "{wrong_checked} wrong of 60 parallel guesses were checked ({logged_in} logged in)");
    }

    async fn a_forwarded_for_header_from_an_untrusted_peer_is_ignored(app) {
        let email = register(&app, "buyer").await;
        // Each guess claims another address; without trusted proxies they
        // all count against the connection's own.
        for i in 0..5 {
            let xff = format!("203.0.113.{i}");
            login(&app, &app.client, Some(&xff), &email, "a guess").await.0.assert_problem(401, None);
        }
        let (r, _) = login(&app, &app.client, Some("203.0.113.99"), &email, "a guess").await;
        r.assert_code(429, "too_many_requests");
    }

    async fn guesses_from_another_peer_address_do_not_slow_the_owner(app) {
        let email = register(&app, "provider").await;
        let attacker = reqwest::Client::builder()
            .local_address("127.0.0.2".parse::<IpAddr>().ok())
            .build()
            .expect("client");
        let mut refused = false;
        for _ in 0..30 {
            let (r, _) = login(&app, &attacker, None, &email, "a guess").await;
            refused |= r.status == 429;
        }
        assert!(refused, "the attacker's guesses were slowed down");
        let (r, _) = login(&app, &app.client, None, &email, PASSWORD).await;
        assert_eq!(r.status, 200, "the owner is not locked out: {}", r.body);
    }
}

fn a_short_login_delay(settings: &mut Settings) {
    settings.login_delay_ms = 4000;
}

on_both_databases_with! { a_short_login_delay =>
    async fn a_delayed_owner_logs_in_once_the_delay_has_passed(app) {
        let email = register(&app, "buyer").await;
        for _ in 0..5 {
            login(&app, &app.client, None, &email, "not my password").await.0.assert_problem(401, None);
        }
        let (r, headers) = login(&app, &app.client, None, &email, PASSWORD).await;
        r.assert_code(429, "too_many_requests");
        let wait: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1..=4).contains(&wait), "the first delay is the configured 4 s, not a lockout: {wait}");
        tokio::time::sleep(std::time::Duration::from_secs(wait)).await;
        let (r, _) = login(&app, &app.client, None, &email, PASSWORD).await;
        assert_eq!(r.status, 200, "{}", r.body);
    }

}

on_both_databases_with! { behind_a_proxy =>
    async fn behind_a_trusted_proxy_guesses_count_against_the_forwarded_address(app) {
        let email = register(&app, "buyer").await;
        let mut refused = false;
        for _ in 0..30 {
            let (r, _) = login(&app, &app.client, Some("1.1.1.1, 203.0.113.7"), &email, "a guess").await;
            refused |= r.status == 429;
        }
        assert!(refused, "the attacker's guesses were slowed down");
        // The owner, behind the same proxy but from another address.
        let (r, _) = login(&app, &app.client, Some("198.51.100.2"), &email, PASSWORD).await;
        assert_eq!(r.status, 200, "the owner is not locked out: {}", r.body);

        // One address failing on many accounts is slowed on the next one,
        // and only that address is.
        for i in 0..20 {
            let (r, _) = login(&app, &app.client, Some("203.0.113.50"), &format!("u{i}@example.com"), "a guess").await;
            r.assert_problem(401, None);
        }
        let (r, _) = login(&app, &app.client, Some("203.0.113.50"), &email, PASSWORD).await;
        r.assert_code(429, "too_many_requests");
        let (r, _) = login(&app, &app.client, Some("203.0.113.51"), ADMIN_EMAIL, ADMIN_PASSWORD).await;
        assert_eq!(r.status, 200, "{}", r.body);
    }
}

on_both_databases_with! { default_limits =>
    async fn the_default_limits_answer_429_with_retry_after_and_ratelimit_headers(app) {
        let r = app.client.get(format!("{}/v1/catalog/gpus", app.address)).send().await.unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers()["ratelimit-limit"], "200");
        assert_eq!(r.headers()["ratelimit-remaining"], "199");
        assert!(r.headers().contains_key("ratelimit-reset"));

        // A caller's budget (100) is smaller than its address's (200).
        let (token, _) = app.user("buyer").await;
        let mut set = JoinSet::new();
        for _ in 0..150 {
            let (client, url, token) = (app.client.clone(), format!("{}/v1/me", app.address), token.clone());
            set.spawn(async move { client.get(url).bearer_auth(token).send().await.expect("me") });
        }
        let mut refusals = Vec::new();
        while let Some(r) = set.join_next().await {
            let r = r.expect("task");
            if r.status() == 429 {
                refusals.push(r);
            } else {
                assert_eq!(r.status(), 200);
            }
        }
        let refusal = refusals.pop().expect("a flood of one caller is refused");
        let headers = refusal.headers().clone();
        assert!(headers["retry-after"].to_str().unwrap().parse::<u64>().unwrap() >= 1);
        assert_eq!(headers["ratelimit-limit"], "100");
        assert_eq!(headers["ratelimit-remaining"], "0");
        TestApp::reply(refusal).await.assert_code(429, "too_many_requests");

        // Registrations have their own, smaller budget per address.
        let mut statuses = Vec::new();
        for i in 0..21 {
            let r = app.post("/v1/auth/register", None, json!({
                "email": format!("flood-{i}@example.com"), "password": PASSWORD, "name": "F", "role": "buyer"
            })).await;
            statuses.push(r.status.as_u16());
            if r.status == 429 {
                r.assert_code(429, "too_many_requests");
            }
        }
        assert_eq!(statuses.iter().filter(|s| **s == 201).count(), 19, "{statuses:?}");
        assert_eq!(statuses.last(), Some(&429), "{statuses:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_probes_are_never_limited() {
    let app = TestApp::spawn_with(Backend::Sqlite, |s| {
        generous_limits(s);
        s.rate_limit_address_rps = 1;
        s.rate_limit_address_burst = 1;
    })
    .await;
    for _ in 0..20 {
        assert_eq!(app.get("/healthz", None).await.status, 200);
    }
    assert_eq!(app.get("/v1/catalog/gpus", None).await.status, 200);
    app.get("/v1/catalog/gpus", None)
        .await
        .assert_code(429, "too_many_requests");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_client_may_read_the_rate_limit_headers() {
    let app = TestApp::spawn_with(Backend::Sqlite, |s| {
        s.cors_origins = vec!["https://dash.example".into()]
    })
    .await;
    let r = app
        .client
        .get(format!("{}/v1/catalog/gpus", app.address))
        .header("origin", "https://dash.example")
        .send()
        .await
        .unwrap();
    let exposed = r.headers()["access-control-expose-headers"]
        .to_str()
        .unwrap()
        .to_lowercase();
    for name in [
        "retry-after",
        "ratelimit-limit",
        "ratelimit-remaining",
        "ratelimit-reset",
        "gpuex-seq",
    ] {
        assert!(exposed.contains(name), "{name} is not exposed: {exposed}");
    }
    // And send the journal row it wants to read (ARCHITECTURE.md §20).
    let r = app
        .client
        .request(
            reqwest::Method::OPTIONS,
            format!("{}/v1/catalog/gpus", app.address),
        )
        .header("origin", "https://dash.example")
        .header("access-control-request-method", "GET")
        .header("access-control-request-headers", "gpuex-min-seq")
        .send()
        .await
        .unwrap();
    let allowed = r.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .to_lowercase();
    assert!(allowed.contains("gpuex-min-seq"), "{allowed}");
}
