//! The journal across hosts (issue 35, ARCHITECTURE.md §20): three replicas and a
//! PostgreSQL of the test's own, each in a network namespace with its own
//! addresses. Under load, the leader's link to the database goes down
//! while its clients still reach it: it stops taking writes within its
//! lock's lease, another replica leads, and once the link is back nothing
//! acknowledged is lost, no order was placed or filled twice, the ledger
//! balances and every replica's engine matches the leader's digests.
//!
//! Needs root, iproute2, setpriv and PostgreSQL's programs; under CI
//! (`GPUEX_CI=1`) their absence fails the test, elsewhere it skips.

mod load;
mod topology;
mod watch;

use crate::fleet::{eventually, market};
use crate::helpers::TestApp;
use crate::require::{require, root};
use gpuex::cluster::election::KEEPALIVE_NOTICE_S;
use load::{leader, start_load, write_to, Ack, Refusal, Replica, Seen};
use reqwest::StatusCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use topology::{postgres_program, Topology};
use watch::Watch;

/// What the test needs from the host; `None` (after saying why) to skip.
fn host_can_make_hosts() -> Option<()> {
    require("root (to make network namespaces)", root())?;
    require(
        "iproute2 with network namespaces",
        std::process::Command::new("ip")
            .args(["netns", "list"])
            .output()
            .map_err(|e| e.to_string())
            .and_then(|o| {
                o.status
                    .success()
                    .then_some(())
                    .ok_or_else(|| String::from_utf8_lossy(&o.stderr).into_owned())
            }),
    )?;
    // It runs PostgreSQL as `postgres` by exec, so the test's kill reaches
    // PostgreSQL itself (runuser would stay between them).
    require("setpriv", crate::require::program("setpriv"))?;
    for program in ["initdb", "postgres"] {
        require(program, postgres_program(program).map(drop))?;
    }
    require(
        "a `postgres` system user",
        nix::unistd::User::from_name("postgres")
            .ok()
            .flatten()
            .map(drop)
            .ok_or_else(|| "no such user".to_string()),
    )
}

/// ARCHITECTURE.md §12: another replica takes over and serves within 10 s.
const FAILOVER: Duration = Duration::from_secs(10);

