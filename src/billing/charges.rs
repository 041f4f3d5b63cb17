//! Per-second charges for the units a lease holds (DESIGN §3, §8).
//!
//! A charge line covers at most one clock hour and is rounded half-even to 6
//! decimals once, from exact seconds. Lines are captured from the lease's hold
//! to the provider's payable account, less the platform fee.

use super::ledger::{self, LedgerError};
use crate::db::{dispatch_tx, Money, Tx};
use crate::pricing::round_money;
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
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
    let mut lines = Vec::new();
    let mut start = from;
    while start < to {
        let hour_end = (start.div_euclid(HOUR) + 1) * HOUR;
        let end = hour_end.min(to);
        let amount = round_money(price_per_hour * Decimal::from(end - start) / Decimal::from(HOUR));
        lines.push(Line { start, end, amount });
        start = end;
    }
    lines
}

/// What a lease is charged for, and from which hold to whom.
#[derive(Debug, Clone)]
pub struct Chargeable {
    pub lease: Uuid,
    pub buyer: Uuid,
    pub provider: Uuid,
    pub hold: Uuid,
    pub price_per_hour: Decimal,
    pub tflops_units: Decimal,
    pub vram_units: Decimal,
}

/// Charges `[from, to)`: each line is captured from the hold, topping the hold
/// up from the wallet when it runs short. Returns the total charged; a line the
/// buyer cannot pay stops the run (the caller starts the funds notice).
pub async fn charge(
    tx: &mut Tx<'_>,
    c: &Chargeable,
    from: Ts,
    to: Ts,
    fee_rate: Decimal,
    now: DateTime<Utc>,
) -> Result<ChargeOutcome, LedgerError> {
    let mut charged = Decimal::ZERO;
    let mut billed_until = from;
    for line in hourly_lines(from, to, c.price_per_hour) {
        if line.amount.is_zero() {
            billed_until = line.end;
            continue;
        }
        let remaining = hold_remaining(tx, c.hold).await?;
        if remaining < line.amount {
            let shortfall = line.amount - remaining;
            match ledger::extend_hold(tx, c.hold, shortfall, now).await {
                Ok(()) => {}
                Err(LedgerError::InsufficientFunds(_)) => {
                    return Ok(ChargeOutcome {
                        charged,
                        billed_until,
                        unpaid: true,
                    })
                }
                Err(e) => return Err(e),
            }
        }
        let memo = format!("lease {} {}–{}", c.lease, line.start, line.end);
        let entry =
            ledger::capture(tx, c.hold, line.amount, c.provider, fee_rate, &memo, now).await?;
        let fee = ledger::platform_fee(line.amount, fee_rate);
        dispatch_tx!(tx, conn => {
            sqlx::query(
                "INSERT INTO charges (lease_id, buyer_id, provider_id, period_start, period_end, \
                 tflops_units, vram_units, amount, fee, entry_id, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
            )
            .bind(c.lease)
            .bind(c.buyer)
            .bind(c.provider)
            .bind(line.start)
            .bind(line.end)
            .bind(Money(c.tflops_units))
            .bind(Money(c.vram_units))
            .bind(Money(line.amount))
            .bind(Money(fee))
            .bind(entry)
            .bind(now)
            .execute(conn)
            .await
            .map(|r| r.rows_affected())
        })?;
        charged += line.amount;
        billed_until = line.end;
    }
    Ok(ChargeOutcome {
        charged,
        billed_until,
        unpaid: false,
    })
}

/// The result of [`charge`].
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
    use rust_decimal_macros::dec;

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
}
