//! Random sequences of credits, holds, captures and releases keep the ledger
//! balanced (postings sum to zero) with no user account below zero.

use crate::helpers::{postgres_base_url, Backend};
use gpuex::auth::{create_user, Role};
use gpuex::billing::ledger;
use gpuex::db::{dispatch, Db, Money};
use proptest::prelude::*;
use rust_decimal::Decimal;
use uuid::Uuid;

#[derive(Debug, Clone)]
enum Op {
    Credit {
        user: usize,
        cents: i64,
    },
    Hold {
        user: usize,
        cents: i64,
    },
    Extend {
        hold: usize,
        cents: i64,
    },
    Capture {
        hold: usize,
        cents: i64,
        provider: usize,
    },
    Release {
        hold: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..3usize, 1..50_000i64).prop_map(|(user, cents)| Op::Credit { user, cents }),
        (0..3usize, 1..30_000i64).prop_map(|(user, cents)| Op::Hold { user, cents }),
        (0..8usize, 1..10_000i64).prop_map(|(hold, cents)| Op::Extend { hold, cents }),
        (0..8usize, 1..20_000i64, 0..3usize).prop_map(|(hold, cents, provider)| Op::Capture {
            hold,
            cents,
            provider
        }),
        (0..8usize).prop_map(|hold| Op::Release { hold }),
    ]
}

async fn fresh_db(backend: Backend) -> (Db, Option<tempfile::TempDir>) {
    match backend {
        Backend::Sqlite => {
            let dir = tempfile::tempdir().unwrap();
            let db = Db::connect(&format!("sqlite://{}/l.db", dir.path().display()))
                .await
                .unwrap();
            (db, Some(dir))
        }
        Backend::Postgres => {
            use sqlx::Connection;
            let base = postgres_base_url().unwrap();
            let name = format!("gpuex_t_{}", Uuid::new_v4().simple());
            let mut conn = sqlx::PgConnection::connect(&base).await.unwrap();
            sqlx::query(&format!("CREATE DATABASE {name}"))
                .execute(&mut conn)
                .await
                .unwrap();
            let (prefix, _) = base.rsplit_once('/').unwrap();
            (
                Db::connect(&format!("{prefix}/{name}")).await.unwrap(),
                None,
            )
        }
    }
}

async fn check_invariants(db: &Db) {
    assert_eq!(
        ledger::trial_balance(db).await.unwrap(),
        Decimal::ZERO,
        "accounts sum to zero"
    );
    let user_balances: Vec<(String, Money)> = dispatch!(db, pool => {
        sqlx::query_as("SELECT code, balance FROM accounts WHERE owner_id IS NOT NULL").fetch_all(pool).await
    }).unwrap();
    for (code, balance) in user_balances {
        assert!(
            balance.0 >= Decimal::ZERO,
            "{code} is negative: {}",
            balance.0
        );
    }
    let postings: Vec<(Uuid, Money)> = dispatch!(db, pool => {
        sqlx::query_as("SELECT entry_id, amount FROM postings").fetch_all(pool).await
    })
    .unwrap();
    let mut per_entry = std::collections::HashMap::<Uuid, Decimal>::new();
    for (entry, amount) in postings {
        *per_entry.entry(entry).or_default() += amount.0;
    }
    assert!(
        per_entry.values().all(|s| s.is_zero()),
        "every entry balances"
    );
    let scales: Vec<(String, Money)> = dispatch!(db, pool => {
        sqlx::query_as("SELECT account, amount FROM postings UNION ALL SELECT 'hold', remaining FROM holds")
            .fetch_all(pool)
            .await
    })
    .unwrap();
    for (what, amount) in scales {
        assert!(
            amount.0.normalize().scale() <= ledger::MONEY_SCALE,
            "{what} holds {} (more decimals than the money scale)",
            amount.0
        );
    }
    let holds: Vec<(Uuid, Money)> = dispatch!(db, pool => {
        sqlx::query_as("SELECT user_id, remaining FROM holds").fetch_all(pool).await
    })
    .unwrap();
    let mut open = std::collections::HashMap::<Uuid, Decimal>::new();
    for (user, remaining) in holds {
        *open.entry(user).or_default() += remaining.0;
    }
    for (user, remaining) in open {
        assert_eq!(
            ledger::balances(db, user).await.unwrap().held,
            remaining,
            "holds account equals open holds"
        );
    }
}

