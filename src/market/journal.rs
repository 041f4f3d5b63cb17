//! The journal (ARCHITECTURE.md §20): every command the engine applied, in order,
//! with the time it was applied at. The engine is deterministic, so the
//! journal is the state: a follower applies it to an engine of its own
//! instead of rebuilding one from the rows, and a replica of the next
//! release replays what this one wrote.
//!
//! The leader appends one row per committed batch, in the batch's own
//! transaction, so a row exists exactly when the batch's rows do. Clock
//! ticks that changed nothing write no transaction; they wait in the
//! leader's buffer and go out with the next row, so a follower applies
//! exactly what the leader did. A [`DIGEST_EVERY`]th row, at most once a
//! second ([`DIGEST_SPACING_MS`]), gets the leader's state digest once it
//! is hashed (off the batch's path), for followers to check theirs
//! against; every few thousandth (the market's `journal_snapshot_every`) a
//! snapshot is kept, also off the path, and the journal before the older
//! of the last two is trimmed.

use super::writer::Followup;
use crate::cluster::forward::WireCommand;
use crate::db::{dispatch, dispatch_tx, push_statement, Db, Tx, Writes};
use crate::engine::types::Ts;
use crate::engine::{Command, Engine, EngineConfig, Snapshot};
use anyhow::Context;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// The encoding of `journal.commands` and `journal_snapshots.state`. A
/// change to either gets a new number, and the decoder keeps reading the
/// old ones.
pub const VERSION: i32 = 1;

/// At most every this many rows the leader writes its state digest...
pub const DIGEST_EVERY: i64 = 32;

/// ...and at most once in this many milliseconds: hashing the whole engine
/// costs the leader's cores, and a busy market writes hundreds of rows a
/// second.
pub const DIGEST_SPACING_MS: i64 = 1000;

/// `journal.digest` of a row whose digest the leader is hashing: a follower
/// that applies the row hashes its own engine there too. NULL: no digest.
pub const DIGEST_PENDING: &str = "";

/// Rows a follower reads in one trip.
const READ_CHUNK: i64 = 256;

/// One command as the engine applied it.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub at: Ts,
    pub command: Command,
}

/// [`Step`] as stored: the engine's commands travel as [`WireCommand`]s,
/// which serde can write for every variant.
#[derive(Serialize, Deserialize)]
struct StoredStep {
    at: Ts,
    command: WireCommand,
}

/// A row of the journal.
#[derive(Debug, Clone)]
pub struct Entry {
    pub seq: i64,
    pub epoch: i64,
    /// When the leader's batch ran (Unix ms, the leader's clock).
    pub at_ms: i64,
    pub steps: Vec<Step>,
    pub digest: Option<String>,
}

/// The encoded commands of a batch.
pub fn encode(steps: &[Step]) -> anyhow::Result<String> {
    let stored: Vec<StoredStep> = steps
        .iter()
        .map(|s| StoredStep {
            at: s.at,
            command: s.command.clone().into(),
        })
        .collect();
    serde_json::to_string(&stored).context("failed to encode the journal's commands")
}

/// Commands as [`encode`] (of `version`) wrote them.
pub fn decode(version: i32, commands: &str) -> anyhow::Result<Vec<Step>> {
    anyhow::ensure!(
        version == VERSION,
        "journal version {version} is not one this release reads (it reads {VERSION})"
    );
    let stored: Vec<StoredStep> =
        serde_json::from_str(commands).context("corrupt journal commands")?;
    Ok(stored
        .into_iter()
        .map(|s| Step {
            at: s.at,
            command: s.command.into(),
        })
        .collect())
}

/// A row for [`push_append`].
pub struct Append {
    pub seq: i64,
    pub epoch: i64,
    pub at_ms: i64,
    /// The batch's steps, [`encode`]d.
    pub commands: String,
    /// What the batch owes the next one ([`encode_owed`]).
    pub owed: Option<String>,
    /// Whether the leader hashes its engine at this row; the digest comes
    /// later ([`keep_digest`]), hashed off the batch's path.
    pub digest: bool,
}

/// Appends `row` to `writes` (the batch's final statements).
pub fn push_append(writes: &mut Writes<'_>, row: Append) {
    push_statement!(writes, |b| {
        b.push("INSERT INTO journal (seq, epoch, at_ms, version, commands, owed, digest) VALUES (");
        b.push_bind(row.seq);
        b.push(", ");
        b.push_bind(row.epoch);
        b.push(", ");
        b.push_bind(row.at_ms);
        b.push(", ");
        b.push_bind(VERSION);
        b.push(", ");
        b.push_bind(row.commands.clone());
        b.push(", ");
        b.push_bind(row.owed.clone());
        b.push(", ");
        b.push_bind(row.digest.then_some(DIGEST_PENDING));
        b.push(")");
    });
}

