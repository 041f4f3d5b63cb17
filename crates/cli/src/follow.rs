//! The commands that follow a stream: a lease's logs, the events, an export.

use super::outputs;
use super::render::{cell, compact, print_json, print_json_line, read, show, table};
use super::{Ctx, Exit, ExportFormat, Result};
use futures::StreamExt;
use gpuex_api::events::EventPage;
use gpuex_api::nodes::LeaseLogs;
use serde_json::{json, Value};
use std::io::Write;
use std::time::Duration;

/// Prints the lease's output; with `follow`, what is new every second until
/// the lease has ended and its last output arrived.
pub(super) async fn logs(ctx: &Ctx, id: &str, follow: bool) -> Result<()> {
    let path = format!("/v1/leases/{id}/logs");
    let mut seen: u64 = 0;
    let mut stdout = std::io::stdout();
    loop {
        let raw = ctx.api.get(&path, &[]).await?;
        if ctx.json() && !follow {
            print_json(&raw);
            return Ok(());
        }
        let logs: LeaseLogs = read(&raw)?;
        let total = u64::try_from(logs.total_bytes).unwrap_or(0);
        let tail = logs.tail.as_str();
        if total > seen {
            let new = usize::try_from(total - seen).unwrap_or(usize::MAX);
            // The server keeps a tail: what scrolled out of it is gone.
            let start = tail.len().saturating_sub(new);
            let start = (start..=tail.len())
                .find(|i| tail.is_char_boundary(*i))
                .unwrap_or(tail.len());
            let chunk = &tail[start..];
            if ctx.json() {
                print_json_line(&json!({"lease_id": id, "offset": seen, "text": chunk}));
            } else {
                let _ = stdout.write_all(chunk.as_bytes());
                let _ = stdout.flush();
            }
            seen = total;
        }
        if !follow || logs.complete {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// A page of events, or the live SSE stream (reconnecting after the last id seen).
pub(super) async fn events(
    ctx: &Ctx,
    follow: bool,
    after: Option<i64>,
    limit: usize,
) -> Result<()> {
    if !follow {
        let mut q = vec![("limit", limit.clamp(1, 500).to_string())];
        q.extend(after.map(|a| ("after", a.to_string())));
        let raw = ctx.api.get("/v1/events", &q).await?;
        return show(ctx, &raw, |page: &EventPage| {
            let mut t = table(&["id", "type", "at", "data"]);
            for e in &page.items {
                // `data` is free-form (its fields depend on `type`): shown
                // as the JSON it is, cut short.
                let data = serde_json::from_str(e.data.get()).unwrap_or(Value::Null);
                t.add_row(vec![
                    cell(&e.id),
                    cell(&e.kind),
                    cell(&e.at),
                    compact(&data),
                ]);
            }
            t.to_string()
        });
    }
    use eventsource_stream::Eventsource;
    let mut last = after;
    let mut failures = 0u32;
    loop {
        let mut request = ctx
            .api
            .stream_request("/v1/events/stream")
            .header("Accept", "text/event-stream");
        if let Some(id) = last {
            request = request.query(&[("after", id)]);
        }
        let response = match ctx.api.execute(request).await {
            Ok(r) => r,
            Err(e) if e.exit == Exit::Server && failures < 5 => {
                failures += 1;
                tokio::time::sleep(Duration::from_secs(u64::from(failures))).await;
                continue;
            }
            Err(e) => return Err(e),
        };
        failures = 0;
        let mut stream = response.bytes_stream().eventsource();
        while let Some(item) = stream.next().await {
            let Ok(event) = item else { break };
            if event.data.is_empty() {
                continue;
            }
            let data: Value =
                serde_json::from_str(&event.data).unwrap_or(Value::String(event.data.clone()));
            if let Ok(id) = event.id.parse::<i64>() {
                last = Some(id);
            }
            // Printed as it came: a stream's events are passed through, and
            // one that is not JSON is shown as its text.
            if ctx.json() {
                print_json_line(&data);
            } else {
                println!(
                    "{:>6}  {:<24} {}",
                    event.id,
                    event.event,
                    compact(data.get("data").unwrap_or(&data))
                );
            }
        }
        // The server closed the stream (restart, idle proxy): resume after the last id.
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

pub(super) async fn export(
    ctx: &Ctx,
    format: ExportFormat,
    output_file: &std::path::Path,
    from: Option<String>,
    to: Option<String>,
) -> Result<()> {
    let format = match format {
        ExportFormat::FocusCsv => "focus-csv",
        ExportFormat::FocusJson => "focus-json",
        ExportFormat::Csv => "csv",
    };
    let mut q = vec![("format", format.to_owned())];
    q.extend(from.map(|f| ("from", f)));
    q.extend(to.map(|t| ("to", t)));
    let response = ctx
        .api
        .execute(ctx.api.stream_request("/v1/billing/export").query(&q))
        .await?;
    let (written, _) = outputs::save(ctx, response, output_file).await?;
    if output_file.as_os_str() != "-" {
        if ctx.json() {
            print_json(&json!({"file": output_file, "bytes": written, "format": format}));
        } else {
            eprintln!("wrote {written} bytes to {}", output_file.display());
        }
    }
    Ok(())
}
