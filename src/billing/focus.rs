//! FinOps FOCUS 1.2 rows from charge lines, and the CSV and JSON writers.
//!
//! Pure: no IO. The traps the validator has (`shared/data/focus/README.md`)
//! are handled here: decimals always carry a fraction (`612.0`), every string
//! is ASCII (JSON escapes the rest), datetimes are `YYYY-MM-DDTHH:MM:SSZ`,
//! VRAM is priced in `GB-Hours` (4 × the `vram_h` quantity), and a reserved
//! hour is a commitment `Purchase` row (billed) plus a `Usage` row carrying
//! its amortized cost with `CommitmentDiscountStatus` Used or Unused.
//! Custom columns (FOCUS wants an `x_` prefix) keep the exact description
//! and say where the capacity came from: `x_Source` (`primary`, `resale`)
//! and `x_ListingId`; a seller's resale proceeds are `Credit` rows.
//!
//! A row is a struct whose serde names are the column names, so the CSV
//! header, the CSV fields and the JSON keys cannot drift apart.

use super::cells::{DecimalCell, JsonCell, TimeCell};
use super::lines::{ChargeLine, Kind, Source, Unit};
use super::period;
use crate::pricing::round_money;
use rust_decimal::Decimal;
use serde::Serialize;
use uuid::Uuid;

/// Who issues the bill, sells and publishes the service.
pub const PROVIDER: &str = "gpuex";
pub const SERVICE_NAME: &str = "gpuex GPU Compute";
pub const SERVICE_CATEGORY: &str = "Compute";
pub const SERVICE_SUBCATEGORY: &str = "Other (Compute)";

/// One FOCUS 1.2 row; the fields are the columns, in the order they are
/// written (`billed_cost` is `BilledCost`). `None` is null: an empty CSV
/// field, a JSON `null`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Row {
    pub billed_cost: DecimalCell,
    pub billing_account_id: String,
    pub billing_account_name: String,
    pub billing_currency: String,
    pub billing_period_end: TimeCell,
    pub billing_period_start: TimeCell,
    pub charge_category: ChargeCategory,
    /// gpuex issues no corrections, so always null.
    pub charge_class: Option<&'static str>,
    pub charge_description: String,
    pub charge_frequency: ChargeFrequency,
    pub charge_period_end: TimeCell,
    pub charge_period_start: TimeCell,
    pub commitment_discount_category: Option<&'static str>,
    pub commitment_discount_id: Option<String>,
    pub commitment_discount_name: Option<String>,
    pub commitment_discount_quantity: Option<DecimalCell>,
    pub commitment_discount_status: Option<CommitmentDiscountStatus>,
    pub commitment_discount_type: Option<&'static str>,
    pub commitment_discount_unit: Option<&'static str>,
    pub consumed_quantity: Option<DecimalCell>,
    pub consumed_unit: Option<&'static str>,
    pub contracted_cost: DecimalCell,
    pub contracted_unit_price: Option<DecimalCell>,
    pub effective_cost: DecimalCell,
    pub invoice_id: String,
    pub invoice_issuer_name: &'static str,
    pub list_cost: DecimalCell,
    pub list_unit_price: Option<DecimalCell>,
    pub pricing_category: Option<PricingCategory>,
    pub pricing_quantity: Option<DecimalCell>,
    pub pricing_unit: Option<&'static str>,
    pub provider_name: &'static str,
    pub publisher_name: &'static str,
    pub region_id: Option<String>,
    pub region_name: Option<String>,
    pub resource_id: Option<String>,
    pub resource_name: Option<String>,
    pub resource_type: Option<&'static str>,
    pub service_category: &'static str,
    pub service_name: &'static str,
    pub service_subcategory: &'static str,
    pub sku_id: Option<String>,
    pub sku_meter: Option<&'static str>,
    pub sku_price_details: Option<JsonCell<SkuPriceDetails>>,
    pub sku_price_id: Option<String>,
    pub tags: JsonCell<serde_json::Map<String, serde_json::Value>>,
    /// FOCUS holds ChargeDescription to ASCII (StringHandling); the exact
    /// text, in UTF-8, is kept beside it in a custom column.
    #[serde(rename = "x_ChargeDescription")]
    pub x_charge_description: String,
    /// The resale listing a resold lease was bought from (the buyer's rows)
    /// or whose sale a proceeds credit pays out (the seller's); null otherwise.
    #[serde(rename = "x_ListingId")]
    pub x_listing_id: Option<String>,
    /// `primary`, or `resale` on the rows of a lease bought from a listing
    /// and on the seller's proceeds (ARCHITECTURE.md §6).
    #[serde(rename = "x_Source")]
    pub x_source: Source,
}