/// What a batch owes the next one, as its row keeps it (`None`: nothing).
pub fn encode_owed(owed: &[Followup]) -> anyhow::Result<Option<String>> {
    if owed.is_empty() {
        return Ok(None);
    }
    serde_json::to_string(owed)
        .map(Some)
        .context("failed to encode what the batch owes")
}

/// What row `seq` owes the batch after it: a leader that starts, restores
/// or is promoted at `seq` applies it first.
pub async fn owed_at(db: &Db, seq: i64) -> anyhow::Result<Vec<Followup>> {
    let owed: Option<Option<String>> = dispatch!(db, pool => {
        sqlx::query_scalar("SELECT owed FROM journal WHERE seq = $1")
            .bind(seq)
            .fetch_optional(pool)
            .await
    })?;
    match owed.flatten() {
        Some(text) => serde_json::from_str(&text)
            .with_context(|| format!("corrupt owed follow-ups in journal row {seq}")),
        None => Ok(Vec::new()),
    }
}

/// Keeps `engine`'s state as the snapshot at `seq`, and trims what no
/// replica needs any more: snapshots before the previous one, and the
/// journal up to it (a replica further behind restores from a snapshot).
pub fn push_snapshot(writes: &mut Writes<'_>, seq: i64, at_ms: i64, state: String) {
    push_statement!(writes, |b| {
        b.push("INSERT INTO journal_snapshots (seq, version, at_ms, state) VALUES (");
        b.push_bind(seq);
        b.push(", ");
        b.push_bind(VERSION);
        b.push(", ");
        b.push_bind(at_ms);
        b.push(", ");
        b.push_bind(state.clone());
        b.push(") ON CONFLICT (seq) DO NOTHING");
    });
    push_statement!(writes, |b| {
        b.push(
            "DELETE FROM journal WHERE seq <= (SELECT MAX(seq) FROM journal_snapshots WHERE seq < ",
        );
        b.push_bind(seq);
        b.push(")");
    });
    push_statement!(writes, |b| {
        b.push("DELETE FROM journal_snapshots WHERE seq < (SELECT MAX(seq) FROM journal_snapshots WHERE seq < ");
        b.push_bind(seq);
        b.push(")");
    });
}

/// Keeps `state` (an encoded snapshot) as the snapshot at `seq`, trimming
/// as [`push_snapshot`] does, in a transaction of its own.
pub async fn keep_snapshot(db: &Db, seq: i64, at_ms: i64, state: String) -> anyhow::Result<()> {
    let tx = db.begin().await?;
    let mut writes = Writes::new(&tx);
    push_snapshot(&mut writes, seq, at_ms, state);
    tx.commit_with(writes).await?;
    Ok(())
}

/// The engine's state, as a snapshot row stores it.
pub fn encode_snapshot(engine: &Engine) -> anyhow::Result<String> {
    serde_json::to_string(&engine.snapshot()).context("failed to encode the engine's snapshot")
}

/// The rows after `seq`, oldest first, at most a chunk of them.
pub async fn after(db: &Db, seq: i64) -> anyhow::Result<Vec<Entry>> {
    let rows: Vec<(i64, i64, i64, i32, String, Option<String>)> = dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT seq, epoch, at_ms, version, commands, digest FROM journal \
             WHERE seq > $1 ORDER BY seq LIMIT $2",
        )
        .bind(seq)
        .bind(READ_CHUNK)
        .fetch_all(pool)
        .await
    })?;
    rows.into_iter()
        .map(|(seq, epoch, at_ms, version, commands, digest)| {
            Ok(Entry {
                seq,
                epoch,
                at_ms,
                steps: decode(version, &commands).with_context(|| format!("journal row {seq}"))?,
                digest,
            })
        })
        .collect()
}

/// The journal's last sequence (0 when empty), read in `tx`.
pub async fn last_seq(tx: &mut Tx<'_>) -> anyhow::Result<i64> {
    let last: Option<i64> = dispatch_tx!(tx, conn => {
        sqlx::query_scalar("SELECT MAX(seq) FROM journal").fetch_one(&mut *conn).await
    })?;
    Ok(last.unwrap_or(0))
}

