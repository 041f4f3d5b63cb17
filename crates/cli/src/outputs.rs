//! `gpuex outputs LEASE [--get NAME] [--out PATH|-]`, and the streamed
//! download into a file that `gpuex export` shares.

use super::render::{cell, read};
use super::{print_json, table, CliError, Ctx, Exit};
use futures::StreamExt;
use gpuex_api::nodes::LeaseOutputs;
use serde_json::json;
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};

type Result<T> = std::result::Result<T, CliError>;

/// Lists the lease's outputs, or downloads one (`--get`) to `--out`
/// (default: its file name here; `-`: standard output), checking its SHA-256.
pub(super) async fn outputs(
    ctx: &Ctx,
    lease: &str,
    get: Option<String>,
    out: Option<PathBuf>,
) -> Result<()> {
    let Some(name) = get else {
        let listed = ctx
            .api
            .get(&format!("/v1/leases/{lease}/outputs"), &[])
            .await?;
        if ctx.json() {
            print_json(&listed);
        } else {
            let listed: LeaseOutputs = read(&listed)?;
            let mut t = table(&["name", "size", "sha256", "stored_at", "expires_at"]);
            for o in &listed.outputs {
                t.add_row(vec![
                    o.name.clone(),
                    cell(&o.size),
                    o.sha256.clone(),
                    cell(&o.stored_at),
                    cell(&o.expires_at),
                ]);
            }
            println!("{t}");
            eprintln!(
                "{} files, {} bytes; kept {} days",
                listed.outputs.len(),
                listed.total_bytes,
                listed.retention_days
            );
        }
        return Ok(());
    };
    let target =
        out.unwrap_or_else(|| PathBuf::from(name.rsplit('/').next().unwrap_or(name.as_str())));
    let path = format!(
        "/v1/leases/{lease}/outputs/{}",
        gpuex_wire::protocol::path_segment(&name)
    );
    let response = ctx.api.execute(ctx.api.stream_request(&path)).await?;
    let expected = response
        .headers()
        .get("x-checksum-sha256")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let (written, sha256) = save(ctx, response, &target).await?;
    if expected.as_deref().is_some_and(|e| e != sha256) {
        if target.as_os_str() != "-" {
            let _ = std::fs::remove_file(&target);
        }
        return Err(CliError::new(
            Exit::Server,
            format!(
                "`{name}` arrived with SHA-256 {sha256}, not the {} the server gave: removed",
                expected.unwrap_or_default()
            ),
        ));
    }
    if target.as_os_str() != "-" {
        if ctx.json() {
            print_json(&json!({"name": name, "file": target, "bytes": written, "sha256": sha256}));
        } else {
            eprintln!(
                "wrote {written} bytes to {} (sha256 {sha256})",
                target.display()
            );
        }
    }
    Ok(())
}

/// Streams `response`'s body into `target` (`-`: standard output) with a
/// progress bar; written beside it and renamed, so a failed download leaves
/// no half file. Returns the bytes written and their hex SHA-256.
pub(super) async fn save(
    ctx: &Ctx,
    response: reqwest::Response,
    target: &Path,
) -> Result<(u64, String)> {
    let to_stdout = target.as_os_str() == "-";
    let bar = match response.content_length() {
        Some(n) => indicatif::ProgressBar::new(n),
        None => indicatif::ProgressBar::no_length(),
    };
    if to_stdout {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {bytes} {wide_bar} {bytes_per_sec}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let fail = |e: std::io::Error| CliError::io(format!("cannot write {}: {e}", target.display()));
    let mut tmp = target.as_os_str().to_owned();
    tmp.push(".part");
    let tmp = PathBuf::from(tmp);
    let mut sink: Box<dyn Write> = if to_stdout {
        Box::new(std::io::stdout().lock())
    } else {
        Box::new(std::io::BufWriter::new(
            std::fs::File::create(&tmp).map_err(fail)?,
        ))
    };
    let mut hasher = Sha256::new();
    let mut stream = response.bytes_stream();
    let mut written: u64 = 0;
    while let Some(chunk) = stream.next().await {
        let chunk = match chunk {
            Ok(c) => c,
            Err(e) => {
                drop(sink);
                let _ = std::fs::remove_file(&tmp);
                return Err(ctx.api.transport(&e));
            }
        };
        sink.write_all(&chunk).map_err(fail)?;
        hasher.update(&chunk);
        written += chunk.len() as u64;
        bar.inc(chunk.len() as u64);
    }
    sink.flush().map_err(fail)?;
    drop(sink);
    bar.finish_and_clear();
    if !to_stdout {
        std::fs::rename(&tmp, target).map_err(fail)?;
    }
    Ok((written, hex::encode(hasher.finalize())))
}
