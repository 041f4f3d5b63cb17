//! Per-second charges for the units a lease holds (ARCHITECTURE.md §3, §8).
//!
//! A charge line covers at most one clock hour and one unit (`tflops_h` or
//! `vram_h`), so each FOCUS row has one SKU and one pricing unit. Its
//! quantity is `units × seconds / 3600` rounded half-even to 12 decimals and
//! its amount `unit price × quantity` rounded half-even to 6 decimals, once:
//! the export's `ContractedCost = ContractedUnitPrice × PricingQuantity`
//! holds exactly. The lines of one hour are captured together from the
//! lease's hold to the provider's payable account, less the platform fee
//! (a lease bought on resale pays its seller's wallet instead, and the
//! seller gets a proceeds credit line in the same entry).
//! Reserved hours are split where the lease started running and where it
//! ended, so each line is wholly a used or an unused part of the commitment.

use super::ledger::LedgerError;
use super::lines::{Kind, NewLine, Unit};
use crate::db::leases::LeaseRecord;
use crate::db::{dispatch_tx, Money, Tx};
use crate::engine::Mode;
use crate::pricing::round_money;
use rust_decimal::{Decimal, RoundingStrategy};
use uuid::Uuid;

/// Seconds since the epoch, as the engine counts time.
pub type Ts = i64;

const HOUR: Ts = 3600;

/// One charge line: `[start, end)` within one clock hour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line {
    pub start: Ts,
    pub end: Ts,
    pub amount: Decimal,
}

/// Splits `[from, to)` at clock hours and prices each part at `price_per_hour`.
pub fn hourly_lines(from: Ts, to: Ts, price_per_hour: Decimal) -> Vec<Line> {
    segments(from, to, &[])
        .into_iter()
        .map(|(start, end)| Line {
            start,
            end,
            amount: round_money(price_per_hour * Decimal::from(end - start) / Decimal::from(HOUR)),
        })
        .collect()
}

/// `[from, to)` cut at every clock hour and at each of `cuts` inside it.
pub fn segments(from: Ts, to: Ts, cuts: &[Ts]) -> Vec<(Ts, Ts)> {
    let mut out = Vec::new();
    let mut start = from;
    while start < to {
        let hour_end = (start.div_euclid(HOUR) + 1) * HOUR;
        let mut end = hour_end.min(to);
        for &c in cuts {
            if c > start && c < end {
                end = c;
            }
        }
        out.push((start, end));
        start = end;
    }
    out
}

/// Unit-hours of `units` held for `seconds`, rounded half-even to 12 decimals.
pub fn quantity(units: Decimal, seconds: i64) -> Decimal {
    (units * Decimal::from(seconds) / Decimal::from(HOUR))
        .round_dp_with_strategy(12, RoundingStrategy::MidpointNearestEven)
        .normalize()
}

/// What one unit of a lease costs per unit-hour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UnitTerms {
    /// Units held.
    pub units: Decimal,
    /// The mode's (contracted) price per unit-hour.
    pub price: Decimal,
    /// The list price per unit-hour.
    pub list: Decimal,
}

/// What a lease is charged for, and from which hold to whom.
#[derive(Debug, Clone)]
pub struct Chargeable {
    pub lease: Uuid,
    pub buyer: Uuid,
    pub provider: Uuid,
    /// Bought on resale: each charge pays the seller's wallet, not the
    /// provider (who is paid by the seller's own reservation).
    pub resale: Option<Resold>,
    pub hold: Uuid,
    pub price_per_hour: Decimal,
    pub tflops_units: Decimal,
    pub vram_units: Decimal,
    /// What the billing lines say about it (order, mode, SKU, prices, tags).
    pub detail: ChargeDetail,
}

/// Where a lease bought on resale came from (ARCHITECTURE.md §6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resold {
    /// The listing it was bought from.
    pub listing: Uuid,
    /// Whose wallet each charge pays, less the platform fee.
    pub seller: Uuid,
    /// The seller's reserved lease whose tail was sold (`None` when its
    /// listing row is not found): the seller's proceeds lines name it.
    pub seller_lease: Option<Uuid>,
    /// The seller's order's tags (a JSON object): proceeds carry them, so
    /// the seller's cost by tag nets what the resale brought back.
    pub seller_tags_json: String,
}

/// The descriptive side of a [`Chargeable`]: copied onto every line.
#[derive(Debug, Clone)]
pub struct ChargeDetail {
    pub order: Option<Uuid>,
    pub node: Option<Uuid>,
    pub mode: Mode,
    pub gpu_model: String,
    pub region: String,
    pub tflops: UnitTerms,
    pub vram: UnitTerms,
    /// The order's tags, a JSON object.
    pub tags_json: String,
    /// Reserved: when the lease started running (before that, hours are unused).
    pub running_at: Option<Ts>,
    /// Reserved: when the lease ended (after that, hours are unused).
    pub ended_at: Option<Ts>,
}

