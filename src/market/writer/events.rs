//! One function per kind of engine event: what it changes in the rows.

use super::rows::NewFill;
use super::{unpaid, Batch, Followup};
use crate::billing::ledger::LedgerError;
use crate::billing::settle;
use crate::db::leases::{self, NewLease};
use crate::db::{execute_tx, Money, Text, Tx};
use crate::engine::{EndReason, Event, FillReport, Lease, LeaseState, Mode, RejectReason};
use crate::events::{EventType, NewEvent, Owner};
use crate::market::history::Clearing;
use crate::market::OrderState;
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde_json::json;
use uuid::Uuid;

/// An engine time as the API shows it.
fn time(ts: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(ts, 0).unwrap_or_default()
}

fn json_name<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

impl Batch {
    /// Records `events`; what they call for from the engine is owed to
    /// the next batch ([`Batch::owed`]).
    pub async fn record(&mut self, tx: &mut Tx<'_>, events: Vec<Event>) -> anyhow::Result<()> {
        let mut followups = Vec::new();
        for event in events {
            self.event(tx, event, &mut followups).await?;
        }
        self.owed.extend(followups);
        Ok(())
    }

    async fn event(
        &mut self,
        tx: &mut Tx<'_>,
        event: Event,
        followups: &mut Vec<Followup>,
    ) -> anyhow::Result<()> {
        match event {
            Event::OrderAccepted { order_id, at } => {
                self.tell_order(order_id, EventType::OrderAccepted, at, json!({}));
            }
            Event::OrderRejected {
                order_id,
                reason,
                message,
                ..
            } => self.order_rejected(tx, order_id, reason, message).await?,
            Event::OrderFilled {
                order_id,
                lease_id,
                report,
                at,
            } => {
                self.order_filled(tx, order_id, lease_id, &report, at)
                    .await?
            }
            Event::OrderCancelled { order_id, at } => {
                self.order_moved(tx, order_id, OrderState::Cancelled)
                    .await?;
                self.tell_order(order_id, EventType::OrderCancelled, at, json!({}));
            }
            Event::OrderExpired { order_id, at } => {
                self.order_moved(tx, order_id, OrderState::Expired).await?;
                self.tell_order(order_id, EventType::OrderExpired, at, json!({}));
            }
            Event::OrderRequeued { order_id, at } => {
                self.order_moved(tx, order_id, OrderState::Open).await?;
                self.tell_order(order_id, EventType::OrderRequeued, at, json!({}));
            }
            Event::LeaseGranted { lease, .. } => self.lease_granted(tx, *lease, followups).await?,
            Event::LeaseStateChanged {
                lease_id, to, at, ..
            } => self.lease_state_changed(tx, lease_id, to, at).await?,
            Event::PreemptScheduled { lease_id, .. } => {
                self.touched_leases.insert(lease_id);
            }
            Event::PreemptNotice {
                lease_id,
                preempt_at,
                reason,
                at,
            } => {
                self.touched_leases.insert(lease_id);
                let data = json!({"preempt_at": time(preempt_at), "reason": reason});
                self.tell_lease(lease_id, EventType::LeasePreemptNotice, at, data);
            }
            Event::RebalanceWarning {
                lease_id,
                clearing_index,
                bid_index,
                reason,
                at,
            } => {
                self.touched_leases.insert(lease_id);
                let data = json!({"bid_index": bid_index, "clearing_index": clearing_index,
                                  "reason": reason});
                self.tell_lease(lease_id, EventType::LeaseRebalance, at, data);
            }
            Event::LeaseRepriced {
                lease_id,
                price_per_hour,
                ..
            } => followups.extend(self.lease_repriced(tx, lease_id, price_per_hour).await?),
            Event::LeaseConverted {
                lease_id,
                from_mode,
                to_mode,
                price_per_hour_before,
                price_per_hour_after,
                hold,
                at,
                effective_at,
            } => {
                let data = json!({
                    "from_mode": from_mode,
                    "to_mode": to_mode,
                    "price_per_hour_before": price_per_hour_before,
                    "price_per_hour_after": price_per_hour_after,
                    "effective_at": time(effective_at),
                });
                self.tell_lease(lease_id, EventType::LeaseConverted, at, data);
                followups.extend(self.lease_converted(tx, lease_id, hold).await?);
            }
            Event::LeaseModeChanged { lease, at } => {
                followups.extend(self.lease_mode_changed(tx, *lease, at).await?)
            }
            Event::LeaseEnded {
                lease_id,
                reason,
                at,
            } => followups.extend(self.lease_ended(tx, lease_id, reason, at).await?),
            Event::AuctionCleared {
                gpu_model,
                region,
                clearing_index,
                unit_prices,
                won,
                at,
            } => self.clearings.push(Clearing {
                gpu_model,
                region,
                clearing_index,
                unit_prices,
                won,
                at,
            }),
            Event::ListingCreated { listing, at } => self.listing_created(tx, &listing, at).await?,
            Event::ListingSold {
                listing_id,
                lease_id,
                from,
                until,
                amount,
                at,
            } => {
                self.listing_sold(tx, listing_id, lease_id, (from, until), amount, at)
                    .await?
            }
            Event::ListingClosed {
                listing_id,
                end,
                at,
            } => self.listing_closed(tx, listing_id, end, at).await?,
            Event::PriceChanged {
                gpu_model,
                region,
                clearing_index,
                ..
            } => {
                self.price_changed(tx, &gpu_model, &region, clearing_index)
                    .await?
            }
        }
        Ok(())
    }

