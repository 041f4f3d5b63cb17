//! Signed messages between replicas (ARCHITECTURE.md §19, internal endpoints).
//!
//! A static bearer token sent over plain HTTP is a password any relay can
//! copy and use for ever. Instead, every internal request carries its own
//! proof in five headers:
//!
//! - `x-gpuex-key-id`: which key signed it (a replica signed by another
//!   database's key is told apart at once),
//! - `x-gpuex-timestamp`: Unix seconds; refused more than [`MAX_SKEW`] away
//!   from the receiver's clock,
//! - `x-gpuex-nonce`: 16 random bytes in hex, never accepted twice while its
//!   timestamp is still acceptable,
//! - `x-gpuex-epoch`: the leader epoch it is meant for; every other epoch
//!   refuses it, so a message captured for one leader means nothing to the next,
//! - `x-gpuex-signature`: `v1=` and the HMAC-SHA256, under the shared key, of
//!   all of the above, the method, the path and the body.
//!
//! The receiver checks the first four before it reads a byte of the body
//! ([`Stamp::from_headers`]), then reads a bounded body and checks the MAC
//! in constant time ([`InternalKey::verify`]), and only then records the
//! nonce ([`Nonces::admit`]): an unsigned request cannot fill the record.

use axum::http::HeaderMap;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

type HmacSha256 = Hmac<Sha256>;

pub const KEY_ID: &str = "x-gpuex-key-id";
pub const TIMESTAMP: &str = "x-gpuex-timestamp";
pub const NONCE: &str = "x-gpuex-nonce";
pub const EPOCH: &str = "x-gpuex-epoch";
pub const SIGNATURE: &str = "x-gpuex-signature";

/// How far a message's timestamp may be from the receiver's clock.
pub const MAX_SKEW: Duration = Duration::from_secs(30);

/// Bytes of randomness in a nonce (written as twice as many hex digits).
const NONCE_BYTES: usize = 16;

/// The key every replica of one database shares, derived from the secret
/// they all read from it, so it needs no configuration of its own and
/// differs from the JWT secret itself.
pub struct InternalKey {
    id: String,
    key: [u8; 32],
}

impl std::fmt::Debug for InternalKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InternalKey")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl InternalKey {
    /// The key of the replicas sharing `secret`.
    pub fn derive(secret: &str) -> InternalKey {
        let mut mac = new_mac(secret.as_bytes());
        mac.update(b"gpuex internal market calls v2");
        let key: [u8; 32] = mac.finalize().into_bytes().into();
        // The id names the key without revealing it: a hash of the key.
        let id = hex::encode(&Sha256::digest(key)[..8]);
        InternalKey { id, key }
    }

    /// The public name of this key, sent as `x-gpuex-key-id`.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The headers of a new message to the leader of `epoch`.
    pub fn sign(
        &self,
        epoch: i64,
        method: &str,
        path: &str,
        body: &[u8],
        now_unix: i64,
    ) -> Vec<(&'static str, String)> {
        let stamp = Stamp {
            key_id: self.id.clone(),
            timestamp: now_unix,
            nonce: crate::auth::tokens::random_hex(NONCE_BYTES),
            epoch,
        };
        let signature = hex::encode(self.mac(&stamp, method, path, body).finalize().into_bytes());
        vec![
            (KEY_ID, stamp.key_id),
            (TIMESTAMP, stamp.timestamp.to_string()),
            (NONCE, stamp.nonce),
            (EPOCH, stamp.epoch.to_string()),
            (SIGNATURE, format!("v1={signature}")),
        ]
    }

    /// Whether `headers`' signature is this key's over the stamp and `body`.
    /// The comparison takes the same time wherever the first wrong byte is.
    pub fn verify(
        &self,
        stamp: &Stamp,
        headers: &HeaderMap,
        method: &str,
        path: &str,
        body: &[u8],
    ) -> bool {
        let Some(given) = header(headers, SIGNATURE)
            .and_then(|v| v.strip_prefix("v1="))
            .and_then(|v| hex::decode(v).ok())
        else {
            return false;
        };
        self.mac(stamp, method, path, body)
            .verify_slice(&given)
            .is_ok()
    }

    fn mac(&self, stamp: &Stamp, method: &str, path: &str, body: &[u8]) -> HmacSha256 {
        let mut mac = new_mac(&self.key);
        // Every field ends at a newline and none may hold one, so no two
        // different messages write the same bytes.
        let head = format!(
            "gpuex-internal-v1\n{method}\n{path}\n{}\n{}\n{}\n{}\n",
            stamp.key_id, stamp.timestamp, stamp.nonce, stamp.epoch
        );
        mac.update(head.as_bytes());
        mac.update(body);
        mac
    }
}

