//! Storage: one connection pool on SQLite or PostgreSQL, chosen by the URL's scheme.
//!
//! Queries are written once and run on both backends: [`dispatch!`] expands a
//! body once per backend so each copy is type-checked against its own driver,
//! and [`Money`] stores decimals exactly on both (TEXT in SQLite, NUMERIC in
//! PostgreSQL). SQL uses `$1`-style parameters in ascending order, which both
//! drivers bind by position.

pub mod heartbeats;
pub mod leases;
mod money;
mod text;
mod wal;

pub use money::Money;
pub use text::Text;

use anyhow::Context;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{ConnectOptions, PgPool, Postgres, SqlitePool, Transaction};
use std::marker::PhantomData;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, OwnedMutexGuard};

/// The database pool. Cheap to clone.
#[derive(Clone)]
pub struct Db {
    #[doc(hidden)]
    pub pool: Pool,
    /// SQLite allows one writer at a time, so write transactions take turns
    /// on one connection of their own, outside the pool:
    /// - in WAL mode a connection drops its page cache whenever another
    ///   connection wrote since its last transaction; with every write on one
    ///   connection, the writer's cache stays warm;
    /// - a pooled connection goes back to its pool through a spawned task,
    ///   which the next transaction would wait for.
    sqlite_writer: Option<Arc<Mutex<SqliteWriter>>>,
}

/// The SQLite write connection and whether a transaction is still open on
/// it: one whose rollback on drop could not run or failed is rolled back
/// before the next begins.
#[doc(hidden)]
pub struct SqliteWriter {
    #[doc(hidden)]
    pub conn: SqliteConnection,
    open: bool,
    /// Transactions committed on this connection, for [`WriterMark`].
    commits: u64,
    /// The database's WAL file, kept within its bound after each commit;
    /// `None` in memory.
    wal: Option<std::path::PathBuf>,
}

/// How many transactions the SQLite writer had committed. Every write
/// commits on the writer, so two equal marks mean nothing was written
/// between them: what the first one left may be remembered instead of read
/// again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriterMark(u64);

#[derive(Clone)]
#[doc(hidden)]
pub enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// A write transaction on either backend. Dropped without
/// [`Tx::commit`], it rolls back.
///
/// On SQLite the transaction begins with its first statement, not at
/// [`Db::begin`]: a transaction whose first statement is its final write
/// (the market's usual batch) makes one trip to the database in all.
pub struct Tx<'a> {
    #[doc(hidden)]
    pub inner: TxInner,
    _db: PhantomData<&'a Db>,
}

/// The SQLite writer, held for one transaction. Dropped while its
/// transaction is open, it rolls back at once on a task of its own, keeping
/// the writer until then, so an abandoned transaction does not keep the
/// database's write lock while nothing else writes.
#[doc(hidden)]
pub struct SqliteTx(Option<OwnedMutexGuard<SqliteWriter>>);

impl std::ops::Deref for SqliteTx {
    type Target = SqliteWriter;
    fn deref(&self) -> &SqliteWriter {
        self.0.as_ref().expect("the writer is only taken on drop")
    }
}

impl std::ops::DerefMut for SqliteTx {
    fn deref_mut(&mut self) -> &mut SqliteWriter {
        self.0.as_mut().expect("the writer is only taken on drop")
    }
}

impl SqliteTx {
    /// The connection, inside the transaction: begins it on first use.
    #[doc(hidden)]
    pub async fn begun(&mut self) -> Result<&mut SqliteConnection, sqlx::Error> {
        if !self.open {
            // Open before the trip: if BEGIN fails half-way, the next
            // `begin` still rolls back whatever it left.
            self.open = true;
            // IMMEDIATE: take the write lock now, so a transaction that
            // reads first cannot fail later on upgrading its lock.
            sqlx::query("BEGIN IMMEDIATE")
                .execute(&mut self.conn)
                .await?;
        }
        Ok(&mut self.conn)
    }
}

