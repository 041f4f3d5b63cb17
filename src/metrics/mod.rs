//! Prometheus metrics: request counts and latency by route and status, the
//! market's gauges, and the fleet as agents report it (nodes by status, GPU
//! utilization per node, heartbeats).

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use prometheus::{
    Encoder, Gauge, GaugeVec, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec,
    IntGauge, IntGaugeVec, Opts, Registry, TextEncoder,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

const LATENCY_BUCKETS: [f64; 13] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
];

/// Journal row lag buckets, seconds: a follower applies a row within a few
/// milliseconds when it keeps up, seconds when it restores.
const ROW_LAG_BUCKETS: [f64; 14] = [
    0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0,
];

/// Queue-wait buckets, seconds: from a fill at once to a day's wait.
const QUEUE_WAIT_BUCKETS: [f64; 10] = [
    0.0, 1.0, 5.0, 15.0, 60.0, 300.0, 900.0, 3600.0, 14400.0, 86400.0,
];

/// The server's metric registry and the metrics every request updates.
pub struct Metrics {
    pub registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
    scheduling: Histogram,
    /// How long orders waited for capacity before each fill; the market
    /// task observes it, through its own clone.
    pub queue_wait: Histogram,
    /// On a follower, how long after the leader's batch each journal row
    /// was applied; the market task observes it, through its own clone.
    pub journal_row_lag: Histogram,
    pub(crate) market: MarketGauges,
    fleet: FleetGauges,
    /// Webhook attempts by what came of them: `delivered`, `retried`, `failed`.
    pub webhook_deliveries: IntCounterVec,
    /// `GET /v1/events/stream` responses open now.
    pub event_streams: IntGauge,
    /// The demand forecast's next minute per market, in standard TFLOPS.
    pub forecast_units: GaugeVec,
    /// 1 while this replica leads the market (ARCHITECTURE.md §12), else 0.
    pub leader: IntGauge,
    journal: JournalMetrics,
}

/// Where this replica stands in the market's journal (ARCHITECTURE.md §20).
struct JournalMetrics {
    applied_seq: IntGauge,
    lag_seconds: Gauge,
    restores: IntCounter,
    mismatches: IntCounter,
    checked: IntCounter,
}

impl JournalMetrics {
    fn register(registry: &Registry) -> prometheus::Result<JournalMetrics> {
        let journal = JournalMetrics {
            applied_seq: IntGauge::new(
                "gpuex_journal_applied_seq",
                "The last journal row this replica's engine includes",
            )?,
            lag_seconds: Gauge::new(
                "gpuex_replica_lag_seconds",
                "How long this replica has been behind journal rows the leader announced (0 when caught up)",
            )?,
            restores: IntCounter::new(
                "gpuex_journal_restores_total",
                "Times this replica's engine was restored from the database instead of following the journal",
            )?,
            mismatches: IntCounter::new(
                "gpuex_journal_digest_mismatches_total",
                "Leader state digests this replica's engine did not match (each restores it)",
            )?,
            checked: IntCounter::new(
                "gpuex_journal_digests_checked_total",
                "Leader state digests this replica compared its engine's with",
            )?,
        };
        registry.register(Box::new(journal.applied_seq.clone()))?;
        registry.register(Box::new(journal.lag_seconds.clone()))?;
        registry.register(Box::new(journal.restores.clone()))?;
        registry.register(Box::new(journal.mismatches.clone()))?;
        registry.register(Box::new(journal.checked.clone()))?;
        Ok(journal)
    }
}

/// What agents report: heartbeats, nodes by status, each GPU's utilization.
struct FleetGauges {
    heartbeats: IntCounter,
    nodes: IntGaugeVec,
    gpu_utilization: GaugeVec,
}

/// The market's state, refreshed from the engine at each scrape.
pub(crate) struct MarketGauges {
    pub utilization: GaugeVec,
    pub clearing_index: GaugeVec,
    pub frag_ratio: Gauge,
    pub internal_waste_milli: IntGauge,
    pub open_orders: IntGauge,
    pub leases: IntGaugeVec,
}

