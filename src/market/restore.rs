//! Rebuilds the engine at start-up, or after a failed commit: from the
//! newest journal snapshot and the journal after it (ARCHITECTURE.md §20). A database
//! from before the journal (or a new one) has no snapshot yet; its engine is
//! read from the rows once, at the journal's sequence, and kept as the first.

use super::journal;
use super::writer::DemandCursor;
use crate::catalog::Unit;
use crate::db::{dispatch, dispatch_tx, Db, Money, Tx, TxInner};
use crate::engine::placement::DemandClass;
use crate::engine::{
    ClearingRow, Engine, EngineConfig, EngineMeta, Lease, ListPrice, NodeRow, NodeSpec, RegionRow,
    Snapshot,
};
use anyhow::Context;

/// Tries at replaying from the newest snapshot: one fails only when a newer
/// snapshot trimmed the rows it was reading, and the next starts from that.
const REPLAY_TRIES: usize = 3;

/// The engine exactly as the database last committed it. The first tick after
/// this processes every end and notice that fell due while it was down.
pub async fn load(db: &Db, config: EngineConfig) -> anyhow::Result<Engine> {
    Ok(load_at(db, config).await?.0)
}

/// [`load`], with the journal's sequence the engine is at: everything after
/// it is what the engine has not seen.
pub async fn load_at(db: &Db, config: EngineConfig) -> anyhow::Result<(Engine, i64)> {
    for _ in 0..REPLAY_TRIES {
        let Some((seq, mut engine)) = journal::snapshot(db, config, true).await? else {
            match first_snapshot(db, config).await? {
                Some(first) => return Ok(first),
                // Another replica kept one meanwhile: replay from it.
                None => continue,
            }
        };
        if let Some(seq) = replay(db, &mut engine, seq).await? {
            return Ok((engine, seq));
        }
    }
    anyhow::bail!("the journal was trimmed faster than this replica could replay it")
}

/// Applies the journal after `seq` to `engine`; the sequence it ends at, or
/// `None` when the rows after `seq` were trimmed meanwhile.
async fn replay(db: &Db, engine: &mut Engine, mut seq: i64) -> anyhow::Result<Option<i64>> {
    loop {
        let entries = journal::after(db, seq).await?;
        if entries.is_empty() {
            return Ok(Some(seq));
        }
        for entry in entries {
            if entry.seq != seq + 1 {
                return Ok(None);
            }
            journal::apply(engine, &entry.steps);
            seq = entry.seq;
        }
    }
}

/// The engine from the rows, kept as the journal's first snapshot. Any
/// replica may keep it: the rows are read at one sequence, so whoever writes
/// it first writes the same state, and later writers change nothing.
async fn first_snapshot(db: &Db, config: EngineConfig) -> anyhow::Result<Option<(Engine, i64)>> {
    let Some((engine, seq)) = read_rows(db, config, true).await? else {
        return Ok(None);
    };
    let at_ms = chrono::Utc::now().timestamp_millis();
    journal::keep_snapshot(db, seq, at_ms, journal::encode_snapshot(&engine)?)
        .await
        .context("failed to keep the journal's first snapshot")?;
    Ok(Some((engine, seq)))
}

/// The engine the rows of a database from before the journal hold, with the
/// journal's sequence they are at: they are read in one transaction (on
/// PostgreSQL a repeatable read, so a leader's commits meanwhile are all in
/// it or all out). Such rows keep the engine's whole lease, order and
/// listing (`leases.record_json`, then `engine_json`; `orders.engine_json`,
/// `resale_listings.engine_json`) and `engine_meta`. Rows written since keep
/// only their own records, so only a database without a snapshot is read
/// this way, once.
pub async fn from_rows(db: &Db, config: EngineConfig) -> anyhow::Result<(Engine, i64)> {
    read_rows(db, config, false)
        .await?
        .context("the rows were not read")
}

/// [`from_rows`]; `first`: only while the journal has no snapshot (once one
/// is kept, the rows are no longer the engine's storage), else `None`.
async fn read_rows(
    db: &Db,
    config: EngineConfig,
    first: bool,
) -> anyhow::Result<Option<(Engine, i64)>> {
    let mut tx = db.begin().await?;
    if let TxInner::Postgres(t) = &mut tx.inner {
        sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            .execute(&mut **t)
            .await?;
    }
    if first {
        let kept: Option<i64> = dispatch_tx!(tx, conn => {
            sqlx::query_scalar("SELECT MAX(seq) FROM journal_snapshots").fetch_one(&mut *conn).await
        })?;
        if kept.is_some() {
            return Ok(None);
        }
    }
    let seq = journal::last_seq(&mut tx).await?;
    let snapshot = snapshot(&mut tx, config.demand_window).await?;
    // Read only: dropping it rolls back.
    drop(tx);
    let engine = Engine::restore(config, snapshot)
        .map_err(|e| anyhow::anyhow!("failed to restore the engine: {e}"))?;
    Ok(Some((engine, seq)))
}

