//! The public market stream route.

use super::feed::FeedEvent;
use crate::error::{ApiError, Problem, Query};
use crate::market::MarketState;
use axum::extract::{FromRef, State};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures::Stream;
use serde::Deserialize;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::{self, error::RecvError};
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    MarketState: FromRef<S>,
{
    OpenApiRouter::new().routes(routes!(market_stream))
}

/// A comment line this often keeps proxies from closing an idle stream.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct MarketStreamQuery {
    /// Only this GPU model's events.
    #[param(min_length = 1, max_length = 64)]
    pub gpu_model: Option<String>,
    /// Only this region's events.
    #[param(min_length = 1, max_length = 64)]
    pub region: Option<String>,
}

impl MarketStreamQuery {
    fn wants(&self, event: &FeedEvent) -> bool {
        self.gpu_model
            .as_ref()
            .is_none_or(|m| *m == event.gpu_model)
            && self.region.as_ref().is_none_or(|r| *r == event.region)
    }
}

/// Spot clearings, list price changes and book depth as Server-Sent
/// Events (public). `event: clearing` at every auction, per market:
/// `{gpu_model, region, clearing_index, unit_prices: {tflops_h, vram_h},
/// volume: {tflops, vram}, at}`. `event: price` when the admin sets a list
/// price: the price as `GET /v1/prices` shows it. `event: book` when a
/// market's book changed, at most once a second per market: the market's
/// entry as `GET /v1/market/book` shows it (an entry with no GPUs and no
/// bids when it left the book). A comment line comes every 15 s. There is
/// no replay: a client that falls 1,024 events behind is disconnected and
/// reconnects (reading `GET /v1/market/book` for the current state).
#[utoipa::path(get, path = "/v1/market/stream", tag = "market", params(MarketStreamQuery),
    responses(
        (status = 200, description = "An endless stream of market events", content_type = "text/event-stream", body = String),
        (status = 422, description = "An invalid filter", body = Problem, content_type = "application/problem+json"),
    ))]
async fn market_stream(
    State(state): State<MarketState>,
    Query(q): Query<MarketStreamQuery>,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    for (field, value) in [
        ("query.gpu_model", &q.gpu_model),
        ("query.region", &q.region),
    ] {
        if value
            .as_ref()
            .is_some_and(|v| v.is_empty() || v.chars().count() > 64)
        {
            return Err(ApiError::field(field, "must be 1 to 64 characters"));
        }
    }
    let live = state.market_feed.subscribe();
    let stream = futures::stream::unfold((live, q), |(mut live, q)| async move {
        let event = next_wanted(&mut live, &q).await?;
        let sse = SseEvent::default()
            .event(event.kind.as_str())
            .data(&event.json);
        Some((Ok(sse), (live, q)))
    });
    let stream = futures::StreamExt::take_until(stream, state.market_feed.closed());
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(KEEP_ALIVE)))
}

/// The next event the stream's filter lets through; `None` ends the stream:
/// the feed is gone, or the stream lagged (it reconnects and reads the book afresh).
async fn next_wanted(
    live: &mut broadcast::Receiver<Arc<FeedEvent>>,
    q: &MarketStreamQuery,
) -> Option<Arc<FeedEvent>> {
    loop {
        match live.recv().await {
            Ok(event) if q.wants(&event) => return Some(event),
            Ok(_) => continue,
            Err(RecvError::Lagged(missed)) => {
                tracing::debug!(missed, "a market stream fell behind; it is dropped");
                return None;
            }
            Err(RecvError::Closed) => return None,
        }
    }
}
