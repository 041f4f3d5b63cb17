//! A follower's engine commands, handed to the leader over HTTP.
//!
//! `POST /internal/market/command` on the leader's advertised address,
//! signed for the leader's epoch ([`super::internal`]). The leader applies the command through
//! its own engine task and answers once it committed, so a follower's reply
//! means what the leader's would. A call that never reached the leader (no
//! leader known, connection refused, the leader not leading any more) is
//! tried again until [`FORWARD_WITHIN`]; one whose fate is unknown (sent,
//! then the connection broke) is answered 503: the buyer's retry with the
//! same `Idempotency-Key` finds the order if it was placed.

use super::internal::{Refused, Stamp};
use super::{Cluster, ClusterState, Role};
use crate::engine::{Command, EngineError, Event};
use crate::error::ApiError;
use crate::market::{MarketError, OrderMeta};
use axum::extract::{FromRef, Request, State};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::time::Duration;
use tokio::time::Instant;

/// The internal route (not in the public OpenAPI).
pub const PATH: &str = "/internal/market/command";

/// How long one call to the leader may take.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(20);

/// How long a follower keeps looking for a leader that takes the command.
const FORWARD_WITHIN: Duration = Duration::from_secs(8);

/// A command on its way to the leader.
#[derive(Debug, Serialize, Deserialize)]
pub struct Forwarded {
    pub command: WireCommand,
    pub meta: Option<OrderMeta>,
    pub tell: Vec<crate::events::NewEvent>,
}

/// A [`Command`] on the wire. The engine tags its commands inside the
/// object (`{"command": "cancel", …}`), which serde cannot do for the two
/// that carry a bare list: those travel tagged from outside.
#[derive(Debug, Serialize, Deserialize)]
pub enum WireCommand {
    SetPrices(Vec<crate::engine::ListPrice>),
    SetForecast(Vec<crate::engine::DemandForecast>),
    Other(Box<Command>),
}

impl From<Command> for WireCommand {
    fn from(command: Command) -> WireCommand {
        match command {
            Command::SetPrices(prices) => WireCommand::SetPrices(prices),
            Command::SetForecast(forecast) => WireCommand::SetForecast(forecast),
            other => WireCommand::Other(Box::new(other)),
        }
    }
}

impl From<WireCommand> for Command {
    fn from(wire: WireCommand) -> Command {
        match wire {
            WireCommand::SetPrices(prices) => Command::SetPrices(prices),
            WireCommand::SetForecast(forecast) => Command::SetForecast(forecast),
            WireCommand::Other(command) => *command,
        }
    }
}

/// The leader's answer.
#[derive(Debug, Serialize, Deserialize)]
pub enum Answer {
    Committed {
        events: Vec<Event>,
        at: DateTime<Utc>,
    },
    Refused(Refusal),
}

/// A [`MarketError`] on the wire.
#[derive(Debug, Serialize, Deserialize)]
pub enum Refusal {
    Engine(EngineError),
    AlreadyPlaced(uuid::Uuid),
    IdempotencyKeyReused,
    DuplicateClientOrderId {
        client_order_id: String,
        existing: uuid::Uuid,
    },
    Panicked,
    /// Not leading, shutting down, or the batch was not committed: nothing
    /// of the command was kept, so it may go to the next leader.
    NotApplied,
    Storage(String),
}

impl From<MarketError> for Refusal {
    fn from(e: MarketError) -> Refusal {
        match e {
            MarketError::Engine(e) => Refusal::Engine(e),
            MarketError::AlreadyPlaced(id) => Refusal::AlreadyPlaced(id),
            MarketError::IdempotencyKeyReused => Refusal::IdempotencyKeyReused,
            MarketError::DuplicateClientOrderId {
                client_order_id,
                existing,
            } => Refusal::DuplicateClientOrderId {
                client_order_id,
                existing,
            },
            MarketError::Panicked => Refusal::Panicked,
            MarketError::Unavailable | MarketError::NoLeader | MarketError::NotCommitted => {
                Refusal::NotApplied
            }
            MarketError::Storage(e) => Refusal::Storage(format!("{e:#}")),
        }
    }
}

impl From<Refusal> for MarketError {
    fn from(r: Refusal) -> MarketError {
        match r {
            Refusal::Engine(e) => MarketError::Engine(e),
            Refusal::AlreadyPlaced(id) => MarketError::AlreadyPlaced(id),
            Refusal::IdempotencyKeyReused => MarketError::IdempotencyKeyReused,
            Refusal::DuplicateClientOrderId {
                client_order_id,
                existing,
            } => MarketError::DuplicateClientOrderId {
                client_order_id,
                existing,
            },
            Refusal::Panicked => MarketError::Panicked,
            Refusal::NotApplied => MarketError::NoLeader,
            Refusal::Storage(e) => MarketError::Storage(anyhow::anyhow!("the leader failed: {e}")),
        }
    }
}