/// How long a buyer of the load waits for an answer before trying the
/// next replica: the first order after the failover may wait that long
/// behind a request sent to the cut leader just before.
const PATIENCE: Duration = Duration::from_secs(5);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_leader_cut_off_from_the_database_stops_leading_and_loses_nothing() {
    if host_can_make_hosts().is_none() {
        return;
    }
    let topology = Topology::build(3).await;
    let database_url = topology.database_url();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client");
    // Started at once: they take turns on migrations and the bootstrap.
    let mut replicas: Vec<Replica> = (0..3).map(|i| Replica::start(&topology, i)).collect();
    for r in &replicas {
        eventually(60, "every replica to be ready", || async {
            r.role(&client).await.is_some()
        })
        .await;
    }
    let cut = leader(&client, &replicas, None, Duration::from_secs(10))
        .await
        .expect("a replica leads");
    let apps: Vec<TestApp> = replicas
        .iter()
        .map(|r| TestApp::external(&r.address, &database_url))
        .collect();
    // Set up through a follower: prices, nodes and credit reach the leader.
    let follower = &apps[(cut + 1) % 3];
    let m = market(follower).await;
    let (buyer, buyer_id) = follower.user("buyer").await;
    let r = follower.credit(&m.admin, buyer_id, "1000000").await;
    assert!(r.status.is_success(), "{}", r.body);
    // Room for a few hundred of the load's orders; the rest wait for it.
    for _ in 0..2 {
        follower
            .node_of(&m.provider, "eu-west", &[("H100-SXM5-80GB", "shared"); 8])
            .await;
    }

    let addresses: Vec<String> = replicas.iter().map(|r| r.address.clone()).collect();
    let watch = Watch::start(addresses.clone());
    let seen = Arc::new(Seen::default());
    let stop = Arc::new(AtomicBool::new(false));
    let senders = start_load(4, addresses, buyer.clone(), seen.clone(), stop.clone());
    tokio::time::sleep(Duration::from_secs(3)).await;
    let before_cut = seen.acks.lock().unwrap().len();
    assert!(before_cut > 0, "the load places orders before the cut");

    // The cut: the leader's clients still reach it; PostgreSQL does not.
    let cut_at = Instant::now();
    topology.database_link(cut, false);
    eprintln!("r{cut}'s database link down at {}", chrono::Utc::now());
    let stop_writes = Arc::new(AtomicBool::new(false));
    let writes = write_to(
        replicas[cut].address.clone(),
        cut,
        buyer.clone(),
        seen.clone(),
        stop_writes.clone(),
    );
    let Some(next) = leader(&client, &replicas, Some(cut), 3 * FAILOVER).await else {
        let address = topology.replica_database_address(cut);
        panic!(
            "no other replica leads {} s after r{cut} was cut off; the sessions PostgreSQL \
             still keeps open for r{cut} ({address}), those waiting, and their locks:\n{}",
            3 * FAILOVER.as_secs(),
            open_sessions(&database_url, &address).await
        );
    };
    let first_ack = seen.first_ack_after(cut_at, cut, 60).await;
    // A while under the new leader, load going on.
    tokio::time::sleep(Duration::from_secs(3)).await;

    // Healing: the old leader comes back as a follower and catches up.
    stop_writes.store(true, Ordering::Relaxed);
    let heal_at = Instant::now();
    topology.database_link(cut, true);
    eprintln!("r{cut}'s database link up at {}", chrono::Utc::now());
    eventually(30, "the cut leader to follow again", || async {
        replicas[cut].role(&client).await.as_deref() == Some("follower")
    })
    .await;
    let rejoined = heal_at.elapsed();
    // Its engine, rebuilt from the rows, matches the new leader's digests.
    let checked_at_heal = digests(&apps[cut]).await.0;
    eventually(30, "the old leader to check a new digest", || async {
        digests(&apps[cut]).await.0 > checked_at_heal
    })
    .await;
    stop.store(true, Ordering::Relaxed);
    for sender in senders {
        sender.await.expect("a sender");
    }
    writes.await.expect("the writes to the cut leader");
    let probes = watch.since(cut_at);
    drop(watch);

    let acks = seen.acks.lock().unwrap().clone();
    let refusals = seen.refusals.lock().unwrap().clone();
    eprintln!(
        "{} orders acknowledged ({before_cut} before the cut), {} answers retried, {} undecided",
        acks.len(),
        seen.retries.load(Ordering::Relaxed),
        seen.undecided.load(Ordering::Relaxed)
    );
    // The cut leader: it never says it leads once it cannot reach the
    // database, soon says it does not, and acknowledges nothing sent to it.
    let cut_off = |sent: Instant, at: Instant| sent > cut_at && at < heal_at;
    let claims: Vec<_> = probes
        .iter()
        .filter(|p| p.replica == cut && p.leads() && cut_off(p.sent, p.answered))
        .collect();
    assert!(
        claims.is_empty(),
        "r{cut} said it leads while cut off: {claims:?}"
    );
    let stepped_down = probes
        .iter()
        .find(|p| p.replica == cut && cut_off(p.sent, p.answered))
        .map(|p| p.answered - cut_at)
        .unwrap_or_else(|| panic!("r{cut} never answered /readyz while cut off"));
    let acked: Vec<&Ack> = acks
        .iter()
        .filter(|a| a.by == cut && cut_off(a.sent, a.at))
        .collect();
    assert!(
        acked.is_empty(),
        "r{cut} acknowledged orders while cut off: {acked:?}"
    );
    let refused = refusals
        .iter()
        .filter(|r| r.by == cut && cut_off(r.sent, r.at))
        .map(|r| r.at - cut_at)
        .min()
        .unwrap_or_else(|| panic!("r{cut} answered no write while cut off"));
    let elected = probes
        .iter()
        .find(|p| p.replica != cut && p.leads())
        .map(|p| p.answered - cut_at)
        .expect("another replica said it leads");
    eprintln!(
        "after the cut: r{cut}'s /readyz says it does not lead at {:.2} s and its first write \
         is refused at {:.2} s; r{next} says it leads at {:.2} s and accepts the first order \
         at {:.2} s; r{cut} follows again {:.2} s after the heal",
        stepped_down.as_secs_f64(),
        refused.as_secs_f64(),
        elected.as_secs_f64(),
        first_ack.as_secs_f64(),
        rejoined.as_secs_f64()
    );
    // PostgreSQL frees the lock within its keepalives' notice; the leader
    // must have stopped by then, or two would lead.
    let lease = Duration::from_secs(KEEPALIVE_NOTICE_S.into());
    assert!(
        stepped_down <= lease,
        "r{cut} still leads {stepped_down:?} after the cut"
    );
    assert!(elected <= FAILOVER, "r{next} leads only after {elected:?}");
    assert!(
        first_ack <= FAILOVER + PATIENCE,
        "the first order after the cut was accepted after {first_ack:?}"
    );

    let last = converged(&client, &replicas).await;
    eprintln!(
        "every replica at journal row {} of epoch {}",
        last.0, last.1
    );
    for (i, app) in apps.iter().enumerate() {
        let (checked, mismatches) = digests(app).await;
        assert!(checked > 0.0, "r{i} checked no digest");
        assert_eq!(mismatches, 0.0, "r{i}'s engine differs from the leader's");
    }
    // Every acknowledged order is found, on every replica.
    for ack in &acks {
        for (i, app) in apps.iter().enumerate() {
            let r = app
                .get(&format!("/v1/orders/{}", ack.order), Some(&buyer))
                .await;
            assert_eq!(
                r.status,
                StatusCode::OK,
                "order {} acknowledged by r{} is lost on r{i}: {}",
                ack.order,
                ack.by,
                r.body
            );
        }
    }
    database_holds_together(&database_url).await;

    // Last, so that everything above is checked whatever this finds:
    // requests caught in a failover are answered 503 with Retry-After
    // (ARCHITECTURE.md §12), which a client retries with the same key; any other
    // 5xx tells it nothing it can act on.
    let failures: Vec<String> = refusals
        .iter()
        .filter(|r| r.status.is_server_error() && r.status != StatusCode::SERVICE_UNAVAILABLE)
        .map(|r| describe(r, cut_at))
        .collect();
    assert!(
        failures.is_empty(),
        "{} answers to writes were 5xx other than 503 (the cut was at 0, the heal at {:+.2} s):\n{}",
        failures.len(),
        seconds(heal_at, cut_at),
        failures.join("\n")
    );
    for r in &mut replicas {
        r.kill().await;
    }
}

