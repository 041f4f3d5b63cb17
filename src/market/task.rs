//! The one task that owns the engine (ARCHITECTURE.md §5).
//!
//! It applies commands one at a time and commits their effects (order and
//! lease rows, holds, charges) before replying; commands waiting in the
//! channel share one transaction (group commit), which also appends every
//! command the engine applied to the journal (ARCHITECTURE.md §20). If a commit
//! fails, the engine is rebuilt from the database, so memory never runs
//! ahead of disk. A follower applies the leader's journal to its own engine.

use super::handle::{Committed, MarketError, MarketHandle, OrderMeta, Reply, Request};
use super::history::MarketHistory;
use super::journal::{self, JournalStatus, Step};
use super::live_leases::LiveLeases;
use super::restore;
use super::stream::MarketFeed;
use super::writer::{Batch, DemandCursor, Followup};
use crate::billing::balances::BalanceCache;
use crate::cluster::{forward, Cluster, Role};
use crate::db::heartbeats::Heartbeats;
use crate::db::Db;
use crate::engine::{Command, Engine, EngineConfig};
use crate::events::{EventHub, NewEvent};

use billing_passes::BillingPasses;
use queue_clock::QueueClock;
use rust_decimal::Decimal;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// How the market task runs.
#[derive(Debug, Clone)]
pub struct MarketConfig {
    pub engine: EngineConfig,
    pub platform_fee: Decimal,
    /// How often running leases are charged and their holds renewed.
    pub billing_interval_s: i64,
    /// How often the engine's clock ticks.
    pub tick: Duration,
    /// Every this many journal rows a snapshot is kept (and the journal trimmed).
    pub journal_snapshot_every: i64,
    pub clock: crate::clock::Clock,
}

/// The most commands committed in one transaction.
const GROUP_COMMIT: usize = 64;

/// Batches of follow-ups alone that may run back to back, after a batch
/// that owes some.
const OWED_ROUNDS: usize = 8;

/// Rebuilds the engine from the database, starts its task and its clock.
/// `queue_wait` observes how long each filled order waited; `row_lag`, on a
/// follower, how long after the leader's batch each journal row was applied.
// Each argument is a handle the task shares with one other part of the
// server, passed by the composition root.
#[allow(clippy::too_many_arguments)]
pub async fn start(
    db: Db,
    config: MarketConfig,
    queue_wait: prometheus::Histogram,
    row_lag: prometheus::Histogram,
    events: EventHub,
    feed: MarketFeed,
    cluster: Cluster,
    heartbeats: Heartbeats,
) -> anyhow::Result<MarketHandle> {
    let (engine, seq) = restore::load_at(&db, config.engine).await?;
    let owed = journal::owed_at(&db, seq).await?;
    let demand = restore::demand_cursor(&db, &engine).await?;
    let queue = QueueClock::waiting_in(&engine, queue_wait);
    let (tx, rx) = mpsc::channel(1024);
    let status = Arc::new(JournalStatus::default());
    status.restored(seq);
    let live = LiveLeases::default();
    let handle = MarketHandle {
        tx,
        journal: status.clone(),
        live: live.clone(),
    };
    let task = MarketTask {
        engine,
        demand,
        db,
        config: Arc::new(config.clone()),
        billing: BillingPasses::default(),
        balances: BalanceCache::default(),
        queue,
        events,
        history: MarketHistory::default(),
        feed: feed.clone(),
        // Until the first look at the role: the engine was just loaded.
        duty: Duty::Following,
        cluster,
        heartbeats,
        live,
        journal: JournalCursor {
            seq,
            unwritten: Vec::new(),
            status,
            digest_due: None,
            snapshot_due: false,
            hash_due: false,
            last_digest_ms: 0,
            checks: Vec::new(),
            row_lag,
        },
        owed,
        myself: handle.tx.downgrade(),
    };
    tokio::spawn(task.run(rx));
    feed.watch_book(handle.clone());
    let ticker = handle.clone();
    tokio::spawn(async move {
        let mut interval = tokio::time::interval(config.tick);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            interval.tick().await;
            if ticker.command(Command::Tick).await.is_err() {
                break;
            }
        }
    });
    Ok(handle)
}