fn new_mac(key: &[u8]) -> HmacSha256 {
    <HmacSha256 as Mac>::new_from_slice(key)
        .unwrap_or_else(|_| unreachable!("HMAC takes a key of any length"))
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The headers of a message, parsed; nothing is trusted until its MAC is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    pub key_id: String,
    pub timestamp: i64,
    pub nonce: String,
    pub epoch: i64,
}

/// Why a message was refused before or after its body was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// A header is missing or unreadable (which one).
    Missing(&'static str),
    /// Signed by a key this replica does not hold (or it holds none).
    UnknownKey,
    /// The timestamp is more than [`MAX_SKEW`] from this replica's clock.
    Stale,
    /// The body or a header differs from what was signed.
    BadSignature,
    /// The nonce was accepted before.
    Replayed,
}

impl Refused {
    /// What the problem body says; never more than the caller sent.
    pub fn detail(self) -> String {
        match self {
            Refused::Missing(name) => format!("the internal call has no valid `{name}` header"),
            Refused::UnknownKey => "the internal call is signed by an unknown key".into(),
            Refused::Stale => format!(
                "the internal call's timestamp is more than {} s away",
                MAX_SKEW.as_secs()
            ),
            Refused::BadSignature => "the internal call's signature does not match".into(),
            Refused::Replayed => "the internal call's nonce was used before".into(),
        }
    }
}

impl Stamp {
    /// Reads and checks the headers alone: the key id against `key`, the
    /// timestamp against `now_unix`. The epoch is the caller's to compare.
    pub fn from_headers(
        headers: &HeaderMap,
        key: Option<&InternalKey>,
        now_unix: i64,
    ) -> Result<Stamp, Refused> {
        let key_id = header(headers, KEY_ID).ok_or(Refused::Missing(KEY_ID))?;
        let timestamp: i64 = header(headers, TIMESTAMP)
            .filter(|v| !v.is_empty() && v.len() <= 19 && v.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|v| v.parse().ok())
            .ok_or(Refused::Missing(TIMESTAMP))?;
        let nonce = header(headers, NONCE)
            .filter(|v| {
                v.len() == NONCE_BYTES * 2
                    && v.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
            })
            .ok_or(Refused::Missing(NONCE))?;
        let epoch: i64 = header(headers, EPOCH)
            .filter(|v| !v.is_empty() && v.len() <= 19 && v.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|v| v.parse().ok())
            .ok_or(Refused::Missing(EPOCH))?;
        if header(headers, SIGNATURE).is_none_or(|v| !v.starts_with("v1=")) {
            return Err(Refused::Missing(SIGNATURE));
        }
        match key {
            Some(key) if key.id == key_id => {}
            _ => return Err(Refused::UnknownKey),
        }
        if timestamp.abs_diff(now_unix) > MAX_SKEW.as_secs() {
            return Err(Refused::Stale);
        }
        Ok(Stamp {
            key_id: key_id.to_owned(),
            timestamp,
            nonce: nonce.to_owned(),
            epoch,
        })
    }
}

/// The nonces of accepted messages, each kept while its timestamp could
/// still pass the skew check; after that the timestamp alone refuses it.
#[derive(Debug, Default)]
pub struct Nonces {
    seen: Mutex<Seen>,
}

#[derive(Debug, Default)]
struct Seen {
    /// Each nonce and the Unix second after which its timestamp is refused anyway.
    expires: HashMap<String, i64>,
    /// The size at which expired nonces are next pruned: twice what was
    /// left after the last pruning, so pruning costs O(1) per message.
    prune_at: usize,
}

impl Nonces {
    /// Whether `stamp`'s nonce was accepted before (a cheap early refusal;
    /// [`Nonces::admit`] decides).
    pub fn seen(&self, stamp: &Stamp) -> bool {
        self.lock().expires.contains_key(&stamp.nonce)
    }

