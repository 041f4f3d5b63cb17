//! The running server: shared state, start-up, and `serve`, the seam tests use.

use crate::api::OpsState;
use crate::auth::{self, tokens::JwtKeys, AccountsState, AuthState, LoginLimiter};
use crate::billing::{ledger, BillingState};
use crate::catalog::CatalogState;
use crate::cluster::ClusterState;
use crate::config::Settings;
use crate::db::Db;
use crate::events::EventsState;
use crate::forecast::{ForecastState, Forecasts};
use crate::limits::LimitsState;
use crate::market::{MarketHandle, MarketState};
use crate::metrics::Metrics;
use crate::nodes::NodesState;
use crate::pricing::PricingState;
use anyhow::Context;
use axum::extract::FromRef;
use chrono::Utc;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

/// Every handle the server holds. Cheap to clone. Routes, middleware and
/// workers take their domain's part of it (the `FromRef` impls below).
#[derive(Clone)]
pub struct AppState {
    pub db: Db,
    pub settings: Arc<Settings>,
    pub keys: Arc<JwtKeys>,
    pub login_limiter: Arc<LoginLimiter>,
    /// Request limits of the whole API.
    pub limits: Arc<crate::limits::Limits>,
    pub metrics: Arc<Metrics>,
    /// The engine task: every change to orders, leases and capacity goes through it.
    pub market: MarketHandle,
    pub regions: crate::catalog::regions::KnownRegions,
    /// Hands each committed event to its user's open streams.
    pub events: crate::events::EventHub,
    /// The public market stream's feed: clearings, list prices, book depth.
    pub market_feed: crate::market::MarketFeed,
    /// The latest demand forecast (ARCHITECTURE.md §17).
    pub forecasts: crate::forecast::Forecasts,
    /// Whether this replica leads the market (ARCHITECTURE.md §12).
    pub cluster: crate::cluster::Cluster,
    /// Where leases' outputs go (ARCHITECTURE.md §21).
    pub outputs: crate::nodes::outputs::OutputStore,
    /// Seals and opens buyers' registry credentials (ARCHITECTURE.md §21).
    pub pull_secrets: crate::market::pull_secrets::PullSecrets,
    /// Node tokens and standings from memory (issue 38).
    pub node_cache: crate::nodes::NodeCache,
    /// Heartbeats written behind, once a second (issue 38).
    pub heartbeats: crate::db::heartbeats::Heartbeats,
}

impl AppState {
    /// Connects, migrates, loads keys and bootstraps the admin, then joins
    /// the leader election, telling the others it listens at `advertise_url`.
    pub async fn start(settings: Settings, advertise_url: String) -> anyhow::Result<AppState> {
        let db = Db::connect(&settings.database_url).await?;
        // Replicas starting at once take turns: one migrates and bootstraps,
        // the others then find it done.
        let startup = crate::cluster::StartupLock::take(&db, &settings.database_url).await?;
        db.migrate().await?;
        let mut tx = db.begin().await?;
        ledger::open_system_accounts(&mut tx, &settings.currency, Utc::now()).await?;
        tx.commit().await?;
        let secret = auth::load_or_create_jwt_secret(&db).await?;
        let keys = JwtKeys::from_settings(&settings, &secret)?;
        let pull_secrets =
            crate::market::pull_secrets::PullSecrets::load(&db, settings.secrets_key.as_deref())
                .await?;
        if let (Some(email), Some(password)) = (&settings.admin_email, &settings.admin_password) {
            auth::bootstrap_admin(&db, email, password, &settings.currency)
                .await
                .context("failed to bootstrap the admin")?;
        }
        startup.release().await;
        let cluster =
            crate::cluster::Cluster::start(&db, &settings.database_url, advertise_url, &secret)
                .await?;
        let login_limiter = LoginLimiter::new(
            settings.login_max_failures,
            Duration::from_millis(settings.login_delay_ms),
        );
        let limits = crate::limits::Limits::from_settings(&settings);
        let metrics = Arc::new(Metrics::new()?);
        let events = crate::events::EventHub::start(db.clone()).await?;
        let market_feed = crate::market::MarketFeed::default();
        let heartbeats = crate::db::heartbeats::Heartbeats::default();
        let market = crate::market::start(
            db.clone(),
            settings.market(),
            metrics.queue_wait.clone(),
            metrics.journal_row_lag.clone(),
            events.clone(),
            market_feed.clone(),
            cluster.clone(),
            heartbeats.clone(),
        )
        .await?;
        let outputs = crate::nodes::outputs::OutputStore::open(
            settings.outputs_store.as_deref(),
            &settings.database_url,
        )?;
        tracing::info!(store = %outputs.location, "leases' outputs go to the outputs store");
        Ok(AppState {
            node_cache: crate::nodes::NodeCache::new(&db),
            heartbeats,
            outputs,
            pull_secrets,
            market,
            market_feed,
            events,
            forecasts: Default::default(),
            cluster,
            regions: Default::default(),
            db,
            keys: Arc::new(keys),
            login_limiter: Arc::new(login_limiter),
            limits: Arc::new(limits),
            metrics,
            settings: Arc::new(settings),
        })
    }
}

