//! The storage layer's transactions, on each backend: on SQLite every write
//! transaction shares one connection, so a transaction that fails or is
//! abandoned must leave nothing behind for the next one.

use crate::helpers::*;
use gpuex::db::{dispatch, execute_tx, push_statement, Db, Writes};

async fn setting(db: &Db, key: &str) -> Option<String> {
    dispatch!(db, pool => {
        sqlx::query_scalar("SELECT value FROM settings WHERE key = $1")
            .bind(key)
            .fetch_optional(pool)
            .await
    })
    .expect("read a setting")
}

/// Adds `INSERT INTO settings (key, value)` to `writes`.
fn insert_setting<'a>(writes: &mut Writes<'a>, key: &'a str, value: &'a str) {
    push_statement!(writes, |insert| insert
        .push("INSERT INTO settings (key, value) VALUES (")
        .push_bind(key)
        .push(", ")
        .push_bind(value)
        .push(")"));
}

on_both_databases! {
    async fn a_transaction_dropped_without_commit_leaves_nothing(app) {
        let db = Db::connect(&app.database_url).await.expect("db");
        {
            let mut tx = db.begin().await.expect("begin");
            execute_tx!(tx, "INSERT INTO settings (key, value) VALUES ($1, $2)", "abandoned", "x")
                .expect("insert");
        }
        // A write outside any transaction goes through at once: the abandoned
        // one does not keep SQLite's write lock until the next `begin`.
        let started = std::time::Instant::now();
        dispatch!(db, pool => {
            sqlx::query("INSERT INTO settings (key, value) VALUES ($1, $2)")
                .bind("via_pool")
                .bind("z")
                .execute(pool)
                .await
                .map(|r| r.rows_affected())
        })
        .expect("a pooled write after an abandoned transaction");
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
        let mut tx = db.begin().await.expect("the next transaction begins");
        execute_tx!(tx, "INSERT INTO settings (key, value) VALUES ($1, $2)", "kept", "y")
            .expect("insert");
        tx.commit().await.expect("commit");
        assert_eq!(setting(&db, "abandoned").await, None);
        assert_eq!(setting(&db, "kept").await.as_deref(), Some("y"));
        assert_eq!(setting(&db, "via_pool").await.as_deref(), Some("z"));
    }

    async fn writes_commit_together_or_not_at_all(app) {
        let db = Db::connect(&app.database_url).await.expect("db");
        let tx = db.begin().await.expect("begin");
        let mut writes = Writes::new(&tx);
        for (key, value) in [("first", "1"), ("second", "2")] {
            insert_setting(&mut writes, key, value);
        }
        push_statement!(&mut writes, |update| update
            .push("UPDATE settings SET value = ")
            .push_bind("1b")
            .push(" WHERE key = ")
            .push_bind("first"));
        tx.commit_with(writes).await.expect("commit");
        assert_eq!(setting(&db, "first").await.as_deref(), Some("1b"));
        assert_eq!(setting(&db, "second").await.as_deref(), Some("2"));

        // The second statement repeats a key: the first must not survive either.
        let tx = db.begin().await.expect("begin");
        let mut writes = Writes::new(&tx);
        for key in ["third", "second"] {
            insert_setting(&mut writes, key, "x");
        }
        let err = tx.commit_with(writes).await.expect_err("a duplicate key fails the commit");
        assert!(format!("{err:#}").contains("UNIQUE") || format!("{err:#}").contains("duplicate"), "{err:#}");
        assert_eq!(setting(&db, "third").await, None);
        assert_eq!(setting(&db, "second").await.as_deref(), Some("2"));
        let mut tx = db.begin().await.expect("the writer is usable again");
        execute_tx!(tx, "UPDATE settings SET value = $1 WHERE key = $2", "3", "second").expect("update");
        tx.commit().await.expect("commit");
        assert_eq!(setting(&db, "second").await.as_deref(), Some("3"));
    }
}

/// Writes `commits` transactions of 1 MiB of settings, keys `{prefix}{n}-{i}`.
async fn write_mib(db: &Db, prefix: &str, commits: usize) {
    let value = "x".repeat(4000);
    for batch in 0..commits {
        let mut tx = db.begin().await.expect("begin");
        for i in 0..256 {
            execute_tx!(
                tx,
                "INSERT INTO settings (key, value) VALUES ($1, $2)",
                format!("{prefix}{batch}-{i}"),
                &value
            )
            .expect("insert");
        }
        tx.commit().await.expect("commit");
    }
}

