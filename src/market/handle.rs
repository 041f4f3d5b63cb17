//! The handlers' side of the engine task: send a command, get its events
//! after they are committed.

use crate::engine::{Command, ConversionRefused, Engine, EngineError, Event};
use crate::error::ApiError;
use crate::idempotency::IdempotencyError;
use axum::http::StatusCode;
use futures::future::BoxFuture;
use std::collections::BTreeSet;
use tokio::sync::{mpsc, oneshot};

/// What an order carries besides what the engine needs: stored with the order
/// row in the same transaction as the engine's events.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct OrderMeta {
    pub client_order_id: Option<String>,
    /// The request as the buyer sent it (shown back on `GET /v1/orders/{id}`),
    /// serialized by the handler so the market task's serial chain does not.
    pub request_json: String,
    pub tags_json: String,
    pub region: String,
    /// `Idempotency-Key` and the request's hash, stored with the answer.
    pub idempotency: Option<crate::idempotency::IdempotencyKey>,
}

/// Why a command could not be carried out.
#[derive(Debug, thiserror::Error)]
pub enum MarketError {
    /// The engine refused the command (unknown lease, a lease past the
    /// state the command needs, a bad inventory …).
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The same `Idempotency-Key` and body placed this order before.
    #[error("already placed as order {0}")]
    AlreadyPlaced(uuid::Uuid),
    /// The `Idempotency-Key` was used before with another body.
    #[error("{}", IdempotencyError::KeyReused)]
    IdempotencyKeyReused,
    /// The buyer already has an order with this `client_order_id`.
    #[error("client_order_id `{client_order_id}` is already order {existing}")]
    DuplicateClientOrderId {
        client_order_id: String,
        existing: uuid::Uuid,
    },
    /// Applying the command panicked; nothing of it was kept.
    #[error("the market could not apply this command; nothing of it was kept")]
    Panicked,
    /// The engine task is gone (shutting down).
    #[error("the market is shutting down")]
    Unavailable,
    /// No replica leads the market right now (a failover is under way),
    /// or the leader's answer was lost: retry, with the same `Idempotency-Key`.
    #[error("no replica leads the market right now; retry")]
    NoLeader,
    /// The batch could not be committed (the database failed); nothing of
    /// the command was kept.
    #[error("the command could not be committed; retry")]
    NotCommitted,
    #[error(transparent)]
    Storage(#[from] anyhow::Error),
}

impl From<MarketError> for ApiError {
    fn from(e: MarketError) -> Self {
        let detail = e.to_string();
        let refused = |status, code| ApiError::Refused {
            status,
            code,
            detail: detail.clone(),
        };
        match e {
            MarketError::Engine(EngineError::UnknownOrder(_) | EngineError::NotCancellable(_)) => {
                refused(StatusCode::CONFLICT, "not_cancellable")
            }
            MarketError::Engine(EngineError::UnknownLease(_)) => {
                refused(StatusCode::CONFLICT, "lease_ended")
            }
            MarketError::Engine(EngineError::InvalidTransition { .. }) => {
                ApiError::Conflict(detail)
            }
            MarketError::Engine(EngineError::Conversion(refused)) => refused_conversion(refused),
            MarketError::Engine(
                EngineError::UnknownNode(_)
                | EngineError::InvalidNode(_)
                | EngineError::InvalidPrice(_)
                | EngineError::Restore(_),
            )
            | MarketError::Panicked => ApiError::refused("refused", detail),
            MarketError::Engine(EngineError::Listing(refusal)) => {
                use crate::engine::ListingRefusal as R;
                let (status, code) = match refusal {
                    R::NotHolder | R::UnknownListing => (StatusCode::NOT_FOUND, "not_found"),
                    R::NotReserved => (StatusCode::UNPROCESSABLE_ENTITY, "not_reserved"),
                    R::TooSoon { .. } => (StatusCode::UNPROCESSABLE_ENTITY, "listing_too_soon"),
                    R::OutsideWindow => {
                        (StatusCode::UNPROCESSABLE_ENTITY, "listing_outside_window")
                    }
                    R::AskTooHigh { .. } => (StatusCode::UNPROCESSABLE_ENTITY, "ask_too_high"),
                    R::AlreadyListed | R::Resold => (StatusCode::CONFLICT, "already_listed"),
                    R::TooLateToCancel { .. } => (StatusCode::CONFLICT, "too_late_to_cancel"),
                };
                refused(status, code)
            }
            MarketError::AlreadyPlaced(id) => {
                ApiError::Conflict(format!("this request was already placed as order {id}"))
            }
            MarketError::IdempotencyKeyReused => {
                refused(StatusCode::UNPROCESSABLE_ENTITY, "idempotency_key_reused")
            }
            MarketError::DuplicateClientOrderId { .. } => {
                refused(StatusCode::CONFLICT, "duplicate_client_order_id")
            }
            MarketError::Unavailable => ApiError::Refused {
                status: StatusCode::SERVICE_UNAVAILABLE,
                code: "unavailable",
                detail: "the market is shutting down; retry".into(),
            },
            MarketError::NoLeader => refused(StatusCode::SERVICE_UNAVAILABLE, "no_leader"),
            MarketError::NotCommitted => refused(StatusCode::SERVICE_UNAVAILABLE, "not_committed"),
            MarketError::Storage(e) => ApiError::Internal(e),
        }
    }
}

/// A refused conversion: 409 when another claim or a notice is in the
/// way, 422 when the request itself cannot be met.
fn refused_conversion(refused: ConversionRefused) -> ApiError {
    let status = match refused {
        ConversionRefused::AlreadyNoticed
        | ConversionRefused::SliceBooked
        | ConversionRefused::ResaleWindow => StatusCode::CONFLICT,
        ConversionRefused::NotAllowed
        | ConversionRefused::NotRunning
        | ConversionRefused::InvalidWindow
        | ConversionRefused::InsufficientFunds => StatusCode::UNPROCESSABLE_ENTITY,
    };
    ApiError::Refused {
        status,
        code: refused.code(),
        detail: refused.to_string(),
    }
}

/// A command's events, committed.
#[derive(Debug)]
pub struct Committed {
    pub events: Vec<Event>,
    /// The batch's time, as its rows store it (`created_at`, `updated_at`).
    pub at: chrono::DateTime<chrono::Utc>,
    /// A placed order's row as committed, when the batch still had it in memory.
    pub order: Option<super::writer::WrittenOrder>,
}

pub(crate) type Reply = oneshot::Sender<Result<Committed, MarketError>>;

pub(crate) enum Request {
    Command {
        command: Box<Command>,
        meta: Option<Box<OrderMeta>>,
        /// Events to write with the command's changes, if the engine takes it.
        tell: Vec<crate::events::NewEvent>,
        /// Sent by the leader's internal route for a follower: applied
        /// here or refused, never forwarded again.
        here: bool,
        reply: Reply,
    },
    Read(Box<dyn FnOnce(&Engine) + Send>),
    /// A read that tries placements on the live engine and puts them back
    /// (`Engine::gang_room`): it leaves the engine as it found it.
    Trial(Box<dyn FnOnce(&mut Engine) + Send>),
    /// Ends the task once what came before is applied (the server stops).
    Stop(oneshot::Sender<()>),
}

/// A cheap, clonable handle to the one task that owns the engine.
#[derive(Clone)]
pub struct MarketHandle {
    pub(crate) tx: mpsc::Sender<Request>,
    /// Where the task's engine stands in the journal.
    pub(crate) journal: std::sync::Arc<super::journal::JournalStatus>,
    /// Each node's live leases, while this replica leads.
    pub(crate) live: super::live_leases::LiveLeases,
}

impl MarketHandle {
    /// Each node's live leases as the leading engine last committed them.
    pub fn live_leases(&self) -> &super::live_leases::LiveLeases {
        &self.live
    }