// Each domain states the handles it uses; only this module knows the whole,
// so a domain depends on what it uses and not on every other domain.

impl FromRef<AppState> for AuthState {
    fn from_ref(app: &AppState) -> AuthState {
        AuthState {
            db: app.db.clone(),
            keys: app.keys.clone(),
            node_tokens: app.node_cache.clone(),
        }
    }
}

impl FromRef<AppState> for AccountsState {
    fn from_ref(app: &AppState) -> AccountsState {
        AccountsState {
            db: app.db.clone(),
            settings: app.settings.clone(),
            keys: app.keys.clone(),
            limits: app.limits.clone(),
            login_limiter: app.login_limiter.clone(),
            market: app.market.clone(),
            metrics: app.metrics.clone(),
            node_cache: app.node_cache.clone(),
        }
    }
}

impl FromRef<AppState> for LimitsState {
    fn from_ref(app: &AppState) -> LimitsState {
        LimitsState {
            limits: app.limits.clone(),
            keys: app.keys.clone(),
        }
    }
}

impl FromRef<AppState> for BillingState {
    fn from_ref(app: &AppState) -> BillingState {
        BillingState {
            db: app.db.clone(),
            settings: app.settings.clone(),
            market: Arc::new(app.market.clone()),
        }
    }
}

impl FromRef<AppState> for CatalogState {
    fn from_ref(app: &AppState) -> CatalogState {
        CatalogState {
            db: app.db.clone(),
            settings: app.settings.clone(),
            market: app.market.clone(),
        }
    }
}

impl FromRef<AppState> for PricingState {
    fn from_ref(app: &AppState) -> PricingState {
        PricingState {
            db: app.db.clone(),
            settings: app.settings.clone(),
            market: app.market.clone(),
            market_feed: app.market_feed.clone(),
            regions: app.regions.clone(),
        }
    }
}

impl FromRef<AppState> for MarketState {
    fn from_ref(app: &AppState) -> MarketState {
        MarketState {
            db: app.db.clone(),
            settings: app.settings.clone(),
            market: app.market.clone(),
            metrics: app.metrics.clone(),
            regions: app.regions.clone(),
            pull_secrets: app.pull_secrets.clone(),
            market_feed: app.market_feed.clone(),
        }
    }
}

impl FromRef<AppState> for EventsState {
    fn from_ref(app: &AppState) -> EventsState {
        EventsState {
            db: app.db.clone(),
            settings: app.settings.clone(),
            events: app.events.clone(),
            metrics: app.metrics.clone(),
        }
    }
}

impl FromRef<AppState> for NodesState {
    fn from_ref(app: &AppState) -> NodesState {
        NodesState {
            db: app.db.clone(),
            settings: app.settings.clone(),
            market: app.market.clone(),
            metrics: app.metrics.clone(),
            regions: app.regions.clone(),
            pull_secrets: app.pull_secrets.clone(),
            outputs: app.outputs.clone(),
            cache: app.node_cache.clone(),
            heartbeats: app.heartbeats.clone(),
            cluster: app.cluster.clone(),
        }
    }
}

impl FromRef<AppState> for ClusterState {
    fn from_ref(app: &AppState) -> ClusterState {
        ClusterState {
            db: app.db.clone(),
            settings: app.settings.clone(),
            cluster: app.cluster.clone(),
            market: app.market.clone(),
        }
    }
}

impl FromRef<AppState> for ForecastState {
    fn from_ref(app: &AppState) -> ForecastState {
        ForecastState {
            db: app.db.clone(),
            settings: app.settings.clone(),
            metrics: app.metrics.clone(),
            forecasts: app.forecasts.clone(),
            market: app.market.clone(),
        }
    }
}

