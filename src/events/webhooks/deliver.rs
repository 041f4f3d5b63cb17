//! The deliverer: POSTs each pending delivery, at least once, in order per
//! endpoint (an endpoint's oldest pending delivery blocks its later ones),
//! several endpoints at a time. Anything but a 2xx is tried again with
//! exponential backoff and jitter until 24 h after the event, then the
//! delivery is failed and its endpoint moves on. Every attempt is a row, so
//! a restart picks up where the last run stopped.

use super::address::{self, PublicOnly};
use super::sign;
use super::store::{self, Attempt, Due};
use super::DeliveryState;
use crate::db::Db;
use chrono::{DateTime, Utc};
use prometheus::IntCounterVec;
use rand::Rng;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a receiver has to answer.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// How long a delivery being sent is not due for anyone else: past the
/// timeout, so only a crashed sender's claim ever lapses.
const CLAIM: chrono::Duration = chrono::Duration::seconds(30);

/// Endpoints delivered to at once.
pub const CONCURRENCY: usize = 16;

/// The first retry waits about this long; each next one twice as long.
const BACKOFF_BASE: Duration = Duration::from_secs(1);

/// No retry waits longer.
const BACKOFF_CAP: Duration = Duration::from_secs(3600);

/// How long after its event a delivery is still tried.
pub const GIVE_UP_AFTER: chrono::Duration = chrono::Duration::hours(24);

/// How long to wait before try `attempt + 1`, after `attempt` failed tries:
/// half the exponential step, plus a random part of the other half, so
/// receivers that failed together are not all retried together.
pub fn backoff(attempt: u32) -> Duration {
    let step = BACKOFF_BASE
        .saturating_mul(2u32.saturating_pow(attempt.saturating_sub(1)))
        .min(BACKOFF_CAP);
    let half = step / 2;
    half + half.mul_f64(rand::thread_rng().gen_range(0.0..=1.0))
}

/// Sends deliveries; shared by the tasks of each endpoint in flight.
pub struct Deliverer {
    db: Db,
    client: reqwest::Client,
    allow_private: bool,
    outcomes: IntCounterVec,
}

impl Deliverer {
    pub fn new(db: Db, allow_private: bool, outcomes: IntCounterVec) -> anyhow::Result<Deliverer> {
        let client = reqwest::Client::builder()
            .timeout(TIMEOUT)
            // A redirect could lead anywhere, a private address included.
            .redirect(reqwest::redirect::Policy::none())
            // Through a proxy, the resolver would check the proxy, not the receiver.
            .no_proxy()
            .dns_resolver(Arc::new(PublicOnly { allow_private }))
            .user_agent(concat!("gpuex-webhooks/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Deliverer {
            db,
            client,
            allow_private,
            outcomes,
        })
    }

    /// Tries `due` once and records the attempt and what follows.
    pub async fn attempt(self: Arc<Self>, due: Due) {
        let at = Utc::now();
        match store::claim(&self.db, due.id, at, at + CLAIM).await {
            Ok(true) => {}
            // Another replica took it first.
            Ok(false) => return,
            Err(e) => {
                tracing::warn!(error = %e, delivery = due.id, "could not claim a webhook delivery");
                return;
            }
        }
        let started = Instant::now();
        let result = self.post(&due).await;
        let attempt = Attempt {
            at,
            status: result.as_ref().ok().copied(),
            error: result.as_ref().err().cloned(),
            duration_ms: i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX),
        };
        let tries = u32::try_from(due.attempts).unwrap_or(0).saturating_add(1);
        let (state, next_at) = next_step(&result, tries, due.event_at, Utc::now());
        let outcome = match state {
            DeliveryState::Delivered => "delivered",
            DeliveryState::Pending => "retried",
            DeliveryState::Failed => "failed",
        };
        if let Err(e) = store::record(&self.db, due.id, &attempt, state, next_at).await {
            // The delivery stays pending as it was: it is tried again.
            tracing::warn!(error = %e, delivery = due.id, "could not record a webhook attempt");
            return;
        }
        self.outcomes.with_label_values(&[outcome]).inc();
        if state == DeliveryState::Failed {
            tracing::info!(delivery = due.id, url = %due.url, "webhook delivery failed for good");
        }
    }

    /// POSTs the event: the receiver's status, or why there was none.
    async fn post(&self, due: &Due) -> Result<u16, String> {
        let url = address::parse(&due.url).map_err(|e| e.to_string())?;
        // The resolver checks names; an address in the URL is never resolved.
        if let Some(ip) = address::literal_ip(&url) {
            if !self.allow_private && address::is_private(ip) {
                return Err(address::Refused::Private.to_string());
            }
        }
        let secret = store::secret_of(&self.db, due)
            .await
            .map_err(|_| "could not read the signing secret".to_owned())?
            .ok_or_else(|| "no signing secret".to_owned())?;
        let t = Utc::now().timestamp();
        let response = self
            .client
            .post(url)
            .header("Gpuex-Signature", sign::signature(&secret, t, &due.body))
            .header("Gpuex-Event-Id", due.event_id.to_string())
            .header("Gpuex-Event-Type", due.event_type.0.as_str())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(due.body.clone())
            .send()
            .await
            .map_err(|e| describe(&e))?;
        Ok(response.status().as_u16())
    }
}

/// What follows an attempt: delivered on a 2xx; otherwise pending again
/// after [`backoff`], or failed when that would pass [`GIVE_UP_AFTER`].
pub fn next_step(
    result: &Result<u16, String>,
    tries: u32,
    event_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> (DeliveryState, DateTime<Utc>) {
    if matches!(result, Ok(status) if (200..300).contains(status)) {
        return (DeliveryState::Delivered, now);
    }
    let wait = chrono::Duration::from_std(backoff(tries)).unwrap_or(GIVE_UP_AFTER);
    let next = now + wait;
    if next > event_at + GIVE_UP_AFTER {
        (DeliveryState::Failed, now)
    } else {
        (DeliveryState::Pending, next)
    }
}

/// A send error in words, without reqwest's nesting of causes.
fn describe(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else {
        "request failed"
    };
    let mut detail = String::new();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        detail = s.to_string();
        source = s.source();
    }
    if detail.is_empty() {
        kind.to_owned()
    } else {
        format!("{kind}: {detail}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_up_to_an_hour() {
        for attempt in 1..40 {
            let step = BACKOFF_BASE
                .saturating_mul(2u32.saturating_pow(attempt - 1))
                .min(BACKOFF_CAP);
            let wait = backoff(attempt);
            assert!(wait >= step / 2 && wait <= step, "{attempt}: {wait:?}");
        }
        assert!(backoff(100) <= BACKOFF_CAP);
    }

    #[test]
    fn a_2xx_delivers_and_anything_else_retries_until_a_day_has_passed() {
        let event_at = Utc::now();
        assert_eq!(
            next_step(&Ok(204), 1, event_at, event_at).0,
            DeliveryState::Delivered
        );
        for failure in [Ok(500), Ok(301), Ok(404), Err("timed out".to_owned())] {
            let (state, next) = next_step(&failure, 1, event_at, event_at);
            assert_eq!(state, DeliveryState::Pending);
            assert!(next > event_at);
            let late = event_at + GIVE_UP_AFTER - chrono::Duration::seconds(1);
            assert_eq!(
                next_step(&failure, 20, event_at, late).0,
                DeliveryState::Failed
            );
        }
    }
}