async fn run(backend: Backend, ops: Vec<Op>) {
    let (db, _dir) = fresh_db(backend).await;
    db.migrate().await.unwrap();
    let now = chrono::Utc::now();
    let mut tx = db.begin().await.unwrap();
    ledger::open_system_accounts(&mut tx, "USD", now)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let mut users = Vec::new();
    for i in 0..3 {
        let u = create_user(
            &db,
            &format!("u{i}@x.io"),
            "u",
            Role::Buyer,
            "h",
            "USD",
            now,
        )
        .await
        .unwrap()
        .unwrap();
        users.push(u.id);
    }
    let mut holds: Vec<Uuid> = Vec::new();
    for op in ops {
        // Cents plus a few billionths, so every amount has digits beyond
        // the money scale for the ledger to round (and post the residue of).
        let cents = |c: i64| Decimal::new(c * 10_000_000 + c % 997, 9);
        let mut tx = db.begin().await.unwrap();
        let result = match op {
            Op::Credit { user, cents: c } => {
                ledger::credit(&mut tx, users[user], cents(c), "t", None, now)
                    .await
                    .map(|_| ())
            }
            Op::Hold { user, cents: c } => {
                ledger::place_hold(&mut tx, users[user], cents(c), "order:x", now)
                    .await
                    .map(|h| holds.push(h))
            }
            Op::Extend { hold, cents: c } => match holds.get(hold) {
                Some(h) => ledger::extend_hold(&mut tx, *h, cents(c), now).await,
                None => Ok(()),
            },
            Op::Capture {
                hold,
                cents: c,
                provider,
            } => match holds.get(hold) {
                Some(h) => ledger::capture(
                    &mut tx,
                    *h,
                    cents(c),
                    ledger::Account::Payable(users[provider]),
                    Decimal::new(5, 2),
                    "t",
                    now,
                )
                .await
                .map(|_| ()),
                None => Ok(()),
            },
            Op::Release { hold } => match holds.get(hold) {
                Some(h) => ledger::release(&mut tx, *h, now).await.map(|_| ()),
                None => Ok(()),
            },
        };
        match result {
            Ok(()) => tx.commit().await.unwrap(),
            Err(ledger::LedgerError::Storage(e)) => panic!("storage error: {e:?}"),
            Err(_) => drop(tx),
        }
        check_invariants(&db).await;
    }
    db.close().await;
}

/// Three postings each a third of a micro-unit off the money scale: each is
/// rounded half-even, and the micro-unit rounding created lands in
/// `platform:rounding`, so the entry and the books still sum to zero.
#[tokio::test]
async fn rounding_a_posting_to_the_money_scale_posts_its_residue_to_the_rounding_account() {
    let (db, _dir) = fresh_db(Backend::Sqlite).await;
    db.migrate().await.unwrap();
    let now = chrono::Utc::now();
    let mut tx = db.begin().await.unwrap();
    ledger::open_system_accounts(&mut tx, "USD", now)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let mut users = Vec::new();
    for i in 0..2 {
        let user = create_user(
            &db,
            &format!("r{i}@x.io"),
            "r",
            Role::Buyer,
            "h",
            "USD",
            now,
        )
        .await
        .unwrap()
        .unwrap();
        users.push(user.id);
    }
    let third = Decimal::new(3_333_333, 7);
    let entry = ledger::Entry {
        kind: "credit",
        memo: "thirds".into(),
        actor: None,
        reference: None,
        postings: vec![
            (ledger::Account::ExternalFunding, -(third + third)),
            (ledger::Account::Wallet(users[0]), third),
            (ledger::Account::Wallet(users[1]), third),
        ],
    };
    let mut tx = db.begin().await.unwrap();
    ledger::post(&mut tx, &entry, now).await.unwrap();
    tx.commit().await.unwrap();
    let posted: Vec<(String, Money)> = dispatch!(db, pool => {
        sqlx::query_as("SELECT account, amount FROM postings ORDER BY account").fetch_all(pool).await
    })
    .unwrap();
    let posted: Vec<(String, Decimal)> = posted.into_iter().map(|(a, m)| (a, m.0)).collect();
    assert_eq!(
        posted,
        vec![
            ("external:funding".to_owned(), Decimal::new(-666_667, 6)),
            ("platform:rounding".to_owned(), Decimal::new(1, 6)),
            (format!("wallet:{}", users[0]), Decimal::new(333_333, 6)),
            (format!("wallet:{}", users[1]), Decimal::new(333_333, 6)),
        ]
    );
    check_invariants(&db).await;
    db.close().await;
}