impl Drop for SqliteTx {
    fn drop(&mut self) {
        let Some(mut writer) = self.0.take().filter(|w| w.open) else {
            return;
        };
        // Without a runtime, the next `begin` rolls back instead.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if sqlx::query("ROLLBACK")
                    .execute(&mut writer.conn)
                    .await
                    .is_ok()
                {
                    writer.open = false;
                }
            });
        }
    }
}

#[doc(hidden)]
pub enum TxInner {
    Sqlite(SqliteTx),
    Postgres(Transaction<'static, Postgres>),
}

/// Runs `$body` with `$conn` bound to the backend's pool (or transaction).
/// The body is expanded twice, once per backend.
#[macro_export]
#[doc(hidden)]
macro_rules! dispatch {
    ($db:expr, $conn:ident => $body:expr) => {
        match &$db.pool {
            $crate::db::Pool::Sqlite($conn) => $body,
            $crate::db::Pool::Postgres($conn) => $body,
        }
    };
}

/// Like [`dispatch!`] for a transaction: `$conn` is `&mut *transaction`.
#[macro_export]
#[doc(hidden)]
macro_rules! dispatch_tx {
    ($tx:expr, $conn:ident => $body:expr) => {
        match &mut $tx.inner {
            $crate::db::TxInner::Sqlite(t) => match t.begun().await {
                Ok($conn) => $body,
                Err(e) => Err(e.into()),
            },
            $crate::db::TxInner::Postgres(t) => {
                let $conn = &mut **t;
                $body
            }
        }
    };
}

/// Runs one statement in a transaction with its binds, on either backend;
/// evaluates to the rows it affected.
#[macro_export]
#[doc(hidden)]
macro_rules! execute_tx {
    ($tx:expr, $sql:expr $(, $bind:expr)* $(,)?) => {
        $crate::db::dispatch_tx!($tx, conn => {
            sqlx::query($sql)$(.bind($bind))*.execute(conn).await.map(|r| r.rows_affected())
        })
    };
}

/// The SQLite writer's page cache, in KiB (SQLite's default is 2,000).
const WRITER_CACHE_KIB: &str = "-65536";

/// Rows per multi-row INSERT: far below either backend's bind limit.
pub const INSERT_CHUNK: usize = 256;

/// Proof that every row a writer held in memory is written, so a read in
/// the transaction cannot miss one. Billing's reads and writes take one;
/// the market's writer makes it. It borrows the writer's buffer, so nothing
/// new can be buffered while it lives.
pub struct Flushed<'a, 't> {
    tx: &'a mut Tx<'t>,
    _buffer: std::marker::PhantomData<&'a mut ()>,
}

impl<'a, 't> Flushed<'a, 't> {
    /// For a writer whose `buffer` was just written out in `tx`.
    pub fn written<B>(tx: &'a mut Tx<'t>, buffer: &'a mut B) -> Self {
        let _ = buffer;
        Flushed {
            tx,
            _buffer: std::marker::PhantomData,
        }
    }

    /// The transaction, for reads and for writes that bypass the buffer.
    pub fn tx(&mut self) -> &mut Tx<'t> {
        self.tx
    }
}

/// Statements written together at the end of a unit of work. On SQLite they
/// are one compound statement, so the whole write makes one trip to the
/// driver's connection thread instead of one per statement; on PostgreSQL
/// they run one after another. Bind values may borrow from the caller's rows.
pub struct Writes<'a> {
    #[doc(hidden)]
    pub statements: Statements<'a>,
}

