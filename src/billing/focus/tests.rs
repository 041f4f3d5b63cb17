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
