//! `gpuex tco` and `gpuex profile`: what the work would cost over months,
//! whole nodes against gpuex units (`POST /v1/tco`), and the capacity
//! profile it is sized from (`GET /v1/billing/profile`).

use super::render::cell;
use super::{kv_table, put, show, table, Ctx, Result};
use clap::Args;
use gpuex_api::billing::{CapacityProfile, GroupProfile};
use gpuex_api::billing::{LoadShape, Tco};
use serde_json::{Map, Value};

/// The body of `POST /v1/tco`, as flags named like its fields.
#[derive(Debug, Clone, Args)]
pub struct TcoArgs {
    /// What one whole 8-GPU node rents for per hour.
    #[arg(long)]
    pub node_price_per_hour: String,
    /// Months to compare, 1 to 120 (server default 36).
    #[arg(long)]
    pub months: Option<u32>,
    #[arg(long)]
    pub gpu_model: Option<String>,
    #[arg(long)]
    pub region: Option<String>,
    /// The share of the rented nodes' hours doing the work, 0–1
    /// (default: nodes sized to the peak).
    #[arg(long)]
    pub utilization: Option<String>,
    /// Price this load instead of your last 30 days: TFLOPS units at peak.
    #[arg(long)]
    pub peak_tflops: Option<String>,
    #[arg(long)]
    pub mean_tflops: Option<String>,
    /// The TFLOPS level held at least half the time (default 0).
    #[arg(long)]
    pub baseline_tflops: Option<String>,
    /// VRAM units (4 GB) at peak.
    #[arg(long)]
    pub peak_vram: Option<String>,
    #[arg(long)]
    pub mean_vram: Option<String>,
    #[arg(long)]
    pub baseline_vram: Option<String>,
    /// The share of the work that tolerates preemption, 0–1 (default 0).
    #[arg(long)]
    pub spot_share: Option<String>,
    /// Price an imported job history (`gpuex import`) instead.
    #[arg(long, conflicts_with_all = ["peak_tflops", "mean_tflops", "baseline_tflops", "peak_vram", "mean_vram", "baseline_vram", "spot_share"])]
    pub import: Option<String>,
}

impl TcoArgs {
    fn shape(peak: &Option<String>, mean: &Option<String>, baseline: &Option<String>) -> Value {
        let mut m = Map::new();
        put(&mut m, "peak", peak.clone().map(Value::String));
        put(&mut m, "mean", mean.clone().map(Value::String));
        put(&mut m, "baseline", baseline.clone().map(Value::String));
        Value::Object(m)
    }

    /// Decimals go as strings, so the server reads them exactly.
    pub fn body(&self) -> Value {
        let mut body = Map::new();
        body.insert(
            "node_price_per_hour".into(),
            Value::String(self.node_price_per_hour.clone()),
        );
        put(&mut body, "months", self.months.map(Value::from));
        put(
            &mut body,
            "gpu_model",
            self.gpu_model.clone().map(Value::String),
        );
        put(&mut body, "region", self.region.clone().map(Value::String));
        put(
            &mut body,
            "import_id",
            self.import.clone().map(Value::String),
        );
        put(
            &mut body,
            "utilization",
            self.utilization.clone().map(Value::String),
        );
        let profile_flags = [
            &self.peak_tflops,
            &self.mean_tflops,
            &self.baseline_tflops,
            &self.peak_vram,
            &self.mean_vram,
            &self.baseline_vram,
            &self.spot_share,
        ];
        if profile_flags.iter().any(|f| f.is_some()) {
            let mut profile = Map::new();
            profile.insert(
                "tflops_units".into(),
                Self::shape(&self.peak_tflops, &self.mean_tflops, &self.baseline_tflops),
            );
            profile.insert(
                "vram_units".into(),
                Self::shape(&self.peak_vram, &self.mean_vram, &self.baseline_vram),
            );
            put(
                &mut profile,
                "spot_share",
                self.spot_share.clone().map(Value::String),
            );
            body.insert("profile".into(), Value::Object(profile));
        }
        Value::Object(body)
    }
}

