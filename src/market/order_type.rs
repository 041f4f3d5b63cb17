//! Order types (ARCHITECTURE.md §22): `time_in_force` in traders' terms
//! for `max_wait_s`, and `count` units placed together.

use super::order_request::{OrderRequest, Qos, MAX_WAIT_S};
use crate::engine;
use crate::error::FieldError;
use crate::pricing::Mode;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// How long an order stands (ARCHITECTURE.md §22, "Order types"), the
/// traders' names for `max_wait_s`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TimeInForce {
    /// Good till cancelled: waits for capacity up to 7 days.
    Gtc,
    /// Immediate or cancel: fills what it can now (at least `min_count`
    /// units), or is refused.
    Ioc,
    /// Fill or kill: every unit now, or nothing.
    Fok,
    /// Good till time: waits until `expires_at`.
    Gtt,
}

/// An order's type as its fills report it (ARCHITECTURE.md §22).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct OrderType {
    /// As the order named it, else from `max_wait_s` (none or 0: `ioc`,
    /// more: `gtt`); absent on spot bids, which stay until cancelled.
    pub time_in_force: Option<TimeInForce>,
    /// Until when a `gtt` order waited.
    pub expires_at: Option<DateTime<Utc>>,
    /// Units asked.
    pub count: u32,
    /// The fewest units it would take (`count` when all-or-none).
    pub min_count: u32,
}

impl OrderType {
    /// The type of a stored order (its request as placed).
    pub fn of(order: &super::views::OrderView) -> OrderType {
        #[derive(Deserialize)]
        struct Fields {
            max_wait_s: Option<u64>,
            time_in_force: Option<TimeInForce>,
            expires_at: Option<DateTime<Utc>>,
            count: Option<u32>,
            all_or_none: Option<bool>,
            min_count: Option<u32>,
        }
        let f: Fields = serde_json::from_str(order.request.get()).unwrap_or(Fields {
            max_wait_s: None,
            time_in_force: None,
            expires_at: None,
            count: None,
            all_or_none: None,
            min_count: None,
        });
        let waited = |s: u64| {
            let s = i64::try_from(s.min(MAX_WAIT_S)).unwrap_or_default();
            order
                .created_at
                .checked_add_signed(chrono::Duration::seconds(s))
        };
        let (time_in_force, expires_at) = match (order.mode, f.time_in_force, f.max_wait_s) {
            (Mode::Spot, ..) => (None, None),
            (_, Some(TimeInForce::Gtc), _) => (Some(TimeInForce::Gtc), waited(MAX_WAIT_S)),
            (_, Some(TimeInForce::Gtt), _) => (Some(TimeInForce::Gtt), f.expires_at),
            (_, Some(tif), _) => (Some(tif), None),
            (_, None, Some(w)) if w > 0 => (Some(TimeInForce::Gtt), waited(w)),
            (_, None, _) => (Some(TimeInForce::Ioc), None),
        };
        let count = f.count.unwrap_or(1);
        let every = f.all_or_none == Some(true) || time_in_force == Some(TimeInForce::Fok);
        let min_count = if every {
            count
        } else {
            f.min_count.unwrap_or(1)
        };
        OrderType {
            time_in_force,
            expires_at,
            count,
            min_count,
        }
    }
}

impl OrderRequest {
    /// The checks of `time_in_force`, `expires_at`, `count`, `all_or_none`
    /// and `min_count` that need no clock (`expires_at`'s range does: see
    /// [`OrderRequest::wait_s`]).
    pub(super) fn validate_order_type(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        let waits = matches!(
            self.time_in_force,
            Some(TimeInForce::Gtc | TimeInForce::Gtt)
        );
        if self.time_in_force.is_some() && self.max_wait_s.is_some() {
            errors.push(FieldError::new(
                "max_wait_s",
                "give time_in_force or max_wait_s, not both",
            ));
        }
        if waits {
            let why = match (self.mode, self.qos) {
                (Mode::Spot, _) => Some("spot bids stay in the auction until cancelled"),
                (Mode::Reserved, _) => {
                    Some("reserved orders are booked at once or refused: ioc or fok")
                }
                (_, Some(Qos::Realtime)) => Some("realtime orders never wait: ioc or fok"),
                _ => None,
            };
            if let Some(why) = why {
                errors.push(FieldError::new("time_in_force", why));
            }
        } else if self.time_in_force.is_some() && self.mode == Mode::Spot {
            errors.push(FieldError::new(
                "time_in_force",
                "spot bids stay in the auction until cancelled",
            ));
        }
        match (self.time_in_force, self.expires_at) {
            (Some(TimeInForce::Gtt), None) => {
                errors.push(FieldError::new("expires_at", "gtt needs an expires_at"))
            }
            (Some(TimeInForce::Gtt), Some(_)) => {}
            (_, Some(_)) => errors.push(FieldError::new(
                "expires_at",
                "only a gtt order has an expires_at",
            )),
            _ => {}
        }
        let count = self.count.unwrap_or(1);
        if !(1..=engine::Gang::MAX_COUNT).contains(&count) {
            errors.push(FieldError::new("count", "must be between 1 and 64"));
        } else if count > 1 && matches!(self.mode, Mode::Spot | Mode::Reserved) {
            errors.push(FieldError::new(
                "count",
                "units are placed together on capacity free now: on_demand or pooled",
            ));
        }
        if let Some(min) = self.min_count {
            if self.all_or_none == Some(true) {
                errors.push(FieldError::new(
                    "min_count",
                    "all_or_none places every unit: give one of the two",
                ));
            } else if !(1..=count).contains(&min) {
                errors.push(FieldError::new("min_count", "must be between 1 and count"));
            } else if self.time_in_force == Some(TimeInForce::Fok) && min < count {
                errors.push(FieldError::new("min_count", "fok fills every unit or none"));
            }
        }
        errors
    }

    /// How long the order waits, from `time_in_force` (checked against
    /// `now`) or `max_wait_s`.
    pub(super) fn wait_s(&self, now: DateTime<Utc>) -> Result<Option<u64>, FieldError> {
        Ok(match self.time_in_force {
            None => self.max_wait_s,
            Some(TimeInForce::Ioc | TimeInForce::Fok) => Some(0),
            Some(TimeInForce::Gtc) => Some(MAX_WAIT_S),
            Some(TimeInForce::Gtt) => {
                let expires = self.expires_at.unwrap_or(now);
                let wait = (expires - now).num_seconds();
                match u64::try_from(wait) {
                    Ok(w) if (1..=MAX_WAIT_S).contains(&w) => Some(w),
                    _ => {
                        return Err(FieldError::new(
                            "expires_at",
                            "must be in the future, within 7 days",
                        ))
                    }
                }
            }
        })
    }

    /// The order's units placed together, when it asks for more than one
    /// or for a minimum.
    pub(super) fn gang(&self) -> Option<engine::Gang> {
        let count = self.count.unwrap_or(1);
        let every = self.all_or_none == Some(true) || self.time_in_force == Some(TimeInForce::Fok);
        let min_count = if every {
            count
        } else {
            self.min_count.unwrap_or(1)
        };
        (count > 1).then_some(engine::Gang { count, min_count })
    }

    /// The units the order asks for.
    pub(crate) fn units(&self) -> u32 {
        self.count.unwrap_or(1)
    }
}
