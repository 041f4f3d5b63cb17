//! The processes and databases a deployment runs on: `gpuex serve` replicas,
//! and a fresh database for each; shared by the scale-out and market-scale
//! benches, with their knobs.

use super::*;

/// A bench's knob: the environment variable `name` as a number, else `default`.
pub(super) fn knob<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The PostgreSQL server to make the bench's databases on, if one is given.
pub(super) fn postgres_base_url() -> Option<String> {
    ["GPUEX_BENCH_POSTGRES_URL", "GPUEX_TEST_POSTGRES_URL"]
        .iter()
        .filter_map(|name| std::env::var(name).ok())
        .find(|url| !url.is_empty())
}

/// One `gpuex serve` process.
pub(super) struct Replica {
    pub(super) address: String,
    pub(super) child: Child,
}

impl Replica {
    /// Starts `gpuex serve` on `database_url`; `settings` add to (or
    /// override) the bench's environment.
    pub(super) fn start(database_url: &str, settings: &[(&str, String)]) -> Replica {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let listen = format!("127.0.0.1:{port}");
        let child = Command::new(env!("CARGO_BIN_EXE_gpuex"))
            .args(["serve", "--listen", &listen])
            .env("DATABASE_URL", database_url)
            .env("GPUEX_JWT_SECRET", JWT_SECRET)
            .env("GPUEX_ADMIN_EMAIL", ADMIN_EMAIL)
            .env("GPUEX_ADMIN_PASSWORD", ADMIN_PASSWORD)
            .env("GPUEX_TOKEN_TTL_S", "3600")
            .env("GPUEX_METRICS_TOKEN", METRICS_TOKEN)
            // The bench measures the server, not its request limits.
            .env("GPUEX_RATE_LIMIT_RPS", "1000000")
            .env("GPUEX_RATE_LIMIT_BURST", "1000000")
            .env("GPUEX_RATE_LIMIT_ADDRESS_RPS", "1000000")
            .env("GPUEX_RATE_LIMIT_ADDRESS_BURST", "1000000")
            .env("GPUEX_MAX_CONNECTIONS_PER_ADDRESS", "1000000")
            .env("GPUEX_REGISTER_PER_HOUR", "1000000")
            .env("RUST_LOG", "warn")
            .envs(settings.iter().map(|(k, v)| (*k, v.as_str())))
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn gpuex serve");
        Replica {
            address: format!("http://{listen}"),
            child,
        }
    }

    /// `/readyz`'s role, or `None` while it does not answer ready.
    pub(super) async fn role(&self, client: &reqwest::Client) -> Option<String> {
        let r = client
            .get(format!("{}/readyz", self.address))
            .send()
            .await
            .ok()?;
        if !r.status().is_success() {
            return None;
        }
        let body: Value = r.json().await.ok()?;
        body["role"].as_str().map(str::to_owned)
    }
}

/// A database made for one deployment, dropped after it.
pub(super) struct Database {
    pub(super) url: String,
    pub(super) postgres: Option<(String, String)>,
    pub(super) _dir: Option<tempfile::TempDir>,
}

impl Database {
    /// A new PostgreSQL database named `prefix` and a fresh id, on the
    /// server `postgres_base` names.
    pub(super) async fn postgres(postgres_base: &str, prefix: &str) -> Database {
        use sqlx::Connection;
        let name = format!("{prefix}{}", uuid::Uuid::new_v4().simple());
        let mut conn = sqlx::PgConnection::connect(postgres_base)
            .await
            .expect("connect to PostgreSQL");
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&mut conn)
            .await
            .expect("create database");
        let (url_prefix, _) = postgres_base
            .rsplit_once('/')
            .expect("a database in the URL");
        Database {
            url: format!("{url_prefix}/{name}"),
            postgres: Some((postgres_base.to_owned(), name)),
            _dir: None,
        }
    }

    pub(super) async fn create(backend: Backend, postgres_base: &str) -> Database {
        match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("temp dir");
                Database {
                    url: format!("sqlite://{}/bench.db", dir.path().display()),
                    postgres: None,
                    _dir: Some(dir),
                }
            }
            // The test script drops `gpuex_t_` databases a failed run left.
            Backend::Postgres => Database::postgres(postgres_base, "gpuex_t_bench_").await,
        }
    }

    pub(super) async fn drop_now(self) {
        use sqlx::Connection;
        if let Some((base, name)) = self.postgres {
            let mut conn = sqlx::PgConnection::connect(&base)
                .await
                .expect("connect to PostgreSQL");
            if let Err(e) = sqlx::query(&format!("DROP DATABASE {name} WITH (FORCE)"))
                .execute(&mut conn)
                .await
            {
                eprintln!("could not drop the bench database {name}: {e}");
            }
        }
    }
}
