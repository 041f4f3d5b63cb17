//! FinOps FOCUS 1.2 rows from charge lines, and the CSV and JSON writers.
//!
//! Pure: no IO. The traps the validator has (`shared/data/focus/README.md`)
//! are handled here: decimals always carry a fraction (`612.0`), every string
//! is ASCII (JSON escapes the rest), datetimes are `YYYY-MM-DDTHH:MM:SSZ`,
//! VRAM is priced in `GB-Hours` (4 × the `vram_h` quantity), and a reserved
//! hour is a commitment `Purchase` row (billed) plus a `Usage` row carrying
//! its amortized cost with `CommitmentDiscountStatus` Used or Unused.

use super::lines::{ChargeLine, Kind, Unit};
use super::period;
use crate::pricing::round_money;
use rust_decimal::Decimal;
use std::fmt::Write as _;

/// Who issues the bill, sells and publishes the service.
pub const PROVIDER: &str = "gpuex";
pub const SERVICE_NAME: &str = "gpuex GPU Compute";
pub const SERVICE_CATEGORY: &str = "Compute";
pub const SERVICE_SUBCATEGORY: &str = "Other (Compute)";

/// The FOCUS columns, in the order they are written.
pub const COLUMNS: [&str; 47] = [
    "BilledCost",
    "BillingAccountId",
    "BillingAccountName",
    "BillingCurrency",
    "BillingPeriodEnd",
    "BillingPeriodStart",
    "ChargeCategory",
    "ChargeClass",
    "ChargeDescription",
    "ChargeFrequency",
    "ChargePeriodEnd",
    "ChargePeriodStart",
    "CommitmentDiscountCategory",
    "CommitmentDiscountId",
    "CommitmentDiscountName",
    "CommitmentDiscountQuantity",
    "CommitmentDiscountStatus",
    "CommitmentDiscountType",
    "CommitmentDiscountUnit",
    "ConsumedQuantity",
    "ConsumedUnit",
    "ContractedCost",
    "ContractedUnitPrice",
    "EffectiveCost",
    "InvoiceId",
    "InvoiceIssuerName",
    "ListCost",
    "ListUnitPrice",
    "PricingCategory",
    "PricingQuantity",
    "PricingUnit",
    "ProviderName",
    "PublisherName",
    "RegionId",
    "RegionName",
    "ResourceId",
    "ResourceName",
    "ResourceType",
    "ServiceCategory",
    "ServiceName",
    "ServiceSubcategory",
    "SkuId",
    "SkuMeter",
    "SkuPriceDetails",
    "SkuPriceId",
    "Tags",
    // FOCUS holds ChargeDescription to ASCII (StringHandling); the exact
    // text, in UTF-8, is kept beside it in a custom column.
    "x_ChargeDescription",
];

/// Where the exact description goes.
const EXACT_DESCRIPTION: usize = 46;
/// Where FOCUS's ASCII one goes.
const DESCRIPTION: usize = 8;

/// One cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Str(String),
    Dec(Decimal),
    /// Seconds since the epoch, written as a UTC datetime.
    Time(i64),
}

impl Cell {
    fn s(v: impl Into<String>) -> Cell {
        Cell::Str(v.into())
    }
    fn opt(v: Option<String>) -> Cell {
        v.map_or(Cell::Null, Cell::Str)
    }
}

/// One FOCUS row: a cell per column of [`COLUMNS`].
pub type Row = [Cell; 47];

/// The monthly invoice a line belongs to (FOCUS InvoiceId; see [`super::invoices`]).
pub fn invoice_id(buyer: uuid::Uuid, period_start: i64) -> String {
    let (y, m) = period::year_month(period_start);
    format!("GPUEX-{y:04}{m:02}-{}", buyer.simple())
}

/// What a FOCUS row says about the unit a line prices.
struct Pricing {
    unit: &'static str,
    /// FOCUS quantity per line quantity (VRAM: 4 GB per `vram_h` unit).
    factor: Decimal,
    meter: &'static str,
}

fn pricing_of(unit: Unit) -> Pricing {
    match unit {
        Unit::TflopsH => Pricing {
            unit: "TFLOPS-Hours",
            factor: Decimal::ONE,
            meter: "Standard dense FP16 TFLOPS held",
        },
        Unit::VramH => Pricing {
            unit: "GB-Hours",
            factor: Decimal::from(4),
            meter: "GPU memory held (vram_h, 4 GB units)",
        },
    }
}