/// Waits for the replicas to apply the same last row once the load has
/// stopped: `(applied_seq, epoch)`.
async fn converged(client: &reqwest::Client, replicas: &[Replica]) -> (i64, i64) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut seen = Vec::new();
        for r in replicas {
            if let Some((StatusCode::OK, body)) = r.readiness(client, Duration::from_secs(5)).await
            {
                seen.push((body["applied_seq"].as_i64(), body["epoch"].as_i64()));
            }
        }
        if let [(Some(seq), Some(epoch)), ..] = seen[..] {
            if seen.len() == replicas.len() && seen.iter().all(|s| *s == seen[0]) {
                return (seq, epoch);
            }
        }
        assert!(
            Instant::now() < deadline,
            "the replicas stay apart: {seen:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// No order placed or filled twice, the journal without a gap, the ledger
/// balanced, and the engine the rows restore is sound.
async fn database_holds_together(database_url: &str) {
    let db = gpuex::db::Db::connect(database_url)
        .await
        .expect("the database");
    assert_eq!(
        scalar(
            &db,
            "SELECT COUNT(*) FROM (SELECT tags_json FROM orders WHERE tags_json LIKE '%load_key%' \
             GROUP BY tags_json HAVING COUNT(*) > 1) t"
        )
        .await,
        0,
        "an order was placed twice under one Idempotency-Key"
    );
    assert_eq!(
        scalar(
            &db,
            "SELECT COUNT(*) FROM (SELECT order_id FROM leases GROUP BY order_id \
             HAVING COUNT(*) > 1) t"
        )
        .await,
        0,
        "an order was filled twice"
    );
    let filled = scalar(&db, "SELECT COUNT(*) FROM leases").await;
    eprintln!("{filled} orders filled");
    assert!(filled > 0, "the load's orders were filled");
    assert_eq!(
        scalar(
            &db,
            "SELECT COUNT(*) - (MAX(seq) - MIN(seq) + 1) FROM journal"
        )
        .await,
        0,
        "the journal runs on without a gap or a repeat"
    );
    assert_eq!(
        gpuex::billing::ledger::trial_balance(&db).await.unwrap(),
        rust_decimal::Decimal::ZERO,
        "accounts sum to zero"
    );
    let engine = gpuex::market::restore::load(&db, gpuex::engine::EngineConfig::default())
        .await
        .expect("the engine restores from what the leaders committed");
    engine.validate().expect("no slice is promised twice");
    db.close().await;
}

/// A metric's value in `/metrics` text.
fn metric(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("{name} is not in /metrics"))
}

