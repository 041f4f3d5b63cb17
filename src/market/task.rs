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
use super::restore;
use super::stream::MarketFeed;
use super::writer::{self, Batch, BillingTerms, DemandCursor, Followup};
use crate::billing::balances::BalanceCache;
use crate::cluster::{forward, Cluster, Role};
use crate::db::Db;
use crate::engine::{Command, Engine, EngineConfig};
use crate::events::{EventHub, NewEvent};
use chrono::{DateTime, SubsecRound, Utc};
use futures::FutureExt;
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
pub async fn start(
    db: Db,
    config: MarketConfig,
    queue_wait: prometheus::Histogram,
    row_lag: prometheus::Histogram,
    events: EventHub,
    feed: MarketFeed,
    cluster: Cluster,
) -> anyhow::Result<MarketHandle> {
    let (engine, seq) = restore::load_at(&db, config.engine).await?;
    let owed = journal::owed_at(&db, seq).await?;
    let demand = restore::demand_cursor(&db, &engine).await?;
    let queue = QueueClock::waiting_in(&engine, queue_wait);
    let (tx, rx) = mpsc::channel(1024);
    let status = Arc::new(JournalStatus::default());
    status.restored(seq);
    let handle = MarketHandle {
        tx,
        journal: status.clone(),
    };
    let task = MarketTask {
        engine,
        demand,
        db,
        config: Arc::new(config.clone()),
        last_billing: 0,
        balances: BalanceCache::default(),
        queue,
        events,
        history: MarketHistory::default(),
        feed: feed.clone(),
        // Until the first look at the role: the engine was just loaded.
        mode: Mode::Following,
        cluster,
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
    last_billing: i64,
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
    mode: Mode,
    cluster: Cluster,
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
enum Mode {
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
            let leading = matches!(self.mode, Mode::Leading { .. });
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
                // Last: a busy queue must not starve a follower's catching up.
                request = rx.recv() => match request {
                    Some(first) => first,
                    None => return,
                },
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
                    Request::Command {
                        command,
                        meta,
                        tell,
                        here,
                        reply,
                    } => match self.mode {
                        Mode::Leading { .. } => batch.push(Pending {
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
                        Mode::Following if !here => self.forward(*command, meta, tell, reply),
                        Mode::Following | Mode::Detached => {
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
        let mode = match role {
            Role::Leader { epoch } => Mode::Leading { fence: epoch },
            Role::Follower { .. } => Mode::Following,
            Role::Detached { .. } => Mode::Detached,
        };
        if mode == self.mode {
            return;
        }
        let was_leading = matches!(self.mode, Mode::Leading { .. });
        self.mode = mode;
        if let Mode::Leading { .. } = mode {
            // Bill at the first batch, as after a restart.
            self.last_billing = 0;
            if rebuild {
                let started = std::time::Instant::now();
                self.promote().await;
                tracing::info!(
                    took_ms = started.elapsed().as_millis(),
                    seq = self.journal.seq,
                    "this replica leads the market"
                );
            }
        } else if was_leading {
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

    async fn apply_batch(&mut self, batch: Vec<Pending>) {
        match self.guarded_batch(&batch).await {
            Ok(Ok(results)) => {
                // Answered once what the batch owes is applied too, so a
                // client reads its command's whole effect.
                self.settle_owed().await;
                for (pending, result) in batch.into_iter().zip(results) {
                    let _ = pending.reply.send(result);
                }
            }
            Ok(Err(err)) => {
                self.batch_failed(&err).await;
                for pending in batch {
                    let _ = pending.reply.send(Err(self.not_applied()));
                }
            }
            Err(Panicked) => {
                tracing::error!(commands = batch.len(), "a market batch panicked; rebuilding the engine and applying its commands one by one");
                self.rebuild().await;
                // Alone, each innocent command goes through and only the
                // one that panics again is refused.
                for pending in batch {
                    self.apply_alone(pending).await;
                }
            }
        }
    }

    /// One command in a batch of its own; one that panics is refused.
    async fn apply_alone(&mut self, pending: Pending) {
        let batch = [pending];
        let outcome = self.guarded_batch(&batch).await;
        let [pending] = batch;
        let result = match outcome {
            Ok(Ok(mut results)) => {
                self.settle_owed().await;
                results.pop().unwrap_or_else(|| {
                    Err(MarketError::Storage(anyhow::anyhow!(
                        "the command had no result"
                    )))
                })
            }
            Ok(Err(err)) => {
                self.batch_failed(&err).await;
                Err(self.not_applied())
            }
            Err(Panicked) => {
                tracing::error!(command = ?pending.command, "a market command panicked; it is refused and the engine rebuilt");
                self.rebuild().await;
                Err(MarketError::Panicked)
            }
        };
        let _ = pending.reply.send(result);
    }

    /// [`MarketTask::try_batch`], with a panic caught: the transaction is
    /// dropped (rolled back) and the caller rebuilds the engine, whose
    /// memory may be half-changed.
    async fn guarded_batch(
        &mut self,
        batch: &[Pending],
    ) -> Result<anyhow::Result<Vec<Result<Committed, MarketError>>>, Panicked> {
        // PostgreSQL keeps microseconds: a reply shows the time as stored.
        let now = self.config.clock.now().trunc_subsecs(6);
        AssertUnwindSafe(self.try_batch(batch, now))
            .catch_unwind()
            .await
            .map_err(|_| Panicked)
    }

    /// A batch that could not commit: memory goes back in step with disk;
    /// a leader that was replaced stops leading.
    async fn batch_failed(&mut self, err: &anyhow::Error) {
        if let Some(fenced) = err.downcast_ref::<crate::cluster::Fenced>() {
            tracing::error!(%fenced, "another replica leads the market now; stepping down");
            self.mode = Mode::Detached;
        } else {
            tracing::error!(error = ?err, "market batch failed; rebuilding the engine from the database");
        }
        self.rebuild().await;
    }

    /// Why a command of a failed batch was not applied.
    fn not_applied(&self) -> MarketError {
        match self.mode {
            Mode::Leading { .. } => MarketError::NotCommitted,
            Mode::Following | Mode::Detached => MarketError::NoLeader,
        }
    }

    /// Memory back in step with disk, after a failed or panicked batch.
    async fn rebuild(&mut self) {
        self.balances.forget();
        self.history.forget();
        self.journal.unwritten.clear();
        self.journal.digest_due = None;
        self.journal.snapshot_due = false;
        self.journal.hash_due = false;
        self.journal.checks.clear();
        match restore::load_at(&self.db, self.config.engine).await {
            Ok((engine, seq)) => {
                self.engine = engine;
                self.journal.seq = seq;
                self.journal.status.restored(seq);
            }
            Err(e) => tracing::error!(error = ?e, "failed to rebuild the engine"),
        }
        match journal::owed_at(&self.db, self.journal.seq).await {
            Ok(owed) => self.owed = owed,
            Err(e) => tracing::error!(error = ?e, "failed to read what the last batch owes"),
        }
        self.queue = QueueClock::waiting_in(&self.engine, self.queue.histogram.clone());
        match restore::demand_cursor(&self.db, &self.engine).await {
            Ok(cursor) => self.demand = cursor,
            Err(e) => tracing::error!(error = ?e, "failed to read the demand log"),
        }
    }

    /// Applies every command of the batch in one transaction. A command the
    /// engine refuses is answered with its error; a storage failure fails the batch.
    async fn try_batch(
        &mut self,
        batch: &[Pending],
        now: DateTime<Utc>,
    ) -> anyhow::Result<Vec<Result<Committed, MarketError>>> {
        let ts = now.timestamp();
        // Its own handle, so the transaction does not borrow the task.
        let db = self.db.clone();
        let mut tx = db.begin().await?;
        let terms = BillingTerms {
            platform_fee: self.config.platform_fee,
            notice_s: self.config.engine.notice_s,
        };
        let mut out = Batch::new(terms, now);
        // Before anything settles: settling flushes the journal, which
        // forgets these balances along with everything else it knew.
        if let Some(balances) = self.balances.take_current(&tx) {
            out.remember_balances(balances);
        }
        // What the last batch's events called for, before anything new
        // (the release of a lease it could not fund first of all).
        let owed = std::mem::take(&mut self.owed);
        let events = self.apply_owed(&mut out, ts, &owed);
        self.record(&mut out, &mut tx, events).await?;
        // Whatever fell due next, so a refused command cannot swallow timer events.
        let due = self
            .step(ts, Command::Tick)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        // A clearing that leaves market history as it was changes nothing either.
        let quiet = due.iter().all(|e| self.history.absorbs(e))
            && self.engine.changed_leases().next().is_none()
            && self.engine.changed_orders().next().is_none();
        self.record(&mut out, &mut tx, due.clone()).await?;
        let billing_due = ts - self.last_billing >= self.config.billing_interval_s;
        // A clock tick that changed nothing writes nothing: no transaction per second at rest.
        let committed = |events| Committed {
            events,
            at: now,
            order: None,
        };
        if quiet
            && !billing_due
            && owed.is_empty()
            && self.journal.unwritten.len() < UNWRITTEN_TICKS
            && batch.iter().all(|p| matches!(*p.command, Command::Tick))
        {
            // Nothing was written, so the balances taken above still hold.
            self.balances.keep(tx.writer_mark(), out.take_balances());
            self.feed.committed(out.clearings(), false);
            return Ok(batch.iter().map(|_| Ok(committed(Vec::new()))).collect());
        }
        let mut results = Vec::with_capacity(batch.len());
        for pending in batch {
            let mut command = (*pending.command).clone();
            if let Command::Place(place) = &mut command {
                match out.admit(&mut tx, place, pending.meta.as_deref()).await? {
                    writer::Admission::New => {}
                    writer::Admission::Refused(err) => {
                        results.push(Err(err));
                        continue;
                    }
                }
                place.funds_available = out.available_funds(&mut tx, place.buyer).await?;
            }
            if let Command::Convert {
                lease_id,
                funds_available,
                ..
            } = &mut command
            {
                if let Some(buyer) = self.engine.lease(*lease_id).map(|l| l.buyer) {
                    *funds_available = out.available_funds(&mut tx, buyer).await?;
                }
            }
            if matches!(command, Command::Tick) {
                results.push(Ok(Vec::new()));
                continue;
            }
            #[cfg(test)]
            let doomed = tests::is_doomed(&command);
            match self.step(ts, command) {
                Ok(events) => {
                    // Tests stand in for an engine bug here: after the engine
                    // changed, before anything of it is committed.
                    #[cfg(test)]
                    assert!(!doomed, "a command doomed by a test panics");
                    self.record(&mut out, &mut tx, events.clone()).await?;
                    out.tell(pending.tell.iter().cloned());
                    results.push(Ok(events));
                }
                Err(e) => results.push(Err(MarketError::Engine(e))),
            }
        }
        if billing_due {
            out.bill_running(&mut tx).await?;
            self.last_billing = ts;
        }
        if let Mode::Leading { fence: Some(epoch) } = self.mode {
            crate::cluster::fence(&mut tx, epoch).await?;
        }
        out.finish(&mut tx, &self.engine, &self.demand).await?;
        let history = self.history.roll(&mut tx, out.clearings()).await?;
        let mut writes = out.final_writes(&tx);
        history.push(&mut writes);
        let written = self.journal_row(&mut writes, out.owed())?;
        let mark = tx.commit_with(writes).await?;
        self.owed = out.owed().to_vec();
        self.journal.seq = written.seq;
        self.journal.status.applied(written.seq, written.epoch);
        self.send_digest();
        self.feed.committed(out.clearings(), true);
        if out.told_anything() {
            self.events.poke();
        }
        self.demand = out.demand_after();
        self.queue.follow(&due);
        for events in results.iter().flatten() {
            self.queue.follow(events);
        }
        self.balances.keep(mark, out.take_balances());
        Ok(batch
            .iter()
            .zip(results)
            .map(|(pending, result)| {
                let mut done = committed(result?);
                if let Command::Place(place) = &*pending.command {
                    done.order = out.written_order(place.order_id);
                }
                Ok(done)
            })
            .collect())
    }
}

mod journaling;
mod owed;
mod queue_clock;
#[cfg(test)]
mod tests;
