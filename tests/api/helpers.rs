//! Test harness: each test gets its own server on a random port and its own
//! database, on SQLite and (when `GPUEX_TEST_POSTGRES_URL` is set) PostgreSQL.

use gpuex::config::Settings;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use std::path::PathBuf;
use tempfile::TempDir;
use tokio::sync::oneshot;
use uuid::Uuid;

pub const ADMIN_EMAIL: &str = "admin@gpuex.test";
pub const ADMIN_PASSWORD: &str = "admin-password-123";
pub const JWT_SECRET: &str = "test-secret-known-to-the-tests";
pub const METRICS_TOKEN: &str = "metrics-token-known-to-the-tests";

/// Request limits far above what any test sends, so only the tests of the
/// limits meet them (those set the defaults back).
pub fn generous_limits(settings: &mut Settings) {
    settings.rate_limit_rps = 1_000_000;
    settings.rate_limit_burst = 1_000_000;
    settings.rate_limit_address_rps = 1_000_000;
    settings.rate_limit_address_burst = 1_000_000;
    settings.register_per_hour = 1_000_000;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A running server and a client for it.
pub struct TestApp {
    pub address: String,
    pub client: reqwest::Client,
    pub backend: Backend,
    pub database_url: String,
    pub settings: Settings,
    shutdown: Option<oneshot::Sender<()>>,
    server: Option<tokio::task::JoinHandle<anyhow::Result<()>>>,
    _dir: Option<TempDir>,
}

/// A response: status and JSON body (Null when empty or not JSON).
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub content_type: String,
    pub body: Value,
}

impl Reply {
    /// Asserts a problem+json answer with `status` naming `field` among its errors.
    #[track_caller]
    pub fn assert_problem(&self, status: u16, field: Option<&str>) {
        assert_eq!(self.status.as_u16(), status, "body: {}", self.body);
        assert_eq!(
            self.content_type, "application/problem+json",
            "body: {}",
            self.body
        );
        assert_eq!(self.body["status"], status);
        assert!(self.body["type"].is_string() && self.body["title"].is_string());
        if let Some(field) = field {
            let errors = self.body["errors"].as_array().cloned().unwrap_or_default();
            assert!(
                errors.iter().any(|e| e["field"] == field),
                "expected an error naming `{field}`, got {}",
                self.body
            );
        }
    }

    #[track_caller]
    pub fn assert_code(&self, status: u16, code: &str) {
        assert_eq!(self.status.as_u16(), status, "body: {}", self.body);
        assert_eq!(self.content_type, "application/problem+json");
        assert_eq!(self.body["code"], code, "body: {}", self.body);
    }
}

/// The PostgreSQL server the tests use: under CI its absence fails the
/// test; elsewhere the test says it skips.
pub fn postgres_base_url() -> Option<String> {
    crate::require::require("PostgreSQL", crate::require::postgres())
}

impl TestApp {
    pub async fn spawn(backend: Backend) -> TestApp {
        Self::spawn_with(backend, |_| {}).await
    }

