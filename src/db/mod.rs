//! Storage: one connection pool on SQLite or PostgreSQL, chosen by the URL's scheme.
//!
//! Queries are written once and run on both backends: [`dispatch!`] expands a
//! body once per backend so each copy is type-checked against its own driver,
//! and [`Money`] stores decimals exactly on both (TEXT in SQLite, NUMERIC in
//! PostgreSQL). SQL uses `$1`-style parameters in ascending order, which both
//! drivers bind by position.

mod money;

pub use money::Money;

use anyhow::Context;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{PgPool, Postgres, Sqlite, SqlitePool, Transaction};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, MutexGuard};

/// The database pool. Cheap to clone.
#[derive(Clone)]
pub struct Db {
    #[doc(hidden)]
    pub pool: Pool,
    /// SQLite allows one writer at a time and a deferred transaction that
    /// reads before it writes can fail with SQLITE_BUSY instead of waiting;
    /// serialising write transactions in-process avoids that.
    sqlite_writer: Arc<Mutex<()>>,
}

#[derive(Clone)]
#[doc(hidden)]
pub enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// A write transaction on either backend.
pub struct Tx<'a> {
    #[doc(hidden)]
    pub inner: TxInner,
    _writer: Option<MutexGuard<'a, ()>>,
}

#[doc(hidden)]
pub enum TxInner {
    Sqlite(Transaction<'static, Sqlite>),
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
            $crate::db::TxInner::Sqlite(t) => {
                let $conn = &mut **t;
                $body
            }
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

/// Rows per multi-row INSERT: far below either backend's bind limit.
pub const INSERT_CHUNK: usize = 256;

/// Inserts `$rows` (a slice) in a transaction with multi-row INSERTs of at
/// most [`INSERT_CHUNK`] rows, on either backend. `$head` is the statement up
/// to `VALUES`; `|$row, $item| $binds` pushes one row's values; an optional
/// `$tail` follows the values (e.g. `ON CONFLICT … DO NOTHING`). Evaluates
/// to `Result<(), sqlx::Error>`.
#[macro_export]
#[doc(hidden)]
macro_rules! insert_rows {
    ($tx:expr, $head:expr, $rows:expr, |$row:ident, $item:pat_param| $binds:expr $(, $tail:expr)?) => {{
        let mut inserted: Result<(), sqlx::Error> = Ok(());
        for chunk in $rows.chunks($crate::db::INSERT_CHUNK) {
            inserted = $crate::db::dispatch_tx!($tx, conn => {
                let mut insert = sqlx::QueryBuilder::new($head);
                insert.push_values(chunk, |mut $row, $item| {
                    $binds;
                });
                $(insert.push($tail);)?
                insert.build().execute(conn).await.map(|_| ())
            });
            if inserted.is_err() {
                break;
            }
        }
        inserted
    }};
}

pub use crate::{dispatch, dispatch_tx, execute_tx, insert_rows};

impl Db {
    /// Connects to `url` (`sqlite://path` or `postgres://…`), creating a SQLite
    /// file and its folder when missing, and applies the migrations.
    pub async fn connect(url: &str) -> anyhow::Result<Db> {
        let pool = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let options = PgConnectOptions::from_str(url).context("invalid PostgreSQL URL")?;
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
            if let Some(parent) = options.get_filename().parent() {
                if !parent.as_os_str().is_empty() {
                    std::fs::create_dir_all(parent).with_context(|| {
                        format!("failed to create the database folder {}", parent.display())
                    })?;
                }
            }
            // A local file does not go stale: skip the ping before each use.
            let pool = SqlitePoolOptions::new()
                .max_connections(8)
                .test_before_acquire(false)
                .connect_with(options)
                .await
                .context("failed to open the SQLite database")?;
            Pool::Sqlite(pool)
        } else {
            anyhow::bail!("unsupported database URL `{url}`: use sqlite:// or postgres://");
        };
        Ok(Db {
            pool,
            sqlite_writer: Arc::new(Mutex::new(())),
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
        Ok(match &self.pool {
            Pool::Sqlite(pool) => {
                let guard = self.sqlite_writer.lock().await;
                let tx = pool
                    .begin()
                    .await
                    .context("failed to begin a transaction")?;
                Tx {
                    inner: TxInner::Sqlite(tx),
                    _writer: Some(guard),
                }
            }
            Pool::Postgres(pool) => {
                let tx = pool
                    .begin()
                    .await
                    .context("failed to begin a transaction")?;
                Tx {
                    inner: TxInner::Postgres(tx),
                    _writer: None,
                }
            }
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
        dispatch!(self, pool => pool.close().await)
    }
}

impl Tx<'_> {
    pub async fn commit(self) -> anyhow::Result<()> {
        match self.inner {
            TxInner::Sqlite(tx) => tx.commit().await,
            TxInner::Postgres(tx) => tx.commit().await,
        }
        .context("failed to commit")
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