impl Metrics {
    pub fn new() -> anyhow::Result<Metrics> {
        let registry = Registry::new();
        let requests = IntCounterVec::new(
            Opts::new(
                "gpuex_http_requests_total",
                "HTTP requests by route and status",
            ),
            &["method", "route", "status"],
        )?;
        let latency = HistogramVec::new(
            HistogramOpts::new(
                "gpuex_http_request_duration_seconds",
                "HTTP request latency",
            )
            .buckets(LATENCY_BUCKETS.to_vec()),
            &["method", "route", "status"],
        )?;
        registry.register(Box::new(requests.clone()))?;
        registry.register(Box::new(latency.clone()))?;
        let scheduling = Histogram::with_opts(
            HistogramOpts::new(
                "gpuex_scheduling_latency_seconds",
                "Time to place an order: engine, persistence and commit",
            )
            .buckets(LATENCY_BUCKETS.to_vec()),
        )?;
        registry.register(Box::new(scheduling.clone()))?;
        let queue_wait = Histogram::with_opts(
            HistogramOpts::new(
                "gpuex_order_queue_wait_seconds",
                "Time from an order's acceptance (or its return to the auction) to its fill",
            )
            .buckets(QUEUE_WAIT_BUCKETS.to_vec()),
        )?;
        registry.register(Box::new(queue_wait.clone()))?;
        let journal_row_lag = Histogram::with_opts(
            HistogramOpts::new(
                "gpuex_journal_row_lag_seconds",
                "On a follower: time from the leader's batch to this replica applying its journal row",
            )
            .buckets(ROW_LAG_BUCKETS.to_vec()),
        )?;
        registry.register(Box::new(journal_row_lag.clone()))?;
        let market = MarketGauges {
            utilization: GaugeVec::new(
                Opts::new(
                    "gpuex_gpu_utilization_ratio",
                    "Allocated / total compute per pool",
                ),
                &["gpu_model", "region"],
            )?,
            clearing_index: GaugeVec::new(
                Opts::new(
                    "gpuex_spot_clearing_index",
                    "Last spot clearing index (× list)",
                ),
                &["gpu_model", "region"],
            )?,
            frag_ratio: Gauge::new(
                "gpuex_frag_ratio",
                "Free capacity the demand mix cannot use",
            )?,
            internal_waste_milli: IntGauge::new(
                "gpuex_internal_waste_milli",
                "Compute held beyond what was asked, milli-GPU",
            )?,
            open_orders: IntGauge::new("gpuex_orders_open", "Open orders (waiting or bidding)")?,
            leases: IntGaugeVec::new(
                Opts::new("gpuex_leases", "Live leases by state"),
                &["state"],
            )?,
        };
        registry.register(Box::new(market.utilization.clone()))?;
        registry.register(Box::new(market.clearing_index.clone()))?;
        registry.register(Box::new(market.frag_ratio.clone()))?;
        registry.register(Box::new(market.internal_waste_milli.clone()))?;
        registry.register(Box::new(market.open_orders.clone()))?;
        registry.register(Box::new(market.leases.clone()))?;
        let fleet = FleetGauges {
            heartbeats: IntCounter::new(
                "gpuex_agent_heartbeats_total",
                "Agent heartbeats received",
            )?,
            nodes: IntGaugeVec::new(Opts::new("gpuex_nodes", "Nodes by status"), &["status"])?,
            gpu_utilization: GaugeVec::new(
                Opts::new(
                    "gpuex_node_gpu_utilization_ratio",
                    "GPU utilization (0-1) in each node's latest heartbeat",
                ),
                &["node", "gpu"],
            )?,
        };
        registry.register(Box::new(fleet.heartbeats.clone()))?;
        registry.register(Box::new(fleet.nodes.clone()))?;
        registry.register(Box::new(fleet.gpu_utilization.clone()))?;
        let webhook_deliveries = IntCounterVec::new(
            Opts::new(
                "gpuex_webhook_deliveries_total",
                "Webhook attempts: delivered, retried (to be tried again) or failed (given up)",
            ),
            &["outcome"],
        )?;
        registry.register(Box::new(webhook_deliveries.clone()))?;
        let event_streams = IntGauge::new(
            "gpuex_event_streams",
            "Open GET /v1/events/stream responses",
        )?;
        registry.register(Box::new(event_streams.clone()))?;
        let forecast_units = GaugeVec::new(
            Opts::new(
                "gpuex_forecast_units",
                "Standard TFLOPS on-demand and reserved orders are forecast to ask for in the next minute",
            ),
            &["gpu_model", "region"],
        )?;
        registry.register(Box::new(forecast_units.clone()))?;
        let leader = IntGauge::new(
            "gpuex_leader",
            "1 while this replica leads the market and runs its engine, else 0",
        )?;
        registry.register(Box::new(leader.clone()))?;
        let journal = JournalMetrics::register(&registry)?;
        Ok(Metrics {
            leader,
            journal,
            webhook_deliveries,
            event_streams,
            forecast_units,
            registry,
            requests,
            latency,
            scheduling,
            queue_wait,
            journal_row_lag,
            market,
            fleet,
        })
    }