    /// Records `stamp`'s nonce; `false` if it was there already. Call only
    /// for messages whose MAC checked.
    pub fn admit(&self, stamp: &Stamp, now_unix: i64) -> bool {
        let window = MAX_SKEW.as_secs() as i64;
        let mut seen = self.lock();
        // Forget what can no longer pass the timestamp check.
        if seen.expires.len() >= seen.prune_at.max(1024) {
            seen.expires.retain(|_, expires| *expires >= now_unix);
            seen.prune_at = seen.expires.len().saturating_mul(2);
        }
        if seen.expires.contains_key(&stamp.nonce) {
            return false;
        }
        seen.expires
            .insert(stamp.nonce.clone(), stamp.timestamp.saturating_add(window));
        true
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Seen> {
        // A panic while holding it cannot leave the map half-written.
        self.seen.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers_of(signed: &[(&'static str, String)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in signed {
            headers.insert(*name, HeaderValue::from_str(value).expect("header"));
        }
        headers
    }

    #[test]
    fn the_key_depends_on_the_secret_and_its_id_is_not_the_secret() {
        let a = InternalKey::derive("one secret");
        assert_eq!(a.id(), InternalKey::derive("one secret").id());
        assert_ne!(a.id(), InternalKey::derive("another secret").id());
        assert!(!a.id().contains("one secret"));
        assert!(!format!("{a:?}").contains(&hex::encode(a.key)));
    }

    #[test]
    fn a_signed_message_verifies_and_any_change_breaks_it() {
        let key = InternalKey::derive("s");
        let signed = key.sign(7, "POST", "/internal/x", b"{}", 1_000);
        let headers = headers_of(&signed);
        let stamp = Stamp::from_headers(&headers, Some(&key), 1_010).expect("fresh");
        assert_eq!(stamp.epoch, 7);
        assert!(key.verify(&stamp, &headers, "POST", "/internal/x", b"{}"));
        assert!(!key.verify(&stamp, &headers, "POST", "/internal/x", b"{ }"));
        assert!(!key.verify(&stamp, &headers, "POST", "/internal/y", b"{}"));
        let other_epoch = Stamp {
            epoch: 8,
            ..stamp.clone()
        };
        assert!(!key.verify(&other_epoch, &headers, "POST", "/internal/x", b"{}"));
        let other_key = InternalKey::derive("t");
        assert!(!other_key.verify(&stamp, &headers, "POST", "/internal/x", b"{}"));
    }

    #[test]
    fn headers_are_refused_before_the_body_for_each_reason() {
        let key = InternalKey::derive("s");
        let signed = key.sign(1, "POST", "/p", b"", 1_000);
        let headers = headers_of(&signed);
        assert_eq!(
            Stamp::from_headers(&headers, Some(&key), 1_031),
            Err(Refused::Stale)
        );
        assert_eq!(
            Stamp::from_headers(&headers, Some(&key), 969),
            Err(Refused::Stale)
        );
        assert_eq!(
            Stamp::from_headers(&headers, None, 1_000),
            Err(Refused::UnknownKey)
        );
        for name in [KEY_ID, TIMESTAMP, NONCE, EPOCH, SIGNATURE] {
            let mut without = headers.clone();
            without.remove(name);
            assert_eq!(
                Stamp::from_headers(&without, Some(&key), 1_000),
                Err(Refused::Missing(name))
            );
        }
        let mut odd = headers.clone();
        odd.insert(NONCE, HeaderValue::from_static("not-hex"));
        assert_eq!(
            Stamp::from_headers(&odd, Some(&key), 1_000),
            Err(Refused::Missing(NONCE))
        );
        odd = headers.clone();
        odd.insert(TIMESTAMP, HeaderValue::from_static("-5"));
        assert_eq!(
            Stamp::from_headers(&odd, Some(&key), 1_000),
            Err(Refused::Missing(TIMESTAMP))
        );
    }

    #[test]
    fn a_nonce_is_admitted_once_and_forgotten_only_after_its_window() {
        let nonces = Nonces::default();
        let stamp = Stamp {
            key_id: "k".into(),
            timestamp: 1_000,
            nonce: "00".repeat(16),
            epoch: 1,
        };
        assert!(!nonces.seen(&stamp));
        assert!(nonces.admit(&stamp, 1_000));
        assert!(nonces.seen(&stamp));
        assert!(!nonces.admit(&stamp, 1_000));
        // Many later messages prune the map, but not a nonce still in its window.
        for i in 1..1_100u32 {
            let other = Stamp {
                nonce: format!("{i:032x}"),
                ..stamp.clone()
            };
            assert!(nonces.admit(&other, 1_020));
        }
        assert!(!nonces.admit(&stamp, 1_020));
        // Once their window has passed, later messages prune them all.
        for i in 0..1_000u32 {
            let late = Stamp {
                nonce: format!("{:032x}", 100_000 + i),
                timestamp: 2_000,
                ..stamp.clone()
            };
            assert!(nonces.admit(&late, 2_000));
        }
        assert_eq!(nonces.lock().expires.len(), 1_000);
    }
}