    /// An event for the buyer of `order`; `data` gets `order_id`.
    fn tell_order(&mut self, order: Uuid, kind: EventType, at: i64, mut data: serde_json::Value) {
        data["order_id"] = json!(order);
        let event = NewEvent::new(Owner::BuyerOfOrder(order), kind, time(at), data);
        self.outbox.push(event);
    }

    /// An event for the buyer of `lease`; `data` gets `lease_id`.
    pub(super) fn tell_lease(
        &mut self,
        lease: Uuid,
        kind: EventType,
        at: i64,
        mut data: serde_json::Value,
    ) {
        data["lease_id"] = json!(lease);
        let event = NewEvent::new(Owner::BuyerOfLease(lease), kind, time(at), data);
        self.outbox.push(event);
    }

    async fn order_rejected(
        &mut self,
        tx: &mut Tx<'_>,
        order_id: Uuid,
        reason: RejectReason,
        message: String,
    ) -> anyhow::Result<()> {
        self.reject_order(tx, order_id, json_name(&reason), message)
            .await?;
        Ok(())
    }

    async fn order_filled(
        &mut self,
        tx: &mut Tx<'_>,
        order_id: Uuid,
        lease_id: Uuid,
        report: &FillReport,
        at: i64,
    ) -> anyhow::Result<()> {
        if self.unfunded.contains(&order_id) {
            return Ok(());
        }
        let data = json!({
            "order_id": order_id,
            "price_per_hour": report.price_per_hour,
            "units": report.units,
            "explanation": report.explanation,
        });
        // Through the lease, so the event names both the order and the lease.
        self.tell_lease(lease_id, EventType::OrderFilled, at, data);
        let report_json = serde_json::to_string(report)?;
        match self.rows.order(order_id) {
            Some(order) => {
                order.state = OrderState::Filled;
                order.lease_id = Some(lease_id);
            }
            None => {
                execute_tx!(
                    tx,
                    "UPDATE orders SET state = $1, lease_id = $2, updated_at = $3 WHERE id = $4",
                    Text(OrderState::Filled),
                    lease_id,
                    self.now,
                    order_id,
                )?;
            }
        }
        self.rows.add_fill(NewFill {
            order_id,
            lease_id,
            report_json,
        });
        Ok(())
    }

    /// An order cancelled, expired or back in the queue.
    async fn order_moved(
        &mut self,
        tx: &mut Tx<'_>,
        order: Uuid,
        state: OrderState,
    ) -> anyhow::Result<()> {
        if let Some(row) = self.rows.order(order) {
            row.state = state;
            return Ok(());
        }
        execute_tx!(
            tx,
            "UPDATE orders SET state = $1, updated_at = $2 WHERE id = $3",
            Text(state),
            self.now,
            order,
        )?;
        Ok(())
    }

    async fn reject_order(
        &mut self,
        tx: &mut Tx<'_>,
        order: Uuid,
        reason: String,
        message: String,
    ) -> anyhow::Result<()> {
        let data = json!({"reason": reason, "message": message});
        self.tell_order(order, EventType::OrderRejected, self.ts(), data);
        if let Some(row) = self.rows.order(order) {
            row.state = OrderState::Rejected;
            row.reject_reason = Some(reason);
            row.reject_message = Some(message);
            return Ok(());
        }
        execute_tx!(
            tx,
            "UPDATE orders SET state = $1, reject_reason = $2, reject_message = $3, \
             updated_at = $4 WHERE id = $5",
            Text(OrderState::Rejected),
            reason,
            message,
            self.now,
            order,
        )?;
        Ok(())
    }