#[doc(hidden)]
pub enum Statements<'a> {
    Sqlite(sqlx::QueryBuilder<'a, sqlx::Sqlite>, usize),
    Postgres(Vec<sqlx::QueryBuilder<'a, Postgres>>),
}

impl<'a> Writes<'a> {
    /// An empty set of statements for `tx`'s backend.
    pub fn new(tx: &Tx<'_>) -> Writes<'a> {
        let statements = match tx.inner {
            TxInner::Sqlite(_) => Statements::Sqlite(sqlx::QueryBuilder::new(""), 0),
            TxInner::Postgres(_) => Statements::Postgres(Vec::new()),
        };
        Writes { statements }
    }

    /// Runs every statement, in the order they were added.
    pub async fn execute(self, tx: &mut Tx<'_>) -> Result<(), sqlx::Error> {
        match (self.statements, &mut tx.inner) {
            (Statements::Sqlite(compound, count), TxInner::Sqlite(writer)) => {
                run_compound(compound, count, writer).await
            }
            (Statements::Postgres(statements), TxInner::Postgres(t)) => {
                for mut statement in statements {
                    statement.build().execute(&mut **t).await?;
                }
                Ok(())
            }
            _ => Err(sqlx::Error::Protocol(
                "statements built for one backend were run on the other".into(),
            )),
        }
    }
}

/// Runs a compound statement of `count` statements on SQLite, beginning the
/// transaction in the same trip if no statement has yet.
async fn run_compound(
    mut compound: sqlx::QueryBuilder<'_, sqlx::Sqlite>,
    count: usize,
    writer: &mut SqliteTx,
) -> Result<(), sqlx::Error> {
    use sqlx::Execute;
    if count == 0 {
        return Ok(());
    }
    if writer.open {
        return compound.build().execute(&mut writer.conn).await.map(|_| ());
    }
    let mut query = compound.build();
    let sql = format!("BEGIN IMMEDIATE; {}", query.sql());
    let arguments = query
        .take_arguments()
        .map_err(sqlx::Error::Encode)?
        .unwrap_or_default();
    // Open before the trip, as in `SqliteTx::begun`.
    writer.open = true;
    sqlx::query_with(&sql, arguments)
        .execute(&mut writer.conn)
        .await
        .map(|_| ())
}

/// Adds one statement to `$writes` (a `&mut Writes`): `|$b| $build` pushes its SQL and
/// binds on a `QueryBuilder` of either backend (expanded once per backend).
#[macro_export]
#[doc(hidden)]
macro_rules! push_statement {
    ($writes:expr, |$b:ident| $build:expr) => {
        match &mut $writes.statements {
            $crate::db::Statements::Sqlite(compound, count) => {
                if *count > 0 {
                    compound.push("; ");
                }
                *count += 1;
                let $b = compound;
                $build;
            }
            $crate::db::Statements::Postgres(list) => {
                let mut statement = sqlx::QueryBuilder::new("");
                {
                    let $b = &mut statement;
                    $build;
                }
                list.push(statement);
            }
        }
    };
}

/// Adds multi-row INSERTs of `$rows` (a slice) to `$writes` (a `&mut
/// Writes`), at most [`INSERT_CHUNK`] rows each. `$head` is the statement up
/// to `VALUES`; `|$row, $item| $binds` pushes one row's values; an optional
/// `$tail` follows the values (e.g. `ON CONFLICT … DO NOTHING`).
#[macro_export]
#[doc(hidden)]
macro_rules! push_rows {
    ($writes:expr, $head:expr, $rows:expr, |$row:ident, $item:pat_param| $binds:expr $(, $tail:expr)?) => {
        for chunk in $rows.chunks($crate::db::INSERT_CHUNK) {
            $crate::db::push_statement!($writes, |insert| {
                insert.push($head);
                insert.push_values(chunk, |mut $row, $item| {
                    $binds;
                });
                $(insert.push($tail);)?
            });
        }
    };
}

pub use crate::{dispatch, dispatch_tx, execute_tx, push_rows, push_statement};

impl Db {
    /// Connects to `url` (`sqlite://path` or `postgres://…`), creating a SQLite
    /// file and its folder when missing, and applies the migrations.
    pub async fn connect(url: &str) -> anyhow::Result<Db> {
        let mut sqlite_writer = None;
        let pool = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            // PostgreSQL ends a session within seconds of its client
            // vanishing (keepalives find a silent peer, the user timeout a
            // cut link), as it does the election's: a replica cut off in
            // the middle of a transaction must not hold its row locks, and
            // with them the next leader's first batch, until the link heals.
            let options = PgConnectOptions::from_str(url)
                .context("invalid PostgreSQL URL")?
                .options([
                    ("tcp_keepalives_idle", "5"),
                    ("tcp_keepalives_interval", "1"),
                    ("tcp_keepalives_count", "3"),
                    ("tcp_user_timeout", "5000"),
                ]);
            let pool = PgPoolOptions::new()
                .max_connections(16)
                .acquire_timeout(Duration::from_secs(10))
                .connect_with(options)
                .await
                .context("failed to connect to PostgreSQL")?;
            Pool::Postgres(pool)
        } else if url.starts_with("sqlite:") {
            let options = SqliteConnectOptions::from_str(url)
                .context("invalid SQLite URL")?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
                .foreign_keys(true)
                .busy_timeout(Duration::from_secs(10));
            // An in-memory database has no files to protect.
            let on_disk = !options.get_filename().as_os_str().is_empty()
                && options.get_filename() != std::path::Path::new(":memory:");
            let file = options.get_filename().to_path_buf();
            if on_disk {
                crate::owner_only::prepare_sqlite(&file)?;
            }
            // A local file does not go stale: skip the ping before each use.
            let pool = SqlitePoolOptions::new()
                .max_connections(8)
                .test_before_acquire(false)
                .connect_with(options.clone())
                .await
                .context("failed to open the SQLite database")?;
            // The writer touches the newest pages of every table and index on
            // each commit: a larger cache keeps them in memory. It leaves
            // checkpoints to a pooled connection in the background: a
            // checkpoint syncs the database file, and on the writer's commit
            // that wait would hold up every order behind it.
            let conn = options
                .pragma("cache_size", WRITER_CACHE_KIB)
                .pragma("wal_autocheckpoint", wal::WRITER_CHECKPOINT_PAGES)
                .pragma("journal_size_limit", wal::WAL_SIZE_LIMIT)
                .connect()
                .await
                .context("failed to open the SQLite database for writing")?;
            let writer = Arc::new(Mutex::new(SqliteWriter {
                conn,
                open: false,
                commits: 0,
                wal: on_disk.then(|| wal::wal_path(&file)),
            }));
            if on_disk {
                crate::owner_only::tighten_sqlite(&file)?;
            }
            tokio::spawn(wal::checkpoint_wal(pool.clone(), Arc::downgrade(&writer)));
            sqlite_writer = Some(writer);
            Pool::Sqlite(pool)
        } else {
            anyhow::bail!("unsupported database URL `{url}`: use sqlite:// or postgres://");
        };
        Ok(Db {
            pool,
            sqlite_writer,
        })
    }

    /// Applies pending migrations from `migrations/sqlite` or `migrations/postgres`.
    pub async fn migrate(&self) -> anyhow::Result<()> {
        match &self.pool {
            Pool::Sqlite(pool) => sqlx::migrate!("./migrations/sqlite").run(pool).await,
            Pool::Postgres(pool) => sqlx::migrate!("./migrations/postgres").run(pool).await,
        }
        .context("failed to apply migrations")
    }

    /// Starts a write transaction.
    pub async fn begin(&self) -> anyhow::Result<Tx<'_>> {
        let inner = match (&self.pool, &self.sqlite_writer) {
            (Pool::Sqlite(_), Some(writer)) => {
                let mut writer = writer.clone().lock_owned().await;
                if writer.open {
                    // An error here means no transaction was left open after
                    // all; one that was and stays open fails the next BEGIN.
                    let _ = sqlx::query("ROLLBACK").execute(&mut writer.conn).await;
                    writer.open = false;
                }
                // The transaction begins with its first statement.
                TxInner::Sqlite(SqliteTx(Some(writer)))
            }
            // `connect` always opens the writer beside a SQLite pool.
            (Pool::Sqlite(_), None) => anyhow::bail!("SQLite has no write connection"),
            (Pool::Postgres(pool), _) => TxInner::Postgres(
                pool.begin()
                    .await
                    .context("failed to begin a transaction")?,
            ),
        };
        Ok(Tx {
            inner,
            _db: PhantomData,
        })
    }

    /// Whether the database answers.
    pub async fn ping(&self) -> bool {
        dispatch!(self, pool => sqlx::query("SELECT 1").execute(pool).await.map(|r| r.rows_affected()).is_ok())
    }

    /// `" FOR UPDATE"` on PostgreSQL, empty on SQLite (whose writers are serialised).
    pub fn for_update(&self) -> &'static str {
        match self.pool {
            Pool::Sqlite(_) => "",
            Pool::Postgres(_) => " FOR UPDATE",
        }
    }

    pub async fn close(&self) {
        if let Some(writer) = &self.sqlite_writer {
            let mut writer = writer.lock().await;
            if writer.open {
                let _ = sqlx::query("ROLLBACK").execute(&mut writer.conn).await;
                writer.open = false;
            }
        }
        dispatch!(self, pool => pool.close().await)
    }
}

