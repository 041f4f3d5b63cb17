//! `gpuex quote` as text.

use super::{table, text};
use serde_json::Value;

/// A quote as text. The headline is the slice the order would hold, priced
/// on its held units, as the order is charged; the options below price the
/// units asked on each model (issue 34 item 6: showing only those understated
/// a MIG slice's price by a third).
pub(super) fn quote_text(q: &Value) -> String {
    let currency = text(&q["currency"]);
    let mut out = format!(
        "{} for {} s from {} ({})",
        text(&q["mode"]),
        text(&q["duration_s"]),
        text(&q["start_at"]),
        text(&q["rule"])
    );
    let slice = &q["slice"];
    if slice.is_object() {
        let held = &slice["units"]["held"];
        out.push_str(&format!(
            "\nthe order would hold {} in {}: {} tflops_h + {} vram_h per hour at {} {currency}/h, {} {currency} in all",
            text(&slice["gpu_model"]),
            text(&slice["region"]),
            text(&held["tflops_h"]),
            text(&held["vram_h"]),
            text(&slice["price_per_hour"]),
            text(&slice["total"]),
        ));
        if slice["max_price_binds"] == Value::Bool(true) {
            out.push_str("\nmax_price is below this price: the order would be refused (or wait, with --max-wait-s)");
        }
    } else if let Some(why) = q["slice_unavailable"].as_str() {
        out.push_str(&format!("\nno slice: {why}"));
    }
    let mut t = table(&["region", "gpu_model", "price/h (units asked)", "total"]);
    for o in q["options"].as_array().into_iter().flatten() {
        t.add_row(vec![
            text(&o["region"]),
            text(&o["gpu_model"]),
            text(&o["price_per_hour"]),
            format!("{} {currency}", text(&o["total"])),
        ]);
    }
    out.push_str(&format!("\n{t}"));
    out
}
