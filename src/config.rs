//! Server configuration: every `gpuex serve` flag, each also read from the environment.

use clap::{Args, ValueEnum};
use ipnet::IpNet;
use rust_decimal::Decimal;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// How access tokens are signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum JwtAlgorithm {
    /// HMAC-SHA256 with a shared secret (generated and stored on first start if not given).
    Hs256,
    /// RSA-SHA256 with a PEM key pair.
    Rs256,
}

/// `gpuex serve` flags.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "GPUEX_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    #[command(flatten)]
    pub settings: Settings,
}

/// Everything the server needs besides its listener.
#[derive(Debug, Clone, Args)]
pub struct Settings {
    /// `sqlite://path` or `postgres://…`.
    #[arg(long, env = "DATABASE_URL", default_value = "sqlite://./data/gpuex.db")]
    pub database_url: String,
    /// HS256 signing secret; generated and stored in the database when absent.
    #[arg(long, env = "GPUEX_JWT_SECRET", hide_env_values = true)]
    pub jwt_secret: Option<String>,
    /// The key buyers' registry credentials are sealed with (any string);
    /// generated and stored in the database when absent. Set it outside the
    /// database so that a copy of the database alone opens none of them.
    #[arg(long, env = "GPUEX_SECRETS_KEY", hide_env_values = true)]
    pub secrets_key: Option<String>,
    #[arg(long, env = "GPUEX_JWT_ALGORITHM", value_enum, default_value = "hs256")]
    pub jwt_algorithm: JwtAlgorithm,
    /// PEM private key for RS256.
    #[arg(long, env = "GPUEX_JWT_PRIVATE_KEY")]
    pub jwt_private_key: Option<PathBuf>,
    /// PEM public key for RS256.
    #[arg(long, env = "GPUEX_JWT_PUBLIC_KEY")]
    pub jwt_public_key: Option<PathBuf>,
    /// Lifetime of an access token, in seconds.
    #[arg(long, env = "GPUEX_TOKEN_TTL_S", default_value_t = 900)]
    pub token_ttl_s: u64,
    /// Lifetime of a refresh token that is not used, in seconds (each use
    /// issues a new one).
    #[arg(long, env = "GPUEX_REFRESH_TOKEN_TTL_S", default_value_t = 14 * 24 * 3600)]
    pub refresh_token_ttl_s: u64,
    /// Origins allowed by CORS, comma-separated (`*` for any).
    #[arg(long, env = "GPUEX_CORS_ORIGINS", value_delimiter = ',')]
    pub cors_origins: Vec<String>,
    /// Requests running longer than this are answered 408.
    #[arg(long, env = "GPUEX_REQUEST_TIMEOUT_S", default_value_t = 30)]
    pub request_timeout_s: u64,
    /// Largest accepted request body, in bytes.
    #[arg(long, env = "GPUEX_BODY_LIMIT", default_value_t = 1024 * 1024)]
    pub body_limit: usize,
    /// Largest job-history file `POST /v1/profile/imports` reads, in bytes
    /// (the route streams it, so this bounds time, not memory).
    #[arg(long, env = "GPUEX_IMPORT_BODY_LIMIT", default_value_t = 256 * 1024 * 1024)]
    pub import_body_limit: usize,
    /// An import's time limit, in seconds, in place of the request timeout.
    #[arg(long, env = "GPUEX_IMPORT_TIMEOUT_S", default_value_t = 600)]
    pub import_timeout_s: u64,
    /// Bootstrap admin (with `GPUEX_ADMIN_PASSWORD`), created or updated at start.
    #[arg(long, env = "GPUEX_ADMIN_EMAIL")]
    pub admin_email: Option<String>,
    #[arg(long, env = "GPUEX_ADMIN_PASSWORD", hide_env_values = true)]
    pub admin_password: Option<String>,
    /// ISO 4217 currency of every price and balance.
    #[arg(long, env = "GPUEX_CURRENCY", default_value = "USD")]
    pub currency: String,
    /// The platform's share of every charge.
    #[arg(long, env = "GPUEX_PLATFORM_FEE", default_value = "0.05")]
    pub platform_fee: Decimal,
    /// Failed logins per account and client address before delays begin
    /// (four times as many per address alone).
    #[arg(long, env = "GPUEX_LOGIN_MAX_FAILURES", default_value_t = 5,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub login_max_failures: u32,
    /// The first delay between failed logins; each later stage waits four times longer.
    #[arg(long, env = "GPUEX_LOGIN_DELAY_MS", default_value_t = 2000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub login_delay_ms: u64,
    /// Proxies whose `X-Forwarded-For` names the client (addresses or CIDR
    /// blocks, comma-separated); from anyone else the header is ignored.
    #[arg(long, env = "GPUEX_TRUSTED_PROXIES", value_delimiter = ',',
          value_parser = crate::limits::client::parse_proxy)]
    pub trusted_proxies: Vec<IpNet>,
    /// Bearer token `/metrics` requires; without one `/metrics` is off (404).
    #[arg(long, env = "GPUEX_METRICS_TOKEN", hide_env_values = true)]
    pub metrics_token: Option<String>,
    /// Requests per second per caller (access token's user, API key or node token).
    #[arg(long, env = "GPUEX_RATE_LIMIT_RPS", default_value_t = 20,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub rate_limit_rps: u32,
    /// Requests a caller may send at once before the rate applies.
    #[arg(long, env = "GPUEX_RATE_LIMIT_BURST", default_value_t = 100,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub rate_limit_burst: u32,
    /// Requests per second per client address, authenticated or not.
    #[arg(long, env = "GPUEX_RATE_LIMIT_ADDRESS_RPS", default_value_t = 50,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub rate_limit_address_rps: u32,
    #[arg(long, env = "GPUEX_RATE_LIMIT_ADDRESS_BURST", default_value_t = 200,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub rate_limit_address_burst: u32,
    /// Registrations per client address per hour.
    #[arg(long, env = "GPUEX_REGISTER_PER_HOUR", default_value_t = 20,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub register_per_hour: u32,
    /// Notice before a preemption takes capacity (ARCHITECTURE.md §3).
    #[arg(long, env = "GPUEX_PREEMPT_NOTICE_S", default_value_t = 120)]
    pub preempt_notice_s: i64,
    /// How often each spot auction clears.
    #[arg(long, env = "GPUEX_SPOT_INTERVAL_S", default_value_t = 10)]
    pub spot_interval_s: i64,
    /// Bids one step of a spot clearing tries; a clearing takes a step a
    /// batch (ARCHITECTURE.md "A clearing in steps"). Every replica of a
    /// cluster must use the same value, as with the spot interval.
    #[arg(long, env = "GPUEX_CLEARING_STEP_BIDS", default_value_t = 256,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub clearing_step_bids: u32,
    /// How often running leases are charged and their holds renewed.
    #[arg(long, env = "GPUEX_BILLING_INTERVAL_S", default_value_t = 60)]
    pub billing_interval_s: i64,
    /// Every this many journal rows the leader keeps a snapshot of its
    /// engine and trims the journal before the one before (ARCHITECTURE.md §20).
    #[arg(long, env = "GPUEX_JOURNAL_SNAPSHOT_EVERY", default_value_t = 4096,
          value_parser = clap::value_parser!(i64).range(2..))]
    pub journal_snapshot_every: i64,
    /// A node silent this long is lost (ARCHITECTURE.md §7).
    #[arg(long, env = "GPUEX_NODE_TIMEOUT_S", default_value_t = 30)]
    pub node_timeout_s: i64,
    /// How often agents heartbeat.
    #[arg(long, env = "GPUEX_HEARTBEAT_INTERVAL_S", default_value_t = 5)]
    pub heartbeat_interval_s: u64,
    /// Milliseconds between engine clock ticks.
    #[arg(long, env = "GPUEX_TICK_MS", default_value_t = 1000)]
    pub tick_ms: u64,
    /// How often the demand forecast is refitted and handed to the engine
    /// (ARCHITECTURE.md §17); 0 turns the forecast off.
    #[arg(long, env = "GPUEX_FORECAST_INTERVAL_S", default_value_t = 60)]
    pub forecast_interval_s: u64,
    /// Minutes of order history each forecast fits (the hourly season needs
    /// 120, the daily one 2,880).
    #[arg(long, env = "GPUEX_FORECAST_HISTORY_MINUTES", default_value_t = 360,
          value_parser = clap::value_parser!(u32).range(1..=20_160))]
    pub forecast_history_minutes: u32,
    /// Place leases with a known or predicted end (ARCHITECTURE.md §17) on the GPUs
    /// whose other leases are predicted to end near it, so whole GPUs free
    /// up together; `false` measures without.
    #[arg(long, env = "GPUEX_DURATION_PREDICTION", default_value_t = true,
          action = clap::ArgAction::Set)]
    pub duration_prediction: bool,
    /// Keep idle capacity the demand forecast expects on-demand and reserved
    /// orders to need within the notice period away from spot (ARCHITECTURE.md §17);
    /// `false` measures without.
    #[arg(long, env = "GPUEX_FORECAST_HOLDBACK", default_value_t = true,
          action = clap::ArgAction::Set)]
    pub forecast_holdback: bool,
    /// Keep room on MIG GPUs for the profiles the forecast expects those
    /// orders to take; `false` measures without.
    #[arg(long, env = "GPUEX_FORECAST_MIG_LAYOUT", default_value_t = true,
          action = clap::ArgAction::Set)]
    pub forecast_mig_layout: bool,
    /// Days events are kept for `GET /v1/events` and resuming streams; at least 7.
    #[arg(long, env = "GPUEX_EVENT_RETENTION_DAYS", default_value_t = 7,
          value_parser = clap::value_parser!(u32).range(7..))]
    pub event_retention_days: u32,
    /// Let webhooks reach loopback and private addresses (the demo and the
    /// tests, whose receivers run on 127.0.0.1). Off in production: a
    /// webhook URL must not reach into the provider's own network.
    #[arg(long, env = "GPUEX_WEBHOOK_ALLOW_PRIVATE")]
    pub webhook_allow_private: bool,
    /// Where the other replicas reach this one (`http://10.0.0.7:8080`):
    /// followers hand engine commands to the leader there. Defaults to the
    /// listening address, with loopback for `0.0.0.0`.
    #[arg(long, env = "GPUEX_ADVERTISE_URL")]
    pub advertise_url: Option<String>,
    /// A request's headers must be complete this many seconds after its
    /// connection opened (or after their first byte, on a kept-alive one);
    /// slower connections are closed.
    #[arg(long, env = "GPUEX_HEADER_READ_TIMEOUT_S", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub header_read_timeout_s: u64,
    /// A kept-alive connection with no request in flight closes after this many seconds.
    #[arg(long, env = "GPUEX_KEEP_ALIVE_IDLE_S", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub keep_alive_idle_s: u64,
    /// Open connections in all; more are answered 503 and closed.
    #[arg(long, env = "GPUEX_MAX_CONNECTIONS", default_value_t = 4096,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: u64,
    /// Open connections per client address (an IPv6 client's /64); the
    /// trusted proxies are exempt.
    #[arg(long, env = "GPUEX_MAX_CONNECTIONS_PER_ADDRESS", default_value_t = 128,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections_per_address: u64,
    /// Where leases' outputs go (ARCHITECTURE.md §21): a folder, or `s3://bucket/prefix`
    /// (credentials, region and endpoint from the usual `AWS_*` variables;
    /// any S3-compatible store). Default: `outputs/` beside a SQLite
    /// database, else `$TMPDIR/gpuex-outputs`. Replicas must share it.
    #[arg(long, env = "GPUEX_OUTPUTS_STORE")]
    pub outputs_store: Option<String>,
    /// The most one lease's outputs may weigh in all, in bytes.
    #[arg(long, env = "GPUEX_OUTPUTS_MAX_BYTES", default_value_t = 10 << 30)]
    pub outputs_max_bytes: u64,
    /// Days a lease's outputs are kept after they were stored.
    #[arg(long, env = "GPUEX_OUTPUTS_RETENTION_DAYS", default_value_t = 30,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub outputs_retention_days: u32,
    /// What keeping outputs costs per GB-month (exact decimal, charged by
    /// nobody yet: 0 says storage within the cap and retention is included
    /// in the lease's price).
    #[arg(long, env = "GPUEX_OUTPUTS_PRICE_PER_GB_MONTH", default_value = "0")]
    pub outputs_price_per_gb_month: Decimal,
    /// The market's clock; tests move it on to see hours pass.
    #[arg(skip)]
    pub clock: crate::clock::Clock,
}

