//! The `events` table: written with the change it reports, read by id.

use super::{EventType, StoredEvent};
use crate::db::{dispatch, execute_tx, push_statement, Db, Statements, Text, Writes};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use uuid::Uuid;

/// Whose event it is. An order's or a lease's buyer is read in the same
/// statement that writes the event, so writers need not know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Owner {
    User(Uuid),
    BuyerOfOrder(Uuid),
    BuyerOfLease(Uuid),
}

/// An event to write with the change it reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewEvent {
    pub owner: Owner,
    pub kind: EventType,
    pub at: DateTime<Utc>,
    /// The JSON of its `data`.
    pub data: String,
}

impl NewEvent {
    pub fn new(owner: Owner, kind: EventType, at: DateTime<Utc>, data: serde_json::Value) -> Self {
        NewEvent {
            owner,
            kind,
            at,
            data: data.to_string(),
        }
    }
}

/// PostgreSQL hands out identity values before commit, so two writers could
/// commit ids out of order and a reader resuming after the larger would
/// skip the smaller. Writers of events take this lock until they commit,
/// so ids become visible in order (SQLite has one writer anyway).
const OUTBOX_LOCK: i64 = 0x6770_7865_0001;

/// Adds the INSERTs of `events` to `writes`.
pub fn push<'a>(writes: &mut Writes<'a>, events: &'a [NewEvent]) {
    if events.is_empty() {
        return;
    }
    if let Statements::Postgres(_) = writes.statements {
        push_statement!(writes, |lock| lock
            .push("SELECT pg_advisory_xact_lock(")
            .push_bind(OUTBOX_LOCK)
            .push(")"));
    }
    for chunk in events.chunks(crate::db::INSERT_CHUNK) {
        push_statement!(writes, |insert| {
            insert.push(
                "INSERT INTO events (user_id, type, at, order_id, lease_id, data_json) VALUES ",
            );
            for (i, event) in chunk.iter().enumerate() {
                if i > 0 {
                    insert.push(", ");
                }
                match event.owner {
                    Owner::User(user) => {
                        insert.push("(").push_bind(user);
                        insert.push(", ").push_bind(Text(event.kind));
                        insert.push(", ").push_bind(event.at);
                        insert.push(", NULL, NULL, ");
                    }
                    Owner::BuyerOfOrder(order) => {
                        insert
                            .push("((SELECT buyer_id FROM orders WHERE id = ")
                            .push_bind(order);
                        insert.push("), ").push_bind(Text(event.kind));
                        insert.push(", ").push_bind(event.at);
                        insert.push(", ").push_bind(order);
                        insert.push(", NULL, ");
                    }
                    Owner::BuyerOfLease(lease) => {
                        insert
                            .push("((SELECT buyer_id FROM leases WHERE id = ")
                            .push_bind(lease);
                        insert.push("), ").push_bind(Text(event.kind));
                        insert.push(", ").push_bind(event.at);
                        insert
                            .push(", (SELECT order_id FROM leases WHERE id = ")
                            .push_bind(lease);
                        insert.push("), ").push_bind(lease);
                        insert.push(", ");
                    }
                }
                insert.push_bind(event.data.as_str()).push(")");
            }
        });
    }
}

type EventRow = (
    i64,
    Uuid,
    Text<EventType>,
    DateTime<Utc>,
    Option<Uuid>,
    Option<Uuid>,
    String,
);

fn from_row(row: EventRow) -> anyhow::Result<StoredEvent> {
    let (id, user_id, kind, at, order_id, lease_id, data) = row;
    Ok(StoredEvent {
        id,
        kind: kind.0,
        at,
        order_id,
        lease_id,
        data: RawValue::from_string(data)?,
        user_id,
    })
}

const COLUMNS: &str = "id, user_id, type, at, order_id, lease_id, data_json";

/// `user`'s events after `after`, oldest first, at most `limit`.
pub async fn page(db: &Db, user: Uuid, after: i64, limit: u32) -> anyhow::Result<Vec<StoredEvent>> {
    let sql =
        format!("SELECT {COLUMNS} FROM events WHERE user_id = $1 AND id > $2 ORDER BY id LIMIT $3");
    let rows: Vec<EventRow> = dispatch!(db, pool => {
        sqlx::query_as(&sql)
            .bind(user)
            .bind(after)
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await
    })?;
    rows.into_iter().map(from_row).collect()
}

/// Everyone's events after `after`, oldest first, at most `limit`.
pub async fn tail(db: &Db, after: i64, limit: u32) -> anyhow::Result<Vec<StoredEvent>> {
    let sql = format!("SELECT {COLUMNS} FROM events WHERE id > $1 ORDER BY id LIMIT $2");
    let rows: Vec<EventRow> = dispatch!(db, pool => {
        sqlx::query_as(&sql)
            .bind(after)
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await
    })?;
    rows.into_iter().map(from_row).collect()
}

/// The last id written, `0` when there is none.
pub async fn last_id(db: &Db) -> anyhow::Result<i64> {
    let id: Option<i64> = dispatch!(db, pool => {
        sqlx::query_scalar("SELECT MAX(id) FROM events").fetch_one(pool).await
    })?;
    Ok(id.unwrap_or(0))
}

/// Deletes events from before `before`, a slice at a time so no one write
/// holds the database for long; returns how many.
pub async fn prune(db: &Db, before: DateTime<Utc>) -> anyhow::Result<u64> {
    const SLICE: u32 = 5_000;
    let mut deleted = 0;
    loop {
        let mut tx = db.begin().await?;
        let n = execute_tx!(
            tx,
            "DELETE FROM events WHERE id IN (SELECT id FROM events WHERE at < $1 ORDER BY id LIMIT $2)",
            before,
            i64::from(SLICE),
        )?;
        tx.commit().await?;
        deleted += n;
        if n < u64::from(SLICE) {
            return Ok(deleted);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::EventType;

    #[tokio::test]
    async fn pruning_deletes_only_events_older_than_the_cut_and_ids_keep_growing() {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}", dir.path().join("gpuex.db").display());
        let db = Db::connect(&url).await.expect("database");
        db.migrate().await.expect("migrations");
        let user = Uuid::now_v7();
        let now = Utc::now();
        let old = now - chrono::Duration::days(8);
        let events: Vec<NewEvent> = [old, old, now]
            .into_iter()
            .map(|at| {
                NewEvent::new(
                    Owner::User(user),
                    EventType::FundsLow,
                    at,
                    serde_json::json!({}),
                )
            })
            .collect();
        let tx = db.begin().await.expect("tx");
        let mut writes = Writes::new(&tx);
        push(&mut writes, &events);
        tx.commit_with(writes).await.expect("commit");
        let pruned = prune(&db, now - chrono::Duration::days(7))
            .await
            .expect("prune");
        assert_eq!(pruned, 2);
        let left = page(&db, user, 0, 10).await.expect("page");
        assert_eq!(left.iter().map(|e| e.id).collect::<Vec<_>>(), vec![3]);
        assert_eq!(last_id(&db).await.expect("last"), 3);
        // A new event after pruning still gets a larger id than any before.
        let tx = db.begin().await.expect("tx");
        let mut writes = Writes::new(&tx);
        push(&mut writes, &events[2..]);
        tx.commit_with(writes).await.expect("commit");
        assert_eq!(last_id(&db).await.expect("last"), 4);
    }
}
