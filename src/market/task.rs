//! The one task that owns the engine (DESIGN §5).
//!
//! It applies commands one at a time and commits their effects (order and
//! lease rows, holds, charges) before replying; commands waiting in the
//! channel share one transaction (group commit). If a commit fails, the
//! engine is rebuilt from the database, so memory never runs ahead of disk.

use super::handle::{Committed, MarketError, MarketHandle, OrderMeta, Reply, Request};
use super::persist::{self, Batch, DemandCursor};
use super::restore;
use crate::db::{Db, WriterMark};
use crate::engine::{Command, Engine, EngineConfig};
use chrono::{DateTime, SubsecRound, Utc};
use rust_decimal::Decimal;
use std::collections::BTreeMap;
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
}

/// The most commands committed in one transaction.
const GROUP_COMMIT: usize = 64;

/// Rebuilds the engine from the database, starts its task and its clock.
pub async fn start(db: Db, config: MarketConfig) -> anyhow::Result<MarketHandle> {
    let engine = restore::load(&db, config.engine).await?;
    let demand = restore::demand_cursor(&db, &engine).await?;
    let (tx, rx) = mpsc::channel(1024);
    let handle = MarketHandle { tx };
    let task = MarketTask {
        engine,
        demand,
        db,
        config: Arc::new(config.clone()),
        last_billing: 0,
        known_balances: None,
    };
    tokio::spawn(task.run(rx));
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
    /// The balances the last batch left on SQLite, and the writer's mark
    /// just after its commit: while the mark holds, no one else has written
    /// a balance, and the next batch admits its orders without reading them.
    known_balances: Option<(WriterMark, BTreeMap<String, Decimal>)>,
}

/// The most balances carried from one batch to the next.
const KNOWN_BALANCES: usize = 4096;

/// One command of a batch, with where its answer goes.
struct Pending {
    command: Box<Command>,
    meta: Option<Box<OrderMeta>>,
    reply: Reply,
}

impl MarketTask {
    async fn run(mut self, mut rx: mpsc::Receiver<Request>) {
        while let Some(first) = rx.recv().await {
            let mut batch = Vec::new();
            let mut next = Some(first);
            while let Some(request) = next.take() {
                match request {
                    Request::Read(job) => job(&self.engine),
                    Request::Command {
                        command,
                        meta,
                        reply,
                    } => batch.push(Pending {
                        command,
                        meta,
                        reply,
                    }),
                }
                if batch.len() < GROUP_COMMIT {
                    next = rx.try_recv().ok();
                }
            }
            if !batch.is_empty() {
                self.apply_batch(batch).await;
            }
        }
    }

    async fn apply_batch(&mut self, batch: Vec<Pending>) {
        // PostgreSQL keeps microseconds: a reply shows the time as stored.
        let now = Utc::now().trunc_subsecs(6);
        match self.try_batch(&batch, now).await {
            Ok(results) => {
                for (pending, result) in batch.into_iter().zip(results) {
                    let _ = pending.reply.send(result);
                }
            }
            Err(err) => {
                self.known_balances = None;
                tracing::error!(error = ?err, "market batch failed; rebuilding the engine from the database");
                match restore::load(&self.db, self.config.engine).await {
                    Ok(engine) => self.engine = engine,
                    Err(e) => tracing::error!(error = ?e, "failed to rebuild the engine"),
                }
                match restore::demand_cursor(&self.db, &self.engine).await {
                    Ok(cursor) => self.demand = cursor,
                    Err(e) => tracing::error!(error = ?e, "failed to read the demand log"),
                }
                for pending in batch {
                    let _ = pending.reply.send(Err(MarketError::Storage(anyhow::anyhow!(
                        "the command could not be committed"
                    ))));
                }
            }
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
        let mut tx = self.db.begin().await?;
        let mut out = Batch::new(&self.config, now);
        // Whatever fell due first, so a refused command cannot swallow timer events.
        let due = self
            .engine
            .apply(ts, Command::Tick)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let quiet = due.is_empty()
            && self.engine.changed_leases().next().is_none()
            && self.engine.changed_orders().next().is_none();
        out.apply(&mut tx, &mut self.engine, due, None).await?;
        let billing_due = ts - self.last_billing >= self.config.billing_interval_s;
        // A clock tick that changed nothing writes nothing: no transaction per second at rest.
        let committed = |events| Committed {
            events,
            at: now,
            order: None,
        };
        if quiet && !billing_due && batch.iter().all(|p| matches!(*p.command, Command::Tick)) {
            return Ok(batch.iter().map(|_| Ok(committed(Vec::new()))).collect());
        }
        // Remembered balances stand in for a read only while no other
        // transaction committed a balance and nothing in this one wrote one yet.
        if let Some((mark, balances)) = self.known_balances.take() {
            if tx.writer_mark() == Some(mark) && tx.ledger_writes() == 0 {
                out.remember_balances(balances);
            }
        }
        let mut results = Vec::with_capacity(batch.len());
        for pending in batch {
            let mut command = (*pending.command).clone();
            if let Command::Place(place) = &mut command {
                match out.admit(&mut tx, place, pending.meta.as_deref()).await? {
                    persist::Admission::New => {}
                    persist::Admission::Refused(err) => {
                        results.push(Err(err));
                        continue;
                    }
                }
                place.funds_available = out.available_funds(&mut tx, place.buyer).await?;
            }
            if matches!(command, Command::Tick) {
                results.push(Ok(Vec::new()));
                continue;
            }
            match self.engine.apply(ts, command) {
                Ok(events) => {
                    out.apply(
                        &mut tx,
                        &mut self.engine,
                        events.clone(),
                        pending.meta.as_deref(),
                    )
                    .await?;
                    results.push(Ok(events));
                }
                Err(e) => results.push(Err(MarketError::Refused(e.to_string()))),
            }
        }
        if billing_due {
            out.bill_running(&mut tx, &mut self.engine).await?;
            self.last_billing = ts;
        }
        out.finish(&mut tx, &self.engine, &self.demand).await?;
        // The batch's journal knows each balance exactly only when its
        // final write is the transaction's one balance write.
        let journal_only = tx.ledger_writes() == 0;
        let writes = out.final_writes(&tx);
        let mark = tx.commit_with(writes).await?;
        self.demand = out.demand_after();
        if let Some(mark) = mark.filter(|_| journal_only) {
            let balances = out.take_balances();
            if balances.len() <= KNOWN_BALANCES {
                self.known_balances = Some((mark, balances));
            }
        }
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
