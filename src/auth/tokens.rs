//! Access tokens: short-lived JWTs (HS256 by default, RS256 configurable),
//! refresh tokens (`gpr_…`), API keys (`gpx_…`) and node tokens (`gpn_…`),
//! the last three stored as SHA-256 hashes.

use super::Role;
use crate::config::{JwtAlgorithm, Settings};
use anyhow::Context;
use chrono::{DateTime, Utc};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::RwLock;
use uuid::Uuid;

/// The prefix of every API key, so a bearer token says what it is.
pub const API_KEY_PREFIX: &str = "gpx_";

/// The prefix of every node token (`POST /v1/nodes`), which authenticates an agent.
pub const NODE_TOKEN_PREFIX: &str = "gpn_";

/// The prefix of every refresh token (`POST /v1/auth/refresh`).
pub const REFRESH_TOKEN_PREFIX: &str = "gpr_";

/// JWT claims.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Claims {
    pub sub: Uuid,
    pub role: Role,
    pub iat: i64,
    pub exp: i64,
    /// The session (`auth_sessions`) the token belongs to: revoking it
    /// (logout, reuse of a refresh token, a role change) ends the token too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sid: Option<Uuid>,
    /// Makes every token unique: two issued in the same second for the same
    /// session (a login and a refresh) would otherwise be the same string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jti: Option<Uuid>,
}

/// Signing and verification keys for one algorithm.
pub struct JwtKeys {
    algorithm: Algorithm,
    encoding: EncodingKey,
    decoding: DecodingKey,
    ttl_s: i64,
    validation: Validation,
    /// Tokens already verified, with their claims: a token's signature is
    /// checked once, then only its expiry. Decoding and checking it again on
    /// every request cost more than the lookup (far more under RS256).
    verified: RwLock<HashMap<String, Claims>>,
}

/// The most verified tokens remembered; past it, expired ones are dropped,
/// and if that is not enough, all of them.
const VERIFIED_KEPT: usize = 10_000;

impl JwtKeys {
    /// Builds keys from the settings; `stored_secret` is the HS256 secret kept in
    /// the database, used when none is configured.
    pub fn from_settings(settings: &Settings, stored_secret: &str) -> anyhow::Result<JwtKeys> {
        let ttl_s = i64::try_from(settings.token_ttl_s).context("token TTL too large")?;
        match settings.jwt_algorithm {
            JwtAlgorithm::Hs256 => {
                let secret = settings.jwt_secret.as_deref().unwrap_or(stored_secret);
                Ok(JwtKeys::new(
                    Algorithm::HS256,
                    EncodingKey::from_secret(secret.as_bytes()),
                    DecodingKey::from_secret(secret.as_bytes()),
                    ttl_s,
                ))
            }
            JwtAlgorithm::Rs256 => {
                let private = settings
                    .jwt_private_key
                    .as_ref()
                    .context("RS256 needs --jwt-private-key")?;
                let public = settings
                    .jwt_public_key
                    .as_ref()
                    .context("RS256 needs --jwt-public-key")?;
                // The private key signs admin tokens: others must not read it.
                let private = crate::owner_only::read_private_file(private)?;
                let public = std::fs::read(public)
                    .with_context(|| format!("failed to read {}", public.display()))?;
                Ok(JwtKeys::new(
                    Algorithm::RS256,
                    EncodingKey::from_rsa_pem(&private).context("invalid RS256 private key")?,
                    DecodingKey::from_rsa_pem(&public).context("invalid RS256 public key")?,
                    ttl_s,
                ))
            }
        }
    }

    fn new(
        algorithm: Algorithm,
        encoding: EncodingKey,
        decoding: DecodingKey,
        ttl_s: i64,
    ) -> JwtKeys {
        let mut validation = Validation::new(algorithm);
        validation.leeway = 0;
        validation.set_required_spec_claims(&["exp", "iat", "sub"]);
        JwtKeys {
            algorithm,
            encoding,
            decoding,
            ttl_s,
            validation,
            verified: RwLock::new(HashMap::new()),
        }
    }