/// The latest snapshot (`newest`) or the oldest kept one, with its sequence.
pub async fn snapshot(
    db: &Db,
    config: EngineConfig,
    newest: bool,
) -> anyhow::Result<Option<(i64, Engine)>> {
    let sql = if newest {
        "SELECT seq, version, state FROM journal_snapshots ORDER BY seq DESC LIMIT 1"
    } else {
        "SELECT seq, version, state FROM journal_snapshots ORDER BY seq LIMIT 1"
    };
    let row: Option<(i64, i32, String)> = dispatch!(db, pool => {
        sqlx::query_as(sql).fetch_optional(pool).await
    })?;
    let Some((seq, version, state)) = row else {
        return Ok(None);
    };
    anyhow::ensure!(
        version == VERSION,
        "snapshot version {version} is not one this release reads (it reads {VERSION})"
    );
    let snapshot: Snapshot = serde_json::from_str(&state).context("corrupt journal snapshot")?;
    let engine = Engine::restore(config, snapshot)
        .map_err(|e| anyhow::anyhow!("the snapshot at {seq} does not restore: {e}"))?;
    Ok(Some((seq, engine)))
}

/// Applies a row's commands; the engine refuses what it refused on the
/// leader, so refusals are part of the replay, not errors of it.
pub fn apply(engine: &mut Engine, steps: &[Step]) {
    for step in steps {
        let _ = engine.apply(step.at, step.command.clone());
    }
}

/// A digest of everything the engine would restore from: two engines with
/// the same digest place, price and end alike.
pub fn digest(engine: &Engine) -> String {
    digest_of(engine.snapshot())
}

/// [`digest`] of a snapshot taken earlier, so the hashing can run off the
/// market task. Lists the engine keeps in hash order are sorted; the demand
/// mix keeps its order, which counts. The JSON streams into the hash.
pub fn digest_of(mut state: Snapshot) -> String {
    state.regions.sort_by(|a, b| a.name.cmp(&b.name));
    state
        .prices
        .sort_by(|a, b| (&a.region, &a.gpu_model, a.unit).cmp(&(&b.region, &b.gpu_model, b.unit)));
    state.nodes.sort_by_key(|n| n.spec.id);
    state.leases.sort_by_key(|l| l.id);
    state.orders.sort_by_key(|o| o.id);
    state
        .clearing
        .sort_by(|a, b| (&a.gpu_model, &a.region).cmp(&(&b.gpu_model, &b.region)));
    state.listings.sort_by_key(|l| l.id);
    let mut hasher = HashWriter(Sha256::new());
    if let Err(e) = serde_json::to_writer(&mut hasher, &state) {
        return format!("unencodable: {e}");
    }
    hex::encode(hasher.0.finalize())
}

/// Bytes written are hashed.
struct HashWriter(Sha256);

impl std::io::Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Keeps the leader's digest of the state at row `seq`, computed after the
/// row committed (off the batch's path).
pub async fn keep_digest(db: &Db, seq: i64, digest: &str) -> anyhow::Result<()> {
    dispatch!(db, pool => {
        sqlx::query("UPDATE journal SET digest = $1 WHERE seq = $2")
            .bind(digest)
            .bind(seq)
            .execute(pool)
            .await
            .map(|_| ())
    })?;
    // Followers waiting to compare theirs hear of it now, not at the next commit.
    if let crate::db::Pool::Postgres(pool) = &db.pool {
        sqlx::query("SELECT pg_notify($1, '')")
            .bind(crate::cluster::CHANGES_CHANNEL)
            .execute(pool)
            .await?;
    }
    Ok(())
}

/// The leader's digest of row `seq`: `None` while it is being hashed,
/// `Some(None)` when the row is gone (trimmed) or has none, so it cannot be
/// checked.
pub async fn leader_digest(db: &Db, seq: i64) -> anyhow::Result<Option<Option<String>>> {
    let row: Option<Option<String>> = dispatch!(db, pool => {
        sqlx::query_scalar("SELECT digest FROM journal WHERE seq = $1")
            .bind(seq)
            .fetch_optional(pool)
            .await
    })?;
    Ok(match row {
        None | Some(None) => Some(None),
        Some(Some(digest)) if digest == DIGEST_PENDING => None,
        Some(Some(digest)) => Some(Some(digest)),
    })
}

/// Where this replica's engine stands in the journal, for `/readyz` and
/// `/metrics`: shared by the market task (which writes) and the routes.
#[derive(Debug, Default)]
pub struct JournalStatus {
    applied_seq: AtomicI64,
    /// Since when (Unix ms) this follower has known of rows it has not
    /// applied yet; 0 while it has applied all it knows of.
    behind_since_ms: AtomicI64,
    epoch: AtomicI64,
    /// Times this replica's engine was restored (a snapshot or the rows).
    restores: AtomicU64,
    /// Digests of the leader that this replica's engine did not match.
    mismatches: AtomicU64,
    /// Digests of the leader this replica compared its engine's with.
    checked: AtomicU64,
    /// Woken at each row applied, for requests waiting on one.
    advanced: tokio::sync::Notify,
}

impl JournalStatus {
    pub fn applied_seq(&self) -> i64 {
        self.applied_seq.load(Ordering::Relaxed)
    }