impl ChargeDetail {
    /// The detail of an engine lease: its unit prices, and list prices
    /// recovered from its price rule (contracted = multiplier × list).
    pub fn of_lease(
        lease: &LeaseRecord,
        node: Uuid,
        running_at: Option<Ts>,
        ended_at: Option<Ts>,
        tags_json: Option<String>,
    ) -> ChargeDetail {
        let multiplier = lease.rule.multiplier();
        let list = |price: Decimal| {
            if multiplier.is_zero() {
                price
            } else {
                (price / multiplier).normalize()
            }
        };
        let units = lease.placement.units;
        let prices = lease.unit_prices;
        ChargeDetail {
            order: Some(lease.order_id),
            node: Some(node),
            mode: lease.mode,
            gpu_model: lease.model.clone(),
            region: lease.region.clone(),
            tflops: UnitTerms {
                units: units.tflops_h,
                price: prices.tflops_h,
                list: list(prices.tflops_h),
            },
            vram: UnitTerms {
                units: units.vram_h,
                price: prices.vram_h,
                list: list(prices.vram_h),
            },
            tags_json: tags_json.unwrap_or_else(|| "{}".to_owned()),
            running_at,
            ended_at,
        }
    }

    fn is_reserved(&self) -> bool {
        self.mode == Mode::Reserved
    }

    /// Whether `[start, end)` of a reserved window was used.
    fn used(&self, start: Ts, end: Ts) -> bool {
        self.running_at.is_some_and(|r| r <= start) && self.ended_at.is_none_or(|e| end <= e)
    }

    fn kind(&self, start: Ts, end: Ts) -> Kind {
        match (self.is_reserved(), self.used(start, end)) {
            (false, _) => Kind::Usage,
            (true, true) => Kind::ReservedUsed,
            (true, false) => Kind::ReservedUnused,
        }
    }
}

/// The unit lines of `[start, end)` with their amounts (zero-amount units left out).
pub fn unit_lines(c: &Chargeable, start: Ts, end: Ts) -> Vec<NewLine> {
    let d = &c.detail;
    let kind = d.kind(start, end);
    let mut out = Vec::with_capacity(2);
    for (unit, terms) in [(Unit::TflopsH, d.tflops), (Unit::VramH, d.vram)] {
        if terms.units.is_zero() {
            continue;
        }
        let q = quantity(terms.units, end - start);
        let amount = round_money(terms.price * q);
        if amount.is_zero() {
            continue;
        }
        out.push(NewLine {
            lease: Some(c.lease),
            order: d.order,
            buyer: c.buyer,
            provider: Some(c.provider),
            node: d.node,
            kind,
            mode: Some(d.mode),
            gpu_model: Some(d.gpu_model.clone()),
            region: Some(d.region.clone()),
            unit: Some(unit),
            quantity: q,
            unit_price: terms.price,
            list_unit_price: terms.list,
            tags_json: d.tags_json.clone(),
            memo: None,
            period_start: start,
            period_end: end,
            tflops_units: c.tflops_units,
            vram_units: c.vram_units,
            amount,
            fee: Decimal::ZERO,
            resale_listing: c.resale.as_ref().map(|r| r.listing),
        });
    }
    out
}

/// The seller's line for one capture of a resold lease: a credit of exactly
/// what the capture paid the seller's wallet (`paid`, the charge less the
/// fee), in the seller's own export and invoice. No provider: the provider
/// was paid by the seller's reservation, so its earnings never see it.
pub fn proceeds_line(resold: &Resold, start: Ts, end: Ts, paid: Decimal) -> NewLine {
    let memo = format!(
        "resale proceeds of listing {}, less the platform fee",
        resold.listing
    );
    NewLine {
        resale_listing: Some(resold.listing),
        ..NewLine::credit(
            resold.seller,
            resold.seller_lease,
            resold.seller_tags_json.clone(),
            memo,
            (start, end),
            paid,
        )
    }
}

/// Shares the fee of one capture among its lines in proportion to their
/// amounts, the last line taking the rest, so the lines' fees add up to it.
pub(super) fn split_fee(parts: &mut [NewLine], fee: Decimal) {
    let total: Decimal = parts.iter().map(|l| l.amount).sum();
    let mut left = fee;
    let n = parts.len();
    for (i, line) in parts.iter_mut().enumerate() {
        line.fee = if i + 1 == n || total.is_zero() {
            left
        } else {
            round_money(fee * line.amount / total).min(left)
        };
        left -= line.fee;
    }
}

/// The result of charging a lease ([`super::charging::Charging::charge`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChargeOutcome {
    pub charged: Decimal,
    /// Charged up to here.
    pub billed_until: Ts,
    /// The buyer could not pay the next line.
    pub unpaid: bool,
}

