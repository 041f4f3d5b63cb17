//! How answers are shown: tables for people, the API's JSON for scripts.

use super::{CliError, Ctx, Exit, Result};
use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};
use gpuex_api::market::{LeaseView, OrderView};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::io::Write;

/// Prints the answer: for scripts the JSON exactly as the server sent it;
/// for people `render` of it read as the server's own type `T`, so every
/// field shown is one the compiler knows.
pub(super) fn show<T: DeserializeOwned>(
    ctx: &Ctx,
    value: &Value,
    render: impl FnOnce(&T) -> String,
) -> Result<()> {
    if ctx.json() {
        print_json(value);
    } else {
        println!("{}", render(&read(value)?));
    }
    Ok(())
}

/// A list as a table, one row of `row` per item read as `T`; for scripts
/// the items as the server sent them.
pub(super) fn show_list<T: DeserializeOwned>(
    ctx: &Ctx,
    items: &[Value],
    columns: &[&str],
    row: impl Fn(&T) -> Vec<String>,
) -> Result<()> {
    if ctx.json() {
        print_json(&Value::Array(items.to_vec()));
        return Ok(());
    }
    let mut t = table(columns);
    for item in items {
        t.add_row(row(&read(item)?));
    }
    println!("{t}");
    Ok(())
}

/// The server's answer as its own type. A failure means server and CLI
/// disagree on the wire contract: exit 1, "an unexpected answer".
pub(super) fn read<T: DeserializeOwned>(value: &Value) -> Result<T> {
    T::deserialize(value).map_err(|e| {
        CliError::new(
            Exit::Other,
            format!(
                "unexpected answer from the server (not a {}): {e}",
                std::any::type_name::<T>().rsplit("::").next().unwrap_or("")
            ),
        )
    })
}

/// A field as a table cell, written as the server's JSON writes it (so a
/// time, a decimal or an enum reads the same in a table as in `--output
/// json`): strings bare, null (an absent `Option`) empty.
pub(super) fn cell(field: &impl Serialize) -> String {
    // Serializing these types to a `Value` cannot fail (no map has
    // non-string keys); were it to, the cell is left empty.
    text(&serde_json::to_value(field).unwrap_or(Value::Null))
}

pub(super) fn order_table(o: &OrderView) -> String {
    let mut rows = vec![
        ("order", cell(&o.id)),
        ("mode", cell(&o.mode)),
        ("state", cell(&o.state)),
        ("region", cell(&o.region)),
        ("lease", cell(&o.lease_id)),
    ];
    // An order of several units holds several leases.
    if o.lease_ids.len() > 1 {
        let ids: Vec<String> = o.lease_ids.iter().map(cell).collect();
        rows.push(("leases", ids.join(", ")));
    }
    if let Some(m) = &o.reject_message {
        rows.push(("rejected", m.clone()));
    }
    // Placed again after a preemption or a lost node.
    if o.attempts.len() > 1 {
        let ids: Vec<String> = o.attempts.iter().map(cell).collect();
        rows.push(("attempts", ids.join(", ")));
    }
    if let Some(r) = &o.resumed_from {
        rows.push((
            "resumed_from",
            format!("checkpoint {} of {}", cell(&r.seq), cell(&r.stored_at)),
        ));
    }
    kv_table(&rows)
}

pub(super) fn lease_table(l: &LeaseView) -> String {
    kv_table(&[
        ("lease", cell(&l.id)),
        ("state", cell(&l.state)),
        ("mode", cell(&l.mode)),
        ("gpu_model", cell(&l.gpu_model)),
        ("device", cell(&l.device)),
        ("image_id", cell(&l.image_id)),
        ("region", cell(&l.region)),
        ("price/h", cell(&l.price_per_hour)),
        ("charged", cell(&l.usage.charged)),
        ("starts_at", cell(&l.starts_at)),
        ("ends_at", cell(&l.ends_at)),
        // Listed for resale: the slice is given up here, sold or not.
        ("vacate_at", cell(&l.vacate_at)),
    ])
}

pub(super) fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(header.to_vec());
    t
}

pub(super) fn kv_table(rows: &[(&str, String)]) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic);
    for (k, v) in rows {
        t.add_row(vec![(*k).to_owned(), v.clone()]);
    }
    t.to_string()
}

/// A JSON value as a table cell: strings bare, null empty.
pub(super) fn text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A JSON value on one line, cut short for a table cell.
pub(super) fn compact(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 100 {
        let cut: String = s.chars().take(99).collect();
        format!("{cut}…")
    } else {
        s
    }
}

pub(super) fn print_json(v: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer_pretty(&mut out, v);
    let _ = writeln!(out);
}

pub(super) fn print_json_line(v: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer(&mut out, v);
    let _ = writeln!(out);
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuex_api::market::UsageView;
    use serde_json::json;

    /// A table shows a typed field as the untyped CLI showed the JSON: the
    /// decimal's scale, the time's digits and an absent time are kept.
    #[test]
    fn a_cell_reads_as_the_json_the_server_sent() {
        for billed_until in [json!("2024-01-02T03:04:05.123456Z"), Value::Null] {
            let sent = json!({
                "charged": "1.500000",
                "billed_until": billed_until,
                "tflops_s": "0",
                "vram_gb_s": "12.50",
            });
            let usage: UsageView = read(&sent).expect("a usage view");
            assert_eq!(cell(&usage.charged), text(&sent["charged"]));
            assert_eq!(cell(&usage.billed_until), text(&sent["billed_until"]));
            assert_eq!(cell(&usage.tflops_s), text(&sent["tflops_s"]));
            assert_eq!(cell(&usage.vram_gb_s), text(&sent["vram_gb_s"]));
        }
    }

    #[test]
    fn an_answer_that_is_not_the_type_is_an_unexpected_answer() {
        let error = read::<UsageView>(&json!({"charged": 1})).expect_err("not a usage view");
        assert_eq!(error.exit, Exit::Other);
        assert!(error.message.contains("UsageView"), "{}", error.message);
    }
}