impl Row {
    /// FOCUS's ASCII description and, beside it, the exact text.
    fn describe(&mut self, text: String) {
        self.charge_description = ascii(&text);
        self.x_charge_description = text;
    }

    /// The commitment a reserved hour's rows both carry.
    fn commit(
        &mut self,
        lease: Option<&str>,
        quantity: Option<Decimal>,
        unit: Option<&'static str>,
    ) {
        self.commitment_discount_category = Some("Usage");
        self.commitment_discount_id = lease.map(str::to_owned);
        self.commitment_discount_name = lease.map(|l| format!("reserved window {l}"));
        self.commitment_discount_quantity = quantity.map(DecimalCell);
        self.commitment_discount_type = Some("Reserved window");
        self.commitment_discount_unit = unit;
        self.pricing_category = Some(PricingCategory::Committed);
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub enum ChargeCategory {
    #[default]
    Usage,
    Purchase,
    Credit,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub enum ChargeFrequency {
    #[default]
    #[serde(rename = "Usage-Based")]
    UsageBased,
    #[serde(rename = "One-Time")]
    OneTime,
    Recurring,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum PricingCategory {
    /// On-demand and pooled.
    Standard,
    /// Spot.
    Dynamic,
    /// Reserved windows.
    Committed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum CommitmentDiscountStatus {
    Used,
    Unused,
}

/// SkuPriceDetails: what a SkuPriceId stands for, in FOCUS's `x_` custom
/// keys (in this order, which is also the alphabetical one).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkuPriceDetails {
    pub x_gpu_model: String,
    pub x_mode: String,
    pub x_unit: &'static str,
}

/// A stored tags object (an empty one when the stored JSON is not an object).
pub fn tags_of(line: &ChargeLine) -> JsonCell<serde_json::Map<String, serde_json::Value>> {
    JsonCell(serde_json::from_str(&line.tags_json).unwrap_or_default())
}

/// The monthly invoice a line belongs to (FOCUS InvoiceId; see [`super::invoices`]).
pub fn invoice_id(buyer: Uuid, period_start: i64) -> String {
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
    let amount = DecimalCell(line.amount.0);
    let lease = line.lease_id.map(|l| l.to_string());
    let unit = line.unit();
    let pricing = unit.map(pricing_of);
    let pricing_unit = pricing.as_ref().map(|p| p.unit);
    let quantity = pricing.as_ref().map(|p| line.quantity.0 * p.factor);
    let unit_price = pricing.as_ref().map(|p| line.unit_price.0 / p.factor);
    let list_unit_price = pricing.as_ref().map(|p| line.list_unit_price.0 / p.factor);
    let list_cost = match (list_unit_price, quantity) {
        (Some(p), Some(q)) => round_money(p * q),
        _ => amount.0,
    };
    let gpu_model = line.gpu_model.clone().unwrap_or_default();
    let mode = line.mode.clone().unwrap_or_default();
    let region = line.region.clone();
    let region_or_any = region.as_deref().unwrap_or("any");
    let unit_name = unit.map_or("", Unit::as_str);
    let base = Row {
        billed_cost: amount,
        billing_account_id: line.buyer_id.to_string(),
        billing_account_name: ascii(&line.buyer_email),
        billing_currency: currency.to_ascii_uppercase(),
        billing_period_end: TimeCell(bp_end),
        billing_period_start: TimeCell(bp_start),
        charge_category: ChargeCategory::Usage,
        charge_frequency: ChargeFrequency::UsageBased,
        charge_period_end: TimeCell(line.period_end),
        charge_period_start: TimeCell(line.period_start),
        consumed_quantity: quantity.map(DecimalCell),
        consumed_unit: pricing_unit,
        contracted_cost: amount,
        contracted_unit_price: unit_price.map(DecimalCell),
        effective_cost: amount,
        invoice_id: invoice_id(line.buyer_id, line.period_start),
        invoice_issuer_name: PROVIDER,
        list_cost: DecimalCell(list_cost),
        list_unit_price: list_unit_price.map(DecimalCell),
        pricing_quantity: quantity.map(DecimalCell),
        pricing_unit,
        provider_name: PROVIDER,
        publisher_name: PROVIDER,
        region_id: region.clone(),
        region_name: region.clone(),
        resource_id: lease.clone(),
        resource_name: lease.as_ref().map(|l| format!("lease {l}")),
        resource_type: lease.as_ref().map(|_| "GPU slice"),
        service_category: SERVICE_CATEGORY,
        service_name: SERVICE_NAME,
        service_subcategory: SERVICE_SUBCATEGORY,
        sku_id: unit.map(|u| format!("{gpu_model}:{}", u.as_str())),
        sku_meter: pricing.as_ref().map(|p| p.meter),
        sku_price_details: unit.map(|u| {
            JsonCell(SkuPriceDetails {
                x_gpu_model: gpu_model.clone(),
                x_mode: mode.clone(),
                x_unit: u.as_str(),
            })
        }),
        sku_price_id: unit.map(|u| format!("{gpu_model}:{}:{region_or_any}:{mode}", u.as_str())),
        tags: tags_of(line),
        x_listing_id: line.listing_id.map(|l| l.to_string()),
        x_source: line.source(),
        // Commitment columns, PricingCategory and ChargeClass: null unless
        // the kind below says otherwise.
        ..Row::default()
    };
    let bought = match (line.source(), line.listing_id) {
        (Source::Resale, Some(listing)) => format!(", bought on resale from listing {listing}"),
        (Source::Resale, None) => ", bought on resale".to_owned(),
        (Source::Primary, _) => String::new(),
    };
    let describe = |what: &str| {
        format!(
            "{what} {unit_name} on {gpu_model} in {region_or_any} for lease {}{bought}",
            lease.as_deref().unwrap_or("-")
        )
    };
    match kind {
        Kind::Usage => {
            let mut row = base;
            row.describe(describe(&format!("{mode} usage of")));
            row.pricing_category = Some(if mode == "spot" {
                PricingCategory::Dynamic
            } else {
                PricingCategory::Standard
            });
            vec![row]
        }
        Kind::Credit => {
            let mut row = base;
            row.charge_category = ChargeCategory::Credit;
            row.describe(format!(
                "Credit: {}",
                line.memo.as_deref().unwrap_or("adjustment")
            ));
            row.charge_frequency = ChargeFrequency::OneTime;
            vec![row]
        }
        Kind::ReservedUsed | Kind::ReservedUnused => {
            let mut purchase = base.clone();
            purchase.commit(lease.as_deref(), quantity, pricing_unit);
            purchase.charge_category = ChargeCategory::Purchase;
            purchase.describe(describe("Reserved window purchase of"));
            purchase.charge_frequency = ChargeFrequency::Recurring;
            purchase.consumed_quantity = None;
            purchase.consumed_unit = None;
            purchase.effective_cost = DecimalCell(Decimal::ZERO);
            let mut usage = base;
            usage.commit(lease.as_deref(), quantity, pricing_unit);
            let used = kind == Kind::ReservedUsed;
            usage.billed_cost = DecimalCell(Decimal::ZERO);
            usage.describe(describe(if used {
                "Reserved window, used:"
            } else {
                "Reserved window, unused:"
            }));
            usage.commitment_discount_status = Some(if used {
                CommitmentDiscountStatus::Used
            } else {
                CommitmentDiscountStatus::Unused
            });
            if !used {
                usage.consumed_quantity = None;
                usage.consumed_unit = None;
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

#[cfg(test)]
mod tests;