    /// Where this replica's engine stands in the journal (ARCHITECTURE.md §20).
    pub fn journal(&self) -> &super::journal::JournalStatus {
        &self.journal
    }

    /// Applies `command`; the events it produced are committed to the
    /// database before this returns.
    pub async fn command(&self, command: Command) -> Result<Vec<Event>, MarketError> {
        Ok(self.send(command, None, Vec::new()).await?.events)
    }

    /// [`MarketHandle::command`], writing `tell` with its changes when the
    /// engine takes it (an event whose cause the engine does not know).
    pub async fn command_telling(
        &self,
        command: Command,
        tell: Vec<crate::events::NewEvent>,
    ) -> Result<Vec<Event>, MarketError> {
        Ok(self.send(command, None, tell).await?.events)
    }

    /// Places an order together with what the server stores beside it.
    pub async fn place(&self, command: Command, meta: OrderMeta) -> Result<Committed, MarketError> {
        self.send(command, Some(Box::new(meta)), Vec::new()).await
    }

    /// A follower's command, on the leader: applied by this replica's
    /// engine, or refused as [`MarketError::NoLeader`] if it does not lead.
    pub async fn apply_here(
        &self,
        command: Command,
        meta: Option<OrderMeta>,
        tell: Vec<crate::events::NewEvent>,
    ) -> Result<Committed, MarketError> {
        self.request(command, meta.map(Box::new), tell, true).await
    }

