//! `GET /v1/events` (a page) and `GET /v1/events/stream` (Server-Sent Events).

use super::hub::Published;
use super::store;
use super::EventHub;
use super::EventPage;
use crate::auth::{Caller, Role, RouterState};
use crate::config::Settings;
use crate::db::Db;
use crate::error::responses::InvalidQuery;
use crate::error::{ApiError, Json, Problem, Query};
use crate::metrics::Metrics;
use crate::page::Limit;
use axum::extract::{FromRef, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures::Stream;
use serde::Deserialize;
use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::{self, error::RecvError};
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

/// What the events' routes and the webhook worker use.
#[derive(Clone)]
pub struct EventsState {
    pub db: Db,
    pub settings: Arc<Settings>,
    /// Hands each committed event to its user's open streams.
    pub events: EventHub,
    pub metrics: Arc<Metrics>,
}

pub fn router<S: RouterState>() -> OpenApiRouter<S>
where
    EventsState: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(events_page))
        .routes(routes!(events_stream))
}

/// Who may hear events: every account, not the agents.
const LISTENERS: &[Role] = &[Role::Buyer, Role::Provider, Role::Admin];

/// A comment line sent this often keeps proxies from closing an idle stream.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// Only events after this id (`next_after` of the previous page); `0`
    /// or absent: from the oldest kept.
    #[param(minimum = 0)]
    pub after: Option<i64>,
    /// Page size, 1 to 500 (default 100).
    #[serde(default)]
    #[param(value_type = Option<u32>, minimum = 1, maximum = 500)]
    pub limit: Limit<500, 100>,
}

fn after_of(after: Option<i64>, field: &str) -> Result<i64, ApiError> {
    match after {
        Some(id) if id < 0 => Err(ApiError::field(field, "must be 0 or more")),
        Some(id) => Ok(id),
        None => Ok(0),
    }
}

/// The caller's events, oldest first (ARCHITECTURE.md §15).
#[utoipa::path(get, path = "/v1/events", tag = "events", security(("bearer" = [])),
    params(EventsQuery),
    responses(
        (status = 200, description = "A page of the caller's events", body = EventPage),
        (status = 403, description = "Node tokens have no events", body = Problem, content_type = "application/problem+json"),
        InvalidQuery,
    ))]
