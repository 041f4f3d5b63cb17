//! Access tokens: short-lived JWTs (HS256 by default, RS256 configurable) and
//! API keys (`gpx_…`, stored as SHA-256 hashes).

use super::Role;
use crate::config::{JwtAlgorithm, Settings};
use anyhow::Context;
use chrono::{DateTime, Utc};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// The prefix of every API key, so a bearer token says what it is.
pub const API_KEY_PREFIX: &str = "gpx_";

/// The prefix of every node token (`POST /v1/nodes`), which authenticates an agent.
pub const NODE_TOKEN_PREFIX: &str = "gpn_";

/// JWT claims.
#[derive(Debug, Serialize, Deserialize)]
pub struct Claims {
    pub sub: Uuid,
    pub role: Role,
    pub iat: i64,
    pub exp: i64,
}

/// Signing and verification keys for one algorithm.
pub struct JwtKeys {
    algorithm: Algorithm,
    encoding: EncodingKey,
    decoding: DecodingKey,
    ttl_s: i64,
}

impl JwtKeys {
    /// Builds keys from the settings; `stored_secret` is the HS256 secret kept in
    /// the database, used when none is configured.
    pub fn from_settings(settings: &Settings, stored_secret: &str) -> anyhow::Result<JwtKeys> {
        let ttl_s = i64::try_from(settings.token_ttl_s).context("token TTL too large")?;
        match settings.jwt_algorithm {
            JwtAlgorithm::Hs256 => {
                let secret = settings.jwt_secret.as_deref().unwrap_or(stored_secret);
                Ok(JwtKeys {
                    algorithm: Algorithm::HS256,
                    encoding: EncodingKey::from_secret(secret.as_bytes()),
                    decoding: DecodingKey::from_secret(secret.as_bytes()),
                    ttl_s,
                })
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
                let private = std::fs::read(private)
                    .with_context(|| format!("failed to read {}", private.display()))?;
                let public = std::fs::read(public)
                    .with_context(|| format!("failed to read {}", public.display()))?;
                Ok(JwtKeys {
                    algorithm: Algorithm::RS256,
                    encoding: EncodingKey::from_rsa_pem(&private)
                        .context("invalid RS256 private key")?,
                    decoding: DecodingKey::from_rsa_pem(&public)
                        .context("invalid RS256 public key")?,
                    ttl_s,
                })
            }
        }
    }

    /// Issues a token for `user` valid from `now` for the configured lifetime.
    pub fn issue(
        &self,
        user: Uuid,
        role: Role,
        now: DateTime<Utc>,
    ) -> anyhow::Result<(String, DateTime<Utc>)> {
        let iat = now.timestamp();
        let exp = iat + self.ttl_s;
        let claims = Claims {
            sub: user,
            role,
            iat,
            exp,
        };
        let token = jsonwebtoken::encode(&Header::new(self.algorithm), &claims, &self.encoding)
            .context("failed to sign a token")?;
        let expires_at = DateTime::from_timestamp(exp, 0).context("token expiry out of range")?;
        Ok((token, expires_at))
    }

    /// Verifies signature, algorithm and expiry; `None` for any invalid token.
    pub fn verify(&self, token: &str) -> Option<Claims> {
        let mut validation = Validation::new(self.algorithm);
        validation.leeway = 0;
        validation.set_required_spec_claims(&["exp", "iat", "sub"]);
        jsonwebtoken::decode::<Claims>(token, &self.decoding, &validation)
            .ok()
            .map(|d| d.claims)
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

/// A new node token, shown once to the provider.
pub fn new_node_token() -> String {
    format!("{NODE_TOKEN_PREFIX}{}", random_hex(24))
}

/// The stored form of an API key or node token.
pub fn hash_secret(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}