    async fn send(
        &self,
        command: Command,
        meta: Option<Box<OrderMeta>>,
        tell: Vec<crate::events::NewEvent>,
    ) -> Result<Committed, MarketError> {
        self.request(command, meta, tell, false).await
    }

    async fn request(
        &self,
        command: Command,
        meta: Option<Box<OrderMeta>>,
        tell: Vec<crate::events::NewEvent>,
        here: bool,
    ) -> Result<Committed, MarketError> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Request::Command {
                command: Box::new(command),
                meta,
                tell,
                here,
                reply,
            })
            .await
            .map_err(|_| MarketError::Unavailable)?;
        rx.await.map_err(|_| MarketError::Unavailable)?
    }

    /// Stops the task after what was sent before; afterwards every command
    /// is refused as `Unavailable` and the clock stops with it. A server
    /// whose database is closing must stop its market first: the task would
    /// otherwise keep ticking and writing on the SQLite writer, beside the
    /// next server on the same file.
    pub async fn stop(&self) {
        let (done, stopped) = oneshot::channel();
        if self.tx.send(Request::Stop(done)).await.is_ok() {
            let _ = stopped.await;
        }
    }

    /// Runs a read-only query against the engine's current state.
    pub async fn read<R: Send + 'static>(
        &self,
        query: impl FnOnce(&Engine) -> R + Send + 'static,
    ) -> Result<R, MarketError> {
        let (tx, rx) = oneshot::channel();
        let job = Box::new(move |engine: &Engine| {
            let _ = tx.send(query(engine));
        });
        self.tx
            .send(Request::Read(job))
            .await
            .map_err(|_| MarketError::Unavailable)?;
        rx.await.map_err(|_| MarketError::Unavailable)
    }
}

impl MarketHandle {
    /// Runs a query that tries placements on the engine and leaves it as
    /// it was (a quote of several units); only such queries belong here.
    pub async fn trial<R: Send + 'static>(
        &self,
        query: impl FnOnce(&mut Engine) -> R + Send + 'static,
    ) -> Result<R, MarketError> {
        let (tx, rx) = oneshot::channel();
        let job = Box::new(move |engine: &mut Engine| {
            let _ = tx.send(query(engine));
        });
        self.tx
            .send(Request::Trial(job))
            .await
            .map_err(|_| MarketError::Unavailable)?;
        rx.await.map_err(|_| MarketError::Unavailable)
    }
}

/// Billing's view of the market: the TCO calculator's supply and the budget
/// watcher's notices.
impl crate::billing::MarketPort for MarketHandle {
    fn supplied_regions(
        &self,
        model: &'static str,
    ) -> BoxFuture<'_, Result<BTreeSet<String>, ApiError>> {
        Box::pin(async move {
            Ok(self
                .read(move |engine| engine.supplied_regions(model))
                .await?)
        })
    }

    fn command_telling(
        &self,
        command: Command,
        tell: Vec<crate::events::NewEvent>,
    ) -> BoxFuture<'_, anyhow::Result<()>> {
        Box::pin(async move {
            MarketHandle::command_telling(self, command, tell).await?;
            Ok(())
        })
    }
}
