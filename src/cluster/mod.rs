//! Scale-out (ARCHITECTURE.md §12): many `gpuex serve` replicas on one PostgreSQL,
//! one engine leader per market shard.
//!
//! PostgreSQL does the distributed work, as in Oban and River: the leader
//! is whoever holds an advisory lock on a connection of its own
//! ([`election`]); it writes its epoch and address to `market_leader`, and
//! every batch it commits re-reads that row `FOR SHARE`, so a leader that was
//! replaced can no longer commit anything ([`fence`]). Followers hand engine
//! commands to the leader over an internal HTTP call, each message signed
//! for that leader's epoch ([`internal`], [`forward`]), and answer once the leader committed. Each follower keeps a
//! mirror of the engine, rebuilt from the database whenever the leader
//! `NOTIFY`s a commit, for the reads (quotes, book, offers) it answers itself.
//!
//! SQLite has one process: it always leads, and nothing here runs.

pub mod election;
pub mod forward;
pub mod internal;
pub mod replicas;

use crate::config::Settings;
use crate::db::{Db, Pool, Tx, TxInner};
use crate::market::MarketHandle;
use sqlx::postgres::PgConnectOptions;
use sqlx::{ConnectOptions, Connection, PgConnection};
use std::net::SocketAddr;
use std::str::FromStr;
use std::sync::Arc;
use tokio::sync::{watch, Notify};
use tokio::task::JoinHandle;

/// The market shard this process elects a leader for. One today; the lock
/// key leaves room for one per region group.
pub const SHARD: i32 = 0;

/// The PostgreSQL channel a leader notifies after each commit that wrote.
pub const CHANGES_CHANNEL: &str = "gpuex_market";

/// Where this replica stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// It runs the engine. `epoch` fences its commits on PostgreSQL (none
    /// on SQLite, where nothing else can write).
    Leader { epoch: Option<i64> },
    /// Another replica leads; `leader_url` is where it said it listens,
    /// `leader_epoch` the epoch it leads in (internal calls are signed for it).
    Follower {
        leader_url: Option<String>,
        leader_epoch: Option<i64>,
    },
    /// Neither: it has not reached the database yet, or lost it.
    Detached { why: &'static str },
}

impl Role {
    /// `leader`, `follower` or `detached`, as `/readyz` and the logs show it.
    pub fn name(&self) -> &'static str {
        match self {
            Role::Leader { .. } => "leader",
            Role::Follower { .. } => "follower",
            Role::Detached { .. } => "detached",
        }
    }
}

/// This replica's view of the cluster. Cheap to clone.
/// What the replicas' routes, their standing reports and the leader's side
/// of forwarded commands use.
#[derive(Clone)]
pub struct ClusterState {
    pub db: Db,
    pub settings: Arc<Settings>,
    pub cluster: Cluster,
    pub market: MarketHandle,
}

#[derive(Clone)]
pub struct Cluster {
    role: watch::Receiver<Role>,
    /// Woken when the leader committed something (followers only).
    changes: Arc<Notify>,
    /// The key internal calls are signed with, the same on every replica
    /// (none on a single process, which takes no internal call).
    key: Option<Arc<internal::InternalKey>>,
    /// The nonces of internal calls accepted here.
    nonces: Arc<internal::Nonces>,
    client: reqwest::Client,
    election: Option<Arc<election::Election>>,
    /// Who this replica is, for the list of replicas.
    me: Arc<replicas::Me>,
}

impl Cluster {
    /// A process that always leads (SQLite, or tests of the market alone).
    pub fn single() -> Cluster {
        let (_, role) = watch::channel(Role::Leader { epoch: None });
        Cluster {
            role,
            changes: Arc::new(Notify::new()),
            key: None,
            nonces: Arc::default(),
            client: reqwest::Client::new(),
            election: None,
            me: Arc::new(replicas::Me::new("local".into())),
        }
    }

    /// Joins the election on PostgreSQL (waiting for its first outcome), or
    /// leads alone on SQLite. `secret` is shared by every replica (it is in
    /// the database); the internal calls' key is derived from it.
    pub async fn start(
        db: &Db,
        database_url: &str,
        advertise_url: String,
        secret: &str,
    ) -> anyhow::Result<Cluster> {
        let me = Arc::new(replicas::Me::new(advertise_url.clone()));
        let Pool::Postgres(_) = db.pool else {
            return Ok(Cluster {
                me,
                ..Cluster::single()
            });
        };
        let changes = Arc::new(Notify::new());
        let election =
            election::Election::start(database_url, advertise_url, changes.clone()).await?;
        let client = reqwest::Client::builder()
            .connect_timeout(std::time::Duration::from_secs(1))
            .timeout(forward::CALL_TIMEOUT)
            // Below the servers' idle keep-alive (60 s by default), so a
            // connection is never reused just as the leader closes it.
            .pool_idle_timeout(std::time::Duration::from_secs(20))
            .build()?;
        Ok(Cluster {
            role: election.role(),
            changes,
            key: Some(Arc::new(internal::InternalKey::derive(secret))),
            nonces: Arc::default(),
            client,
            election: Some(Arc::new(election)),
            me,
        })
    }

    /// Who this replica is.
    pub fn me(&self) -> &replicas::Me {
        &self.me
    }

    /// Where this replica stands now.
    pub fn role(&self) -> Role {
        self.role.borrow().clone()
    }

