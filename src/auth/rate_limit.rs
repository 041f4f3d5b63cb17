//! Login throttling: failed attempts counted per account and per client address.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Counts failures in a fixed window per key; a key over the limit is refused
/// until its window ends.
pub struct LoginLimiter {
    max_failures: u32,
    window: Duration,
    failures: Mutex<HashMap<String, (Instant, u32)>>,
}

/// Failures allowed per address, relative to the per-account limit: one
/// address may legitimately serve many users (a NAT, an office).
const ADDRESS_FACTOR: u32 = 4;

impl LoginLimiter {
    pub fn new(max_failures: u32, window: Duration) -> Self {
        LoginLimiter {
            max_failures,
            window,
            failures: Mutex::new(HashMap::new()),
        }
    }

    fn keys(email: &str, addr: Option<IpAddr>) -> [(String, u32); 2] {
        [
            (format!("account:{email}"), 1),
            (
                format!("addr:{}", addr.map(|a| a.to_string()).unwrap_or_default()),
                ADDRESS_FACTOR,
            ),
        ]
    }

    /// Seconds to wait when this account or address is locked out.
    pub fn check(&self, email: &str, addr: Option<IpAddr>, now: Instant) -> Option<u64> {
        let failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        Self::keys(email, addr).iter().find_map(|(key, factor)| {
            let (start, count) = failures.get(key)?;
            let elapsed = now.saturating_duration_since(*start);
            (elapsed < self.window && *count >= self.max_failures * factor)
                .then(|| (self.window - elapsed).as_secs().max(1))
        })
    }

    pub fn record_failure(&self, email: &str, addr: Option<IpAddr>, now: Instant) {
        let mut failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        for (key, _) in Self::keys(email, addr) {
            let entry = failures.entry(key).or_insert((now, 0));
            if now.saturating_duration_since(entry.0) >= self.window {
                *entry = (now, 0);
            }
            entry.1 += 1;
        }
        if failures.len() > 100_000 {
            let window = self.window;
            failures.retain(|_, (start, _)| now.saturating_duration_since(*start) < window);
        }
    }

    pub fn record_success(&self, email: &str) {
        let mut failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        failures.remove(&format!("account:{email}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_account_is_locked_after_the_allowed_failures_and_freed_after_the_window() {
        let limiter = LoginLimiter::new(2, Duration::from_secs(60));
        let t0 = Instant::now();
        limiter.record_failure("a@x.io", None, t0);
        assert_eq!(limiter.check("a@x.io", None, t0), None);
        limiter.record_failure("a@x.io", None, t0);
        assert!(limiter.check("a@x.io", None, t0).is_some());
        assert_eq!(
            limiter.check("a@x.io", None, t0 + Duration::from_secs(61)),
            None
        );
    }
}
