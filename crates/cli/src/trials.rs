//! `gpuex trial --gpu-model M --shape S… --command CMD [--wait]` and
//! `gpuex trials [ID]`: a workload run once per GPU shape, to find the
//! smallest slice it runs on before buying.

use super::render::{cell, read};
use super::{key_value, kv_table, pairs, print_json, show, table, CliError, Ctx, Exit, Result};
use clap::Args;
use gpuex_api::trials::{TrialList, TrialState, TrialView};
use serde_json::{json, Map, Value};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Args)]
pub struct TrialArgs {
    /// The GPU model whose shapes are tried, e.g. H100-SXM5-80GB.
    #[arg(long)]
    gpu_model: String,
    /// A shape (repeatable): mig-<profile> (e.g. mig-1g.10gb),
    /// shared-<thousandths> (e.g. shared-250) or whole.
    #[arg(long = "shape", required = true, value_name = "SHAPE")]
    shapes: Vec<String>,
    /// The command each shape runs.
    #[arg(long)]
    command: String,
    /// The OCI image a container launcher runs it in.
    #[arg(long)]
    image: Option<String>,
    /// An environment variable for the command (repeatable).
    #[arg(long = "env", value_parser = key_value, value_name = "KEY=VALUE")]
    env: Vec<(String, String)>,
    /// A region, e.g. eu-west.
    #[arg(long)]
    region: Option<String>,
    /// How long each shape may run, 60 to 600 seconds (default 300).
    #[arg(long)]
    duration_s: Option<u32>,
    /// Wait until every shape has passed, failed or been refused.
    #[arg(long)]
    wait: bool,
    /// How long --wait waits, in seconds (exit 8 past it).
    #[arg(long, default_value_t = 900)]
    wait_timeout: u64,
}

impl TrialArgs {
    fn body(&self) -> Value {
        let mut body = Map::new();
        body.insert("gpu_model".into(), json!(self.gpu_model));
        body.insert("shapes".into(), json!(self.shapes));
        body.insert("command".into(), json!(self.command));
        if let Some(image) = &self.image {
            body.insert("image".into(), json!(image));
        }
        if !self.env.is_empty() {
            body.insert("env".into(), pairs(self.env.clone()));
        }
        if let Some(region) = &self.region {
            body.insert("region".into(), json!(region));
        }
        if let Some(d) = self.duration_s {
            body.insert("duration_s".into(), json!(d));
        }
        Value::Object(body)
    }
}

/// A trial as text: each shape's outcome, then the cheapest that passed.
pub(super) fn render_trial(t: &TrialView) -> String {
    let mut out = kv_table(&[
        ("trial", t.id.to_string()),
        ("state", cell(&t.state)),
        ("gpu_model", t.gpu_model.clone()),
        ("duration_s", t.duration_s.to_string()),
    ]);
    let mut runs = table(&[
        "shape", "state", "placed", "exit", "peak MB", "util p50", "price/h", "reason",
    ]);
    for r in &t.runs {
        runs.add_row(vec![
            r.shape.clone(),
            cell(&r.state),
            cell(&r.placed),
            cell(&r.exit_code),
            cell(&r.peak_vram_mb),
            cell(&r.gpu_util_p50),
            cell(&r.price_per_hour),
            cell(&r.reason),
        ]);
    }
    out.push_str(&format!("\n{runs}"));
    match &t.smallest_passed {
        Some(s) => out.push_str(&format!(
            "\nsmallest that passed: {} at {}/h",
            s.shape,
            cell(&s.price_per_hour)
        )),
        None if t.state == TrialState::Done => out.push_str("\nno shape passed"),
        None => {}
    }
    out
}

/// Starts a trial; with `--wait`, polls it until done.
pub(super) async fn trial(ctx: &Ctx, args: TrialArgs) -> Result<()> {
    let started = ctx.api.post_idempotent("/v1/trials", &args.body()).await?;
    if !args.wait {
        return show(ctx, &started, render_trial);
    }
    let mut view: TrialView = read(&started)?;
    let deadline = Instant::now() + Duration::from_secs(args.wait_timeout);
    let mut raw = started;
    while view.state != TrialState::Done {
        if Instant::now() >= deadline {
            return Err(CliError::new(
                Exit::Timeout,
                format!("timed out waiting for trial {}", view.id),
            ));
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        raw = ctx.api.get(&format!("/v1/trials/{}", view.id), &[]).await?;
        view = read(&raw)?;
    }
    show(ctx, &raw, render_trial)
}

/// `gpuex trials`: every trial of yours, or one.
pub(super) async fn trials(ctx: &Ctx, id: Option<String>) -> Result<()> {
    if let Some(id) = id {
        let t = ctx.api.get(&format!("/v1/trials/{id}"), &[]).await?;
        return show(ctx, &t, render_trial);
    }
    let list = ctx.api.get("/v1/trials", &[]).await?;
    if ctx.json() {
        print_json(&list);
        return Ok(());
    }
    let list: TrialList = read(&list)?;
    let mut t = table(&[
        "id",
        "state",
        "gpu_model",
        "shapes",
        "smallest passed",
        "created",
    ]);
    for trial in &list.trials {
        let shapes: Vec<&str> = trial.runs.iter().map(|r| r.shape.as_str()).collect();
        t.add_row(vec![
            trial.id.to_string(),
            cell(&trial.state),
            trial.gpu_model.clone(),
            shapes.join(", "),
            trial
                .smallest_passed
                .as_ref()
                .map_or_else(String::new, |s| s.shape.clone()),
            cell(&trial.created_at),
        ]);
    }
    println!("{t}");
    Ok(())
}
