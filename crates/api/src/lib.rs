//! The bodies the gpuex API answers with: what the server writes, the CLI
//! and the tests read, each defined once with its OpenAPI schema.
//!
//! Request bodies stay with the routes that check them (they carry the
//! server's validation); these are the answers. The agent protocol and the
//! catalog are in `gpuex-wire`, which the agent builds without OpenAPI; this
//! crate needs the schemas, so it is separate.

pub mod auth;
pub mod billing;
pub mod cluster;
pub mod events;
pub mod imports;
pub mod market;
pub mod nodes;
pub mod pricing;
pub mod trials;

use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaType, Type};

/// Money is posted and billed at this many decimals (rounded once,
/// half-even); every money field of an answer has at most this many.
pub const MONEY_SCALE: u32 = 6;

/// The schema of money in answers: a decimal string with at most
/// [`MONEY_SCALE`] decimals, as the ledger posts it (rounded once, half-even;
/// views never re-round). Unit prices are not money: they are a list price
/// times its mode's factor, exact.
pub fn money_out() -> Schema {
    let scale = MONEY_SCALE;
    ObjectBuilder::new()
        .schema_type(SchemaType::Type(Type::String))
        .pattern(Some(format!("^-?[0-9]+(\\.[0-9]{{1,{scale}}})?$")))
        .description(Some(format!(
            "Money: a decimal string with at most {scale} decimals, rounded once, \
             half-even, when posted or billed; the ledger's `platform:rounding` \
             account takes any residue, so the books balance exactly."
        )))
        .examples([serde_json::Value::String("12.500000".to_owned())])
        .into()
}