struct MarketTask {
    engine: Engine,
    demand: DemandCursor,
    db: Db,
    config: Arc<MarketConfig>,
    billing: BillingPasses,
    /// The balances the last batch left, so the next one admits its
    /// orders without reading them when nothing has written since.
    balances: BalanceCache,
    queue: QueueClock,
    /// Told after each commit that wrote events.
    events: EventHub,
    /// The current market history buckets, forgotten on rebuild.
    history: MarketHistory,
    /// Told after each commit: clearings, and that the book may have moved.
    feed: MarketFeed,
    /// Whether this replica leads (applies commands) or follows (hands
    /// them to the leader and keeps its engine as a mirror for reads).
    duty: Duty,
    cluster: Cluster,
    /// The nodes' beats not yet written: billing and node loss read
    /// `last_heartbeat_at`, so a batch that does either writes them first.
    heartbeats: Heartbeats,
    /// What heartbeats read of each node's leases (kept while leading).
    live: LiveLeases,
    journal: JournalCursor,
    /// What the last committed batch's events call for from the engine (a
    /// release, a funds notice): the next batch applies it first, so no
    /// batch feeds its own results back into the engine (ARCHITECTURE.md §20).
    owed: Vec<Followup>,
    /// The task's own queue, for a forwarded command that finds this
    /// replica leading by the time it would go out. Weak: the handles the
    /// server holds decide when the task ends.
    myself: mpsc::WeakSender<Request>,
}

/// What the task does with commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Duty {
    /// Applies them; `fence` is the epoch each commit checks (PostgreSQL).
    Leading { fence: Option<i64> },
    /// Hands them to the leader.
    Following,
    /// Refuses them (503): no leader is known to this replica.
    Detached,
}

/// Where the engine stands in the journal.
struct JournalCursor {
    /// The last row the engine's state includes: written (leader) or
    /// applied (follower).
    seq: i64,
    /// What the leader applied since that row, for the next one: clock
    /// ticks that changed nothing commit no transaction of their own.
    unwritten: Vec<Step>,
    /// Shared with the routes (`/readyz`, `/metrics`).
    status: Arc<JournalStatus>,
    /// The leader's engine as the last digest row left it, hashed once
    /// that row committed.
    digest_due: Option<(i64, crate::engine::Snapshot)>,
    /// Whether that snapshot is also kept as the snapshot row at its sequence.
    snapshot_due: bool,
    /// Whether it is hashed into its row's digest.
    hash_due: bool,
    /// When (Unix ms) the leader last chose a row to hash at.
    last_digest_ms: i64,
    /// A follower's own digests of digest rows, until the leader's is
    /// there to compare with.
    checks: Vec<journaling::DigestCheck>,
    /// Observes, on a follower, how long after the leader's batch each row
    /// was applied (wall clocks: the leader's at the batch, this one's now).
    row_lag: prometheus::Histogram,
}

/// At most this many quiet ticks wait for a row; then one is written for
/// them alone (at rest, one small row every few minutes).
const UNWRITTEN_TICKS: usize = 256;

/// A batch that panicked.
struct Panicked;

/// One command of a batch, with where its answer goes.
struct Pending {
    command: Box<Command>,
    meta: Option<Box<OrderMeta>>,
    tell: Vec<NewEvent>,
    reply: Reply,
}

