//! Node tokens and where each node stands, answered from memory (issue 38):
//! every heartbeat names its node by its token and asks whether the node is
//! registered and not lost, and at fleet scale those two reads were half of
//! a beat's database round trips.
//!
//! Kept in step by the writers, never by time (ARCHITECTURE.md §19: a
//! revoked token or a deleted node is refused at once):
//! - every writer of a cached column (the token, `status`, `registered_at`)
//!   calls [`announce`] in its transaction and [`NodeCache::forget`] after
//!   its commit, before it answers, so this process refuses the old state
//!   from then on;
//! - [`announce`] notifies the other replicas on PostgreSQL; each forgets the
//!   node when it hears it, so a change made on another replica reaches
//!   this one within PostgreSQL's notification delay (milliseconds). While
//!   this replica is not listening (starting, or its listening connection
//!   lost), nothing is answered from memory;
//! - a lookup that raced a change (it read the row before the change
//!   committed) is not kept: each forget moves a generation on, and a
//!   lookup keeps its answer only if the generation did not move while it
//!   read.
//!
//! Unknown tokens are never remembered: a new node's token is found in the
//! database the first time it is used.

use super::store::{self, NodeStatus};
use crate::db::{Db, Pool, Tx, TxInner};
use anyhow::Context;
use sqlx::postgres::PgListener;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;
use uuid::Uuid;

/// The PostgreSQL channel a node change is announced on; the payload is the node's id.
pub const NODES_CHANNEL: &str = "gpuex_nodes";

/// What a heartbeat asks of its node's row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Standing {
    pub status: NodeStatus,
    /// An agent registered the node.
    pub registered: bool,
}

/// The cache. Cheap to clone.
#[derive(Clone)]
pub struct NodeCache {
    known: Arc<RwLock<Known>>,
    /// Whether changes made elsewhere reach this cache: always on SQLite
    /// (one process), on PostgreSQL while the listener listens.
    trusted: Arc<AtomicBool>,
}

#[derive(Default)]
struct Known {
    /// Moves on with every forget; see the module documentation.
    generation: u64,
    tokens: HashMap<String, Uuid>,
    nodes: HashMap<Uuid, Remembered>,
}

/// One node as remembered.
struct Remembered {
    standing: Standing,
    /// Its token's hash, when it was looked up by its token.
    token_hash: Option<String>,
}

impl NodeCache {
    /// An empty cache for `db`: trusted at once on SQLite; on PostgreSQL
    /// once [`NodeCache::spawn_listener`]'s listener listens.
    pub fn new(db: &Db) -> NodeCache {
        NodeCache {
            known: Arc::default(),
            trusted: Arc::new(AtomicBool::new(matches!(db.pool, Pool::Sqlite(_)))),
        }
    }

    fn trusted(&self) -> bool {
        self.trusted.load(Ordering::Acquire)
    }

    fn generation(&self) -> u64 {
        self.known
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .generation
    }

    /// The node whose token hashes to `token_hash`, if any.
    pub async fn node_of_token(&self, db: &Db, token_hash: &str) -> anyhow::Result<Option<Uuid>> {
        let trusted = self.trusted();
        if trusted {
            let known = self.known.read().unwrap_or_else(PoisonError::into_inner);
            if let Some(node) = known.tokens.get(token_hash) {
                return Ok(Some(*node));
            }
        }
        let generation = self.generation();
        let Some((node, standing)) = store::standing_by_token(db, token_hash).await? else {
            return Ok(None);
        };
        if trusted {
            let mut known = self.known.write().unwrap_or_else(PoisonError::into_inner);
            if known.generation == generation && self.trusted() {
                known.tokens.insert(token_hash.to_owned(), node);
                known.nodes.insert(
                    node,
                    Remembered {
                        standing,
                        token_hash: Some(token_hash.to_owned()),
                    },
                );
            }
        }
        Ok(Some(node))
    }

