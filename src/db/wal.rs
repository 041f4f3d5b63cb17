//! How SQLite's write-ahead log is kept small: copied back into the database
//! file in the background, and cut back by the writer itself when it passes
//! its bound.

use super::SqliteWriter;
use sqlx::SqlitePool;
use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::Mutex;

/// How often the WAL is copied back into the SQLite database file.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(100);

/// WAL pages (4 KiB) after which the writer checkpoints on its own commit
/// (SQLite's `wal_autocheckpoint`). Most pages are copied by the background
/// task by then, so that checkpoint is short.
pub(super) const WRITER_CHECKPOINT_PAGES: &str = "8192";

/// The WAL size past which the writer cuts it back itself. An
/// autocheckpoint is `PASSIVE`: while readers hold snapshots under sustained
/// writes it copies what it can, the log never starts over, and the file
/// grows without end. Past this size the writer therefore runs a `TRUNCATE`
/// checkpoint, which waits (up to the busy timeout) for the readers of old
/// frames, then empties the file. It sits 4 MiB under the WAL's bound of
/// 32 MiB so that the commit crossing it stays within the bound (a single
/// transaction larger than that can still pass it: SQLite cannot split one).
pub(super) const WAL_CUT_AT_BYTES: u64 = 28 << 20;

/// What SQLite may leave of the WAL file after a checkpoint starts it over
/// (`journal_size_limit`): without it the file keeps its largest size.
pub(super) const WAL_SIZE_LIMIT: &str = "33554432";

/// The WAL of the database file at `db`.
pub(super) fn wal_path(db: &std::path::Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push("-wal");
    PathBuf::from(name)
}

/// How long the writer tries to cut the WAL back before leaving it to the
/// next commit: the background checkpoint may hold SQLite's checkpoint lock
/// for a moment, and then a checkpoint answers busy at once, without waiting.
const CUT_TRIES: u32 = 200;
const CUT_RETRY_EVERY: Duration = Duration::from_millis(10);

/// Called by the writer after each commit: past [`WAL_CUT_AT_BYTES`], cuts the
/// WAL back. A checkpoint that cannot finish within [`CUT_TRIES`] (a reader
/// held on past the busy timeout) is logged; the next commit tries again.
pub(super) async fn keep_bounded(writer: &mut SqliteWriter) {
    let Some(wal) = &writer.wal else { return };
    let size = std::fs::metadata(wal).map_or(0, |m| m.len());
    if size <= WAL_CUT_AT_BYTES {
        return;
    }
    for _ in 0..CUT_TRIES {
        match sqlx::query_as::<_, (i64, i64, i64)>("PRAGMA wal_checkpoint(TRUNCATE)")
            .fetch_one(&mut writer.conn)
            .await
        {
            Ok((0, _, _)) => return,
            Ok(_) => tokio::time::sleep(CUT_RETRY_EVERY).await,
            Err(e) => {
                tracing::warn!(error = %e, size, "the WAL is past its bound and could not be checkpointed");
                return;
            }
        }
    }
    tracing::warn!(
        size,
        "the WAL is past its bound and stayed busy; retrying on the next commit"
    );
}

/// Copies the WAL back into the database file until the pool closes or the
/// last `Db` is dropped (`writer` is then gone). `PASSIVE` never waits for
/// the writer or readers; whatever it could not copy waits for the next
/// round. [`keep_bounded`] bounds the WAL.
pub(super) async fn checkpoint_wal(pool: SqlitePool, writer: std::sync::Weak<Mutex<SqliteWriter>>) {
    let mut every = tokio::time::interval(CHECKPOINT_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while !pool.is_closed() && writer.strong_count() > 0 {
        every.tick().await;
        if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
            .execute(&pool)
            .await
        {
            if !pool.is_closed() {
                tracing::warn!(error = %e, "WAL checkpoint failed; retrying");
            }
        }
    }
}
