//! The market task under failure: panics, stops.

use super::*;
use crate::auth::Role;
use crate::engine::{Event, OrderSpec, PlaceOrder};
use chrono::Utc;
use std::sync::Mutex;
use uuid::Uuid;

/// Orders whose placement panics, as an engine bug would.
static DOOMED: Mutex<Vec<Uuid>> = Mutex::new(Vec::new());

pub(super) fn is_doomed(command: &Command) -> bool {
    let doomed = DOOMED.lock().map(|d| d.clone()).unwrap_or_default();
    matches!(command, Command::Place(p) if doomed.contains(&p.order_id))
}

fn place(buyer: Uuid, order_id: Uuid) -> (Command, OrderMeta) {
    let spec = OrderSpec {
        mode: crate::engine::Mode::OnDemand,
        resources: crate::engine::Resources {
            tflops: Decimal::ONE,
            vram_gb: 4,
            precision: None,
            gpu_model: None,
            gpus: None,
            nvlink: false,
            isolation: crate::engine::Isolation::Any,
            cpu_milli: None,
            memory_mib: None,
            min_cuda: None,
        },
        region: Default::default(),
        node: None,
        start_at: None,
        duration_s: None,
        max_price: None,
        max_wait_s: None,
        qos: crate::engine::Qos::Batch,
        predicted_duration: None,
        gang: None,
    };
    let command = Command::Place(PlaceOrder {
        order_id,
        buyer,
        funds_available: Decimal::ZERO,
        spec,
    });
    let meta = OrderMeta {
        client_order_id: None,
        request_json: "{}".into(),
        tags_json: "{}".into(),
        region: "any".into(),
        idempotency: None,
    };
    (command, meta)
}

async fn fresh_database() -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("gpuex.db").display());
    let db = Db::connect(&url).await.expect("database");
    db.migrate().await.expect("migrations");
    (dir, db)
}

fn histogram() -> prometheus::Histogram {
    prometheus::Histogram::with_opts(prometheus::HistogramOpts::new("wait", "wait"))
        .expect("histogram")
}

/// A market on `db` whose clock does not tick during a test.
async fn quiet_market(db: Db) -> MarketHandle {
    let config = MarketConfig {
        engine: EngineConfig::default(),
        platform_fee: Decimal::new(5, 2),
        billing_interval_s: 60,
        tick: Duration::from_secs(3600),
        journal_snapshot_every: 4096,
        clock: Default::default(),
    };
    let hub = EventHub::start(db.clone()).await.expect("hub");
    start(
        db,
        config,
        histogram(),
        histogram(),
        hub,
        MarketFeed::default(),
        Cluster::single(),
        Default::default(),
    )
    .await
    .expect("market")
}

#[tokio::test]
async fn a_command_that_panics_is_refused_rolled_back_and_its_batch_mates_are_applied() {
    let (_dir, db) = fresh_database().await;
    let buyer = crate::auth::store::create_user(
        &db,
        "b@example.com",
        "B",
        Role::Buyer,
        "x",
        "USD",
        Utc::now(),
    )
    .await
    .expect("user")
    .expect("new user")
    .id;
    let market = quiet_market(db.clone()).await;
    let (doomed, innocent) = (Uuid::now_v7(), Uuid::now_v7());
    DOOMED.lock().expect("lock").push(doomed);
    let (doomed_place, doomed_meta) = place(buyer, doomed);
    let (innocent_place, innocent_meta) = place(buyer, innocent);
    // Sent together, the two usually share a batch; either way each
    // gets its own answer.
    let (doomed_reply, innocent_reply) = tokio::join!(
        market.place(doomed_place, doomed_meta),
        market.place(innocent_place, innocent_meta),
    );
    assert!(
        matches!(doomed_reply, Err(MarketError::Panicked)),
        "{doomed_reply:?}"
    );
    let events = innocent_reply
        .expect("the innocent order is applied")
        .events;
    // With no node and no price the engine refuses it, as it would any
    // order that cannot be placed: refused by the engine, not by the guard.
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::OrderRejected { order_id, .. } if *order_id == innocent)),
        "{events:?}"
    );
    assert!(
        crate::market::views::order(&db, buyer, doomed)
            .await
            .is_err(),
        "nothing of it was committed"
    );
    assert!(crate::market::views::order(&db, buyer, innocent)
        .await
        .is_ok());
    // The task is alive: it answers reads and commands.
    assert_eq!(market.read(|_| 42).await.expect("a read"), 42);
    let (again, meta) = place(buyer, Uuid::now_v7());
    assert!(market.place(again, meta).await.is_ok());
}

#[tokio::test]
async fn a_stopped_market_takes_no_more_commands_and_its_clock_stops() {
    let (_dir, db) = fresh_database().await;
    let market = quiet_market(db).await;
    market
        .command(Command::Tick)
        .await
        .expect("the market ticks");
    market.stop().await;
    assert!(matches!(
        market.command(Command::Tick).await,
        Err(MarketError::Unavailable)
    ));
    assert!(
        market.tx.is_closed(),
        "the task is gone, its ticker with it"
    );
}

#[tokio::test]
async fn a_read_that_panics_costs_only_its_own_answer() {
    let (_dir, db) = fresh_database().await;
    let market = quiet_market(db).await;
    let panicked: Result<(), _> = market.read(|_| panic!("a bug in a read")).await;
    assert!(matches!(panicked, Err(MarketError::Unavailable)));
    assert_eq!(market.read(|_| 7).await.expect("the task still answers"), 7);
}