/// `(digests checked, mismatches)` of a replica.
async fn digests(app: &TestApp) -> (f64, f64) {
    let text = app.metrics_text().await;
    (
        metric(&text, "gpuex_journal_digests_checked_total"),
        metric(&text, "gpuex_journal_digest_mismatches_total"),
    )
}

/// One integer from the database.
async fn scalar(db: &gpuex::db::Db, sql: &str) -> i64 {
    gpuex::db::dispatch!(db, pool => sqlx::query_scalar(sql).fetch_one(pool).await)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// The sessions PostgreSQL keeps for a client at `address` that are not
/// idle, with the locks each holds or waits for, and those waiting for
/// them: why a failover does not happen.
async fn open_sessions(database_url: &str, address: &str) -> String {
    use sqlx::Connection;
    let Ok(mut conn) = sqlx::PgConnection::connect(database_url).await else {
        return "(the database does not answer)".into();
    };
    let rows: Vec<(i32, String, String, String, String)> = sqlx::query_as(
        "SELECT a.pid, COALESCE(host(a.client_addr), 'local'), COALESCE(a.state, ''), \
         a.application_name, \
         COALESCE((SELECT string_agg(l.mode || ' on ' || COALESCE(l.relation::regclass::text, \
         l.locktype) || CASE WHEN l.granted THEN '' ELSE ' (waiting)' END, ', ') \
         FROM pg_locks l WHERE l.pid = a.pid), '') \
         FROM pg_stat_activity a \
         WHERE a.datname = current_database() AND a.pid <> pg_backend_pid() \
         AND ((host(a.client_addr) = $1 AND a.state <> 'idle') \
              OR cardinality(pg_blocking_pids(a.pid)) > 0)",
    )
    .bind(address)
    .fetch_all(&mut conn)
    .await
    .unwrap_or_default();
    rows.iter()
        .map(|(pid, from, state, app, locks)| {
            format!("pid {pid} from {from} ({app}) {state}: {locks}")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A refused write, its times counted from `origin`.
fn describe(r: &Refusal, origin: Instant) -> String {
    format!(
        "r{} answered {} at {:+.2} s (sent at {:+.2} s): {}",
        r.by,
        r.status,
        seconds(r.at, origin),
        seconds(r.sent, origin),
        r.body
    )
}

/// `at` in seconds from `origin`, negative before it.
fn seconds(at: Instant, origin: Instant) -> f64 {
    if at >= origin {
        (at - origin).as_secs_f64()
    } else {
        -(origin - at).as_secs_f64()
    }
}