async fn snapshot(tx: &mut Tx<'_>, demand_window: usize) -> anyhow::Result<Snapshot> {
    let regions: Vec<(String, String)> = dispatch_tx!(tx, conn => {
        sqlx::query_as("SELECT name, timezone FROM regions").fetch_all(&mut *conn).await
    })?;
    let prices: Vec<(String, String, String, Money)> = dispatch_tx!(tx, conn => {
        sqlx::query_as("SELECT region, gpu_model, unit, list_price FROM list_prices").fetch_all(&mut *conn).await
    })?;
    let nodes: Vec<(String, bool)> = dispatch_tx!(tx, conn => {
        sqlx::query_as("SELECT spec_json, cordoned FROM nodes WHERE status NOT IN ('lost', 'deleted')").fetch_all(&mut *conn).await
    })?;
    let leases: Vec<String> = dispatch_tx!(tx, conn => {
        sqlx::query_scalar("SELECT record_json FROM leases WHERE state NOT IN ('ended', 'failed')")
            .fetch_all(&mut *conn)
            .await
    })?;
    let orders: Vec<String> = dispatch_tx!(tx, conn => {
        sqlx::query_scalar("SELECT engine_json FROM orders WHERE engine_json IS NOT NULL")
            .fetch_all(&mut *conn)
            .await
    })?;
    let listings: Vec<String> = dispatch_tx!(tx, conn => {
        sqlx::query_scalar("SELECT engine_json FROM resale_listings WHERE state = 'open'")
            .fetch_all(&mut *conn)
            .await
    })?;
    let clearing: Vec<(String, String, Money)> = dispatch_tx!(tx, conn => {
        sqlx::query_as("SELECT gpu_model, region, clearing_index FROM spot_clearing").fetch_all(&mut *conn).await
    })?;
    let meta: Option<String> = dispatch_tx!(tx, conn => {
        sqlx::query_scalar("SELECT state_json FROM engine_meta WHERE id = 1").fetch_optional(&mut *conn).await
    })?;
    let mut meta: EngineMeta = match meta {
        Some(json) => serde_json::from_str(&json).context("corrupt engine state")?,
        None => EngineMeta::default(),
    };
    let logged = demand_log(tx, demand_window).await?;
    // Databases from before the log keep their window in engine_meta.
    if !logged.is_empty() {
        meta.demand = logged;
    }
    Ok(Snapshot {
        now: meta.now,
        regions: regions
            .into_iter()
            .map(|(name, timezone)| RegionRow { name, timezone })
            .collect(),
        prices: prices
            .into_iter()
            .filter_map(|(region, gpu_model, unit, price)| {
                Some(ListPrice {
                    region,
                    gpu_model,
                    unit: unit.parse::<Unit>().ok()?,
                    list_price: price.0,
                })
            })
            .collect(),
        nodes: nodes
            .into_iter()
            .map(|(json, cordoned)| {
                Ok(NodeRow {
                    spec: serde_json::from_str::<NodeSpec>(&json)?,
                    cordoned,
                })
            })
            .collect::<Result<_, serde_json::Error>>()
            .context("corrupt node row")?,
        leases: leases
            .iter()
            .map(|json| serde_json::from_str::<Lease>(json))
            .collect::<Result<_, _>>()
            .context("corrupt lease row")?,
        orders: orders
            .iter()
            .map(|json| serde_json::from_str(json))
            .collect::<Result<_, _>>()
            .context("corrupt order row")?,
        clearing: clearing
            .into_iter()
            .map(|(gpu_model, region, index)| ClearingRow {
                gpu_model,
                region,
                clearing_index: index.0,
            })
            .collect(),
        last_clear: meta.last_clear,
        seq: meta.seq,
        demand: meta.demand,
        spot_dirty: meta.spot_dirty,
        // Rows keep no clearing under way: one begins at the first tick.
        clearing_run: None,
        listings: listings
            .iter()
            .map(|json| serde_json::from_str(json))
            .collect::<Result<_, _>>()
            .context("corrupt listing row")?,
    })
}

/// The last `window` classes of the demand log, oldest first.
async fn demand_log(tx: &mut Tx<'_>, window: usize) -> anyhow::Result<Vec<DemandClass>> {
    let rows: Vec<(i64, i64, i64, i64)> = dispatch_tx!(tx, conn => {
        sqlx::query_as(
            "SELECT milli, memory_mb, gpus, cpu_milli FROM demand_log ORDER BY seq DESC LIMIT $1",
        )
        .bind(i64::try_from(window).unwrap_or(i64::MAX))
        .fetch_all(&mut *conn)
        .await
    })?;
    rows.into_iter()
        .rev()
        .map(|(milli, memory_mb, gpus, cpu_milli)| {
            Ok(DemandClass {
                milli: u32::try_from(milli)?,
                memory_mb: u64::try_from(memory_mb)?,
                gpus: u8::try_from(gpus)?,
                cpu_milli: u64::try_from(cpu_milli)?,
            })
        })
        .collect::<Result<_, std::num::TryFromIntError>>()
        .context("corrupt demand log row")
}

/// How much of the engine's demand mix the log already holds, and the log's
/// next sequence number: right after a load, everything in the mix is stored,
/// unless the log is empty (a database from before it), then the whole window
/// is written with the next batch.
pub async fn demand_cursor(db: &Db, engine: &Engine) -> anyhow::Result<DemandCursor> {
    let last: Option<i64> = dispatch!(db, pool => {
        sqlx::query_scalar("SELECT MAX(seq) FROM demand_log").fetch_one(pool).await
    })?;
    Ok(DemandCursor {
        persisted: if last.is_some() {
            engine.demand_mix().recorded()
        } else {
            0
        },
        next_seq: last.unwrap_or(0) + 1,
    })
}