async fn events_page(
    State(state): State<EventsState>,
    caller: Caller,
    Query(q): Query<EventsQuery>,
) -> Result<Json<EventPage>, ApiError> {
    caller.require(LISTENERS)?;
    let after = after_of(q.after, "query.after")?;
    let limit = q.limit.get();
    let mut items = store::page(&state.db, caller.id, after, limit + 1).await?;
    let has_more = items.len() > limit as usize;
    items.truncate(limit as usize);
    let next_after = items.last().map_or(after, |e| e.id);
    Ok(Json(EventPage {
        items,
        next_after,
        has_more,
    }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct StreamQuery {
    /// Resume after this id, as `Last-Event-ID` does (the header wins when
    /// both are sent). Absent: events from now on.
    #[param(minimum = 0)]
    pub after: Option<i64>,
}

/// `Last-Event-ID`, the id an `EventSource` resumes after.
fn last_event_id(headers: &HeaderMap) -> Result<Option<i64>, ApiError> {
    const FIELD: &str = "header.last-event-id";
    let Some(value) = headers.get("last-event-id") else {
        return Ok(None);
    };
    let id = value
        .to_str()
        .ok()
        .and_then(|v| v.trim().parse::<i64>().ok())
        .ok_or_else(|| ApiError::field(FIELD, "must be an event id"))?;
    after_of(Some(id), FIELD).map(Some)
}

/// The caller's events as Server-Sent Events (ARCHITECTURE.md §15): each is
/// `id: <id>`, `event: <type>`, `data: <the event as GET /v1/events shows
/// it>`. Resume with `Last-Event-ID` (or `?after=`): nothing is missed or
/// repeated. A comment line comes every 15 s. A client that falls 256 of
/// its events behind is disconnected and resumes where it was; the stream
/// also ends when the access token expires.
#[utoipa::path(get, path = "/v1/events/stream", tag = "events", security(("bearer" = [])),
    params(
        StreamQuery,
        ("Last-Event-ID" = Option<i64>, Header, description = "Resume after this event id", minimum = 0),
    ),
    responses(
        (status = 200, description = "An endless stream of the caller's events", content_type = "text/event-stream", body = String),
        (status = 403, description = "Node tokens have no events", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid `after` or `Last-Event-ID`", body = Problem, content_type = "application/problem+json"),
    ))]
async fn events_stream(
    State(state): State<EventsState>,
    caller: Caller,
    headers: HeaderMap,
    Query(q): Query<StreamQuery>,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    caller.require(LISTENERS)?;
    let resume = match last_event_id(&headers)? {
        Some(id) => Some(id),
        None => q
            .after
            .map(|id| after_of(Some(id), "query.after"))
            .transpose()?,
    };
    // Subscribed before the backlog is read: whatever commits meanwhile
    // arrives live, and the ids already sent drop duplicates.
    let live = state.events.subscribe(caller.id);
    let after = resume.unwrap_or_else(|| state.events.current());
    state.metrics.event_streams.inc();
    let follow = Follow {
        _open: OpenStream(state.metrics.event_streams.clone()),
        db: state.db.clone(),
        user: caller.id,
        last: after,
        backlog: VecDeque::new(),
        caught_up: false,
        live,
    };
    let stream = futures::stream::unfold(follow, |mut follow| async move {
        let event = follow.next().await?;
        Some((Ok(sse_event(&event)), follow))
    });
    let until = caller.expires_at.map(|exp| {
        let left = u64::try_from(exp - chrono::Utc::now().timestamp()).unwrap_or(0);
        tokio::time::Instant::now() + Duration::from_secs(left)
    });
    let closed = state.events.closed();
    let stream = futures::StreamExt::take_until(stream, async move {
        let expired = async move {
            match until {
                Some(at) => tokio::time::sleep_until(at).await,
                None => futures::future::pending().await,
            }
        };
        tokio::select! {
            () = expired => {}
            () = closed => {}
        }
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(KEEP_ALIVE)))
}

fn sse_event(event: &Published) -> SseEvent {
    SseEvent::default()
        .id(event.id.to_string())
        .event(event.kind.as_str())
        .data(&event.json)
}

/// Counts a stream in `gpuex_event_streams` while it is open.
struct OpenStream(prometheus::IntGauge);

impl Drop for OpenStream {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// One stream's place: the backlog from the table, then live events.
struct Follow {
    _open: OpenStream,
    db: Db,
    user: Uuid,
    /// The last id sent.
    last: i64,
    backlog: VecDeque<Arc<Published>>,
    caught_up: bool,
    live: broadcast::Receiver<Arc<Published>>,
}

/// Backlog rows read per trip.
const BACKLOG_PAGE: u32 = 256;

impl Follow {
    /// The next event to send; `None` ends the stream.
    async fn next(&mut self) -> Option<Arc<Published>> {
        loop {
            if let Some(event) = self.backlog.pop_front() {
                self.last = event.id;
                return Some(event);
            }
            if !self.caught_up {
                let page = match store::page(&self.db, self.user, self.last, BACKLOG_PAGE).await {
                    Ok(page) => page,
                    Err(e) => {
                        tracing::warn!(error = %e, "an event stream could not read its backlog");
                        return None;
                    }
                };
                self.caught_up = page.len() < BACKLOG_PAGE as usize;
                self.backlog = page.iter().map(|e| Arc::new(Published::of(e))).collect();
                continue;
            }
            match self.live.recv().await {
                Ok(event) if event.id > self.last => {
                    self.last = event.id;
                    return Some(event);
                }
                Ok(_) => {}
                // Too far behind: dropped rather than buffered without
                // bound; the client resumes from its last id.
                Err(RecvError::Lagged(_) | RecvError::Closed) => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::EventType;

    fn published(id: i64, user: Uuid) -> Arc<Published> {
        Arc::new(Published {
            id,
            user_id: user,
            kind: EventType::OrderAccepted,
            json: "{}".into(),
        })
    }

    #[tokio::test]
    async fn a_stream_that_falls_behind_its_channel_is_ended_not_buffered() {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}", dir.path().join("gpuex.db").display());
        let db = Db::connect(&url).await.expect("database");
        let user = Uuid::now_v7();
        let (sender, live) = broadcast::channel(4);
        let mut follow = Follow {
            _open: OpenStream(prometheus::IntGauge::new("streams", "open").expect("gauge")),
            db,
            user,
            last: 0,
            backlog: VecDeque::new(),
            caught_up: true,
            live,
        };
        sender.send(published(1, user)).expect("sent");
        assert_eq!(follow.next().await.map(|e| e.id), Some(1));
        // A duplicate of what was sent is skipped, the next one goes out.
        sender.send(published(1, user)).expect("sent");
        sender.send(published(2, user)).expect("sent");
        assert_eq!(follow.next().await.map(|e| e.id), Some(2));
        // More than the channel holds arrives while the client reads nothing.
        for id in 3..10 {
            sender.send(published(id, user)).expect("sent");
        }
        assert!(
            follow.next().await.is_none(),
            "dropped: the client resumes from id 2"
        );
    }
}
