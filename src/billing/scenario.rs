//! A realistic billing scenario written through the real billing functions
//! (holds, `charging::charge_alone`, `lines::credit`) at chosen times: on-demand
//! across midnight and a month end, a reserved window with unused hours,
//! spot, pooled, a node-loss credit, an admin adjustment, several tags, a
//! second buyer, and a resale (the second buyer's reserved tail, bought by
//! the first: resale rows on one side, proceeds credits on the other). The
//! FOCUS validator check, the export benchmark and the tests build on it;
//! the server never calls it.

use super::charges::{ChargeDetail, ChargeOutcome, Chargeable, Resold, UnitTerms};
use super::ledger;
use super::lines::{self, Credit, Kind, NewLine, Unit};
use crate::auth::{create_user, Role};
use crate::db::Db;
use crate::engine::Mode;
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use rust_decimal_macros::dec;
use uuid::Uuid;

/// The platform fee the scenario charges (5 %).
pub const FEE: Decimal = dec!(0.05);

fn at(ts: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(ts, 0).unwrap_or_default()
}

/// Creates a user with its ledger accounts.
pub async fn user(db: &Db, email: &str, role: Role) -> anyhow::Result<Uuid> {
    let mut tx = db.begin().await?;
    ledger::open_system_accounts(&mut tx, "USD", Utc::now()).await?;
    tx.commit().await?;
    let row = create_user(
        db,
        email,
        email,
        role,
        "not-a-password-hash",
        "USD",
        Utc::now(),
    )
    .await?
    .ok_or_else(|| anyhow::anyhow!("{email} exists"))?;
    Ok(row.id)
}

/// Tops a wallet up from outside.
pub async fn fund(db: &Db, user: Uuid, amount: Decimal) -> anyhow::Result<()> {
    retrying(|| async {
        let mut tx = db.begin().await?;
        ledger::credit(&mut tx, user, amount, "scenario top-up", None, Utc::now()).await?;
        tx.commit().await
    })
    .await
}

/// One lease to charge.
#[derive(Debug, Clone)]
pub struct LeaseSpec {
    pub mode: Mode,
    pub gpu_model: &'static str,
    pub region: &'static str,
    pub tflops_units: Decimal,
    pub vram_units: Decimal,
    /// List prices per unit-hour (tflops_h, vram_h).
    pub list: (Decimal, Decimal),
    /// Contracted price = multiplier × list.
    pub multiplier: Decimal,
    pub tags: serde_json::Value,
    /// Charged `[from, to)`.
    pub from: i64,
    pub to: i64,
    /// Reserved: when it ran and when it ended.
    pub running_at: Option<i64>,
    pub ended_at: Option<i64>,
    /// The engine's clock when it is charged (defaults to `to`).
    pub now: Option<i64>,
    /// Bought on resale: charges pay this seller instead of the provider.
    pub resale: Option<Resold>,
}

impl LeaseSpec {
    pub fn on_demand(from: i64, to: i64) -> LeaseSpec {
        LeaseSpec {
            mode: Mode::OnDemand,
            gpu_model: "H100-SXM5-80GB",
            region: "eu-west",
            tflops_units: dec!(100),
            vram_units: dec!(2),
            list: (dec!(0.0021), dec!(0.05)),
            multiplier: dec!(1.8),
            tags: serde_json::json!({}),
            from,
            to,
            running_at: Some(from),
            ended_at: None,
            now: None,
            resale: None,
        }
    }
}

