//! Buyers' registry credentials (ARCHITECTURE.md §21): an order's `registry_auth` is
//! kept apart from the order, sealed, and opened only to hand it to the
//! agent that runs the order's lease.
//!
//! - The order's stored request never holds it (`OrderRequest` skips it when
//!   serialised), so no order view, export, event or journal row carries it.
//! - The row holds ChaCha20-Poly1305 ciphertext under the server's
//!   `secrets_key`, bound to its order id (a sealed row copied onto another
//!   order does not open). With `--secrets-key` (or `GPUEX_SECRETS_KEY`) set
//!   outside the database, a copy of the database alone reveals nothing;
//!   without it the key is generated once and kept in `settings`, which
//!   still keeps credentials out of every view and log.
//! - The row goes once the order can start no lease again.

use crate::db::{dispatch, Db};
use crate::protocol::RegistryAuth;
use anyhow::Context;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Nonce};
use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use uuid::Uuid;

const NONCE_BYTES: usize = 12;

/// The server's key for sealed credentials. Cheap to clone.
#[derive(Clone)]
pub struct PullSecrets {
    cipher: std::sync::Arc<ChaCha20Poly1305>,
    /// Keys the credentials' part of a retry's fingerprint.
    fingerprint_key: [u8; 32],
}

impl std::fmt::Debug for PullSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PullSecrets(<key>)")
    }
}

impl PullSecrets {
    /// The key given in the settings (any string; its SHA-256 is the key),
    /// or the one kept in the database, created on the first start.
    pub async fn load(db: &Db, configured: Option<&str>) -> anyhow::Result<PullSecrets> {
        let material = match configured {
            Some(key) => key.to_owned(),
            None => {
                let candidate = hex::encode(rand::random::<[u8; 32]>());
                dispatch!(db, pool => {
                    sqlx::query(
                        "INSERT INTO settings (key, value) VALUES ('secrets_key', $1) \
                         ON CONFLICT (key) DO NOTHING",
                    )
                    .bind(&candidate)
                    .execute(pool)
                    .await?;
                    sqlx::query_scalar::<_, String>(
                        "SELECT value FROM settings WHERE key = 'secrets_key'",
                    )
                    .fetch_one(pool)
                    .await
                })
                .context("failed to load the secrets key")?
            }
        };
        Ok(PullSecrets::from_material(&material))
    }

    fn from_material(material: &str) -> PullSecrets {
        let derive = |purpose: &[u8]| {
            Sha256::new()
                .chain_update(purpose)
                .chain_update(material.as_bytes())
                .finalize()
        };
        let key = derive(b"gpuex sealed registry credentials");
        PullSecrets {
            cipher: std::sync::Arc::new(ChaCha20Poly1305::new(&key)),
            fingerprint_key: derive(b"gpuex credentials fingerprint").into(),
        }
    }

    /// What a retry's fingerprint takes of the credentials: an HMAC under
    /// the server's key, so the idempotency row can neither show them nor
    /// be searched for a guessed password.
    pub fn fingerprint(&self, auth: &RegistryAuth) -> Vec<u8> {
        use hmac::{Hmac, Mac};
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.fingerprint_key)
            .unwrap_or_else(|_| unreachable!("HMAC accepts keys of every length"));
        mac.update(auth.username.as_bytes());
        mac.update(&[0]);
        mac.update(auth.password.as_bytes());
        mac.finalize().into_bytes().to_vec()
    }

    /// The credentials sealed for `order`: hex of a fresh nonce, then the
    /// ciphertext, with the order id as associated data.
    pub fn seal(&self, order: Uuid, auth: &RegistryAuth) -> anyhow::Result<String> {
        let plain = serde_json::to_vec(auth)?;
        let nonce: [u8; NONCE_BYTES] = rand::random();
        let sealed = self
            .cipher
            .encrypt(
                &Nonce::from(nonce),
                Payload {
                    msg: &plain,
                    aad: order.as_bytes(),
                },
            )
            .map_err(|_| anyhow::anyhow!("credentials could not be sealed"))?;
        Ok(hex::encode([nonce.as_slice(), &sealed].concat()))
    }

    /// The credentials sealed for `order`, or `None` when the row does not
    /// open: another key, another order's row, or changed bytes.
    pub fn open(&self, order: Uuid, stored: &str) -> Option<RegistryAuth> {
        let bytes = hex::decode(stored).ok()?;
        if bytes.len() < NONCE_BYTES {
            return None;
        }
        let (nonce, sealed) = bytes.split_at(NONCE_BYTES);
        let nonce: [u8; NONCE_BYTES] = nonce.try_into().ok()?;
        let plain = self
            .cipher
            .decrypt(
                &Nonce::from(nonce),
                Payload {
                    msg: sealed,
                    aad: order.as_bytes(),
                },
            )
            .ok()?;
        serde_json::from_slice(&plain).ok()
    }
}