/// A hold charged down to exactly zero stays open, for its lease's next
/// renewal tops it up; only a release closes it.
#[tokio::test]
async fn a_hold_captured_to_zero_stays_open_until_released() {
    let (db, _dir) = fresh_db(Backend::Sqlite).await;
    db.migrate().await.unwrap();
    let now = chrono::Utc::now();
    let mut tx = db.begin().await.unwrap();
    ledger::open_system_accounts(&mut tx, "USD", now)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let mut users = Vec::new();
    for i in 0..2 {
        let user = create_user(
            &db,
            &format!("z{i}@x.io"),
            "z",
            Role::Buyer,
            "h",
            "USD",
            now,
        )
        .await
        .unwrap()
        .unwrap();
        users.push(user.id);
    }
    let (buyer, provider) = (users[0], users[1]);
    let mut tx = db.begin().await.unwrap();
    ledger::credit(&mut tx, buyer, Decimal::new(100, 0), "t", None, now)
        .await
        .unwrap();
    let hold = ledger::place_hold(&mut tx, buyer, Decimal::new(10, 0), "lease:x", now)
        .await
        .unwrap();
    let payee = ledger::Account::Payable(provider);
    ledger::capture(
        &mut tx,
        hold,
        Decimal::new(10, 0),
        payee,
        Decimal::new(5, 2),
        "hour 1",
        now,
    )
    .await
    .unwrap();
    ledger::extend_hold(&mut tx, hold, Decimal::new(7, 0), now)
        .await
        .expect("a hold at zero is renewed, not refused as closed");
    ledger::capture(
        &mut tx,
        hold,
        Decimal::new(7, 0),
        payee,
        Decimal::new(5, 2),
        "hour 2",
        now,
    )
    .await
    .unwrap();
    assert_eq!(
        ledger::release(&mut tx, hold, now).await.unwrap(),
        Decimal::ZERO
    );
    assert!(matches!(
        ledger::extend_hold(&mut tx, hold, Decimal::new(1, 0), now).await,
        Err(ledger::LedgerError::UnknownHold(_))
    ));
    tx.commit().await.unwrap();
    let balances = ledger::balances(&db, buyer).await.unwrap();
    assert_eq!(
        (balances.available, balances.held),
        (Decimal::new(83, 0), Decimal::ZERO)
    );
    check_invariants(&db).await;
    db.close().await;
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    #[test]
    fn random_money_movements_keep_the_sqlite_ledger_balanced(ops in proptest::collection::vec(op(), 1..40)) {
        tokio::runtime::Runtime::new().unwrap().block_on(run(Backend::Sqlite, ops));
    }

    #[test]
    fn random_money_movements_keep_the_postgres_ledger_balanced(ops in proptest::collection::vec(op(), 1..40)) {
        if postgres_base_url().is_none() {
            return Ok(());
        }
        tokio::runtime::Runtime::new().unwrap().block_on(run(Backend::Postgres, ops));
    }
}