    /// Spawns a server, letting the test adjust its settings first.
    pub async fn spawn_with(backend: Backend, adjust: impl FnOnce(&mut Settings)) -> TestApp {
        let (database_url, dir) = match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("temp dir");
                let path: PathBuf = dir.path().join("gpuex.db");
                (format!("sqlite://{}", path.display()), Some(dir))
            }
            Backend::Postgres => (fresh_postgres_database().await, None),
        };
        let mut settings = Settings::with_database(&database_url);
        settings.admin_email = Some(ADMIN_EMAIL.into());
        settings.admin_password = Some(ADMIN_PASSWORD.into());
        settings.jwt_secret = Some(JWT_SECRET.into());
        settings.metrics_token = Some(METRICS_TOKEN.into());
        generous_limits(&mut settings);
        // A slow refill, so a test counting failed logins never races it on
        // a loaded machine; successes cost nothing, so no other test waits.
        settings.login_delay_ms = 60_000;
        // The tests' webhook receivers listen on 127.0.0.1.
        settings.webhook_allow_private = true;
        adjust(&mut settings);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let address = format!("http://{}", listener.local_addr().expect("addr"));
        let (tx, rx) = oneshot::channel();
        let server = tokio::spawn(gpuex::serve(listener, settings.clone(), async {
            let _ = rx.await;
        }));
        let client = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(30))
            .build()
            .expect("client");
        let app = TestApp {
            address,
            client,
            backend,
            database_url,
            settings,
            shutdown: Some(tx),
            server: Some(server),
            _dir: dir,
        };
        app.wait_ready().await;
        app
    }

    /// A client of a server this test runs as a process of its own (the
    /// scale-out test's replicas): the helpers work on it, `halt`/`stop`
    /// do nothing.
    pub fn external(address: &str, database_url: &str) -> TestApp {
        TestApp {
            address: address.to_owned(),
            client: reqwest::Client::builder()
                .timeout(std::time::Duration::from_secs(30))
                .build()
                .expect("client"),
            backend: Backend::Postgres,
            database_url: database_url.to_owned(),
            settings: Settings::with_database(database_url),
            shutdown: None,
            server: None,
            _dir: None,
        }
    }

    /// Moves the market's clock on, as if `by` had passed: reservations
    /// start and listings take over without the test waiting hours.
    pub fn advance_clock(&self, by: std::time::Duration) {
        self.settings.clock.advance(by);
    }

    /// The market's clock now.
    pub fn market_now(&self) -> chrono::DateTime<chrono::Utc> {
        self.settings.clock.now()
    }

    async fn wait_ready(&self) {
        for _ in 0..200 {
            if let Ok(r) = self
                .client
                .get(format!("{}/readyz", self.address))
                .send()
                .await
            {
                if r.status().is_success() {
                    return;
                }
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
        panic!("the server did not become ready");
    }

    /// Stops the server but keeps its database, so [`TestApp::resume`] can
    /// start it again on the same address.
    pub async fn halt(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(server) = self.server.take() {
            server.await.expect("server task").expect("server result");
        }
    }

    /// Starts a halted server again: same address, database and settings.
    pub async fn resume(&mut self) {
        let addr = self.address.trim_start_matches("http://").to_owned();
        let listener = tokio::net::TcpListener::bind(&addr)
            .await
            .expect("bind again");
        let (tx, rx) = oneshot::channel();
        self.server = Some(tokio::spawn(gpuex::serve(
            listener,
            self.settings.clone(),
            async {
                let _ = rx.await;
            },
        )));
        self.shutdown = Some(tx);
        self.wait_ready().await;
    }

    /// Stops the server and waits until it has shut down.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(server) = self.server.take() {
            server.await.expect("server task").expect("server result");
        }
    }

    pub async fn request(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Reply {
        let mut req = self
            .client
            .request(method, format!("{}{}", self.address, path));
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        if let Some(body) = body {
            req = req.json(body);
        }
        Self::reply(req.send().await.expect("request")).await
    }

    pub async fn raw(&self, method: Method, path: &str, token: Option<&str>, body: &str) -> Reply {
        let mut req = self
            .client
            .request(method, format!("{}{}", self.address, path))
            .header("content-type", "application/json")
            .body(body.to_owned());
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        Self::reply(req.send().await.expect("request")).await
    }

    pub async fn reply(response: reqwest::Response) -> Reply {
        let status = response.status();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let text = response.text().await.unwrap_or_default();
        Reply {
            status,
            content_type,
            body: serde_json::from_str(&text).unwrap_or(Value::Null),
        }
    }

    /// The Prometheus text of `/metrics`, read with the metrics token.
    pub async fn metrics_text(&self) -> String {
        let r = self
            .client
            .get(format!("{}/metrics", self.address))
            .bearer_auth(METRICS_TOKEN)
            .send()
            .await
            .expect("metrics");
        assert_eq!(r.status(), StatusCode::OK);
        r.text().await.expect("metrics text")
    }

    pub async fn get(&self, path: &str, token: Option<&str>) -> Reply {
        self.request(Method::GET, path, token, None).await
    }

    pub async fn post(&self, path: &str, token: Option<&str>, body: Value) -> Reply {
        self.request(Method::POST, path, token, Some(&body)).await
    }

    pub async fn put(&self, path: &str, token: Option<&str>, body: Value) -> Reply {
        self.request(Method::PUT, path, token, Some(&body)).await
    }

    /// Registers a user and logs in: (token, user id).
    pub async fn user(&self, role: &str) -> (String, Uuid) {
        let email = format!("{}-{}@example.com", role, Uuid::new_v4().simple());
        let r = self
            .post(
                "/v1/auth/register",
                None,
                json!({"email": email, "password": "correct horse battery", "name": "Test", "role": role}),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        let id: Uuid = r.body["id"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .expect("id");
        (self.login(&email, "correct horse battery").await, id)
    }

    pub async fn login(&self, email: &str, password: &str) -> String {
        let r = self
            .post(
                "/v1/auth/login",
                None,
                json!({"email": email, "password": password}),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        r.body["access_token"].as_str().expect("token").to_owned()
    }

    pub async fn admin(&self) -> String {
        self.login(ADMIN_EMAIL, ADMIN_PASSWORD).await
    }

    /// Credits `user` with `amount` as the admin.
    pub async fn credit(&self, admin: &str, user: Uuid, amount: &str) -> Reply {
        self.post(
            "/v1/admin/credits",
            Some(admin),
            json!({"user_id": user, "amount": amount}),
        )
        .await
    }

    /// A region with list prices for a few models.
    pub async fn seed_prices(&self, admin: &str) {
        let r = self
            .put(
                "/v1/admin/regions/eu-west",
                Some(admin),
                json!({"timezone": "Europe/Amsterdam"}),
            )
            .await;
        assert!(r.status.is_success(), "{}", r.body);
        let r = self
            .put(
                "/v1/admin/regions/us-east",
                Some(admin),
                json!({"timezone": "America/New_York"}),
            )
            .await;
        assert!(r.status.is_success(), "{}", r.body);
        let mut prices = Vec::new();
        for (region, model, tflops, vram) in [
            ("eu-west", "H100-SXM5-80GB", "0.0021", "0.05"),
            ("eu-west", "A100-SXM4-80GB", "0.0025", "0.04"),
            ("us-east", "H100-SXM5-80GB", "0.0020", "0.05"),
            ("us-east", "L40S-48GB", "0.0018", "0.03"),
        ] {
            prices.push(json!({"region": region, "gpu_model": model, "unit": "tflops_h", "list_price": tflops}));
            prices.push(
                json!({"region": region, "gpu_model": model, "unit": "vram_h", "list_price": vram}),
            );
        }
        let r = self
            .put("/v1/admin/prices", Some(admin), Value::Array(prices))
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// Creates an empty database on the test PostgreSQL server and returns its URL.
pub async fn fresh_postgres_database() -> String {
    use sqlx::Connection;
    let base = postgres_base_url().expect("GPUEX_TEST_POSTGRES_URL");
    let name = format!("gpuex_t_{}", Uuid::new_v4().simple());
    let mut conn = sqlx::PgConnection::connect(&base)
        .await
        .expect("connect to PostgreSQL");
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(&mut conn)
        .await
        .expect("create database");
    let (prefix, _) = base.rsplit_once('/').expect("a database in the URL");
    format!("{prefix}/{name}")
}

/// Defines each test twice: on SQLite, and on PostgreSQL when configured
/// (saying so in the output when it is not).
macro_rules! on_both_databases {
    ($($tests:tt)*) => {
        $crate::helpers::on_both_databases_with! { $crate::helpers::as_configured => $($tests)* }
    };
}
pub(crate) use on_both_databases;

/// The harness's own settings, unchanged.
pub fn as_configured(_: &mut Settings) {}

/// A provider's node, as created through the API.
pub struct TestNode {
    pub provider: String,
    pub id: Uuid,
    pub token: String,
}

impl TestApp {
    /// A provider with one node in `region` holding `gpus` (model, partition mode).
    pub async fn node(&self, region: &str, gpus: &[(&str, &str)]) -> TestNode {
        let (provider, _) = self.user("provider").await;
        self.node_of(&provider, region, gpus).await
    }

    pub async fn node_of(&self, provider: &str, region: &str, gpus: &[(&str, &str)]) -> TestNode {
        let gpus: Vec<Value> = gpus
            .iter()
            .enumerate()
            .map(|(i, (model, mode))| json!({"index": i, "model": model, "mode": mode, "nvlink": []}))
            .collect();
        let r = self
            .post(
                "/v1/nodes",
                Some(provider),
                json!({"name": format!("node-{}", Uuid::new_v4().simple()), "region": region,
                       "gpus": gpus, "cpu_milli": 64000, "memory_mib": 512000}),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        let node = TestNode {
            provider: provider.to_owned(),
            id: r.body["id"]
                .as_str()
                .and_then(|s| s.parse().ok())
                .expect("node id"),
            token: r.body["token"].as_str().expect("token").to_owned(),
        };
        self.mark_simulated(node.id).await;
        node
    }

    /// Has the admin mark `node` simulated, so its agent may register with
    /// the simulated backend (ARCHITECTURE.md §7), asserting 200.
    pub async fn mark_simulated(&self, node: Uuid) {
        let admin = self.admin().await;
        let r = self
            .put(
                &format!("/v1/admin/nodes/{node}"),
                Some(&admin),
                json!({"simulated": true}),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        assert_eq!(r.body["simulated"], true, "{}", r.body);
    }

    /// A credited buyer: (token, id).
    pub async fn buyer_with(&self, admin: &str, amount: &str) -> (String, Uuid) {
        let (token, id) = self.user("buyer").await;
        let r = self.credit(admin, id, amount).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        (token, id)
    }

    /// Places an order; returns the reply.
    pub async fn order(&self, buyer: &str, body: Value) -> Reply {
        self.post("/v1/orders", Some(buyer), body).await
    }
}

/// [`on_both_databases`] with each server's settings changed by `$adjust`
/// (a `fn(&mut Settings)`) before it starts.
macro_rules! on_both_databases_with {
    ($adjust:path => $(#[$meta:meta])* async fn $name:ident($app:ident) $body:block $($rest:tt)*) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            $(#[$meta])*
            async fn run($app: $crate::helpers::TestApp) $body

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                run($crate::helpers::TestApp::spawn_with($crate::helpers::Backend::Sqlite, $adjust).await).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                if $crate::helpers::postgres_base_url().is_none() {
                    return;
                }
                run($crate::helpers::TestApp::spawn_with($crate::helpers::Backend::Postgres, $adjust).await).await
            }
        }
        $crate::helpers::on_both_databases_with! { $adjust => $($rest)* }
    };
    ($adjust:path =>) => {};
}
pub(crate) use on_both_databases_with;

impl TestApp {
    /// Runs one statement on the test's database with `id` bound to `$1`,
    /// as an operator would behind the server's back.
    pub async fn execute(&self, sql: &str, id: Uuid) {
        use sqlx::Connection;
        match self.backend {
            Backend::Sqlite => {
                let mut conn = sqlx::SqliteConnection::connect(&self.database_url)
                    .await
                    .expect("connect to SQLite");
                sqlx::query(sql)
                    .bind(id)
                    .execute(&mut conn)
                    .await
                    .expect(sql);
            }
            Backend::Postgres => {
                let mut conn = sqlx::PgConnection::connect(&self.database_url)
                    .await
                    .expect("connect to PostgreSQL");
                sqlx::query(sql)
                    .bind(id)
                    .execute(&mut conn)
                    .await
                    .expect(sql);
            }
        }
    }
}
