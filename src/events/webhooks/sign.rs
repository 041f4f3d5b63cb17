//! Secrets and signatures, as Stripe's webhooks have them: a receiver
//! recomputes `HMAC-SHA256(secret, "<t>.<body>")` and compares it with `v1`,
//! and refuses a stale `t`, so a captured delivery cannot be replayed later.

use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

/// What every secret starts with, so one is recognised in a config file.
pub const SECRET_PREFIX: &str = "whsec_";

/// A new secret: 32 random bytes, as `whsec_` and 64 hex digits.
pub fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("{SECRET_PREFIX}{}", hex::encode(bytes))
}

/// The `Gpuex-Signature` header of `body` sent at `t` (Unix seconds):
/// `t=<t>,v1=<hex HMAC-SHA256>`, keyed with the secret's text as shown.
pub fn signature(secret: &str, t: i64, body: &str) -> String {
    format!("t={t},v1={}", hex::encode(mac(secret, t, body)))
}

fn mac(secret: &str, t: i64, body: &str) -> Vec<u8> {
    // HMAC takes a key of any length; `new_from_slice` cannot fail for it.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC accepts keys of every length"));
    mac.update(t.to_string().as_bytes());
    mac.update(b".");
    mac.update(body.as_bytes());
    mac.finalize().into_bytes().to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_prefixed_and_differ() {
        let (a, b) = (new_secret(), new_secret());
        assert!(a.starts_with(SECRET_PREFIX) && a.len() == SECRET_PREFIX.len() + 64);
        assert_ne!(a, b);
    }

    #[test]
    fn the_signature_is_the_hmac_of_timestamp_dot_body() {
        // Computed apart: printf '1700000000.{"id":1}' |
        //   openssl dgst -sha256 -hmac whsec_test
        assert_eq!(
            signature("whsec_test", 1_700_000_000, r#"{"id":1}"#),
            "t=1700000000,v1=2f441ba4b3b2d50d28a9ab9d9fd8880376ecd1eb5d0435401553f5d8d0a5dcf8"
        );
    }
}
