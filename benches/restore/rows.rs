//! A filled fleet written as the server's own rows, shared by the restore
//! bench (which reads them back with `market::restore::load`) and the
//! market-scale bench's seeded run (which serves them with `gpuex serve`):
//! the engine benchmark's fleet (`crates/engine/benches/common/fleet.rs`)
//! filled to 80 % with its order mix, as users, nodes, orders, leases, list
//! prices and the engine's clock, as a database from before the journal
//! holds them.
//!
//! Each node is written registered, marked simulated, with a token of its
//! own ([`node_token`]) stored hashed as the server stores one, so a
//! simulated agent can heartbeat for it without enrolling it again.
//! The includer names `fleet.rs` as its `fleet` module.

use chrono::Utc;
use uuid::Uuid;

use super::fleet::{fill, fleet_of, Rng};
use gpuex::auth::tokens::{hash_secret, NODE_TOKEN_PREFIX};
use gpuex::db::{push_rows, Db, Money, Writes};
use gpuex::engine::*;

/// A seeded node's token: derived from its id, so whoever wrote the rows
/// can speak for the node without keeping a list.
pub fn node_token(node: Uuid) -> String {
    format!("{NODE_TOKEN_PREFIX}{}", node.simple())
}

/// The buyer of every lease `fleet::fill` places.
pub const BUYER: Uuid = Uuid::from_u128(1);
pub const PROVIDER: Uuid = Uuid::from_u128(0xa0);

/// The benchmark fleet of `gpus` GPUs filled to 80 % of its GPU compute.
pub fn filled_engine(gpus: u32) -> Engine {
    let mut e = fleet_of(gpus.div_ceil(8), EngineConfig::default());
    fill(&mut e, &mut Rng(0x9e37_79b9_7f4a_7c15), 0.80, &mut 0);
    e
}

/// Writes the engine's state as the server's rows.
pub async fn write_rows(db: &Db, e: &Engine) {
    let snap = e.snapshot();
    let now = Utc::now();
    let mut tx = db.begin().await.expect("begin");
    let mut writes = Writes::new(&tx);
    let users = [(BUYER, "buyer"), (PROVIDER, "provider")];
    push_rows!(
        &mut writes,
        "INSERT INTO users (id, email, name, role, password_hash, created_at) ",
        users,
        |row, (id, role)| row
            .push_bind(*id)
            .push_bind(format!("{role}@restore.bench"))
            .push_bind(*role)
            .push_bind(*role)
            .push_bind("x")
            .push_bind(now)
    );
    push_rows!(
        &mut writes,
        "INSERT INTO regions (name, timezone, created_at, updated_at) ",
        snap.regions,
        |row, region| row
            .push_bind(&region.name)
            .push_bind(&region.timezone)
            .push_bind(now)
            .push_bind(now),
        " ON CONFLICT (name) DO NOTHING"
    );
    push_rows!(
        &mut writes,
        "INSERT INTO list_prices (region, gpu_model, unit, list_price, currency, updated_at) ",
        snap.prices,
        |row, p| row
            .push_bind(&p.region)
            .push_bind(&p.gpu_model)
            .push_bind(p.unit.to_string())
            .push_bind(Money(p.list_price))
            .push_bind("USD")
            .push_bind(now),
        " ON CONFLICT (region, gpu_model, unit) DO NOTHING"
    );
    let specs: Vec<(NodeSpec, String)> = snap
        .nodes
        .iter()
        .map(|n| {
            (
                n.spec.clone(),
                serde_json::to_string(&n.spec).expect("spec"),
            )
        })
        .collect();
    push_rows!(
        &mut writes,
        "INSERT INTO nodes (id, provider_id, name, region, token_hash, status, spec_json, \
         simulated, registered_at, created_at) ",
        specs,
        |row, (spec, json)| row
            .push_bind(spec.id)
            .push_bind(PROVIDER)
            .push_bind(spec.id.to_string())
            .push_bind(&spec.region)
            .push_bind(hash_secret(&node_token(spec.id)))
            .push_bind("online")
            .push_bind(json)
            .push_bind(true)
            .push_bind(now)
            .push_bind(now)
    );
    let leases: Vec<(&Lease, String)> = snap
        .leases
        .iter()
        .map(|l| (l, serde_json::to_string(l).expect("lease")))
        .collect();
    push_rows!(
        &mut writes,
        "INSERT INTO orders (id, buyer_id, mode, state, region, request_json, tags_json, lease_id, created_at, updated_at) ",
        leases,
        |row, (l, _)| row
            .push_bind(l.order_id)
            .push_bind(BUYER)
            .push_bind(l.mode.to_string())
            .push_bind("filled")
            .push_bind("any")
            .push_bind("{}")
            .push_bind("{}")
            .push_bind(l.id)
            .push_bind(now)
            .push_bind(now)
    );
    push_rows!(
        &mut writes,
        "INSERT INTO leases (id, order_id, buyer_id, node_id, mode, state, gpu_model, region, \
         price_per_hour, starts_at, ends_at, record_json, created_at, updated_at) ",
        leases,
        |row, (l, json)| row
            .push_bind(l.id)
            .push_bind(l.order_id)
            .push_bind(BUYER)
            .push_bind(l.node)
            .push_bind(l.mode.to_string())
            .push_bind(l.state.to_string())
            .push_bind(&l.model)
            .push_bind(&l.region)
            .push_bind(Money(l.price_per_hour))
            .push_bind(l.starts_at)
            .push_bind(l.ends_at)
            .push_bind(json)
            .push_bind(now)
            .push_bind(now)
    );
    let meta = [serde_json::to_string(&e.meta()).expect("meta")];
    push_rows!(
        &mut writes,
        "INSERT INTO engine_meta (id, state_json) ",
        meta,
        |row, json| row.push_bind(1i32).push_bind(json)
    );
    writes.execute(&mut tx).await.expect("rows");
    tx.commit().await.expect("commit");
}
