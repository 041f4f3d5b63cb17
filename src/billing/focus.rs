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
mod tests {
    use super::*;
    use crate::billing::cells::{csv_header, csv_writer, decimal_text, write_json};
    use crate::db::Money;
    use rust_decimal_macros::dec;

    /// The FOCUS 1.2 columns, in the order the export has always written them.
    const COLUMNS: [&str; 49] = [
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
        "x_ChargeDescription",
        "x_ListingId",
        "x_Source",
    ];

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
            tflops_units: Money(dec!(100)),
            vram_units: Money(dec!(2)),
            amount: Money(round_money(price * q)),
            fee: Money(Decimal::ZERO),
            source: "primary".into(),
            listing_id: None,
        }
    }

    const LISTING: Uuid = Uuid::from_u128(0x11571);

    fn resold(mut l: ChargeLine) -> ChargeLine {
        l.source = "resale".into();
        l.listing_id = Some(LISTING);
        l
    }

    fn csv_text(rows: &[Row]) -> String {
        let mut out = csv_header::<Row>().unwrap();
        let mut w = csv_writer(&mut out);
        for row in rows {
            w.serialize(row).unwrap();
        }
        drop(w);
        String::from_utf8(out).unwrap()
    }

    fn dec_of(d: Option<DecimalCell>) -> Decimal {
        d.expect("a decimal, not null").0
    }

    #[test]
    fn the_header_and_the_json_keys_are_the_focus_columns_in_order() {
        let header = String::from_utf8(csv_header::<Row>().unwrap()).unwrap();
        assert_eq!(header, format!("{}\n", COLUMNS.join(",")));
        let l = line("usage", "on_demand", Some("tflops_h"), dec!(1), dec!(1));
        let mut json = Vec::new();
        write_json(&mut json, &rows(&l, "USD")[0]).unwrap();
        let keys: Vec<String> = serde_json::from_slice::<serde_json::Value>(&json)
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        let mut sorted = COLUMNS.map(str::to_owned).to_vec();
        sorted.sort();
        assert_eq!(keys, sorted);
        let text = String::from_utf8(json).unwrap();
        let at = |name: &str| text.find(&format!("\"{name}\":")).unwrap();
        assert!(COLUMNS.windows(2).all(|w| at(w[0]) < at(w[1])), "{text}");
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
                    let pq = dec_of(row.pricing_quantity);
                    let list = dec_of(row.list_unit_price);
                    let contracted = dec_of(row.contracted_unit_price);
                    assert_eq!(row.list_cost.0, round_money(list * pq));
                    assert_eq!(row.contracted_cost.0, round_money(contracted * pq));
                    assert_eq!(row.contracted_cost.0, l.amount.0);
                }
            }
        }
    }

    #[test]
    fn modes_map_to_pricing_categories() {
        let cat = |kind, mode| {
            rows(&line(kind, mode, Some("tflops_h"), dec!(1), dec!(1)), "USD")
                .iter()
                .map(|r| r.pricing_category)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            cat("usage", "on_demand"),
            vec![Some(PricingCategory::Standard)]
        );
        assert_eq!(cat("usage", "spot"), vec![Some(PricingCategory::Dynamic)]);
        assert_eq!(
            cat("reserved_unused", "reserved"),
            vec![
                Some(PricingCategory::Committed),
                Some(PricingCategory::Committed)
            ]
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
        assert_eq!(r[0].charge_category, ChargeCategory::Purchase);
        assert_eq!(r[0].billed_cost, DecimalCell(dec!(5)));
        assert_eq!(r[0].effective_cost, DecimalCell(dec!(0)));
        assert_eq!(r[0].charge_frequency, ChargeFrequency::Recurring);
        assert_eq!(r[1].charge_category, ChargeCategory::Usage);
        assert_eq!(r[1].billed_cost, DecimalCell(dec!(0)));
        assert_eq!(r[1].effective_cost.0, dec!(5));
        assert_eq!(
            r[1].commitment_discount_status,
            Some(CommitmentDiscountStatus::Unused)
        );
        assert_eq!(r[1].consumed_quantity, None);
    }

    #[test]
    fn vram_is_priced_in_gb_hours() {
        let l = line("usage", "on_demand", Some("vram_h"), dec!(2), dec!(0.16));
        let r = &rows(&l, "USD")[0];
        assert_eq!(r.pricing_unit, Some("GB-Hours"));
        assert_eq!(dec_of(r.pricing_quantity), dec!(8));
        assert_eq!(dec_of(r.contracted_unit_price), dec!(0.04));
    }

    #[test]
    fn text_is_ascii_tags_are_a_json_object_and_decimals_have_a_fraction() {
        let l = line("usage", "on_demand", Some("tflops_h"), dec!(612), dec!(1));
        let out = csv_text(&rows(&l, "usd"));
        assert!(out.is_ascii(), "{out}");
        assert!(out.contains("612.0"));
        assert!(out.contains("USD"));
        let tags = match serde_json::to_value(&rows(&l, "usd")[0].tags).unwrap() {
            serde_json::Value::String(s) => s,
            other => panic!("{other:?}"),
        };
        let parsed: serde_json::Value = serde_json::from_str(&tags).unwrap();
        assert_eq!(parsed["team"], "caf\u{e9}");
        assert_eq!(decimal_text(dec!(-1.50)), "-1.5");
        assert_eq!(decimal_text(dec!(0.000)), "0.0");
    }

    #[test]
    fn json_is_ascii_and_its_decimals_are_numbers_with_a_fraction() {
        let l = line("usage", "on_demand", Some("tflops_h"), dec!(612), dec!(1));
        let mut out = Vec::new();
        write_json(&mut out, &rows(&l, "usd")[0]).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.is_ascii(), "{text}");
        assert!(text.starts_with("{\"BilledCost\":612.0,"), "{text}");
        assert!(text.contains("\"ChargeClass\":null"), "{text}");
        let parsed: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert!(parsed["x_ChargeDescription"]
            .as_str()
            .unwrap()
            .starts_with("on_demand usage"));
        assert_eq!(parsed["BillingAccountName"], "be@x.test");
    }

    #[test]
    fn charge_periods_end_after_they_start_in_utc_format() {
        let l = line("usage", "on_demand", Some("tflops_h"), dec!(1), dec!(1));
        let r = &rows(&l, "USD")[0];
        let (s, e) = (r.charge_period_start.0, r.charge_period_end.0);
        assert!(e > s);
        assert_eq!(period::rfc3339(s), "2026-02-01T00:00:00Z");
        let (bs, be) = (r.billing_period_start.0, r.billing_period_end.0);
        assert_eq!(period::rfc3339(bs), "2026-02-01T00:00:00Z");
        assert_eq!(period::rfc3339(be), "2026-03-01T00:00:00Z");
    }

    #[test]
    fn primary_rows_say_primary_and_name_no_listing() {
        for kind in ["usage", "reserved_used", "credit"] {
            for row in rows(
                &line(kind, "on_demand", Some("tflops_h"), dec!(1), dec!(1)),
                "USD",
            ) {
                assert_eq!(row.x_source, Source::Primary);
                assert_eq!(row.x_listing_id, None);
                assert!(!row.charge_description.contains("resale"));
            }
        }
    }

    #[test]
    fn a_resold_leases_rows_say_resale_and_name_the_listing() {
        let reserved = resold(line(
            "reserved_used",
            "reserved",
            Some("vram_h"),
            dec!(2),
            dec!(0.04),
        ));
        let on_demand = resold(line(
            "usage",
            "on_demand",
            Some("tflops_h"),
            dec!(5),
            dec!(0.002),
        ));
        for l in [reserved, on_demand] {
            let r = rows(&l, "USD");
            assert!(!r.is_empty());
            for row in &r {
                assert_eq!(row.x_source, Source::Resale);
                assert_eq!(row.x_listing_id, Some(LISTING.to_string()));
                assert!(
                    row.charge_description
                        .ends_with(&format!(", bought on resale from listing {LISTING}")),
                    "{}",
                    row.charge_description
                );
                // A resold hour is still the buyer's usage at its own price.
                assert_ne!(row.charge_category, ChargeCategory::Credit);
                assert_eq!(row.contracted_cost.0, l.amount.0);
            }
            assert_eq!(
                r.iter().map(|row| row.billed_cost.0).sum::<Decimal>(),
                l.amount.0
            );
        }
        let out = csv_text(&rows(
            &resold(line("usage", "spot", Some("tflops_h"), dec!(1), dec!(1))),
            "USD",
        ));
        assert!(
            out.lines()
                .nth(1)
                .unwrap()
                .ends_with(&format!(",{LISTING},resale")),
            "{out}"
        );
        let mut json = Vec::new();
        let l = resold(line("usage", "spot", Some("tflops_h"), dec!(1), dec!(1)));
        write_json(&mut json, &rows(&l, "USD")[0]).unwrap();
        let parsed: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(parsed["x_Source"], "resale");
        assert_eq!(parsed["x_ListingId"], LISTING.to_string());
    }

    #[test]
    fn a_sellers_proceeds_are_a_negative_one_time_credit_row_of_exactly_what_it_was_paid() {
        use crate::billing::charges::{proceeds_line, Resold};
        let seller = Uuid::from_u128(0x5e11e7);
        let seller_lease = Uuid::from_u128(0x1ea5e);
        let resale = Resold {
            listing: LISTING,
            seller,
            seller_lease: Some(seller_lease),
            seller_tags_json: r#"{"business_line":"ads"}"#.into(),
        };
        // 0.950001 reached the seller's wallet: 1.000001 less a 5 % fee of 0.05.
        let new = proceeds_line(&resale, 1_769_904_000, 1_769_907_600, dec!(0.950001));
        assert_eq!(new.amount, dec!(-0.950001));
        assert_eq!(
            (new.buyer, new.provider, new.kind),
            (seller, None, Kind::Credit)
        );
        let mut l = resold(line("credit", "", None, dec!(0), dec!(0)));
        l.buyer_id = new.buyer;
        l.lease_id = new.lease;
        l.mode = None;
        l.gpu_model = None;
        l.region = None;
        l.memo = new.memo.clone();
        l.tags_json = new.tags_json.clone();
        l.amount = Money(new.amount);
        let r = rows(&l, "USD");
        assert_eq!(r.len(), 1);
        let row = &r[0];
        assert_eq!(row.charge_category, ChargeCategory::Credit);
        assert_eq!(row.charge_frequency, ChargeFrequency::OneTime);
        assert_eq!(row.billed_cost, DecimalCell(dec!(-0.950001)));
        assert_eq!(row.effective_cost, DecimalCell(dec!(-0.950001)));
        assert_eq!(row.billing_account_id, seller.to_string());
        assert_eq!(row.resource_id, Some(seller_lease.to_string()));
        assert_eq!((row.pricing_category, row.pricing_unit), (None, None));
        assert_eq!(row.x_source, Source::Resale);
        assert_eq!(row.x_listing_id, Some(LISTING.to_string()));
        assert_eq!(
            row.charge_description,
            format!("Credit: resale proceeds of listing {LISTING}, less the platform fee")
        );
        assert_eq!(row.tags.0["business_line"], "ads");
    }

    #[test]
    fn a_credit_is_its_own_negative_one_time_row() {
        let mut l = line("credit", "", None, dec!(0), dec!(0));
        l.amount = Money(dec!(-2.5));
        l.memo = Some("node lost".into());
        let r = rows(&l, "USD");
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].charge_category, ChargeCategory::Credit);
        assert_eq!(r[0].billed_cost, DecimalCell(dec!(-2.5)));
        assert_eq!(r[0].pricing_category, None);
        assert_eq!(r[0].pricing_unit, None);
    }
}
