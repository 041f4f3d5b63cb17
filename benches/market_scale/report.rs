//! The summary table: every fleet of the run, and the ratios against the first.

use super::agents::HeartbeatCost;
use super::buyers::OrderFigures;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use std::time::Duration;

/// What one fleet's run measured.
pub(super) struct Figures {
    pub(super) gpus: u64,
    pub(super) nodes: usize,
    pub(super) filled: usize,
    pub(super) bids_placed: usize,
    pub(super) live_leases: i64,
    pub(super) queued_bids: i64,
    pub(super) orders: OrderFigures,
    pub(super) heartbeats: HeartbeatCost,
    pub(super) heartbeat_errors: u64,
    pub(super) rss_mib: f64,
    pub(super) peak_mib: f64,
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

pub(super) fn table(figures: &[Figures]) -> String {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED);
    table.set_header(vec![
        "GPUs",
        "nodes",
        "fill leases",
        "spot bids placed",
        "live leases",
        "spot bids queued at the end",
        "orders/s",
        "p50",
        "p99",
        "p99.9",
        "orders sent (filled, refused, failed)",
        "heartbeats/s (failed)",
        "server cores quiet",
        "server cores beating",
        "heartbeat cost, % of a core",
        "RSS (peak)",
    ]);
    for f in figures {
        let o = &f.orders;
        let h = &f.heartbeats;
        table.add_row(vec![
            f.gpus.to_string(),
            f.nodes.to_string(),
            f.filled.to_string(),
            f.bids_placed.to_string(),
            f.live_leases.to_string(),
            f.queued_bids.to_string(),
            format!("{:.0}", o.per_s),
            ms(o.p50),
            ms(o.p99),
            ms(o.p999),
            format!("{} ({}, {}, {})", o.sent, o.filled, o.refused, o.failed),
            format!("{:.0} ({})", h.per_s, f.heartbeat_errors),
            format!("{:.2}", h.quiet_cores),
            format!("{:.2}", h.beating_cores),
            format!("{:.1}", (h.beating_cores - h.quiet_cores) * 100.0),
            format!("{:.0} MiB ({:.0})", f.rss_mib, f.peak_mib),
        ]);
    }
    let mut out = table.to_string();
    if let [first, .., last] = figures {
        out.push_str(&format!(
            "\norders/s at {} GPUs against {} GPUs: {:.2}x; p99 {:.2}x; RSS {:.2}x\n",
            last.gpus,
            first.gpus,
            last.orders.per_s / first.orders.per_s.max(f64::MIN_POSITIVE),
            last.orders.p99.as_secs_f64() / first.orders.p99.as_secs_f64().max(f64::MIN_POSITIVE),
            last.rss_mib / first.rss_mib.max(f64::MIN_POSITIVE),
        ));
    }
    out
}