    /// The role and its changes.
    pub fn watch(&self) -> watch::Receiver<Role> {
        self.role.clone()
    }

    pub fn is_leader(&self) -> bool {
        matches!(*self.role.borrow(), Role::Leader { .. })
    }

    /// Resolves when the leader says it committed (on a follower).
    pub fn changes(&self) -> Arc<Notify> {
        self.changes.clone()
    }

    /// The key internal calls are signed with (none on a single process).
    pub fn key(&self) -> Option<&internal::InternalKey> {
        self.key.as_deref()
    }

    /// The nonces of internal calls accepted by this replica.
    pub fn nonces(&self) -> &internal::Nonces {
        &self.nonces
    }

    /// Steps down and gives the lock back, so another replica takes over at
    /// once (the server is stopping; its market stopped first).
    pub async fn stop(&self) {
        if let Some(election) = &self.election {
            election.stop().await;
        }
    }
}

impl Cluster {
    /// Runs the worker `start` spawns while this replica leads: started on
    /// taking the lead, aborted on losing it. Aborting the returned task
    /// aborts the worker too.
    pub fn leader_only(
        &self,
        name: &'static str,
        start: impl Fn() -> JoinHandle<()> + Send + 'static,
    ) -> JoinHandle<()> {
        let mut role = self.watch();
        tokio::spawn(async move {
            let mut running: Option<AbortOnDrop> = None;
            loop {
                let leads = matches!(*role.borrow_and_update(), Role::Leader { .. });
                if leads && running.is_none() {
                    tracing::debug!(worker = name, "starting on the leader");
                    running = Some(AbortOnDrop(start()));
                } else if !leads && running.take().is_some() {
                    tracing::info!(worker = name, "stopped: this replica no longer leads");
                }
                if role.changed().await.is_err() {
                    // The role never changes again (a single process).
                    std::future::pending::<()>().await;
                }
            }
        })
    }
}

/// A worker that ends with whoever holds it.
struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Where the other replicas reach this one: `--advertise-url`, else the
/// listener's address (an unspecified one, `0.0.0.0`, as loopback with a
/// warning: only a single host can reach it).
pub fn advertise_url(configured: Option<&str>, listening: SocketAddr) -> String {
    if let Some(url) = configured {
        return url.trim_end_matches('/').to_owned();
    }
    let mut addr = listening;
    if addr.ip().is_unspecified() {
        addr.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
        tracing::debug!(
            "no --advertise-url: other replicas reach this one at {addr}, which only works on one host"
        );
    }
    format!("http://{addr}")
}

/// A session lock on PostgreSQL held while one replica migrates and
/// bootstraps (nothing on SQLite: one process).
pub struct StartupLock(Option<PgConnection>);

impl StartupLock {
    /// Waits for the replicas starting before this one.
    pub async fn take(db: &Db, database_url: &str) -> anyhow::Result<StartupLock> {
        let Pool::Postgres(_) = db.pool else {
            return Ok(StartupLock(None));
        };
        let mut conn = PgConnectOptions::from_str(database_url)?
            .application_name("gpuex-startup")
            .connect()
            .await?;
        sqlx::query("SELECT pg_advisory_lock($1)")
            .bind(election::lock_key(STARTUP_LOCK_SHARD))
            .execute(&mut conn)
            .await?;
        Ok(StartupLock(Some(conn)))
    }

    /// Lets the next replica start. Closing the session frees the lock.
    pub async fn release(self) {
        if let Some(conn) = self.0 {
            let _ = conn.close().await;
        }
    }
}

/// The key [`StartupLock`] takes: beside the shards', never one of them.
const STARTUP_LOCK_SHARD: i32 = 0xffff;

/// A leader's commit found another epoch in `market_leader`: it was
/// replaced, and must stop leading. Nothing of the batch is committed.
#[derive(Debug, thiserror::Error)]
#[error("this replica no longer leads the market (epoch {ours}, now {current:?})")]
pub struct Fenced {
    pub ours: i64,
    pub current: Option<i64>,
}

/// Checks, inside a leader's batch, that `epoch` still leads, and has the
/// commit notify the followers. The row stays share-locked until the
/// commit, so a new leader's epoch update waits for this batch, and every
/// batch after it sees the new epoch and is refused.
pub async fn fence(tx: &mut Tx<'_>, epoch: i64) -> anyhow::Result<()> {
    let TxInner::Postgres(t) = &mut tx.inner else {
        return Ok(());
    };
    let current: Option<i64> = sqlx::query_scalar(
        "SELECT epoch FROM market_leader, pg_notify($2, '') WHERE shard = $1 FOR SHARE OF market_leader",
    )
    .bind(SHARD)
    .bind(CHANGES_CHANNEL)
    .fetch_optional(&mut **t)
    .await?;
    if current != Some(epoch) {
        return Err(Fenced {
            ours: epoch,
            current,
        }
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replica_listening_everywhere_advertises_loopback_unless_told() {
        let any: SocketAddr = "0.0.0.0:8080".parse().expect("address");
        assert_eq!(advertise_url(None, any), "http://127.0.0.1:8080");
        assert_eq!(
            advertise_url(Some("http://10.0.0.7:8080/"), any),
            "http://10.0.0.7:8080"
        );
    }

    #[test]
    fn a_single_process_leads_and_holds_no_internal_key() {
        let cluster = Cluster::single();
        assert!(cluster.is_leader());
        assert!(cluster.key().is_none());
    }
}
