//! Prometheus metrics: request counts and latency by route and status, and
//! the fleet as agents report it (nodes by status, GPU utilization, heartbeats).

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use prometheus::{
    Encoder, GaugeVec, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGaugeVec, Opts,
    Registry, TextEncoder,
};
use std::sync::Arc;
use std::time::Instant;

/// The server's metric registry and the metrics every request updates.
pub struct Metrics {
    pub registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
    agent_heartbeats: IntCounter,
    nodes: IntGaugeVec,
    gpu_utilization: GaugeVec,
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
            .buckets(vec![
                0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
            ]),
            &["method", "route", "status"],
        )?;
        let agent_heartbeats = IntCounter::new(
            "gpuex_agent_heartbeats_total",
            "Agent heartbeats received",
        )?;
        let nodes = IntGaugeVec::new(
            Opts::new("gpuex_nodes", "Nodes by status"),
            &["status"],
        )?;
        let gpu_utilization = GaugeVec::new(
            Opts::new(
                "gpuex_gpu_utilization_ratio",
                "GPU utilization (0-1) from each node's latest heartbeat",
            ),
            &["node", "gpu"],
        )?;
        registry.register(Box::new(requests.clone()))?;
        registry.register(Box::new(latency.clone()))?;
        registry.register(Box::new(agent_heartbeats.clone()))?;
        registry.register(Box::new(nodes.clone()))?;
        registry.register(Box::new(gpu_utilization.clone()))?;
        Ok(Metrics {
            registry,
            requests,
            latency,
            agent_heartbeats,
            nodes,
            gpu_utilization,
        })
    }

    /// Counts a heartbeat and records its GPUs' utilization.
    pub fn observe_heartbeat(&self, node: uuid::Uuid, gpus: &[crate::protocol::GpuMetrics]) {
        self.agent_heartbeats.inc();
        let node = node.to_string();
        for g in gpus {
            if let Some(util) = g.fields.gpu_util {
                self.gpu_utilization
                    .with_label_values(&[node.as_str(), g.index.to_string().as_str()])
                    .set(util / 100.0);
            }
        }
    }

    /// Replaces the node counts by status.
    pub fn set_node_counts(&self, counts: &[(String, i64)]) {
        self.nodes.reset();
        for (status, count) in counts {
            self.nodes.with_label_values(&[status.as_str()]).set(*count);
        }
    }

    /// Forgets a lost node's GPU utilization.
    pub fn forget_node(&self, node: uuid::Uuid, gpus: usize) {
        let node = node.to_string();
        for i in 0..gpus.max(32) {
            let _ = self
                .gpu_utilization
                .remove_label_values(&[node.as_str(), i.to_string().as_str()]);
        }
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
