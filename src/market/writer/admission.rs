//! Whether a new order may enter the engine: its `Idempotency-Key` and
//! `client_order_id` are new, and what the buyer can spend.

use super::rows::NewOrder;
use super::Batch;
use crate::billing::ledger::LedgerError;
use crate::billing::Account;
use crate::db::{dispatch_tx, Tx};
use crate::engine::PlaceOrder;
use crate::idempotency::{self, IdempotencyError};
use crate::market::handle::{MarketError, OrderMeta};
use crate::market::OrderState;
use rust_decimal::Decimal;
use std::collections::BTreeMap;

/// Idempotency scope of `POST /v1/orders`.
pub const ORDER_SCOPE: &str = "order";

/// Whether a new order may enter the engine.
pub enum Admission {
    New,
    Refused(MarketError),
}

impl Batch {
    /// Checks the order's `Idempotency-Key` and `client_order_id`, then
    /// records the order row (state `open`) and stores the key, so a retry
    /// finds them.
    pub async fn admit(
        &mut self,
        tx: &mut Tx<'_>,
        place: &PlaceOrder,
        meta: Option<&OrderMeta>,
    ) -> anyhow::Result<Admission> {
        let Some(meta) = meta else {
            anyhow::bail!("an order reached the market without its request");
        };
        if let Some(key) = &meta.idempotency {
            match idempotency::lookup(tx, place.buyer, ORDER_SCOPE, key).await {
                Ok(Some(stored)) => {
                    let id = stored.body["order_id"]
                        .as_str()
                        .and_then(|s| s.parse().ok());
                    return Ok(Admission::Refused(match id {
                        Some(id) => MarketError::AlreadyPlaced(id),
                        None => {
                            MarketError::Storage(anyhow::anyhow!("malformed idempotency record"))
                        }
                    }));
                }
                Ok(None) => {}
                Err(IdempotencyError::KeyReused) => {
                    return Ok(Admission::Refused(MarketError::IdempotencyKeyReused))
                }
                Err(IdempotencyError::Storage(e)) => return Err(e),
            }
        }
        if let Some(client_order_id) = &meta.client_order_id {
            let existing = match self.rows.order_with_client_id(place.buyer, client_order_id) {
                Some(id) => Some(id),
                None => dispatch_tx!(tx, conn => {
                    sqlx::query_scalar(
                        "SELECT id FROM orders WHERE buyer_id = $1 AND client_order_id = $2",
                    )
                    .bind(place.buyer)
                    .bind(client_order_id)
                    .fetch_optional(conn)
                    .await
                })?,
            };
            if let Some(existing) = existing {
                return Ok(Admission::Refused(MarketError::DuplicateClientOrderId {
                    client_order_id: client_order_id.clone(),
                    existing,
                }));
            }
        }
        let prediction = place.spec.duration_prediction();
        self.rows.add_order(NewOrder {
            id: place.order_id,
            buyer: place.buyer,
            client_order_id: meta.client_order_id.clone(),
            mode: place.spec.mode,
            state: OrderState::Open,
            region: meta.region.clone(),
            request_json: meta.request_json.clone(),
            tags_json: meta.tags_json.clone(),
            reject_reason: None,
            reject_message: None,
            lease_id: None,
            predicted_duration_s: prediction.seconds,
            prediction_basis: prediction.basis.as_str(),
        });
        if let Some(key) = &meta.idempotency {
            let body = serde_json::json!({ "order_id": place.order_id });
            idempotency::store(
                tx,
                place.buyer,
                ORDER_SCOPE,
                key,
                axum::http::StatusCode::CREATED,
                &body,
                self.now,
            )
            .await
            .map_err(|e| anyhow::anyhow!("failed to store the idempotency key: {e}"))?;
        }
        Ok(Admission::New)
    }

    /// The buyer's spendable money, as this batch leaves it.
    pub async fn available_funds(
        &mut self,
        tx: &mut Tx<'_>,
        buyer: uuid::Uuid,
    ) -> anyhow::Result<Decimal> {
        let journal = &mut self.rows.journal;
        let wallet = Account::Wallet(buyer);
        // A hold moves money to the buyer's holds account: read both at once.
        match journal.load(tx, &[&wallet, &Account::Holds(buyer)]).await {
            Ok(()) | Err(LedgerError::UnknownAccount(_)) => {}
            Err(e) => return Err(anyhow::anyhow!(e)),
        }
        match journal.balance(tx, &wallet).await {
            Ok(balance) => Ok(balance),
            Err(LedgerError::UnknownAccount(_)) => Ok(Decimal::ZERO),
            Err(e) => Err(anyhow::anyhow!(e)),
        }
    }

    /// Starts from the balances an earlier batch left, when nothing has
    /// written since (see [`crate::billing::ledger::Journal::remember`]).
    pub fn remember_balances(&mut self, balances: BTreeMap<Account, Decimal>) {
        self.rows.journal.remember(balances);
    }

    /// The balances this batch leaves, once committed.
    pub fn take_balances(&mut self) -> BTreeMap<Account, Decimal> {
        self.rows.journal.take_balances()
    }
}
