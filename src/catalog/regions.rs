//! Regions: a name and an IANA time zone, managed by the admin.

use crate::db::{dispatch, dispatch_tx, execute_tx, Db, Tx};
use anyhow::Context;
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::collections::HashSet;
use std::sync::{Arc, RwLock};
use utoipa::ToSchema;

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Region {
    pub name: String,
    /// IANA time zone, e.g. `Europe/Amsterdam`.
    pub timezone: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Parses a region name: 1–40 characters of `a-z`, `0-9` and `-`, not `any`
/// (which orders use to let the engine choose).
pub fn parse_name(raw: &str) -> Result<String, &'static str> {
    let ok = !raw.is_empty()
        && raw.len() <= 40
        && raw
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !raw.starts_with('-');
    match (ok, raw) {
        (_, crate::catalog::ANY_REGION) => {
            Err("`any` is reserved for orders that let gpuex choose")
        }
        (true, _) => Ok(raw.to_owned()),
        (false, _) => Err("must be 1 to 40 characters of a-z, 0-9 and -"),
    }
}

pub async fn list(db: &Db) -> anyhow::Result<Vec<Region>> {
    let rows: Vec<(String, String, DateTime<Utc>, DateTime<Utc>)> = dispatch!(db, pool => {
        sqlx::query_as("SELECT name, timezone, created_at, updated_at FROM regions ORDER BY name")
            .fetch_all(pool)
            .await
    })
    .context("failed to list regions")?;
    Ok(rows
        .into_iter()
        .map(|(name, timezone, created_at, updated_at)| Region {
            name,
            timezone,
            created_at,
            updated_at,
        })
        .collect())
}

async fn exists(db: &Db, name: &str) -> anyhow::Result<bool> {
    let found: Option<String> = dispatch!(db, pool => {
        sqlx::query_scalar("SELECT name FROM regions WHERE name = $1")
            .bind(name)
            .fetch_optional(pool)
            .await
    })
    .context("failed to read a region")?;
    Ok(found.is_some())
}

/// The region names known to exist. Regions are never deleted, so a name
/// once found stays valid; only unknown names go to the database.
#[derive(Clone, Default)]
pub struct KnownRegions(Arc<RwLock<HashSet<String>>>);

impl KnownRegions {
    pub async fn exists(&self, db: &Db, name: &str) -> anyhow::Result<bool> {
        let known = self.0.read().map(|set| set.contains(name)).unwrap_or(false);
        if known {
            return Ok(true);
        }
        let found = exists(db, name).await?;
        if found {
            if let Ok(mut set) = self.0.write() {
                set.insert(name.to_owned());
            }
        }
        Ok(found)
    }
}

/// Creates or updates a region; returns it and whether it was new.
pub async fn upsert(
    tx: &mut Tx<'_>,
    name: &str,
    timezone: &str,
    now: DateTime<Utc>,
) -> anyhow::Result<(Region, bool)> {
    let existing: Option<DateTime<Utc>> = dispatch_tx!(tx, conn => {
        sqlx::query_scalar("SELECT created_at FROM regions WHERE name = $1")
            .bind(name)
            .fetch_optional(conn)
            .await
    })?;
    execute_tx!(
        tx,
        "INSERT INTO regions (name, timezone, created_at, updated_at) VALUES ($1, $2, $3, $3) \
             ON CONFLICT (name) DO UPDATE SET timezone = excluded.timezone, updated_at = excluded.updated_at",
        name,
        timezone,
        now,
    )
    .context("failed to save a region")?;
    let region = Region {
        name: name.to_owned(),
        timezone: timezone.to_owned(),
        created_at: existing.unwrap_or(now),
        updated_at: now,
    };
    Ok((region, existing.is_none()))
}