impl FromRef<AppState> for Forecasts {
    fn from_ref(app: &AppState) -> Forecasts {
        app.forecasts.clone()
    }
}

impl FromRef<AppState> for OpsState {
    fn from_ref(app: &AppState) -> OpsState {
        OpsState {
            db: app.db.clone(),
            settings: app.settings.clone(),
            cluster: app.cluster.clone(),
            market: app.market.clone(),
            metrics: app.metrics.clone(),
        }
    }
}

impl FromRef<AppState> for Db {
    fn from_ref(app: &AppState) -> Db {
        app.db.clone()
    }
}

/// Serves the API on `listener` until `shutdown` resolves, then drains
/// in-flight requests and closes the database.
pub async fn serve(
    listener: TcpListener,
    settings: Settings,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    // Boxed at once: a generic body would be compiled again, HTTP stack and
    // all, in every crate that calls it with its own future (the binary,
    // each test binary), which made the release binary a minute's build.
    serve_until(listener, settings, Box::pin(shutdown)).await
}

async fn serve_until(
    listener: TcpListener,
    settings: Settings,
    shutdown: Pin<Box<dyn Future<Output = ()> + Send>>,
) -> anyhow::Result<()> {
    let advertise_url =
        crate::cluster::advertise_url(settings.advertise_url.as_deref(), listener.local_addr()?);
    let state = AppState::start(settings, advertise_url).await?;
    let router = crate::api::router(state.clone());
    // The singletons run on the leader only, and move with it.
    let cluster = &state.cluster;
    let workers = [
        cluster.leader_only("node watchdog", {
            let nodes = NodesState::from_ref(&state);
            move || crate::nodes::watchdog::spawn(nodes.clone())
        }),
        cluster.leader_only("budget watcher", {
            let billing = BillingState::from_ref(&state);
            move || crate::billing::budgets::spawn_watcher(billing.clone(), Duration::from_secs(15))
        }),
        cluster.leader_only("event pruner", {
            let (db, days) = (state.db.clone(), state.settings.event_retention_days);
            move || crate::events::spawn_pruner(db.clone(), days)
        }),
        cluster.leader_only("outputs pruner", {
            let nodes = NodesState::from_ref(&state);
            move || crate::nodes::outputs::spawn_pruner(nodes.clone())
        }),
        cluster.leader_only("webhook worker", {
            let events = EventsState::from_ref(&state);
            move || crate::events::webhooks::spawn(&events)
        }),
    ];
    // Every replica fits the forecast: its board answers that replica's
    // reads, and the engine's holdback it sends is the same from each.
    let forecast = crate::forecast::spawn(ForecastState::from_ref(&state));
    // Every replica: the leader records beats, and one that stopped leading
    // still writes what it recorded. The listener keeps the node cache in
    // step with the other replicas' changes (PostgreSQL).
    let flusher = state.heartbeats.spawn_flusher(state.db.clone());
    let node_listener = state.node_cache.spawn_listener(&state.db);
    // Every replica says where it stands, for the admin's list.
    let standing = crate::cluster::replicas::spawn(ClusterState::from_ref(&state));
    // Streams never end on their own: close them when shutdown begins, or
    // the graceful shutdown would wait for their clients.
    let (feed, events) = (state.market_feed.clone(), state.events.clone());
    let shutdown = Box::pin(async move {
        shutdown.await;
        feed.close();
        events.close();
    });
    tracing::info!(addr = %listener.local_addr()?, "gpuex listening");
    let limits = crate::httpd::ConnectionLimits::from_settings(&state.settings);
    crate::httpd::run(listener, router, limits, shutdown).await;
    for worker in workers {
        worker.abort();
    }
    if let Some(forecast) = forecast {
        forecast.abort();
    }
    standing.abort();
    flusher.abort();
    if let Some(listener) = node_listener {
        listener.abort();
    }
    // The beats the last second recorded, once no request adds any.
    if let Err(e) = state.heartbeats.flush(&state.db).await {
        tracing::warn!(error = ?e, "failed to write the last heartbeats");
    }
    crate::cluster::replicas::forget(&state.db, state.cluster.me()).await;
    state.market.stop().await;
    // After the market: the next leader must not find this one writing.
    state.cluster.stop().await;
    state.db.close().await;
    Ok(())
}