impl Tx<'_> {
    pub async fn commit(self) -> anyhow::Result<()> {
        match self.inner {
            TxInner::Sqlite(mut writer) => {
                if writer.open {
                    sqlx::query("COMMIT")
                        .execute(&mut writer.conn)
                        .await
                        .context("failed to commit")?;
                    writer.open = false;
                    writer.commits += 1;
                    wal::keep_bounded(&mut writer).await;
                }
                Ok(())
            }
            TxInner::Postgres(tx) => tx.commit().await.context("failed to commit"),
        }
    }

    /// Runs `writes`, then commits: on SQLite in one trip to the database.
    /// If a statement fails, nothing is committed and the transaction rolls
    /// back. Returns the SQLite writer's mark just after this commit.
    pub async fn commit_with(mut self, writes: Writes<'_>) -> anyhow::Result<Option<WriterMark>> {
        let statements = match (&mut self.inner, writes.statements) {
            (TxInner::Sqlite(writer), Statements::Sqlite(mut compound, count)) => {
                if count == 0 && !writer.open {
                    return Ok(Some(WriterMark(writer.commits)));
                }
                if count > 0 {
                    compound.push("; ");
                }
                compound.push("COMMIT");
                run_compound(compound, count + 1, writer)
                    .await
                    .context("failed to commit")?;
                writer.open = false;
                writer.commits += 1;
                wal::keep_bounded(writer).await;
                return Ok(Some(WriterMark(writer.commits)));
            }
            (_, statements) => statements,
        };
        let writes = Writes { statements };
        writes.execute(&mut self).await.context("failed to write")?;
        self.commit().await?;
        Ok(None)
    }

    /// On SQLite, the writer's mark as this transaction found it.
    /// `None` on PostgreSQL, where other connections write beside this one.
    pub fn writer_mark(&self) -> Option<WriterMark> {
        match &self.inner {
            TxInner::Sqlite(writer) => Some(WriterMark(writer.commits)),
            TxInner::Postgres(_) => None,
        }
    }

    /// `" FOR UPDATE"` on PostgreSQL, empty on SQLite.
    pub fn for_update(&self) -> &'static str {
        match self.inner {
            TxInner::Sqlite(_) => "",
            TxInner::Postgres(_) => " FOR UPDATE",
        }
    }
}

/// Whether `err` is a unique-constraint violation (on either backend).
pub fn is_unique_violation(err: &sqlx::Error) -> bool {
    matches!(err, sqlx::Error::Database(e) if e.is_unique_violation())
}
