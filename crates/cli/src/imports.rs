//! `gpuex import FILE --format slurm|k8s|csv` and `gpuex imports [show|delete]`:
//! a job history from Slurm, Kubernetes or a CSV, as a capacity profile the
//! TCO prices (`gpuex tco --import ID`).

use super::render::{cell, read};
use super::tco::render_profile;
use super::{kv_table, print_json, show, table, CliError, Ctx, Exit, Result};
use clap::{Subcommand, ValueEnum};
use gpuex_api::imports::{ProfileImport, ProfileImportDetail, ProfileImportList};
use reqwest::Method;
use serde_json::json;
use std::path::Path;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ImportFileFormat {
    /// `sacct --parsable2` output (JobID, Start, End, AllocTRES, …).
    Slurm,
    /// `kubectl get pods -o json`.
    K8s,
    /// start,end,gpus[,gpu_model][,tag].
    Csv,
}

impl ImportFileFormat {
    fn as_str(self) -> &'static str {
        match self {
            ImportFileFormat::Slurm => "slurm",
            ImportFileFormat::K8s => "k8s",
            ImportFileFormat::Csv => "csv",
        }
    }
}

/// `gpuex imports …`.
#[derive(Debug, Clone, Subcommand)]
pub enum ImportsCommand {
    /// One import: its rows, refusals, profile and GPUs held over time.
    Show { id: String },
    /// Delete an import and its profile.
    Delete { id: String },
}

fn render_import(i: &ProfileImport) -> String {
    let mut out = kv_table(&[
        ("id", i.id.to_string()),
        ("format", i.format.as_str().to_owned()),
        ("rows", cell(&i.rows)),
        ("skipped", cell(&i.skipped)),
        ("rejected", cell(&i.rejected_count)),
        (
            "default model",
            format!("{} ({} rows)", i.default_gpu_model, i.defaulted_model_rows),
        ),
        ("from", cell(&i.from)),
        ("to", cell(&i.to)),
        ("bytes", cell(&i.bytes)),
    ]);
    if !i.rejected.is_empty() {
        let mut t = table(&["line", "reason"]);
        for r in &i.rejected {
            t.add_row(vec![cell(&r.line), r.reason.clone()]);
        }
        out.push_str(&format!("\n{t}"));
        if i.rejected_count > i.rejected.len() as u64 {
            out.push_str(&format!(
                "\n… and {} more",
                i.rejected_count - i.rejected.len() as u64
            ));
        }
    }
    out
}

fn render_detail(d: &ProfileImportDetail) -> String {
    let mut out = render_import(&d.import);
    if let Some(p) = &d.profile {
        out.push_str(&format!("\n{}", render_profile(p)));
    }
    if let Some(peak) = d.concurrency.iter().map(|c| c.peak_gpus).max() {
        // A text chart: one bar per stretch, scaled to the peak.
        let width = 40u32;
        let mut chart = table(&["from", "mean GPUs", "peak GPUs", ""]);
        let every = d.concurrency.len().div_ceil(24).max(1);
        for c in d.concurrency.iter().step_by(every) {
            let bar = if peak.is_zero() {
                0
            } else {
                (c.mean_gpus / peak * rust_decimal::Decimal::from(width))
                    .round()
                    .try_into()
                    .unwrap_or(0u32)
            };
            chart.add_row(vec![
                cell(&c.from),
                cell(&c.mean_gpus),
                cell(&c.peak_gpus),
                "█".repeat(bar as usize),
            ]);
        }
        out.push_str(&format!("\n{chart}"));
    }
    out
}

/// Uploads `file` as it is read (never whole in memory), under one
/// Idempotency-Key, retried on transport errors and 5xx.
pub(super) async fn import(
    ctx: &Ctx,
    file: &Path,
    format: ImportFileFormat,
    gpu_model: Option<String>,
) -> Result<()> {
    let key = uuid::Uuid::new_v4().to_string();
    let mut query = vec![("format", format.as_str().to_owned())];
    query.extend(gpu_model.map(|m| ("gpu_model", m)));
    let mut attempt = 0;
    let answer = loop {
        attempt += 1;
        let opened = tokio::fs::File::open(file).await.map_err(|e| {
            CliError::new(Exit::Other, format!("cannot read {}: {e}", file.display()))
        })?;
        let body = reqwest::Body::wrap_stream(tokio_util::io::ReaderStream::new(opened));
        let builder = ctx
            .api
            .upload_request("/v1/profile/imports")
            .query(&query)
            .header("Idempotency-Key", &key)
            .header("content-type", "application/octet-stream")
            .body(body);
        match ctx.api.send(builder).await {
            Err(e) if e.exit == Exit::Server && attempt < 3 => {
                tokio::time::sleep(Duration::from_millis(500 * attempt)).await;
            }
            other => break other?,
        }
    };
    show(ctx, &answer, render_import)
}

pub(super) async fn imports(ctx: &Ctx, command: Option<ImportsCommand>) -> Result<()> {
    match command {
        None => {
            let listed = ctx.api.get("/v1/profile/imports", &[]).await?;
            if ctx.json() {
                print_json(&listed);
                return Ok(());
            }
            let listed: ProfileImportList = read(&listed)?;
            let mut t = table(&["id", "format", "created", "rows", "rejected", "from", "to"]);
            for i in &listed.imports {
                t.add_row(vec![
                    i.id.to_string(),
                    i.format.as_str().to_owned(),
                    cell(&i.created_at),
                    cell(&i.rows),
                    cell(&i.rejected_count),
                    cell(&i.from),
                    cell(&i.to),
                ]);
            }
            println!("{t}");
            Ok(())
        }
        Some(ImportsCommand::Show { id }) => {
            let detail = ctx
                .api
                .get(&format!("/v1/profile/imports/{id}"), &[])
                .await?;
            show(ctx, &detail, render_detail)
        }
        Some(ImportsCommand::Delete { id }) => {
            let path = format!("/v1/profile/imports/{id}");
            ctx.api.send(ctx.api.request(Method::DELETE, &path)).await?;
            if ctx.json() {
                print_json(&json!({"id": id, "deleted": true}));
            } else {
                println!("deleted import {id}");
            }
            Ok(())
        }
    }
}