    /// Issues a token for `user` in `session` valid from `now` for the
    /// configured lifetime.
    pub fn issue(
        &self,
        user: Uuid,
        role: Role,
        session: Option<Uuid>,
        now: DateTime<Utc>,
    ) -> anyhow::Result<(String, DateTime<Utc>)> {
        let iat = now.timestamp();
        let exp = iat + self.ttl_s;
        let claims = Claims {
            sub: user,
            role,
            iat,
            exp,
            sid: session,
            jti: Some(Uuid::new_v4()),
        };
        let token = jsonwebtoken::encode(&Header::new(self.algorithm), &claims, &self.encoding)
            .context("failed to sign a token")?;
        let expires_at = DateTime::from_timestamp(exp, 0).context("token expiry out of range")?;
        Ok((token, expires_at))
    }

    /// Verifies signature, algorithm and expiry; `None` for any invalid token.
    pub fn verify(&self, token: &str) -> Option<Claims> {
        self.verify_at(token, Utc::now().timestamp())
    }

    /// [`JwtKeys::verify`] with a remembered token judged expired against `now`.
    fn verify_at(&self, token: &str, now: i64) -> Option<Claims> {
        let known = self
            .verified
            .read()
            .ok()
            .and_then(|verified| verified.get(token).copied());
        if let Some(claims) = known {
            // What the decoder checks with no leeway: expired once `exp` is past.
            return (claims.exp >= now).then_some(claims);
        }
        let claims = jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation)
            .ok()?
            .claims;
        if let Ok(mut verified) = self.verified.write() {
            if verified.len() >= VERIFIED_KEPT {
                verified.retain(|_, c| c.exp >= now);
                if verified.len() >= VERIFIED_KEPT {
                    verified.clear();
                }
            }
            verified.insert(token.to_owned(), claims);
        }
        Some(claims)
    }
}

/// A fresh random secret or key body, hex-encoded.
pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::thread_rng().fill_bytes(&mut buf);
    hex::encode(buf)
}

/// A new API key: the full key (shown once) and its display prefix.
pub fn new_api_key() -> (String, String) {
    let key = format!("{API_KEY_PREFIX}{}", random_hex(24));
    let prefix = key[..12].to_owned();
    (key, prefix)
}

/// A new refresh token, shown once to the session's holder.
pub fn new_refresh_token() -> String {
    format!("{REFRESH_TOKEN_PREFIX}{}", random_hex(32))
}

/// A new node token, shown once to the provider.
pub fn new_node_token() -> String {
    format!("{NODE_TOKEN_PREFIX}{}", random_hex(24))
}

/// The stored form of an API key or node token.
pub fn hash_secret(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(ttl_s: i64) -> JwtKeys {
        JwtKeys::new(
            Algorithm::HS256,
            EncodingKey::from_secret(b"test-secret"),
            DecodingKey::from_secret(b"test-secret"),
            ttl_s,
        )
    }

    #[test]
    fn a_remembered_token_still_expires_and_a_bad_one_is_never_remembered() {
        let keys = keys(600);
        let user = Uuid::now_v7();
        let (token, expires_at) = keys
            .issue(user, Role::Buyer, None, Utc::now())
            .expect("token");
        let first = keys.verify(&token).expect("a fresh token verifies");
        assert_eq!((first.sub, first.role), (user, Role::Buyer));
        // The second time it comes from memory, with the same claims.
        let again = keys.verify(&token).expect("still valid");
        assert_eq!((again.sub, again.exp), (user, expires_at.timestamp()));
        assert_eq!(keys.verified.read().expect("lock").len(), 1);
        assert!(keys.verify_at(&token, expires_at.timestamp()).is_some());
        assert!(keys.verify_at(&token, expires_at.timestamp() + 1).is_none());

        // A signature character that carries six whole bits, changed.
        let at = token.len() - 5;
        let swapped = if &token[at..=at] == "A" { "B" } else { "A" };
        let forged = format!("{}{swapped}{}", &token[..at], &token[at + 1..]);
        assert!(keys.verify(&forged).is_none());
        let (expired, _) = keys
            .issue(
                user,
                Role::Buyer,
                None,
                Utc::now() - chrono::Duration::seconds(601),
            )
            .expect("token");
        assert!(keys.verify(&expired).is_none());
        assert_eq!(keys.verified.read().expect("lock").len(), 1);
    }

    #[test]
    fn remembered_tokens_are_bounded() {
        let keys = keys(600);
        for _ in 0..VERIFIED_KEPT + 5 {
            let (token, _) = keys
                .issue(Uuid::now_v7(), Role::Buyer, None, Utc::now())
                .expect("token");
            assert!(keys.verify(&token).is_some());
        }
        assert!(keys.verified.read().expect("lock").len() <= VERIFIED_KEPT);
    }
}
