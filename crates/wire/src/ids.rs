//! The ids the API names in its paths, one type each: an order id is never
//! passed where a lease id is wanted, and every id is parsed once, where it
//! enters. On the wire each is a plain UUID.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use uuid::Uuid;

/// What every id type has: the noun a "no such …" answer names.
pub trait TypedId: Copy + FromStr + fmt::Display + From<Uuid> + Into<Uuid> {
    /// "order", "lease", …
    const NOUN: &'static str;
}

macro_rules! typed_id {
    ($(#[$doc:meta])* $name:ident, $noun:literal) => {
        $(#[$doc])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
        )]
        #[serde(transparent)]
        pub struct $name(Uuid);

        impl $name {
            /// The UUID inside.
            pub fn uuid(self) -> Uuid {
                self.0
            }
        }

        impl TypedId for $name {
            const NOUN: &'static str = $noun;
        }

        impl From<Uuid> for $name {
            fn from(id: Uuid) -> Self {
                $name(id)
            }
        }

        impl From<$name> for Uuid {
            fn from(id: $name) -> Uuid {
                id.0
            }
        }

        impl FromStr for $name {
            type Err = uuid::Error;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Uuid::parse_str(s).map($name)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

typed_id!(
    /// An order (`/v1/orders/{id}`).
    OrderId,
    "order"
);
typed_id!(
    /// A lease (`/v1/leases/{id}`, and the agent's `/v1/agent/assignments/{lease_id}`).
    LeaseId,
    "lease"
);
typed_id!(
    /// A node: one agent's host (`/v1/nodes/{id}`).
    NodeId,
    "node"
);
typed_id!(
    /// An account (`/v1/admin/users/{id}`).
    UserId,
    "user"
);
typed_id!(
    /// An API key (`/v1/api-keys/{id}`).
    ApiKeyId,
    "API key"
);
typed_id!(
    /// A webhook subscription (`/v1/webhooks/{id}`).
    WebhookId,
    "webhook"
);
typed_id!(
    /// A resale listing (`/v1/resale-listings/{id}`).
    ListingId,
    "listing"
);
typed_id!(
    /// A trial (`/v1/trials/{id}`).
    TrialId,
    "trial"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_reads_and_writes_as_its_uuid() {
        let raw = "0190e6a2-7b4c-7d1e-8f00-000000000001";
        let id: OrderId = raw.parse().expect("a UUID");
        assert_eq!(id.to_string(), raw);
        assert_eq!(
            serde_json::to_string(&id).expect("json"),
            format!("\"{raw}\"")
        );
        let back: LeaseId = serde_json::from_str(&format!("\"{raw}\"")).expect("json");
        assert_eq!(back.uuid(), id.uuid());
        assert!("not-a-uuid".parse::<NodeId>().is_err());
        assert_eq!(<ApiKeyId as TypedId>::NOUN, "API key");
    }
}