    /// Counts a heartbeat and records its GPUs' utilization.
    pub fn observe_heartbeat(&self, node: uuid::Uuid, gpus: &[crate::protocol::GpuMetrics]) {
        self.fleet.heartbeats.inc();
        let node = node.to_string();
        for g in gpus {
            if let Some(util) = g.fields.gpu_util {
                self.fleet
                    .gpu_utilization
                    .with_label_values(&[node.as_str(), g.index.to_string().as_str()])
                    .set(util / 100.0);
            }
        }
    }

    /// Replaces the node counts by status.
    pub fn set_node_counts(&self, counts: &[(String, i64)]) {
        self.fleet.nodes.reset();
        for (status, count) in counts {
            self.fleet
                .nodes
                .with_label_values(&[status.as_str()])
                .set(*count);
        }
    }

    /// Forgets a lost node's GPU utilization series.
    pub fn forget_node(&self, node: uuid::Uuid) {
        let node = node.to_string();
        for gpu in 0..32 {
            let _ = self
                .fleet
                .gpu_utilization
                .remove_label_values(&[node.as_str(), gpu.to_string().as_str()]);
        }
    }

    pub fn observe_scheduling(&self, elapsed: Duration) {
        self.scheduling.observe(elapsed.as_secs_f64());
    }

    /// Sets the market gauges from a stats snapshot.
    pub fn set_market(&self, stats: &crate::market::book::MarketStats) {
        use rust_decimal::prelude::ToPrimitive;
        let g = &self.market;
        g.utilization.reset();
        g.clearing_index.reset();
        for pool in &stats.pools {
            let labels = [pool.gpu_model.as_str(), pool.region.as_str()];
            g.utilization
                .with_label_values(&labels)
                .set(pool.utilization / 100.0);
            if let Some(index) = pool.clearing_index.and_then(|i| i.to_f64()) {
                g.clearing_index.with_label_values(&labels).set(index);
            }
        }
        g.frag_ratio.set(stats.frag_ratio);
        g.internal_waste_milli
            .set(i64::try_from(stats.internal_waste_milli).unwrap_or(i64::MAX));
        g.open_orders
            .set(i64::try_from(stats.open_orders).unwrap_or(i64::MAX));
        g.leases.reset();
        for (state, count) in &stats.leases_by_state {
            g.leases
                .with_label_values(&[state.as_str()])
                .set(i64::try_from(*count).unwrap_or(0));
        }
    }

    /// Where this replica stands in the market's journal, at a scrape.
    pub fn set_journal(&self, status: &crate::market::journal::JournalStatus, now_ms: i64) {
        let j = &self.journal;
        j.applied_seq.set(status.applied_seq());
        #[allow(clippy::cast_precision_loss)]
        j.lag_seconds.set(status.lag_ms(now_ms) as f64 / 1000.0);
        // Counters follow the task's own counts, which only grow.
        j.restores
            .inc_by(status.restores().saturating_sub(j.restores.get()));
        j.mismatches
            .inc_by(status.mismatches().saturating_sub(j.mismatches.get()));
        j.checked
            .inc_by(status.digests_checked().saturating_sub(j.checked.get()));
    }

    /// The registry in Prometheus text format.
    pub fn render(&self) -> String {
        let mut buf = Vec::new();
        let encoder = TextEncoder::new();
        if encoder.encode(&self.registry.gather(), &mut buf).is_err() {
            return String::new();
        }
        String::from_utf8(buf).unwrap_or_default()
    }
}

/// Middleware: counts and times each request under its route template, so
/// `/v1/orders/{id}` is one series, not one per id.
pub async fn track(State(metrics): State<Arc<Metrics>>, req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| "unmatched".to_owned());
    let method = req.method().as_str().to_owned();
    let started = Instant::now();
    let response = next.run(req).await;
    let status = response.status().as_u16().to_string();
    let labels = [method.as_str(), route.as_str(), status.as_str()];
    metrics.requests.with_label_values(&labels).inc();
    metrics
        .latency
        .with_label_values(&labels)
        .observe(started.elapsed().as_secs_f64());
    response
}

/// `GET /metrics`.
pub async fn endpoint(State(metrics): State<Arc<Metrics>>) -> impl IntoResponse {
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4",
        )],
        metrics.render(),
    )
}