    pub fn epoch(&self) -> i64 {
        self.epoch.load(Ordering::Relaxed)
    }

    pub fn restores(&self) -> u64 {
        self.restores.load(Ordering::Relaxed)
    }

    pub fn mismatches(&self) -> u64 {
        self.mismatches.load(Ordering::Relaxed)
    }

    pub fn digests_checked(&self) -> u64 {
        self.checked.load(Ordering::Relaxed)
    }

    /// How long this replica has been behind the journal it knows of, in
    /// milliseconds at `now_ms`: 0 when it has applied every row the
    /// leader announced (always, on the leader, which writes them).
    pub fn lag_ms(&self, now_ms: i64) -> i64 {
        match self.behind_since_ms.load(Ordering::Relaxed) {
            0 => 0,
            since => (now_ms - since).max(0),
        }
    }

    /// Waits until this replica's engine includes row `seq`, at most
    /// `within`; whether it does.
    pub async fn wait_for(&self, seq: i64, within: std::time::Duration) -> bool {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            // Registered before the look, so a row applied between the two wakes it.
            let advanced = self.advanced.notified();
            tokio::pin!(advanced);
            advanced.as_mut().enable();
            if self.applied_seq() >= seq {
                return true;
            }
            if tokio::time::timeout_at(deadline, advanced).await.is_err() {
                return self.applied_seq() >= seq;
            }
        }
    }

    pub(super) fn applied(&self, seq: i64, epoch: i64) {
        self.applied_seq.store(seq, Ordering::Relaxed);
        self.epoch.store(epoch, Ordering::Relaxed);
        self.advanced.notify_waiters();
    }

    /// The leader announced rows at `now_ms`; the lag counts from the first
    /// announcement not yet caught up with.
    pub(super) fn behind(&self, now_ms: i64) {
        let _ = self.behind_since_ms.compare_exchange(
            0,
            now_ms.max(1),
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
    }

    pub(super) fn caught_up(&self) {
        self.behind_since_ms.store(0, Ordering::Relaxed);
    }

    pub(super) fn restored(&self, seq: i64) {
        self.applied_seq.store(seq, Ordering::Relaxed);
        self.behind_since_ms.store(0, Ordering::Relaxed);
        self.advanced.notify_waiters();
        self.restores.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn mismatched(&self) {
        self.mismatches.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn checked(&self) {
        self.checked.fetch_add(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{ListPrice, NodeSpec};

    #[test]
    fn every_kind_of_command_comes_back_from_the_journal_as_it_went_in() {
        let commands = vec![
            Command::SetPrices(vec![ListPrice {
                region: "eu-west".into(),
                gpu_model: "H100-80GB".into(),
                unit: crate::catalog::Unit::TflopsH,
                list_price: rust_decimal::Decimal::new(12, 1),
            }]),
            Command::SetForecast(Vec::new()),
            Command::SetRegion {
                name: "eu-west".into(),
                timezone: "Europe/Paris".into(),
            },
            Command::UpsertNode(NodeSpec {
                id: uuid::Uuid::nil(),
                zone: None,
                region: "eu-west".into(),
                cpu_milli: 1000,
                memory_mib: 1024,
                gpus: Vec::new(),
                cuda: "12.4".parse().ok(),
            }),
            Command::Cancel {
                order_id: uuid::Uuid::nil(),
            },
            Command::Tick,
        ];
        let steps: Vec<Step> = commands
            .into_iter()
            .enumerate()
            .map(|(i, command)| Step {
                at: i64::try_from(i).unwrap_or_default(),
                command,
            })
            .collect();
        let text = encode(&steps).expect("encodes");
        assert_eq!(decode(VERSION, &text).expect("decodes"), steps);
        assert!(
            decode(VERSION + 1, &text).is_err(),
            "an unknown version is refused"
        );
    }

    #[test]
    fn the_digest_does_not_depend_on_hash_order_but_on_state() {
        let mut a = Engine::new(EngineConfig::default());
        let mut b = Engine::new(EngineConfig::default());
        let node = |id: u128| {
            Command::UpsertNode(NodeSpec {
                id: uuid::Uuid::from_u128(id),
                zone: None,
                region: "eu-west".into(),
                cpu_milli: 1000,
                memory_mib: 1024,
                gpus: Vec::new(),
                cuda: None,
            })
        };
        for id in [1, 2, 3] {
            let _ = a.apply(0, node(id));
        }
        for id in [3, 1, 2] {
            let _ = b.apply(0, node(id));
        }
        assert_eq!(digest(&a), digest(&b));
        let _ = b.apply(0, node(4));
        assert_ne!(digest(&a), digest(&b));
    }
}
