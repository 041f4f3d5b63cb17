//! `gpuex quote` as text.

use super::render::cell;
use super::table;
use gpuex_api::pricing::Quote;

/// A quote as text. The headline is the slice the order would hold, priced
/// on its held units, as the order is charged; the options below price the
/// units asked on each model (issue 34 item 6: showing only those understated
/// a MIG slice's price by a third).
pub(super) fn quote_text(q: &Quote) -> String {
    let currency = &q.currency;
    let mut out = format!(
        "{} for {} s from {} ({})",
        cell(&q.mode),
        q.duration_s,
        cell(&q.start_at),
        q.rule
    );
    if let Some(slice) = &q.slice {
        // `units` is a free-form object on the wire (what is held and what
        // was asked); only `held` is shown.
        let held = slice.units.get("held");
        let unit = |name: &str| cell(&held.and_then(|h| h.get(name)));
        out.push_str(&format!(
            "\nthe order would hold {} in {}: {} tflops_h + {} vram_h per hour at {} {currency}/h, {} {currency} in all",
            slice.gpu_model,
            slice.region,
            unit("tflops_h"),
            unit("vram_h"),
            cell(&slice.price_per_hour),
            cell(&slice.total),
        ));
        if slice.max_price_binds {
            out.push_str("\nmax_price is below this price: the order would be refused (or wait, with --max-wait-s)");
        }
    } else if let Some(why) = &q.slice_unavailable {
        out.push_str(&format!("\nno slice: {why}"));
    }
    if let Some(units) = &q.units {
        out.push_str(&format!(
            "\n{} of {} units fit now, {} {currency}/h together",
            units.placeable_now,
            units.count,
            cell(&units.price_per_hour),
        ));
    }
    let mut t = table(&["region", "gpu_model", "price/h (units asked)", "total"]);
    for o in &q.options {
        t.add_row(vec![
            o.region.clone(),
            o.gpu_model.clone(),
            cell(&o.price_per_hour),
            format!("{} {currency}", cell(&o.total)),
        ]);
    }
    out.push_str(&format!("\n{t}"));
    out
}
