//! Who calls: roles, users, API keys and the tokens a login hands out.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::fmt;
use utoipa::ToSchema;
use uuid::Uuid;

/// What a caller may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Buyer,
    Provider,
    Admin,
    /// A node agent, authenticated by its node token.
    Agent,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Buyer => "buyer",
            Role::Provider => "provider",
            Role::Admin => "admin",
            Role::Agent => "agent",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "buyer" => Some(Role::Buyer),
            "provider" => Some(Role::Provider),
            "admin" => Some(Role::Admin),
            "agent" => Some(Role::Agent),
            _ => None,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A user, as the API shows it.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct UserView {
    pub id: Uuid,
    pub email: String,
    pub name: String,
    pub role: Role,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ApiKeyCreated {
    pub id: Uuid,
    pub name: String,
    /// The key itself. Shown once: only its hash is stored.
    pub key: String,
    /// The key's first characters, to recognise it later.
    pub prefix: String,
    pub created_at: DateTime<Utc>,
}

/// A token pair: what login and refresh answer.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TokenResponse {
    pub access_token: String,
    /// Always `Bearer`.
    pub token_type: String,
    /// Seconds until the access token expires.
    pub expires_in: u64,
    pub expires_at: DateTime<Utc>,
    /// Swaps for a new pair at `POST /v1/auth/refresh`, once; stored hashed.
    pub refresh_token: String,
    /// When the refresh token stops working if it is not used.
    pub refresh_expires_at: DateTime<Utc>,
}