/// Keeps `order`'s credentials, sealed, before the order reaches the market:
/// its lease may start the moment it is filled.
pub async fn keep(
    db: &Db,
    secrets: &PullSecrets,
    order: Uuid,
    auth: &RegistryAuth,
    now: DateTime<Utc>,
) -> anyhow::Result<()> {
    let sealed = secrets.seal(order, auth)?;
    dispatch!(db, pool => {
        sqlx::query(
            "INSERT INTO order_pull_secrets (order_id, sealed, created_at) VALUES ($1, $2, $3)",
        )
        .bind(order)
        .bind(&sealed)
        .bind(now)
        .execute(pool)
        .await
        .map(|r| r.rows_affected())
    })
    .context("failed to keep the order's registry credentials")?;
    Ok(())
}

/// Drops `order`'s credentials: the order was refused, or was a retry of
/// one placed before.
pub async fn forget(db: &Db, order: Uuid) -> anyhow::Result<()> {
    dispatch!(db, pool => {
        sqlx::query("DELETE FROM order_pull_secrets WHERE order_id = $1")
            .bind(order)
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
    })
    .context("failed to drop the order's registry credentials")?;
    Ok(())
}

/// Drops the credentials of orders that can start no lease again (no longer
/// open, no lease that has not ended, untouched since `before`: an
/// interrupted order is opened again in the batch that ends its lease, so
/// it never looks finished; the wait is a margin, not a fence), and those
/// of orders never placed (the server stopped between keeping and placing).
pub async fn prune(db: &Db, before: DateTime<Utc>) -> anyhow::Result<u64> {
    let removed = dispatch!(db, pool => {
        sqlx::query(
            "DELETE FROM order_pull_secrets WHERE order_id IN ( \
               SELECT o.id FROM orders o WHERE o.state <> 'open' AND o.updated_at < $1 \
               AND NOT EXISTS (SELECT 1 FROM leases l WHERE l.order_id = o.id \
                               AND l.state NOT IN ('ended', 'failed'))) \
             OR (created_at < $1 AND NOT EXISTS \
                 (SELECT 1 FROM orders o WHERE o.id = order_pull_secrets.order_id))",
        )
        .bind(before)
        .execute(pool)
        .await
        .map(|r| r.rows_affected())
    })
    .context("failed to prune registry credentials")?;
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn auth() -> RegistryAuth {
        RegistryAuth {
            username: "ci".into(),
            password: "hunter2-but-longer".into(),
        }
    }

    #[test]
    fn sealed_credentials_open_only_for_their_order_and_key() {
        let secrets = PullSecrets::from_material("k1");
        let order = Uuid::now_v7();
        let sealed = secrets.seal(order, &auth()).unwrap();
        assert!(!sealed.contains("hunter2"), "{sealed}");
        assert_eq!(secrets.open(order, &sealed), Some(auth()));
        assert_eq!(secrets.open(Uuid::now_v7(), &sealed), None, "another order");
        assert_eq!(
            PullSecrets::from_material("k2").open(order, &sealed),
            None,
            "another key"
        );
        let mut changed = sealed.clone().into_bytes();
        let last = changed.len() - 1;
        changed[last] = if changed[last] == b'0' { b'1' } else { b'0' };
        let changed = String::from_utf8(changed).unwrap();
        assert_eq!(secrets.open(order, &changed), None, "changed bytes");
        assert_eq!(secrets.open(order, "zz"), None);
        // Two seals of the same credentials differ (fresh nonces).
        assert_ne!(secrets.seal(order, &auth()).unwrap(), sealed);
    }

    #[test]
    fn a_fingerprint_is_keyed_and_tells_credentials_apart() {
        let (one, two) = (
            PullSecrets::from_material("k1"),
            PullSecrets::from_material("k2"),
        );
        assert_eq!(one.fingerprint(&auth()), one.fingerprint(&auth()));
        assert_ne!(one.fingerprint(&auth()), two.fingerprint(&auth()));
        let other = RegistryAuth {
            username: "ci".into(),
            password: "another".into(),
        };
        assert_ne!(one.fingerprint(&auth()), one.fingerprint(&other));
    }

    #[test]
    fn credentials_print_without_their_password() {
        let shown = format!("{:?}", auth());
        assert!(
            shown.contains("ci") && !shown.contains("hunter2"),
            "{shown}"
        );
    }

    #[test]
    fn each_field_is_checked_and_named() {
        assert_eq!(auth().check(), Ok(()));
        let bad = |username: &str, password: &str| {
            RegistryAuth {
                username: username.into(),
                password: password.into(),
            }
            .check()
            .map_err(|(field, _)| field)
        };
        assert_eq!(bad("", "p"), Err("username"));
        assert_eq!(bad("a:b", "p"), Err("username"));
        assert_eq!(bad("a\nb", "p"), Err("username"));
        assert_eq!(bad(&"u".repeat(257), "p"), Err("username"));
        assert_eq!(bad("u", ""), Err("password"));
        assert_eq!(bad("u", "p\u{85}"), Err("password"));
        assert_eq!(bad("u", &"é".repeat(4096)), Ok(()));
    }
}
