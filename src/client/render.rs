//! How answers are shown: tables for people, the API's JSON for scripts.

use super::Ctx;
use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};
use serde_json::Value;
use std::io::Write;

pub(super) fn show(ctx: &Ctx, value: &Value, render: impl FnOnce(&Value) -> String) {
    if ctx.json() {
        print_json(value);
    } else {
        println!("{}", render(value));
    }
}

pub(super) fn show_list(ctx: &Ctx, items: &[Value], columns: &[&str]) {
    if ctx.json() {
        print_json(&Value::Array(items.to_vec()));
        return;
    }
    let mut t = table(columns);
    for item in items {
        t.add_row(columns.iter().map(|c| text(&item[*c])).collect::<Vec<_>>());
    }
    println!("{t}");
}

pub(super) fn order_table(o: &Value) -> String {
    let mut rows = vec![
        ("order", text(&o["id"])),
        ("mode", text(&o["mode"])),
        ("state", text(&o["state"])),
        ("region", text(&o["region"])),
        ("lease", text(&o["lease_id"])),
    ];
    if let Some(m) = o["reject_message"].as_str() {
        rows.push(("rejected", m.to_owned()));
    }
    // Placed again after a preemption or a lost node.
    if let Some(attempts) = o["attempts"].as_array().filter(|a| a.len() > 1) {
        let ids: Vec<String> = attempts.iter().map(text).collect();
        rows.push(("attempts", ids.join(", ")));
    }
    if o["resumed_from"].is_object() {
        let r = &o["resumed_from"];
        rows.push((
            "resumed_from",
            format!(
                "checkpoint {} of {}",
                text(&r["seq"]),
                text(&r["stored_at"])
            ),
        ));
    }
    kv_table(&rows)
}

pub(super) fn lease_table(l: &Value) -> String {
    kv_table(&[
        ("lease", text(&l["id"])),
        ("state", text(&l["state"])),
        ("mode", text(&l["mode"])),
        ("gpu_model", text(&l["gpu_model"])),
        ("device", text(&l["device"])),
        ("image_id", text(&l["image_id"])),
        ("region", text(&l["region"])),
        ("price/h", text(&l["price_per_hour"])),
        ("charged", text(&l["usage"]["charged"])),
        ("starts_at", text(&l["starts_at"])),
        ("ends_at", text(&l["ends_at"])),
        // Listed for resale: the slice is given up here, sold or not.
        ("vacate_at", text(&l["vacate_at"])),
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
