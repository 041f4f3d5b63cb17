//! What a mode conversion changes in the rows (ARCHITECTURE.md §3 "Mode changes"):
//! the charge up to the instant the new price applies, the lease row's new
//! terms, and the hold resized to what the new mode needs (ARCHITECTURE.md §4).

use super::{unpaid, Batch, Followup};
use crate::billing::charges;
use crate::billing::ledger::{self, LedgerError};
use crate::billing::settle;
use crate::db::leases;
use crate::db::{dispatch_tx, Tx};
use crate::engine::Lease;
use rust_decimal::Decimal;
use uuid::Uuid;

impl Batch {
    /// A conversion took effect at `at`. The seconds before are charged as
    /// the row still stands (old mode, old price); then the row takes the
    /// lease's new terms at once, so that a billing pass later in this
    /// batch already charges them (the batch's own write of the lease
    /// comes only at its end).
    pub(super) async fn lease_mode_changed(
        &mut self,
        tx: &mut Tx<'_>,
        lease: Lease,
        at: i64,
    ) -> anyhow::Result<Option<Followup>> {
        let (now, fee) = (self.now, self.terms.platform_fee);
        let mut flushed = self.rows.flush(tx, now).await?;
        let settled = settle::settle(&mut flushed, lease.id, at, fee, now).await?;
        leases::store(flushed.tx(), &lease, now).await?;
        self.touched_leases.insert(lease.id);
        Ok(settled.and_then(|s| unpaid(lease.id, s)))
    }

    /// A conversion was recorded: the lease's hold becomes `target`,
    /// topped up from the wallet or given back in part. A top-up the
    /// wallet cannot pay leaves the hold as it is: the regular renewal
    /// then gives the lease its funds notice, as for any lease.
    pub(super) async fn lease_converted(
        &mut self,
        tx: &mut Tx<'_>,
        lease_id: Uuid,
        target: Decimal,
    ) -> anyhow::Result<Option<Followup>> {
        let now = self.now;
        let mut flushed = self.rows.flush(tx, now).await?;
        let hold: Option<Option<Uuid>> = dispatch_tx!(flushed.tx(), conn => {
            sqlx::query_scalar("SELECT hold_id FROM leases WHERE id = $1")
                .bind(lease_id)
                .fetch_optional(conn)
                .await
        })?;
        let Some(hold) = hold.flatten() else {
            return Ok(None);
        };
        let remaining = charges::hold_remaining(flushed.tx(), hold)
            .await
            .map_err(|e| anyhow::anyhow!(e))?;
        let moved = if target > remaining {
            ledger::extend_hold(flushed.tx(), hold, target - remaining, now).await
        } else if target < remaining {
            ledger::reduce_hold(flushed.tx(), hold, remaining - target, now).await
        } else {
            Ok(())
        };
        match moved {
            // A wallet short of the top-up, or a hold released as the lease
            // ended: the next charge tops it up from the wallet, or stops.
            Ok(()) | Err(LedgerError::InsufficientFunds(_) | LedgerError::UnknownHold(_)) => {
                Ok(None)
            }
            Err(e) => Err(anyhow::anyhow!(e)),
        }
    }
}