/// Hands `forwarded` to the leader; its events once committed there.
/// [`Forwarding::LeadingHere`] when this replica itself took the lead
/// meanwhile: the command, applied nowhere yet, is for its own engine.
pub async fn to_leader(cluster: &Cluster, forwarded: &Forwarded) -> Forwarding {
    let deadline = Instant::now() + FORWARD_WITHIN;
    let mut role = cluster.watch();
    loop {
        let leader = match &*role.borrow_and_update() {
            Role::Follower {
                leader_url: Some(url),
                leader_epoch: Some(epoch),
            } => Some((url.clone(), *epoch)),
            Role::Leader { .. } => return Forwarding::LeadingHere,
            _ => None,
        };
        if let Some((url, epoch)) = leader {
            match call(cluster, &url, epoch, forwarded).await {
                Call::Answered(Answer::Committed { events, at }) => {
                    return Forwarding::Done(Ok((events, at)))
                }
                Call::Answered(Answer::Refused(Refusal::NotApplied)) | Call::Unsent => {}
                Call::Answered(Answer::Refused(refusal)) => {
                    return Forwarding::Done(Err(refusal.into()))
                }
                Call::Unknown => return Forwarding::Done(Err(MarketError::NoLeader)),
            }
        }
        // Until the election names another leader, or a little while.
        let wait = tokio::time::sleep(Duration::from_millis(200));
        tokio::select! {
            _ = role.changed() => {}
            () = wait => {}
        }
        if Instant::now() >= deadline {
            return Forwarding::Done(Err(MarketError::NoLeader));
        }
    }
}

/// How handing a command to the leader ended.
pub enum Forwarding {
    /// The leader's answer: its events once committed, or why not.
    Done(Result<(Vec<Event>, DateTime<Utc>), MarketError>),
    /// This replica leads now.
    LeadingHere,
}

/// How a call to the leader went.
enum Call {
    Answered(Answer),
    /// It did not reach a leader that took it: it may go again.
    Unsent,
    /// Sent, and then lost: whether the leader applied it is unknown.
    Unknown,
}

async fn call(cluster: &Cluster, url: &str, epoch: i64, forwarded: &Forwarded) -> Call {
    let Some(key) = cluster.key() else {
        // A single process leads, and never forwards.
        return Call::Unsent;
    };
    let body = match serde_json::to_vec(forwarded) {
        Ok(body) => body,
        Err(e) => {
            // Never sent: a command the wire form cannot carry is a bug here.
            tracing::error!(error = %e, "a command could not be written for the leader");
            return Call::Unknown;
        }
    };
    let mut request = cluster
        .client
        .post(format!("{}{PATH}", url.trim_end_matches('/')))
        .header(CONTENT_TYPE, "application/json");
    for (name, value) in key.sign(epoch, "POST", PATH, &body, Utc::now().timestamp()) {
        request = request.header(name, value);
    }
    let response = match request.body(body).send().await {
        Ok(response) => response,
        Err(e) if e.is_connect() => return Call::Unsent,
        Err(e) if e.is_builder() => {
            tracing::error!(error = %e, "a command could not be written for the leader");
            return Call::Unknown;
        }
        Err(e) => {
            tracing::warn!(error = %e, "a command handed to the leader has no answer");
            return Call::Unknown;
        }
    };
    if response.status() == StatusCode::SERVICE_UNAVAILABLE {
        return Call::Unsent;
    }
    if response.status() == StatusCode::CONFLICT {
        // Another epoch leads now: the election tells us which.
        return Call::Unsent;
    }
    if !response.status().is_success() {
        // A replica that does not take our key (another database?), or a
        // clock more than 30 s off.
        tracing::warn!(status = %response.status(), "the leader refused an internal call");
        return Call::Unsent;
    }
    match response.json::<Answer>().await {
        Ok(answer) => Call::Answered(answer),
        Err(e) => {
            tracing::warn!(error = %e, "the leader's answer was cut off");
            Call::Unknown
        }
    }
}

/// The leader's side: apply a follower's command here, never forwarding it
/// on (a replica that does not lead answers 503, and the follower tries
/// the next leader).
///
/// The order of the checks is the point (ARCHITECTURE.md §19): the headers alone
/// (key, timestamp, nonce, epoch) before a byte of the body is read, so a
/// stranger's request costs nothing but its headers; then a bounded body
/// and its MAC; only then the nonce is recorded and the body parsed.
pub async fn apply(State(state): State<ClusterState>, request: Request) -> Response {
    match authenticated(&state, request).await {
        Ok(forwarded) => run(&state, forwarded).await,
        Err(e) => e.into_response(),
    }
}