impl MarketTask {
    async fn run(mut self, mut rx: mpsc::Receiver<Request>) {
        let mut role = self.cluster.watch();
        let changes = self.cluster.changes();
        let initial = role.borrow_and_update().clone();
        self.take_role(initial, false).await;
        let mut role_open = true;
        let mut stopped = None;
        loop {
            let leading = matches!(self.duty, Duty::Leading { .. });
            let first = tokio::select! {
                biased;
                changed = role.changed(), if role_open => {
                    if changed.is_ok() {
                        let now = role.borrow_and_update().clone();
                        self.take_role(now, true).await;
                    } else {
                        role_open = false;
                    }
                    continue;
                }
                () = changes.notified(), if !leading => {
                    // The leader's commit may have written events: this
                    // replica's streams hear them now, not at the next look.
                    self.events.poke();
                    self.catch_up().await;
                    continue;
                }
                // After the leadership changes: a busy queue must not starve a follower's catching up.
                request = rx.recv() => match request {
                    Some(first) => first,
                    None => return,
                },
                // With nothing queued, a spot clearing under way takes its
                // next step at once (every batch takes one): a clearing is
                // stepped so that no batch waits behind all of it, and the
                // steps themselves should not wait for the clock's next tick.
                () = std::future::ready(()), if leading && self.engine.clearing_under_way() => {
                    let (reply, _) = tokio::sync::oneshot::channel();
                    Request::Command {
                        command: Box::new(Command::Tick),
                        meta: None,
                        tell: Vec::new(),
                        here: true,
                        reply,
                    }
                }
            };
            let mut batch = Vec::new();
            let mut next = Some(first);
            while let Some(request) = next.take() {
                match request {
                    Request::Stop(done) => {
                        stopped = Some(done);
                        break;
                    }
                    Request::Read(job) => {
                        // A read cannot change the engine, so one that panics
                        // costs only its own answer (its sender is dropped).
                        let engine = &self.engine;
                        if std::panic::catch_unwind(AssertUnwindSafe(|| job(engine))).is_err() {
                            tracing::error!(
                                "a read of the market panicked; it was answered with an error"
                            );
                        }
                    }
                    Request::Trial(job) => {
                        // A trial puts back what it tried; one that panics
                        // may not have, so memory is rebuilt from disk.
                        let engine = &mut self.engine;
                        if std::panic::catch_unwind(AssertUnwindSafe(|| job(engine))).is_err() {
                            tracing::error!(
                                "a trial on the market panicked; the engine is rebuilt"
                            );
                            self.rebuild().await;
                        }
                    }
                    Request::Command {
                        command,
                        meta,
                        tell,
                        here,
                        reply,
                    } => match self.duty {
                        Duty::Leading { .. } => batch.push(Pending {
                            command,
                            meta,
                            tell,
                            reply,
                        }),
                        // The leader's own clock ticks; a follower's does nothing.
                        _ if matches!(*command, Command::Tick) => {
                            let _ = reply.send(Ok(Committed {
                                events: Vec::new(),
                                at: self.config.clock.now(),
                                order: None,
                            }));
                        }
                        Duty::Following if !here => self.forward(*command, meta, tell, reply),
                        Duty::Following | Duty::Detached => {
                            let _ = reply.send(Err(MarketError::NoLeader));
                        }
                    },
                }
                if batch.len() < GROUP_COMMIT {
                    next = rx.try_recv().ok();
                }
            }
            if !batch.is_empty() {
                self.apply_batch(batch).await;
            }
            if let Some(done) = stopped.take() {
                // What was sent before the stop is committed; nothing after.
                let _ = done.send(());
                return;
            }
        }
    }

    /// Follows the election: a follower that comes to lead applies the
    /// journal's tail (the last leader's commits; every end and notice that
    /// fell due since comes at its first tick) and leads with the engine it
    /// has: a promotion, not a restore. One that stops leading restores,
    /// dropping whatever it applied that was never committed.
    async fn take_role(&mut self, role: Role, rebuild: bool) {
        let duty = match role {
            Role::Leader { epoch } => Duty::Leading { fence: epoch },
            Role::Follower { .. } => Duty::Following,
            Role::Detached { .. } => Duty::Detached,
        };
        if duty == self.duty {
            return;
        }
        let was_leading = matches!(self.duty, Duty::Leading { .. });
        self.duty = duty;
        if let Duty::Leading { .. } = duty {
            // Bill at the first batch, as after a restart.
            self.billing.restart();
            if rebuild {
                let started = std::time::Instant::now();
                self.promote().await;
                tracing::info!(
                    took_ms = started.elapsed().as_millis(),
                    seq = self.journal.seq,
                    "this replica leads the market"
                );
            }
            self.live.rebuild(&self.engine);
        } else if was_leading {
            self.live.forget();
            self.rebuild().await;
        }
    }

    /// Hands a command to the leader; the reply comes once it committed.
    /// The mirror is then stale: the leader's notice will refresh it.
    fn forward(
        &self,
        command: Command,
        meta: Option<Box<OrderMeta>>,
        tell: Vec<NewEvent>,
        reply: Reply,
    ) {
        let (cluster, myself) = (self.cluster.clone(), self.myself.clone());
        tokio::spawn(async move {
            let forwarded = forward::Forwarded {
                command: command.into(),
                meta: meta.map(|m| *m),
                tell,
            };
            let answer = match forward::to_leader(&cluster, &forwarded).await {
                forward::Forwarding::Done(answer) => answer.map(|(events, at)| Committed {
                    events,
                    at,
                    order: None,
                }),
                forward::Forwarding::LeadingHere => {
                    // Back into this task's own queue, to be applied here.
                    let Some(market) = myself.upgrade() else {
                        let _ = reply.send(Err(MarketError::Unavailable));
                        return;
                    };
                    let request = Request::Command {
                        command: Box::new(forwarded.command.into()),
                        meta: forwarded.meta.map(Box::new),
                        tell: forwarded.tell,
                        here: true,
                        reply,
                    };
                    if let Err(mpsc::error::SendError(Request::Command { reply, .. })) =
                        market.send(request).await
                    {
                        let _ = reply.send(Err(MarketError::Unavailable));
                    }
                    return;
                }
            };
            let _ = reply.send(answer);
        });
    }
}

mod batch;
mod billing_passes;
mod journaling;
mod owed;
mod queue_clock;
#[cfg(test)]
mod tests;