/// The FOCUS rows of one line: one, or two for a reserved hour.
pub fn rows(line: &ChargeLine, currency: &str) -> Vec<Row> {
    let kind = line.kind();
    let (bp_start, bp_end) = period::month_bounds(line.period_start);
    let amount = line.amount.0;
    let lease = line.lease_id.map(|l| l.to_string());
    let unit = line.unit();
    let pricing = unit.map(pricing_of);
    let quantity = pricing.as_ref().map(|p| line.quantity.0 * p.factor);
    let unit_price = pricing.as_ref().map(|p| line.unit_price.0 / p.factor);
    let list_unit_price = pricing.as_ref().map(|p| line.list_unit_price.0 / p.factor);
    let list_cost = match (list_unit_price, quantity) {
        (Some(p), Some(q)) => round_money(p * q),
        _ => amount,
    };
    let gpu_model = line.gpu_model.clone().unwrap_or_default();
    let mode = line.mode.clone().unwrap_or_default();
    let region = line.region.clone();
    let sku_id = unit.map(|u| format!("{gpu_model}:{}", u.as_str()));
    let sku_price_id = unit.map(|u| {
        format!(
            "{gpu_model}:{}:{}:{mode}",
            u.as_str(),
            region.as_deref().unwrap_or("any")
        )
    });
    let sku_details = unit.map(|u| {
        ascii_json(&serde_json::json!({
            "x_gpu_model": gpu_model,
            "x_unit": u.as_str(),
            "x_mode": mode,
        }))
    });
    let tags = ascii_json(&serde_json::Value::Object(
        serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&line.tags_json)
            .unwrap_or_default(),
    ));
    let unit_name = unit.map_or("", Unit::as_str);
    let base: Row = [
        Cell::Dec(amount),
        Cell::s(line.buyer_id.to_string()),
        Cell::s(ascii(&line.buyer_email)),
        Cell::s(currency.to_ascii_uppercase()),
        Cell::Time(bp_end),
        Cell::Time(bp_start),
        Cell::s("Usage"),
        Cell::Null,
        Cell::s(""),
        Cell::s("Usage-Based"),
        Cell::Time(line.period_end),
        Cell::Time(line.period_start),
        Cell::Null,
        Cell::Null,
        Cell::Null,
        Cell::Null,
        Cell::Null,
        Cell::Null,
        Cell::Null,
        quantity.map_or(Cell::Null, Cell::Dec),
        Cell::opt(pricing.as_ref().map(|p| p.unit.to_owned())),
        Cell::Dec(amount),
        unit_price.map_or(Cell::Null, Cell::Dec),
        Cell::Dec(amount),
        Cell::s(invoice_id(line.buyer_id, line.period_start)),
        Cell::s(PROVIDER),
        Cell::Dec(list_cost),
        list_unit_price.map_or(Cell::Null, Cell::Dec),
        Cell::Null,
        quantity.map_or(Cell::Null, Cell::Dec),
        Cell::opt(pricing.as_ref().map(|p| p.unit.to_owned())),
        Cell::s(PROVIDER),
        Cell::s(PROVIDER),
        Cell::opt(region.clone()),
        Cell::opt(region.clone()),
        Cell::opt(lease.clone()),
        Cell::opt(lease.as_ref().map(|l| format!("lease {l}"))),
        Cell::opt(lease.as_ref().map(|_| "GPU slice".to_owned())),
        Cell::s(SERVICE_CATEGORY),
        Cell::s(SERVICE_NAME),
        Cell::s(SERVICE_SUBCATEGORY),
        Cell::opt(sku_id),
        Cell::opt(pricing.as_ref().map(|p| p.meter.to_owned())),
        Cell::opt(sku_details),
        Cell::opt(sku_price_id),
        Cell::s(tags),
        Cell::Null,
    ];
    let describe = |what: &str| {
        format!(
            "{what} {unit_name} on {gpu_model} in {} for lease {}",
            region.as_deref().unwrap_or("any"),
            lease.as_deref().unwrap_or("-")
        )
    };
    match kind {
        Kind::Usage => {
            let mut row = base;
            set_description(&mut row, describe(&format!("{mode} usage of")));
            row[28] = Cell::s(if mode == "spot" {
                "Dynamic"
            } else {
                "Standard"
            });
            vec![row]
        }
        Kind::Credit => {
            let mut row = base;
            row[6] = Cell::s("Credit");
            set_description(
                &mut row,
                format!("Credit: {}", line.memo.as_deref().unwrap_or("adjustment")),
            );
            row[9] = Cell::s("One-Time");
            vec![row]
        }
        Kind::ReservedUsed | Kind::ReservedUnused => {
            let commitment = |row: &mut Row| {
                row[12] = Cell::s("Usage");
                row[13] = Cell::opt(lease.clone());
                row[14] = Cell::opt(lease.as_ref().map(|l| format!("reserved window {l}")));
                row[15] = quantity.map_or(Cell::Null, Cell::Dec);
                row[17] = Cell::s("Reserved window");
                row[18] = Cell::opt(pricing.as_ref().map(|p| p.unit.to_owned()));
                row[28] = Cell::s("Committed");
            };
            let mut purchase = base.clone();
            commitment(&mut purchase);
            purchase[6] = Cell::s("Purchase");
            set_description(&mut purchase, describe("Reserved window purchase of"));
            purchase[9] = Cell::s("Recurring");
            purchase[19] = Cell::Null;
            purchase[20] = Cell::Null;
            purchase[23] = Cell::Dec(Decimal::ZERO);
            let mut usage = base;
            commitment(&mut usage);
            let used = kind == Kind::ReservedUsed;
            usage[0] = Cell::Dec(Decimal::ZERO);
            set_description(
                &mut usage,
                describe(if used {
                    "Reserved window, used:"
                } else {
                    "Reserved window, unused:"
                }),
            );
            usage[16] = Cell::s(if used { "Used" } else { "Unused" });
            if !used {
                usage[19] = Cell::Null;
                usage[20] = Cell::Null;
            }
            vec![purchase, usage]
        }
    }
}

