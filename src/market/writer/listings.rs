//! What listing events change in the rows, and whom they tell (ARCHITECTURE.md §6).

use super::Batch;
use crate::db::{dispatch_tx, execute_tx, Money, Tx};
use crate::engine::{Listing, ListingEnd};
use crate::events::{EventType, NewEvent, Owner};
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde_json::json;
use uuid::Uuid;

fn time(ts: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(ts, 0).unwrap_or_default()
}

/// A listing state as its row keeps it.
pub fn state_name(end: Option<ListingEnd>) -> &'static str {
    match end {
        None => "open",
        Some(ListingEnd::Sold) => "sold",
        Some(ListingEnd::Cancelled) => "cancelled",
        Some(ListingEnd::Expired) => "expired",
        Some(ListingEnd::Withdrawn) => "withdrawn",
    }
}

impl Batch {
    pub(super) async fn listing_created(
        &mut self,
        tx: &mut Tx<'_>,
        listing: &Listing,
        at: i64,
    ) -> anyhow::Result<()> {
        // The seller's lease row must exist first (a new listing refers to it).
        let now = self.now;
        let mut flushed = self.rows.flush(tx, now).await?;
        execute_tx!(
            flushed.tx(),
            "INSERT INTO resale_listings (id, seller_id, lease_id, parent_id, node_id, gpu_model, \
             region, from_ts, until_ts, ask_per_hour, state, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'open', $11, $11)",
            listing.id,
            listing.seller,
            listing.lease_id,
            listing.parent,
            listing.node,
            listing.model.as_str(),
            listing.region.as_str(),
            listing.from,
            listing.until,
            Money(listing.ask_per_hour),
            now,
        )?;
        self.touched_leases.insert(listing.lease_id);
        let data = json!({
            "listing_id": listing.id,
            "lease_id": listing.lease_id,
            "parent_id": listing.parent,
            "from": time(listing.from),
            "until": time(listing.until),
            "ask_per_hour": listing.ask_per_hour,
        });
        self.tell_seller(listing.seller, EventType::ListingCreated, at, data);
        Ok(())
    }

    pub(super) async fn listing_sold(
        &mut self,
        tx: &mut Tx<'_>,
        listing: Uuid,
        lease: Uuid,
        (from, until): (i64, i64),
        amount: Decimal,
        at: i64,
    ) -> anyhow::Result<()> {
        let now = self.now;
        execute_tx!(
            tx,
            "UPDATE resale_listings SET state = 'sold', sold_lease_id = $1, sold_from = $2, \
             sold_until = $3, sold_amount = $4, updated_at = $5 WHERE id = $6",
            lease,
            from,
            until,
            Money(amount),
            now,
            listing,
        )?;
        if let Some(seller) = seller_of(tx, listing).await? {
            let data = json!({
                "listing_id": listing,
                "from": time(from),
                "until": time(until),
                "amount": amount,
            });
            self.tell_seller(seller, EventType::ListingSold, at, data);
        }
        Ok(())
    }

    pub(super) async fn listing_closed(
        &mut self,
        tx: &mut Tx<'_>,
        listing: Uuid,
        end: ListingEnd,
        at: i64,
    ) -> anyhow::Result<()> {
        let now = self.now;
        execute_tx!(
            tx,
            "UPDATE resale_listings SET state = $1, updated_at = $2 WHERE id = $3",
            state_name(Some(end)),
            now,
            listing,
        )?;
        let kind = match end {
            ListingEnd::Cancelled => EventType::ListingCancelled,
            ListingEnd::Expired | ListingEnd::Withdrawn | ListingEnd::Sold => {
                EventType::ListingExpired
            }
        };
        if let Some(seller) = seller_of(tx, listing).await? {
            let data = json!({"listing_id": listing, "reason": state_name(Some(end))});
            self.tell_seller(seller, kind, at, data);
        }
        Ok(())
    }

    fn tell_seller(&mut self, seller: Uuid, kind: EventType, at: i64, data: serde_json::Value) {
        let event = NewEvent::new(Owner::User(seller), kind, time(at), data);
        self.outbox.push(event);
    }
}

async fn seller_of(tx: &mut Tx<'_>, listing: Uuid) -> anyhow::Result<Option<Uuid>> {
    let seller = dispatch_tx!(tx, conn => {
        sqlx::query_scalar("SELECT seller_id FROM resale_listings WHERE id = $1")
            .bind(listing)
            .fetch_optional(conn)
            .await
    })?;
    Ok(seller)
}