async fn authenticated(state: &ClusterState, request: Request) -> Result<Forwarded, ApiError> {
    let cluster = &state.cluster;
    let now = Utc::now().timestamp();
    let (parts, body) = request.into_parts();
    let stamp = Stamp::from_headers(&parts.headers, cluster.key(), now).map_err(refused)?;
    // A message for epoch E is refused by every other epoch, and by a
    // replica that leads none; the follower that sent it asks the election
    // again and tries the leader it names.
    if !matches!(cluster.role(), Role::Leader { epoch: Some(epoch) } if epoch == stamp.epoch) {
        return Err(ApiError::Refused {
            status: StatusCode::CONFLICT,
            code: "wrong_epoch",
            detail: format!("this replica does not lead epoch {}", stamp.epoch),
        });
    }
    if cluster.nonces().seen(&stamp) {
        return Err(refused(Refused::Replayed));
    }
    let limit = max_body(state.settings.body_limit);
    let declared = parts
        .headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large(limit));
    }
    let bytes = axum::body::to_bytes(body, limit)
        .await
        .map_err(|_| too_large(limit))?;
    let key = cluster.key().ok_or_else(|| refused(Refused::UnknownKey))?;
    if !key.verify(
        &stamp,
        &parts.headers,
        parts.method.as_str(),
        parts.uri.path(),
        &bytes,
    ) {
        return Err(refused(Refused::BadSignature));
    }
    if !cluster.nonces().admit(&stamp, now) {
        return Err(refused(Refused::Replayed));
    }
    serde_json::from_slice(&bytes).map_err(|e| ApiError::Malformed {
        detail: format!("the internal call's body is not a command: {e}"),
        errors: vec![],
    })
}

/// 401 for a message that does not prove its sender, 409 for a replay.
fn refused(why: Refused) -> ApiError {
    match why {
        Refused::Replayed => ApiError::Refused {
            status: StatusCode::CONFLICT,
            code: "replayed",
            detail: why.detail(),
        },
        _ => ApiError::Unauthorized(why.detail()),
    }
}

fn not_leading() -> ApiError {
    ApiError::Refused {
        status: StatusCode::SERVICE_UNAVAILABLE,
        code: "not_leading",
        detail: "this replica does not lead the market".into(),
    }
}

fn too_large(limit: usize) -> ApiError {
    ApiError::Refused {
        status: StatusCode::PAYLOAD_TOO_LARGE,
        code: "payload_too_large",
        detail: format!("an internal call's body is at most {limit} bytes"),
    }
}

async fn run(state: &ClusterState, forwarded: Forwarded) -> Response {
    let outcome = state
        .market
        .apply_here(forwarded.command.into(), forwarded.meta, forwarded.tell)
        .await;
    let answer = match outcome {
        Ok(committed) => Answer::Committed {
            events: committed.events,
            at: committed.at,
        },
        Err(MarketError::NoLeader | MarketError::Unavailable) => {
            return not_leading().into_response()
        }
        Err(e) => Answer::Refused(e.into()),
    };
    Json(answer).into_response()
}

/// The internal routes, outside the public API's rate limits (a follower's
/// calls all come from one address) and its OpenAPI.
pub fn router<S>() -> axum::Router<S>
where
    S: Clone + Send + Sync + 'static,
    ClusterState: FromRef<S>,
{
    axum::Router::new().route(PATH, axum::routing::post(apply))
}

/// The largest internal body: a forwarded order carries the buyer's body
/// escaped inside its own, so it may be several times the public
/// `body_limit`.
pub fn max_body(body_limit: usize) -> usize {
    body_limit.saturating_mul(FORWARDED_BODY_FACTOR)
}

/// How much larger than a public body a forwarded command may be: JSON
/// escaping at most doubles the request, the order's other fields add little.
const FORWARDED_BODY_FACTOR: usize = 4;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ListPrice;

    /// Every command shape crosses the wire and comes back equal.
    #[test]
    fn commands_with_bare_lists_and_the_others_survive_the_wire() {
        let commands = [
            Command::SetPrices(vec![ListPrice {
                region: "eu-west".into(),
                gpu_model: "H100-SXM5-80GB".into(),
                unit: crate::catalog::Unit::TflopsH,
                list_price: rust_decimal::Decimal::new(12, 3),
            }]),
            Command::SetForecast(Vec::new()),
            Command::Tick,
            Command::Cancel {
                order_id: uuid::Uuid::nil(),
            },
        ];
        for command in commands {
            let forwarded = Forwarded {
                command: command.clone().into(),
                meta: None,
                tell: Vec::new(),
            };
            let json = serde_json::to_string(&forwarded).expect("serializes");
            let back: Forwarded = serde_json::from_str(&json).expect("deserializes");
            assert_eq!(Command::from(back.command), command);
        }
    }
}