/// `s` in ASCII, as FOCUS's StringHandling asks: each other character
/// transliterated (`café — ok` is `cafe -- ok`), control characters as spaces.
pub fn ascii(s: &str) -> String {
    deunicode::deunicode_with_tofu(s, "?")
        .chars()
        .map(|c| if c.is_ascii_control() { ' ' } else { c })
        .collect()
}

/// FOCUS's ASCII description and, beside it, the exact text.
fn set_description(row: &mut Row, text: String) {
    row[DESCRIPTION] = Cell::s(ascii(&text));
    row[EXACT_DESCRIPTION] = Cell::s(text);
}

/// JSON text with every non-ASCII character written as a `\u` escape.
pub fn ascii_json(value: &serde_json::Value) -> String {
    let text = value.to_string();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut buf = [0u16; 2];
            for unit in c.encode_utf16(&mut buf) {
                let _ = write!(out, "\\u{unit:04x}");
            }
        }
    }
    out
}

/// A decimal with a fraction always shown (`612.0`), so a column of whole
/// numbers still reads as decimal.
pub fn decimal_text(d: Decimal) -> String {
    if d.is_zero() {
        return "0.0".to_owned();
    }
    let s = d.normalize().to_string();
    if s.contains('.') {
        s
    } else {
        s + ".0"
    }
}

fn cell_text(cell: &Cell) -> Option<String> {
    match cell {
        Cell::Null => None,
        Cell::Str(s) => Some(s.clone()),
        Cell::Dec(d) => Some(decimal_text(*d)),
        Cell::Time(t) => Some(period::rfc3339(*t)),
    }
}

fn csv_field(out: &mut String, text: &str) {
    if text.contains([',', '"', '\n', '\r']) {
        out.push('"');
        out.push_str(&text.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(text);
    }
}

/// The CSV header line.
pub fn csv_header(columns: &[&str]) -> String {
    let mut out = columns.join(",");
    out.push('\n');
    out
}

/// One CSV line; null is an empty field.
pub fn csv_row(out: &mut String, cells: &[Cell]) {
    for (i, cell) in cells.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if let Some(text) = cell_text(cell) {
            csv_field(out, &text);
        }
    }
    out.push('\n');
}

/// One JSON object: decimals as JSON numbers, null as null.
pub fn json_row(out: &mut String, columns: &[&str], cells: &[Cell]) {
    out.push('{');
    for (i, (name, cell)) in columns.iter().zip(cells).enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&ascii_json(&serde_json::Value::String((*name).to_owned())));
        out.push(':');
        match cell {
            Cell::Null => out.push_str("null"),
            Cell::Dec(d) => out.push_str(&decimal_text(*d)),
            other => {
                let text = cell_text(other).unwrap_or_default();
                out.push_str(&ascii_json(&serde_json::Value::String(text)));
            }
        }
    }
    out.push('}');
}

/// Columns of the plain `csv` format: gpuex's own view of each line.
pub const PLAIN_COLUMNS: [&str; 19] = [
    "line_id",
    "invoice_id",
    "buyer_id",
    "kind",
    "lease_id",
    "order_id",
    "mode",
    "gpu_model",
    "region",
    "unit",
    "period_start",
    "period_end",
    "quantity",
    "unit_price",
    "list_unit_price",
    "amount",
    "fee",
    "tags",
    "memo",
];