/// The answer as people read it: both costs, the saving, the mix and the assumptions.
pub fn render_tco(t: &Tco) -> String {
    let a = &t.assumptions;
    let currency = &t.currency;
    let mut costs = table(&["", "per hour", "per month", "total"]);
    costs.add_row(vec![
        format!(
            "whole nodes ({} × {} GPUs)",
            t.whole_node.nodes, a.node_gpus
        ),
        cell(&t.whole_node.per_hour),
        cell(&t.whole_node.per_month),
        cell(&t.whole_node.total),
    ]);
    costs.add_row(vec![
        "gpuex units".into(),
        cell(&t.gpuex.per_hour),
        cell(&t.gpuex.per_month),
        cell(&t.gpuex.total),
    ]);
    let mut mix = table(&["unit", "mode", "units/h", "price/unit-h", "per hour"]);
    for l in &t.gpuex.mix {
        mix.add_row(vec![
            cell(&l.unit),
            cell(&l.mode),
            cell(&l.units),
            cell(&l.price_per_unit_hour),
            cell(&l.per_hour),
        ]);
    }
    let shape = |s: &LoadShape| {
        format!(
            "peak {} mean {} baseline {} above baseline {}",
            cell(&s.peak),
            cell(&s.mean),
            cell(&s.baseline),
            cell(&s.mean_above_baseline)
        )
    };
    let assumptions = kv_table(&[
        ("gpu model", a.gpu_model.clone()),
        ("region", a.region.clone()),
        ("months", format!("{} of {} h", a.months, a.hours_per_month)),
        (
            "profile from",
            match a.import_id {
                Some(id) => format!("{} {id}", cell(&a.profile_source)),
                None => cell(&a.profile_source),
            },
        ),
        ("tflops units", shape(&a.profile.tflops_units)),
        ("vram units", shape(&a.profile.vram_units)),
        ("spot share", cell(&a.profile.spot_share)),
        (
            "spot index",
            format!("{} ({})", cell(&a.spot_index), a.spot_index_source),
        ),
        ("preemption overhead", cell(&a.spot_preemption_overhead)),
        (
            "node utilization",
            format!("{} ({})", cell(&a.utilization), a.utilization_source),
        ),
        ("node price/h", cell(&a.node_price_per_hour)),
    ]);
    format!(
        "{costs}\nsaving {} {currency} ({} of the whole-node cost)\n{mix}\n{assumptions}\n{}",
        cell(&t.saving.amount),
        cell(&t.saving.fraction),
        a.mix_rule,
    )
}

pub async fn tco(ctx: &Ctx, args: &TcoArgs) -> Result<()> {
    let answer = ctx.api.post("/v1/tco", &args.body()).await?;
    show(ctx, &answer, render_tco)
}

pub fn render_profile(p: &CapacityProfile) -> String {
    let mut t = table(&[
        "group",
        "peak tflops",
        "mean tflops",
        "baseline",
        "peak vram",
        "mean vram",
        "leases",
        "p50 s",
        "p90 s",
        "max s",
        "used",
    ]);
    let mut row = |g: &GroupProfile| {
        let c = &g.tflops_units;
        t.add_row(vec![
            g.key.clone(),
            cell(&c.peak),
            cell(&c.mean),
            cell(&c.baseline),
            cell(&g.vram_units.peak),
            cell(&g.vram_units.mean),
            cell(&g.durations.leases),
            cell(&g.durations.p50_s),
            cell(&g.durations.p90_s),
            cell(&g.durations.max_s),
            cell(&g.utilization.fraction),
        ]);
    };
    row(&p.total);
    for g in p.by_mode.iter().chain(&p.by_gpu_model).chain(&p.by_tag) {
        row(g);
    }
    format!(
        "{} to {} ({} s elapsed, spot share {})\n{t}",
        cell(&p.from),
        cell(&p.to),
        p.elapsed_s,
        cell(&p.spot_share)
    )
}

pub async fn profile(
    ctx: &Ctx,
    from: Option<String>,
    to: Option<String>,
    import: Option<String>,
) -> Result<()> {
    let mut q = Vec::new();
    q.extend(from.map(|f| ("from", f)));
    q.extend(to.map(|t| ("to", t)));
    q.extend(import.map(|i| ("import_id", i)));
    let p = ctx.api.get("/v1/billing/profile", &q).await?;
    show(ctx, &p, render_profile)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args() -> TcoArgs {
        TcoArgs {
            node_price_per_hour: "20".into(),
            months: Some(12),
            gpu_model: None,
            region: None,
            utilization: None,
            peak_tflops: None,
            mean_tflops: None,
            baseline_tflops: None,
            peak_vram: None,
            mean_vram: None,
            baseline_vram: None,
            spot_share: None,
            import: None,
        }
    }

    #[test]
    fn without_load_flags_the_body_asks_for_the_history() {
        assert_eq!(
            args().body(),
            json!({"node_price_per_hour": "20", "months": 12})
        );
    }

    #[test]
    fn load_flags_make_a_profile_of_decimal_strings() {
        let mut a = args();
        a.peak_tflops = Some("400".into());
        a.mean_tflops = Some("100".into());
        a.spot_share = Some("0.5".into());
        assert_eq!(
            a.body()["profile"],
            json!({"tflops_units": {"peak": "400", "mean": "100"}, "vram_units": {}, "spot_share": "0.5"})
        );
    }
}