pub async fn hold_remaining(tx: &mut Tx<'_>, hold: Uuid) -> Result<Decimal, LedgerError> {
    let remaining: Option<Money> = dispatch_tx!(tx, conn => {
        sqlx::query_scalar("SELECT remaining FROM holds WHERE id = $1")
            .bind(hold)
            .fetch_optional(conn)
            .await
    })?;
    Ok(remaining.map(|m| m.0).unwrap_or(Decimal::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::billing::ledger;
    use rust_decimal_macros::dec;

    fn reserved(running_at: Option<Ts>, ended_at: Option<Ts>) -> Chargeable {
        Chargeable {
            lease: Uuid::nil(),
            buyer: Uuid::nil(),
            provider: Uuid::nil(),
            resale: None,
            hold: Uuid::nil(),
            price_per_hour: dec!(1.2),
            tflops_units: dec!(100),
            vram_units: dec!(2.5),
            detail: ChargeDetail {
                mode: Mode::Reserved,
                tflops: UnitTerms {
                    units: dec!(100),
                    price: dec!(0.01),
                    list: dec!(0.0117647),
                },
                vram: UnitTerms {
                    units: dec!(2.5),
                    price: dec!(0.08),
                    list: dec!(0.1),
                },
                tags_json: "{}".into(),
                running_at,
                ended_at,
                order: None,
                node: None,
                gpu_model: String::new(),
                region: String::new(),
            },
        }
    }

    #[test]
    fn a_charge_never_crosses_a_clock_hour() {
        let from = 10 * HOUR - 600;
        let lines = hourly_lines(from, 11 * HOUR + 1200, dec!(3.6));
        assert_eq!(lines.len(), 3);
        assert_eq!((lines[0].start, lines[0].end), (from, 10 * HOUR));
        assert_eq!(lines[0].amount, dec!(0.6));
        assert_eq!(lines[1].amount, dec!(3.6));
        assert_eq!(lines[2].amount, dec!(1.2));
    }

    #[test]
    fn each_line_is_rounded_once_half_even() {
        // 1 s at 0.0000018/h = 0.0000000005 → rounds to 0 (half to even).
        let lines = hourly_lines(0, 1, dec!(0.0000018));
        assert_eq!(lines[0].amount, dec!(0));
        let lines = hourly_lines(0, 7, dec!(1));
        assert_eq!(lines[0].amount, dec!(0.001944));
    }

    #[test]
    fn segments_split_at_hours_days_months_and_cuts() {
        // 2026-01-31T23:30:00Z → 2026-02-01T01:10:00Z crosses a day and a month.
        let from = 1_769_902_200;
        let to = from + 100 * 60;
        let s = segments(from, to, &[from + 10 * 60]);
        assert_eq!(
            s,
            vec![
                (from, from + 600),
                (from + 600, 1_769_904_000),
                (1_769_904_000, 1_769_907_600),
                (1_769_907_600, to),
            ]
        );
        assert!(s.iter().all(|(a, b)| b > a && b - a <= HOUR));
    }

    #[test]
    fn quantity_is_unit_hours_rounded_to_12_decimals() {
        assert_eq!(quantity(dec!(100), 3600), dec!(100));
        assert_eq!(quantity(dec!(1), 1), dec!(0.000277777778));
        assert_eq!(quantity(dec!(2.5), 1800), dec!(1.25));
    }

    #[test]
    fn each_unit_is_its_own_line_and_its_amount_is_price_times_quantity() {
        let c = reserved(Some(0), None);
        let lines = unit_lines(&c, 0, 1800);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].unit, Some(Unit::TflopsH));
        assert_eq!(lines[0].quantity, dec!(50));
        assert_eq!(lines[0].amount, dec!(0.5));
        assert_eq!(lines[1].unit, Some(Unit::VramH));
        assert_eq!(lines[1].amount, round_money(dec!(0.08) * dec!(1.25)));
    }

    #[test]
    fn reserved_hours_before_running_or_after_the_end_are_unused() {
        let c = reserved(Some(1000), Some(5000));
        assert_eq!(unit_lines(&c, 0, 1000)[0].kind, Kind::ReservedUnused);
        assert_eq!(unit_lines(&c, 1000, 3600)[0].kind, Kind::ReservedUsed);
        assert_eq!(unit_lines(&c, 5000, 7200)[0].kind, Kind::ReservedUnused);
        let never_ran = reserved(None, None);
        assert_eq!(unit_lines(&never_ran, 0, 10)[0].kind, Kind::ReservedUnused);
    }

    #[test]
    fn the_fee_is_shared_among_an_hours_lines_and_adds_up() {
        let c = reserved(Some(0), None);
        let mut parts = unit_lines(&c, 0, 3599);
        let total: Decimal = parts.iter().map(|l| l.amount).sum();
        let fee = ledger::platform_fee(total, dec!(0.05));
        split_fee(&mut parts, fee);
        assert_eq!(parts.iter().map(|l| l.fee).sum::<Decimal>(), fee);
        assert!(parts.iter().all(|l| l.fee >= Decimal::ZERO));
    }
}