    /// A new lease: its row and its hold. A hold the wallet cannot cover
    /// rejects the order and asks for the lease's release, and for its
    /// siblings' when the order is of several units (all granted before any
    /// fill is told, so none was).
    async fn lease_granted(
        &mut self,
        tx: &mut Tx<'_>,
        lease: Lease,
        followups: &mut Vec<Followup>,
    ) -> anyhow::Result<()> {
        // Reserved windows are owed from their start, whatever the agent does.
        let billed_until = (lease.mode == Mode::Reserved).then_some(lease.starts_at);
        let (id, order_id, buyer, hold) = (lease.id, lease.order_id, lease.buyer, lease.hold);
        self.touched_leases.insert(id);
        if self.unfunded.contains(&order_id) {
            // A later leg of an order a sibling's hold already refused.
            self.unfunded_leases.insert(id);
            followups.push(Followup::Unfunded { lease_id: id });
        }
        if lease.spec.gang.is_some() {
            self.gang_legs.entry(order_id).or_default().push(id);
        }
        self.rows.add_lease(NewLease {
            lease,
            hold_id: None,
            billed_until,
            running_at: None,
            record_json: String::new(),
        });
        if hold <= Decimal::ZERO || self.unfunded.contains(&order_id) {
            return Ok(());
        }
        let placed = self
            .rows
            .journal
            .place_hold(tx, buyer, hold, &format!("lease:{id}"), self.now)
            .await;
        match placed {
            Ok(hold) => {
                if let Some(row) = self.rows.lease(id) {
                    row.hold_id = Some(hold);
                }
                Ok(())
            }
            Err(LedgerError::InsufficientFunds(_)) => {
                self.unfunded.insert(order_id);
                self.unfunded_leases.insert(id);
                // Its siblings granted before it go with it: all or none.
                for leg in self.gang_legs.get(&order_id).into_iter().flatten() {
                    if *leg != id && self.unfunded_leases.insert(*leg) {
                        followups.push(Followup::Unfunded { lease_id: *leg });
                    }
                }
                self.reject_order(
                    tx,
                    order_id,
                    json_name(&RejectReason::InsufficientFunds),
                    "the wallet could not cover the lease's hold when capacity freed".into(),
                )
                .await?;
                followups.push(Followup::Unfunded { lease_id: id });
                Ok(())
            }
            Err(e) => Err(anyhow::anyhow!(e)),
        }
    }

    async fn lease_state_changed(
        &mut self,
        tx: &mut Tx<'_>,
        lease_id: Uuid,
        to: LeaseState,
        at: i64,
    ) -> anyhow::Result<()> {
        self.touched_leases.insert(lease_id);
        if to != LeaseState::Running {
            return Ok(());
        }
        let data = json!({"running_at": time(at)});
        self.tell_lease(lease_id, EventType::LeaseRunning, at, data);
        match self.rows.lease(lease_id) {
            Some(lease) => {
                lease.running_at = lease.running_at.or(Some(at));
                lease.billed_until = lease.billed_until.or(Some(at));
            }
            None => {
                leases::mark_running(tx, lease_id, at).await?;
            }
        }
        Ok(())
    }

    async fn lease_repriced(
        &mut self,
        tx: &mut Tx<'_>,
        lease_id: Uuid,
        price_per_hour: Decimal,
    ) -> anyhow::Result<Option<Followup>> {
        let (ts, now, fee) = (self.ts(), self.now, self.terms.platform_fee);
        let mut flushed = self.rows.flush(tx, now).await?;
        // Seconds before the new price are owed at the old one.
        let settled = settle::settle(&mut flushed, lease_id, ts, fee, now).await?;
        leases::set_price(flushed.tx(), lease_id, price_per_hour).await?;
        self.touched_leases.insert(lease_id);
        Ok(settled.and_then(|s| unpaid(lease_id, s)))
    }

    async fn lease_ended(
        &mut self,
        tx: &mut Tx<'_>,
        lease_id: Uuid,
        reason: EndReason,
        at: i64,
    ) -> anyhow::Result<Option<Followup>> {
        // The buyer never heard of a lease its wallet could not fund.
        if !self.unfunded_leases.contains(&lease_id) {
            let data = json!({"reason": reason, "ended_at": time(at)});
            self.tell_lease(lease_id, EventType::LeaseEnded, at, data);
        }
        let (now, fee) = (self.now, self.terms.platform_fee);
        let mut flushed = self.rows.flush(tx, now).await?;
        let settled = settle::settle_end(&mut flushed, lease_id, reason, at, fee, now).await?;
        let state = if reason == EndReason::AgentFailed {
            LeaseState::Failed
        } else {
            LeaseState::Ended
        };
        leases::end(flushed.tx(), lease_id, state, &json_name(&reason), at, now).await?;
        self.touched_leases.insert(lease_id);
        Ok(settled.and_then(|s| unpaid(lease_id, s)))
    }

    async fn price_changed(
        &mut self,
        tx: &mut Tx<'_>,
        gpu_model: &str,
        region: &str,
        clearing_index: Decimal,
    ) -> anyhow::Result<()> {
        execute_tx!(
            tx,
            "INSERT INTO spot_clearing (gpu_model, region, clearing_index, updated_at) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (gpu_model, region) DO UPDATE SET \
             clearing_index = excluded.clearing_index, updated_at = excluded.updated_at",
            gpu_model,
            region,
            Money(clearing_index),
            self.now,
        )?;
        Ok(())
    }
}
