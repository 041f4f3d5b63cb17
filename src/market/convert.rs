//! `POST /v1/leases/{id}/convert`: change a live lease's mode in place
//! (ARCHITECTURE.md §3 "Mode changes"). The engine decides; this checks the body.

use super::views::{self, LeaseView};
use super::MarketState;
use crate::auth::{Caller, Role, RouterState};
use crate::engine::pricing::RESERVED_LEAD_S;
use crate::engine::{Command, ConvertTo, Mode};
use crate::error::responses::{MalformedJson, NotABuyer};
use crate::error::{ApiError, FieldError, Json, Problem};
use crate::ids::{LeaseId, PathId};
use axum::extract::{FromRef, State};
use chrono::{DateTime, Timelike, Utc};
use rust_decimal::Decimal;
use serde::Deserialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The longest reserved window a conversion books (as orders: 366 days).
const MAX_WINDOW_S: i64 = 31_622_400;

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    MarketState: FromRef<S>,
{
    OpenApiRouter::new().routes(routes!(convert_lease))
}

/// A mode conversion: `{"to": "on_demand"}` for a running spot lease, or
/// `{"to": "reserved", "from": T1, "until": T2}` for an on-demand one.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ConvertRequest {
    /// `on_demand` (from spot) or `reserved` (from on_demand).
    pub to: Mode,
    /// Reserved: the window's start, a whole hour at least 1 h ahead.
    #[serde(default)]
    pub from: Option<DateTime<Utc>>,
    /// Reserved: the window's end, a later whole hour, at most 366 days after `from`.
    #[serde(default)]
    pub until: Option<DateTime<Utc>>,
}

fn whole_hour(t: DateTime<Utc>) -> bool {
    t.timestamp().rem_euclid(3600) == 0 && t.nanosecond() == 0
}

impl ConvertRequest {
    /// The engine's target, or the fields that are wrong.
    fn target(&self, now: DateTime<Utc>) -> Result<ConvertTo, ApiError> {
        match self.to {
            Mode::OnDemand => {
                let mut errors = Vec::new();
                for (field, value) in [("from", self.from), ("until", self.until)] {
                    if value.is_some() {
                        errors.push(FieldError::new(
                            field,
                            "only a conversion to reserved has a window",
                        ));
                    }
                }
                if errors.is_empty() {
                    Ok(ConvertTo::OnDemand)
                } else {
                    Err(ApiError::Invalid(errors))
                }
            }
            Mode::Reserved => {
                let mut errors = Vec::new();
                match self.from {
                    None => errors.push(FieldError::new("from", "a reserved window needs from")),
                    Some(f) if !whole_hour(f) => {
                        errors.push(FieldError::new("from", "must be a whole hour"))
                    }
                    Some(f) if f.timestamp() < now.timestamp() + RESERVED_LEAD_S => {
                        errors.push(FieldError::new("from", "must be at least one hour ahead"))
                    }
                    Some(_) => {}
                }
                match (self.from, self.until) {
                    (_, None) => {
                        errors.push(FieldError::new("until", "a reserved window needs until"))
                    }
                    (_, Some(u)) if !whole_hour(u) => {
                        errors.push(FieldError::new("until", "must be a whole hour"))
                    }
                    (Some(f), Some(u)) if u <= f => {
                        errors.push(FieldError::new("until", "must be after from"))
                    }
                    (Some(f), Some(u)) if u.timestamp() - f.timestamp() > MAX_WINDOW_S => errors
                        .push(FieldError::new(
                            "until",
                            "must be at most 366 days after from",
                        )),
                    _ => {}
                }
                match (self.from, self.until) {
                    (Some(from), Some(until)) if errors.is_empty() => Ok(ConvertTo::Reserved {
                        from: from.timestamp(),
                        until: until.timestamp(),
                    }),
                    _ => Err(ApiError::Invalid(errors)),
                }
            }
            Mode::Spot | Mode::Pooled => Err(ApiError::refused(
                "conversion_not_allowed",
                format!(
                    "a lease converts only to on_demand or reserved, not to {}",
                    self.to
                ),
            )),
        }
    }
}

/// Change a live lease's mode; its slice and workload stay as they are.
///
/// spot → on_demand: while running and not yet noticed; from now on the
/// on-demand price (1.8 × list), never preempted, one hour held ahead.
/// on_demand → reserved: on-demand until `from`, the reserved price
/// (0.85 × list) from `from`, ending at `until`; the reserved part is owed
/// whole and held like any reservation.
/// A lease bought on resale keeps the seller's window as its outer bound:
/// inside it the lease keeps paying the ask (the seller, not the provider,
/// is paid for that time); an `until` past it is refused (409
/// `resale_window`) — buy the time after it as a new order instead.
#[utoipa::path(post, path = "/v1/leases/{id}/convert", tag = "leases", security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "Lease id"), ("Idempotency-Key" = Option<String>, Header, pattern = "^[!-~]{1,255}$", description = "The same key and body return the first answer; another body with it is 422 `idempotency_key_reused`; while the first is under way, 409 `idempotency_key_in_use`")),
    request_body = ConvertRequest,
    responses(
        (status = 200, description = "Converted; `conversions` records it", body = LeaseView),
        MalformedJson,
        NotABuyer,
        (status = 404, description = "No such lease of the caller's", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`lease_ended`, `already_noticed` (the lease is on preemption notice), `slice_booked` (another booking claims the slice before the new end), `resale_window` (a lease bought on resale cannot run past the seller's window: order new capacity for the time after it)", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid fields (`from`, `until`), or refused: `conversion_not_allowed` (not spot → on_demand or on_demand → reserved, or the lease is not running), `invalid_window`, `insufficient_funds`", body = Problem, content_type = "application/problem+json"),
    ))]
async fn convert_lease(
    State(state): State<MarketState>,
    caller: Caller,
    PathId(id): PathId<LeaseId>,
    Json(req): Json<ConvertRequest>,
) -> Result<Json<LeaseView>, ApiError> {
    caller.require(&[Role::Buyer, Role::Admin])?;
    let id = id.uuid();
    views::live_lease(&state.db, caller.id, id).await?;
    let to = req.target(state.settings.clock.now())?;
    // The market task fills in what the wallet can add, inside its batch.
    state
        .market
        .command(Command::Convert {
            lease_id: id,
            to,
            funds_available: Decimal::ZERO,
        })
        .await?;
    Ok(Json(views::lease(&state.db, caller.id, id).await?))
}