/// The SQLite writer leaves checkpoints to a background task (the sync would
/// hold up the market behind it): the WAL still reaches the database file
/// while the writer is idle or busy, and it does not grow without end under
/// steady writes.
#[tokio::test]
async fn the_sqlite_wal_is_copied_back_and_bounded_while_the_writer_writes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("wal.db");
    let wal = dir.path().join("wal.db-wal");
    let db = Db::connect(&format!("sqlite://{}", path.display()))
        .await
        .expect("db");
    db.migrate().await.expect("migrate");
    let file_size = || std::fs::metadata(&path).expect("database file").len();
    let before = file_size();
    // Far below the writer's own checkpoint: only the background one copies it.
    write_mib(&db, "small", 4).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while file_size() < before + (4 << 20) {
        assert!(
            std::time::Instant::now() < deadline,
            "the database file stayed at {} bytes (from {before}): the WAL was not checkpointed",
            file_size()
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // Twice the WAL's bound, back to back.
    write_mib(&db, "big", 64).await;
    let wal_size = std::fs::metadata(&wal).map_or(0, |m| m.len());
    // The bound (32 MiB): commits of 1 MiB never carry the WAL past it.
    assert!(
        wal_size <= 32 << 20,
        "the WAL grew to {wal_size} bytes for 64 MiB written"
    );
    assert_eq!(setting(&db, "big63-255").await.map(|v| v.len()), Some(4000));
    db.close().await;
}

/// Under sustained writes with readers always holding a snapshot (the
/// dashboard and the API read while the market writes), SQLite's own
/// checkpoints never start the WAL over: the writer cuts it back itself, so
/// commits of 1 MiB never carry it past its bound (32 MiB).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_sqlite_wal_stays_within_its_bound_while_readers_hold_snapshots() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("readers.db");
    let wal = dir.path().join("readers.db-wal");
    let db = Db::connect(&format!("sqlite://{}", path.display()))
        .await
        .expect("db");
    db.migrate().await.expect("migrate");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut readers = Vec::new();
    for _ in 0..3 {
        let (pool, stop) = (db.pool.clone(), stop.clone());
        readers.push(tokio::spawn(async move {
            let gpuex::db::Pool::Sqlite(pool) = pool else {
                unreachable!("a SQLite pool")
            };
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let mut tx = pool.begin().await.expect("a read transaction");
                let _: (i64,) = sqlx::query_as("SELECT COUNT(*) FROM settings")
                    .fetch_one(&mut *tx)
                    .await
                    .expect("read");
                // Hold the snapshot a moment, as a slow page render would.
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                tx.rollback().await.expect("end the read");
            }
        }));
    }
    // Three times the bound, one 1 MiB commit at a time.
    let mut largest = 0;
    for round in 0..96 {
        write_mib(&db, &format!("r{round}-"), 1).await;
        largest = largest.max(std::fs::metadata(&wal).map_or(0, |m| m.len()));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for reader in readers {
        reader.await.expect("reader");
    }
    const BOUND: u64 = 32 << 20;
    assert!(
        largest <= BOUND,
        "the WAL reached {largest} bytes (bound {BOUND})"
    );
    assert_eq!(setting(&db, "r95-0-255").await.map(|v| v.len()), Some(4000));
    db.close().await;
}

/// On SQLite a transaction begins with its first statement, so one that
/// never runs a statement leaves nothing open; and the writer's mark moves
/// with each commit and with nothing else, so the market may trust
/// balances it remembers from its own last commit while the mark holds.
#[tokio::test]
async fn the_sqlite_writer_mark_moves_with_each_commit_and_nothing_else() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("mark.db");
    let db = Db::connect(&format!("sqlite://{}", path.display()))
        .await
        .expect("db");
    db.migrate().await.expect("migrate");
    let mark = || async { db.begin().await.expect("begin").writer_mark() };
    let start = mark().await.expect("SQLite has a writer mark");
    assert_eq!(
        mark().await,
        Some(start),
        "a transaction with no statement commits nothing"
    );

    // Rolled back: no mark.
    {
        let mut tx = db.begin().await.expect("begin");
        execute_tx!(
            tx,
            "INSERT INTO settings (key, value) VALUES ($1, $2)",
            "dropped",
            "x"
        )
        .expect("insert");
    }
    assert_eq!(mark().await, Some(start));
    assert_eq!(setting(&db, "dropped").await, None);

    // The final write begins, writes and commits in one: it returns the mark after it.
    let tx = db.begin().await.expect("begin");
    let mut writes = Writes::new(&tx);
    insert_setting(&mut writes, "kept", "y");
    let after = tx.commit_with(writes).await.expect("commit");
    assert_ne!(after, Some(start));
    assert_eq!(mark().await, after, "nothing committed since");
    assert_eq!(setting(&db, "kept").await.as_deref(), Some("y"));

    // Any other commit (a heartbeat, say) moves it.
    let mut tx = db.begin().await.expect("begin");
    execute_tx!(
        tx,
        "INSERT INTO settings (key, value) VALUES ($1, $2)",
        "heartbeat",
        "h"
    )
    .expect("insert");
    tx.commit().await.expect("commit");
    let after_heartbeat = mark().await;
    assert_ne!(after_heartbeat, after, "a commit since");
    assert_eq!(setting(&db, "heartbeat").await.as_deref(), Some("h"));

    // So does one whose writes run before its commit.
    let mut tx = db.begin().await.expect("begin");
    let mut writes = Writes::new(&tx);
    push_statement!(&mut writes, |update| update
        .push("UPDATE settings SET value = ")
        .push_bind("z")
        .push(" WHERE key = ")
        .push_bind("kept"));
    writes.execute(&mut tx).await.expect("write");
    tx.commit().await.expect("commit");
    assert_ne!(mark().await, after_heartbeat);
    assert_eq!(setting(&db, "kept").await.as_deref(), Some("z"));

    // A failed final write leaves the writer usable, and the mark where it was.
    let before_failure = mark().await;
    let tx = db.begin().await.expect("begin");
    let mut writes = Writes::new(&tx);
    insert_setting(&mut writes, "kept", "duplicate");
    tx.commit_with(writes)
        .await
        .expect_err("a duplicate key fails the commit");
    assert_eq!(mark().await, before_failure);
    assert_eq!(setting(&db, "kept").await.as_deref(), Some("z"));
    db.close().await;
}