/// One line in the plain format.
pub fn plain_row(line: &ChargeLine) -> Vec<Cell> {
    vec![
        Cell::s(line.id.to_string()),
        Cell::s(invoice_id(line.buyer_id, line.period_start)),
        Cell::s(line.buyer_id.to_string()),
        Cell::s(line.kind.clone()),
        Cell::opt(line.lease_id.map(|l| l.to_string())),
        Cell::opt(line.order_id.map(|l| l.to_string())),
        Cell::opt(line.mode.clone()),
        Cell::opt(line.gpu_model.clone()),
        Cell::opt(line.region.clone()),
        Cell::opt(line.unit.clone()),
        Cell::Time(line.period_start),
        Cell::Time(line.period_end),
        Cell::Dec(line.quantity.0),
        Cell::Dec(line.unit_price.0),
        Cell::Dec(line.list_unit_price.0),
        Cell::Dec(line.amount.0),
        Cell::Dec(line.fee.0),
        Cell::s(ascii_json(&serde_json::Value::Object(
            serde_json::from_str(&line.tags_json).unwrap_or_default(),
        ))),
        // gpuex's own format has no ASCII rule: the memo as written.
        Cell::opt(line.memo.clone()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Money;
    use rust_decimal_macros::dec;
    use uuid::Uuid;

    fn line(kind: &str, mode: &str, unit: Option<&str>, q: Decimal, price: Decimal) -> ChargeLine {
        ChargeLine {
            id: 1,
            lease_id: Some(Uuid::nil()),
            order_id: Some(Uuid::nil()),
            buyer_id: Uuid::nil(),
            buyer_email: "b\u{e9}@x.test".into(),
            provider_id: Some(Uuid::nil()),
            node_id: None,
            kind: kind.into(),
            mode: Some(mode.into()),
            gpu_model: Some("H100-SXM5-80GB".into()),
            region: Some("eu-west".into()),
            unit: unit.map(Into::into),
            quantity: Money(q),
            unit_price: Money(price),
            list_unit_price: Money(dec!(0.05)),
            tags_json: r#"{"team":"caf\u00e9","business_line":"ads"}"#.into(),
            memo: None,
            period_start: 1_769_904_000,
            period_end: 1_769_905_800,
            amount: Money(round_money(price * q)),
            fee: Money(Decimal::ZERO),
        }
    }

    fn col(row: &Row, name: &str) -> Cell {
        row[COLUMNS.iter().position(|c| *c == name).unwrap()].clone()
    }

    fn dec_of(cell: Cell) -> Decimal {
        match cell {
            Cell::Dec(d) => d,
            other => panic!("{other:?} is not a decimal"),
        }
    }

    #[test]
    fn every_row_has_one_cell_per_column() {
        assert_eq!(COLUMNS.len(), 47);
        let mut seen = std::collections::BTreeSet::new();
        assert!(COLUMNS.iter().all(|c| seen.insert(*c)));
    }

    #[test]
    fn list_and_contracted_cost_are_unit_price_times_quantity() {
        for (unit, q) in [
            ("tflops_h", dec!(50)),
            ("vram_h", dec!(1.25)),
            ("vram_h", dec!(0.000277777778)),
        ] {
            for mode in ["on_demand", "spot", "reserved"] {
                let kind = if mode == "reserved" {
                    "reserved_used"
                } else {
                    "usage"
                };
                let l = line(kind, mode, Some(unit), q, dec!(0.09));
                for row in rows(&l, "usd") {
                    let pq = dec_of(col(&row, "PricingQuantity"));
                    let list = dec_of(col(&row, "ListUnitPrice"));
                    let contracted = dec_of(col(&row, "ContractedUnitPrice"));
                    assert_eq!(dec_of(col(&row, "ListCost")), round_money(list * pq));
                    assert_eq!(
                        dec_of(col(&row, "ContractedCost")),
                        round_money(contracted * pq)
                    );
                    assert_eq!(dec_of(col(&row, "ContractedCost")), l.amount.0);
                }
            }
        }
    }

    #[test]
    fn modes_map_to_pricing_categories() {
        let cat = |kind, mode| {
            rows(&line(kind, mode, Some("tflops_h"), dec!(1), dec!(1)), "USD")
                .iter()
                .map(|r| col(r, "PricingCategory"))
                .collect::<Vec<_>>()
        };
        assert_eq!(cat("usage", "on_demand"), vec![Cell::s("Standard")]);
        assert_eq!(cat("usage", "spot"), vec![Cell::s("Dynamic")]);
        assert_eq!(
            cat("reserved_unused", "reserved"),
            vec![Cell::s("Committed"), Cell::s("Committed")]
        );
    }

    #[test]
    fn a_reserved_hour_is_a_billed_purchase_and_an_amortized_usage_row() {
        let l = line(
            "reserved_unused",
            "reserved",
            Some("tflops_h"),
            dec!(10),
            dec!(0.5),
        );
        let r = rows(&l, "USD");
        assert_eq!(col(&r[0], "ChargeCategory"), Cell::s("Purchase"));
        assert_eq!(col(&r[0], "BilledCost"), Cell::Dec(dec!(5)));
        assert_eq!(col(&r[0], "EffectiveCost"), Cell::Dec(dec!(0)));
        assert_eq!(col(&r[0], "ChargeFrequency"), Cell::s("Recurring"));
        assert_eq!(col(&r[1], "ChargeCategory"), Cell::s("Usage"));
        assert_eq!(col(&r[1], "BilledCost"), Cell::Dec(dec!(0)));
        assert_eq!(dec_of(col(&r[1], "EffectiveCost")), dec!(5));
        assert_eq!(col(&r[1], "CommitmentDiscountStatus"), Cell::s("Unused"));
        assert_eq!(col(&r[1], "ConsumedQuantity"), Cell::Null);
    }

    #[test]
    fn vram_is_priced_in_gb_hours() {
        let l = line("usage", "on_demand", Some("vram_h"), dec!(2), dec!(0.16));
        let r = &rows(&l, "USD")[0];
        assert_eq!(col(r, "PricingUnit"), Cell::s("GB-Hours"));
        assert_eq!(dec_of(col(r, "PricingQuantity")), dec!(8));
        assert_eq!(dec_of(col(r, "ContractedUnitPrice")), dec!(0.04));
    }

    #[test]
    fn text_is_ascii_tags_are_a_json_object_and_decimals_have_a_fraction() {
        let l = line("usage", "on_demand", Some("tflops_h"), dec!(612), dec!(1));
        let mut out = csv_header(&COLUMNS);
        for row in rows(&l, "usd") {
            csv_row(&mut out, &row);
        }
        assert!(out.is_ascii(), "{out}");
        assert!(out.contains("612.0"));
        assert!(out.contains("USD"));
        let tags = match col(&rows(&l, "usd")[0], "Tags") {
            Cell::Str(s) => s,
            other => panic!("{other:?}"),
        };
        let parsed: serde_json::Value = serde_json::from_str(&tags).unwrap();
        assert_eq!(parsed["team"], "caf\u{e9}");
        assert_eq!(decimal_text(dec!(-1.50)), "-1.5");
        assert_eq!(decimal_text(dec!(0.000)), "0.0");
    }

    #[test]
    fn charge_periods_end_after_they_start_in_utc_format() {
        let l = line("usage", "on_demand", Some("tflops_h"), dec!(1), dec!(1));
        let r = &rows(&l, "USD")[0];
        let (Cell::Time(s), Cell::Time(e)) =
            (col(r, "ChargePeriodStart"), col(r, "ChargePeriodEnd"))
        else {
            panic!()
        };
        assert!(e > s);
        assert_eq!(period::rfc3339(s), "2026-02-01T00:00:00Z");
        let (Cell::Time(bs), Cell::Time(be)) =
            (col(r, "BillingPeriodStart"), col(r, "BillingPeriodEnd"))
        else {
            panic!()
        };
        assert_eq!(period::rfc3339(bs), "2026-02-01T00:00:00Z");
        assert_eq!(period::rfc3339(be), "2026-03-01T00:00:00Z");
    }

    #[test]
    fn a_credit_is_its_own_negative_one_time_row() {
        let mut l = line("credit", "", None, dec!(0), dec!(0));
        l.amount = Money(dec!(-2.5));
        l.memo = Some("node lost".into());
        let r = rows(&l, "USD");
        assert_eq!(r.len(), 1);
        assert_eq!(col(&r[0], "ChargeCategory"), Cell::s("Credit"));
        assert_eq!(col(&r[0], "BilledCost"), Cell::Dec(dec!(-2.5)));
        assert_eq!(col(&r[0], "PricingCategory"), Cell::Null);
        assert_eq!(col(&r[0], "PricingUnit"), Cell::Null);
    }

    #[test]
    fn csv_fields_with_commas_and_quotes_are_quoted() {
        let mut out = String::new();
        csv_row(
            &mut out,
            &[Cell::s("a,b"), Cell::s("say \"hi\""), Cell::Null],
        );
        assert_eq!(out, "\"a,b\",\"say \"\"hi\"\"\",\n");
    }
}