impl Settings {
    /// Defaults for a database URL, as the CLI would give them.
    pub fn with_database(database_url: impl Into<String>) -> Settings {
        Settings {
            database_url: database_url.into(),
            jwt_secret: None,
            secrets_key: None,
            jwt_algorithm: JwtAlgorithm::Hs256,
            jwt_private_key: None,
            jwt_public_key: None,
            token_ttl_s: 900,
            refresh_token_ttl_s: 14 * 24 * 3600,
            cors_origins: vec![],
            request_timeout_s: 30,
            body_limit: 1024 * 1024,
            import_body_limit: 256 * 1024 * 1024,
            import_timeout_s: 600,
            admin_email: None,
            admin_password: None,
            currency: "USD".into(),
            platform_fee: Decimal::new(5, 2),
            login_max_failures: 5,
            login_delay_ms: 2000,
            trusted_proxies: vec![],
            metrics_token: None,
            rate_limit_rps: 20,
            rate_limit_burst: 100,
            rate_limit_address_rps: 50,
            rate_limit_address_burst: 200,
            register_per_hour: 20,
            preempt_notice_s: 120,
            spot_interval_s: 10,
            clearing_step_bids: 256,
            journal_snapshot_every: 4096,
            billing_interval_s: 60,
            node_timeout_s: 30,
            heartbeat_interval_s: 5,
            tick_ms: 1000,
            forecast_interval_s: 60,
            forecast_history_minutes: 360,
            duration_prediction: true,
            forecast_holdback: true,
            forecast_mig_layout: true,
            event_retention_days: 7,
            webhook_allow_private: false,
            advertise_url: None,
            header_read_timeout_s: 10,
            keep_alive_idle_s: 60,
            max_connections: 4096,
            max_connections_per_address: 128,
            outputs_store: None,
            outputs_max_bytes: 10 << 30,
            outputs_retention_days: 30,
            outputs_price_per_gb_month: Decimal::ZERO,
            clock: Default::default(),
        }
    }

    pub fn token_ttl(&self) -> Duration {
        Duration::from_secs(self.token_ttl_s)
    }
}

impl Settings {
    /// How the market task runs under these settings.
    pub fn market(&self) -> crate::market::MarketConfig {
        crate::market::MarketConfig {
            engine: crate::engine::EngineConfig {
                notice_s: self.preempt_notice_s,
                spot_interval_s: self.spot_interval_s,
                clearing_step_bids: self.clearing_step_bids,
                duration_prediction: self.duration_prediction,
                forecast_holdback: self.forecast_holdback,
                forecast_mig_layout: self.forecast_mig_layout,
                ..crate::engine::EngineConfig::default()
            },
            platform_fee: self.platform_fee,
            billing_interval_s: self.billing_interval_s,
            journal_snapshot_every: self.journal_snapshot_every,
            tick: Duration::from_millis(self.tick_ms.max(10)),
            clock: self.clock.clone(),
        }
    }
}