    /// Where `node` stands; `None` for a node that does not exist or was deleted.
    pub async fn standing(&self, db: &Db, node: Uuid) -> anyhow::Result<Option<Standing>> {
        let trusted = self.trusted();
        if trusted {
            let known = self.known.read().unwrap_or_else(PoisonError::into_inner);
            if let Some(kept) = known.nodes.get(&node) {
                return Ok(Some(kept.standing).filter(|s| s.status != NodeStatus::Deleted));
            }
        }
        let generation = self.generation();
        let Some(standing) = store::standing(db, node).await? else {
            return Ok(None);
        };
        if trusted {
            let mut known = self.known.write().unwrap_or_else(PoisonError::into_inner);
            if known.generation == generation && self.trusted() {
                known.nodes.insert(
                    node,
                    Remembered {
                        standing,
                        token_hash: None,
                    },
                );
            }
        }
        Ok(Some(standing).filter(|s| s.status != NodeStatus::Deleted))
    }

    /// Drops what is known of `node`: its row or token changed (committed).
    pub fn forget(&self, node: Uuid) {
        let mut known = self.known.write().unwrap_or_else(PoisonError::into_inner);
        known.generation += 1;
        if let Some(Remembered {
            token_hash: Some(hash),
            ..
        }) = known.nodes.remove(&node)
        {
            known.tokens.remove(&hash);
        }
        // A token looked up before the node was known by id alone.
        known.tokens.retain(|_, n| *n != node);
    }

    /// Drops everything: many nodes changed at once (a provider's role
    /// taken away), or changes may have been missed.
    pub fn forget_all(&self) {
        let mut known = self.known.write().unwrap_or_else(PoisonError::into_inner);
        known.generation += 1;
        known.tokens.clear();
        known.nodes.clear();
    }

    /// On PostgreSQL: listens for the changes other replicas announce, and
    /// trusts the cache only while it listens. Ends when the database closes.
    pub fn spawn_listener(&self, db: &Db) -> Option<tokio::task::JoinHandle<()>> {
        let Pool::Postgres(pool) = &db.pool else {
            return None;
        };
        // A connection of its own, outside the pool the requests share.
        let listening = sqlx::postgres::PgPoolOptions::new()
            .max_connections(1)
            .connect_lazy_with(pool.connect_options().as_ref().clone());
        let (cache, pool) = (self.clone(), pool.clone());
        Some(tokio::spawn(async move {
            while !pool.is_closed() {
                if let Err(e) = cache.listen(&listening).await {
                    tracing::debug!(error = %e, "the node change listener reconnects");
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            listening.close().await;
        }))
    }

    /// Listens until the connection fails; the cache is distrusted and
    /// emptied when it does, since changes may be missed from then on.
    async fn listen(&self, listening: &sqlx::PgPool) -> Result<(), sqlx::Error> {
        let mut listener = PgListener::connect_with(listening).await?;
        listener.listen(NODES_CHANNEL).await?;
        self.forget_all();
        self.trusted.store(true, Ordering::Release);
        let outcome = loop {
            match listener.try_recv().await {
                Ok(Some(note)) => match note.payload().parse::<Uuid>() {
                    Ok(node) => self.forget(node),
                    Err(_) => self.forget_all(),
                },
                // The connection was lost: what was said meanwhile is not heard.
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        self.trusted.store(false, Ordering::Release);
        self.forget_all();
        outcome
    }
}

/// Tells the other replicas, when `tx` commits, that `node`'s cached
/// columns changed (nothing to tell on SQLite, which has one process).
pub async fn announce(tx: &mut Tx<'_>, node: Uuid) -> anyhow::Result<()> {
    if let TxInner::Postgres(t) = &mut tx.inner {
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(NODES_CHANNEL)
            .bind(node.to_string())
            .execute(&mut **t)
            .await
            .context("failed to announce a node change")?;
    }
    Ok(())
}