/// Runs `f` again when it fails: a SQLite transaction that reads before it
/// writes can be refused (SQLITE_BUSY) while another process writes, and a
/// failed transaction has rolled back whole, so a retry is safe.
async fn retrying<T, F, Fut>(mut f: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<T>>,
{
    let mut attempt = 0;
    loop {
        match f().await {
            Ok(v) => return Ok(v),
            Err(e) if attempt < 5 => {
                attempt += 1;
                tracing::warn!(error = %e, attempt, "scenario write retried");
                tokio::time::sleep(std::time::Duration::from_millis(50 * attempt)).await;
            }
            Err(e) => return Err(e),
        }
    }
}

/// Charges a lease as the market task would: a hold, `charge`, the rest released.
pub async fn lease(
    db: &Db,
    buyer: Uuid,
    provider: Uuid,
    spec: &LeaseSpec,
) -> anyhow::Result<(Uuid, ChargeOutcome)> {
    retrying(|| lease_once(db, buyer, provider, spec)).await
}

async fn lease_once(
    db: &Db,
    buyer: Uuid,
    provider: Uuid,
    spec: &LeaseSpec,
) -> anyhow::Result<(Uuid, ChargeOutcome)> {
    let lease = Uuid::now_v7();
    let now = at(spec.now.unwrap_or(spec.to));
    // Hold what the wallet allows (at most 1000); charging tops it up.
    let available = ledger::balances(db, buyer).await?.available.min(dec!(1000));
    if available <= Decimal::ZERO {
        let unpaid = ChargeOutcome {
            charged: Decimal::ZERO,
            billed_until: spec.from,
            unpaid: true,
        };
        return Ok((lease, unpaid));
    }
    let mut tx = db.begin().await?;
    let hold = ledger::place_hold(&mut tx, buyer, available, &format!("lease:{lease}"), now)
        .await
        .map_err(|e| anyhow::anyhow!(e))?;
    let terms = |units: Decimal, list: Decimal| UnitTerms {
        units,
        price: list * spec.multiplier,
        list,
    };
    let tflops = terms(spec.tflops_units, spec.list.0);
    let vram = terms(spec.vram_units, spec.list.1);
    let c = Chargeable {
        lease,
        buyer,
        provider,
        resale: spec.resale.clone(),
        hold,
        price_per_hour: tflops.units * tflops.price + vram.units * vram.price,
        tflops_units: spec.tflops_units,
        vram_units: spec.vram_units,
        detail: ChargeDetail {
            order: Some(Uuid::now_v7()),
            node: Some(Uuid::from_u128(0x9e7)),
            mode: spec.mode,
            gpu_model: spec.gpu_model.to_owned(),
            region: spec.region.to_owned(),
            tflops,
            vram,
            tags_json: spec.tags.to_string(),
            running_at: spec.running_at,
            ended_at: spec.ended_at,
        },
    };
    let outcome = super::charging::charge_alone(&mut tx, &c, spec.from, spec.to, FEE, now)
        .await
        .map_err(|e| anyhow::anyhow!(e))?;
    match ledger::release(&mut tx, hold, now).await {
        Ok(_) | Err(ledger::LedgerError::UnknownHold(_)) => {}
        Err(e) => return Err(anyhow::anyhow!(e)),
    }
    tx.commit().await?;
    Ok((lease, outcome))
}

/// Gives a credit line.
pub async fn credit(db: &Db, credit: &Credit, at_ts: i64) -> anyhow::Result<()> {
    retrying(|| async {
        let mut tx = db.begin().await?;
        lines::credit(&mut tx, credit, None, at(at_ts))
            .await
            .map_err(|e| anyhow::anyhow!(e))?;
        tx.commit().await
    })
    .await
}

/// Who the scenario bills.
#[derive(Debug, Clone, Copy)]
pub struct Parties {
    pub buyer: Uuid,
    pub other_buyer: Uuid,
    pub provider: Uuid,
    /// The listing `other_buyer` sold `buyer` an hour from.
    pub listing: Uuid,
    /// `[from, to)` covering every line.
    pub from: i64,
    pub to: i64,
}

/// 2026-01-31T00:00:00Z.
pub const JAN_31: i64 = 1_769_817_600;
const H: i64 = 3600;

/// The full scenario with users of its own; emails get `suffix` so it can
/// run twice in one database.
pub async fn build(db: &Db, suffix: &str) -> anyhow::Result<Parties> {
    let buyer = user(db, &format!("finance{suffix}@acme.test"), Role::Buyer).await?;
    let other_buyer = user(db, &format!("other{suffix}@globex.test"), Role::Buyer).await?;
    let provider = user(db, &format!("gpus{suffix}@provider.test"), Role::Provider).await?;
    build_for(db, buyer, other_buyer, provider).await
}

/// The full scenario for existing users (each buyer is funded 5000).
pub async fn build_for(
    db: &Db,
    buyer: Uuid,
    other_buyer: Uuid,
    provider: Uuid,
) -> anyhow::Result<Parties> {
    fund(db, buyer, dec!(5000)).await?;
    fund(db, other_buyer, dec!(5000)).await?;
    // On-demand across midnight and the month's end: 22:40 → 01:15.
    let mut od = LeaseSpec::on_demand(JAN_31 + 22 * H + 40 * 60, JAN_31 + 25 * H + 15 * 60);
    od.tags = serde_json::json!({"business_line": "ads", "team": "donn\u{e9}es", "cost_center": "cc-100"});
    let (od_lease, _) = lease(db, buyer, provider, &od).await?;
    // Reserved 20:00 → 04:00, running from 21:30, released at 02:00: the
    // hours before and after are unused parts of the commitment.
    let reserved = LeaseSpec {
        mode: Mode::Reserved,
        gpu_model: "A100-SXM4-80GB",
        region: "us-east",
        tflops_units: dec!(312),
        vram_units: dec!(20),
        list: (dec!(0.0012), dec!(0.03)),
        multiplier: dec!(0.85),
        tags: serde_json::json!({"business_line": "search", "cost_center": "cc-200"}),
        from: JAN_31 + 20 * H,
        to: JAN_31 + 28 * H,
        running_at: Some(JAN_31 + 21 * H + 30 * 60),
        ended_at: Some(JAN_31 + 26 * H),
        now: Some(JAN_31 + 26 * H),
        resale: None,
    };
    lease(db, buyer, provider, &reserved).await?;
    // Spot on an L40S at 0.55 × list, a few seconds past the hour.
    let spot = LeaseSpec {
        mode: Mode::Spot,
        gpu_model: "L40S-48GB",
        region: "eu-west",
        tflops_units: dec!(181),
        vram_units: dec!(6),
        list: (dec!(0.0011), dec!(0.02)),
        multiplier: dec!(0.55),
        tags: serde_json::json!({"business_line": "ads", "env": "prod"}),
        ..LeaseSpec::on_demand(JAN_31 + 27 * H + 5, JAN_31 + 29 * H + 30 * 60)
    };
    lease(db, buyer, provider, &spot).await?;
    // Pooled: a small shared slice, untagged.
    let pooled = LeaseSpec {
        mode: Mode::Pooled,
        tflops_units: dec!(10.5),
        vram_units: dec!(1),
        multiplier: dec!(1),
        ..LeaseSpec::on_demand(JAN_31 + 10 * H + 7, JAN_31 + 11 * H + 7)
    };
    lease(db, buyer, provider, &pooled).await?;
    // The node of the on-demand lease was lost 00:10–00:25: the gap is credited.
    credit(
        db,
        &Credit {
            buyer,
            lease: Some(od_lease),
            amount: dec!(0.139500),
            reason: "node lost 00:10-00:25, gap credited".into(),
            period_start: JAN_31 + 24 * H + 10 * 60,
            period_end: JAN_31 + 24 * H + 25 * 60,
            tags_json: od.tags.to_string(),
        },
        JAN_31 + 24 * H + 30 * 60,
    )
    .await?;
    // An admin adjustment with a reason.
    credit(
        db,
        &Credit {
            buyer,
            lease: None,
            amount: dec!(1.25),
            reason: "goodwill adjustment — café outage".into(),
            period_start: JAN_31 + 12 * H,
            period_end: JAN_31 + 13 * H,
            tags_json: "{}".into(),
        },
        JAN_31 + 12 * H,
    )
    .await?;
    // Another buyer's lease at the same time.
    let mut theirs = LeaseSpec::on_demand(JAN_31 + 23 * H, JAN_31 + 24 * H + 30 * 60);
    theirs.tags = serde_json::json!({"business_line": "secret-project"});
    lease(db, other_buyer, provider, &theirs).await?;
    let listing = resale(db, buyer, other_buyer, provider).await?;
    Ok(Parties {
        buyer,
        other_buyer,
        provider,
        listing,
        from: JAN_31,
        to: JAN_31 + 2 * 24 * H,
    })
}

/// The other buyer reserved an H100 for 06:00–10:00 on Feb 1 and listed the
/// tail from 08:00 (its lease ended there, the window still owed whole to
/// the provider); the buyer's reserved 08:00–09:00 was filled from that
/// listing at 0.8 × the reserved price. Returns the listing.
async fn resale(db: &Db, buyer: Uuid, seller: Uuid, provider: Uuid) -> anyhow::Result<Uuid> {
    let window = JAN_31 + 30 * H;
    let listed_from = window + 2 * H;
    let seller_tags = serde_json::json!({"business_line": "secret-project"});
    let reserved = LeaseSpec {
        mode: Mode::Reserved,
        multiplier: crate::engine::pricing::RESERVED,
        tags: seller_tags.clone(),
        running_at: Some(window),
        ended_at: Some(listed_from),
        now: Some(listed_from),
        ..LeaseSpec::on_demand(window, window + 4 * H)
    };
    let (seller_lease, _) = lease(db, seller, provider, &reserved).await?;
    let listing = Uuid::now_v7();
    let bought = LeaseSpec {
        mode: Mode::Reserved,
        multiplier: crate::engine::pricing::RESERVED * dec!(0.8),
        tags: serde_json::json!({"business_line": "search", "cost_center": "cc-200"}),
        running_at: Some(listed_from),
        resale: Some(Resold {
            listing,
            seller,
            seller_lease: Some(seller_lease),
            seller_tags_json: seller_tags.to_string(),
        }),
        ..LeaseSpec::on_demand(listed_from, listed_from + H)
    };
    lease(db, buyer, provider, &bought).await?;
    Ok(listing)
}

/// Writes `n` usage lines for `buyer` straight through [`lines::insert`]
/// (no ledger entries: for the export benchmark only), a clock hour each,
/// in transactions of 10 000.
pub async fn bulk_lines(db: &Db, buyer: Uuid, provider: Uuid, n: u64) -> anyhow::Result<()> {
    let entry = Uuid::now_v7();
    let mut written = 0u64;
    while written < n {
        let mut tx = db.begin().await?;
        let batch = (n - written).min(10_000);
        for i in written..written + batch {
            let start = JAN_31 + (i / 2) as i64 * H;
            let unit = if i % 2 == 0 {
                Unit::TflopsH
            } else {
                Unit::VramH
            };
            let (quantity, price, list) = match unit {
                Unit::TflopsH => (dec!(100), dec!(0.00378), dec!(0.0021)),
                Unit::VramH => (dec!(2), dec!(0.09), dec!(0.05)),
            };
            let line = NewLine {
                lease: Some(Uuid::from_u128(u128::from(i / 200))),
                order: Some(Uuid::from_u128(u128::from(i / 200) + (1 << 64))),
                buyer,
                provider: Some(provider),
                node: Some(Uuid::from_u128(0x9e7)),
                kind: Kind::Usage,
                mode: Some(Mode::OnDemand),
                gpu_model: Some("H100-SXM5-80GB".into()),
                region: Some("eu-west".into()),
                unit: Some(unit),
                quantity,
                unit_price: price,
                list_unit_price: list,
                tags_json: r#"{"business_line":"ads","team":"ml"}"#.into(),
                memo: None,
                period_start: start,
                period_end: start + H,
                tflops_units: dec!(100),
                vram_units: dec!(2),
                amount: crate::pricing::round_money(price * quantity),
                fee: Decimal::ZERO,
                resale_listing: None,
            };
            lines::insert(&mut tx, &line, entry, Utc::now())
                .await
                .map_err(|e| anyhow::anyhow!(e))?;
        }
        tx.commit().await?;
        written += batch;
    }
    Ok(())
}
