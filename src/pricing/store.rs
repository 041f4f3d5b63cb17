//! Queries of list prices and their history.

use crate::catalog::Unit;
use crate::db::{dispatch, dispatch_tx, Db, Money, Tx};
use anyhow::Context;
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use uuid::Uuid;

/// A list price as stored.
#[derive(Debug, Clone)]
pub struct ListPrice {
    pub region: String,
    pub gpu_model: String,
    pub unit: Unit,
    pub list_price: Decimal,
    pub currency: String,
    pub updated_at: DateTime<Utc>,
}

type PriceRow = (String, String, String, Money, String, DateTime<Utc>);

fn to_price((region, gpu_model, unit, price, currency, updated_at): PriceRow) -> Option<ListPrice> {
    Some(ListPrice {
        region,
        gpu_model,
        unit: unit.parse().ok()?,
        list_price: price.0,
        currency,
        updated_at,
    })
}

/// Every list price, optionally narrowed to a region and model.
pub async fn list(
    db: &Db,
    region: Option<&str>,
    gpu_model: Option<&str>,
) -> anyhow::Result<Vec<ListPrice>> {
    let rows: Vec<PriceRow> = dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT region, gpu_model, unit, list_price, currency, updated_at FROM list_prices \
             WHERE ($1 IS NULL OR region = $1) AND ($2 IS NULL OR gpu_model = $2) \
             ORDER BY region, gpu_model, unit",
        )
        .bind(region)
        .bind(gpu_model)
        .fetch_all(pool)
        .await
    })
    .context("failed to list prices")?;
    Ok(rows.into_iter().filter_map(to_price).collect())
}

/// Sets a list price and records the change.
pub async fn set(
    tx: &mut Tx<'_>,
    price: &ListPrice,
    changed_by: Uuid,
) -> anyhow::Result<Option<Decimal>> {
    let previous: Option<Money> = dispatch_tx!(tx, conn => {
        sqlx::query_scalar(
            "SELECT list_price FROM list_prices WHERE region = $1 AND gpu_model = $2 AND unit = $3",
        )
        .bind(&price.region)
        .bind(&price.gpu_model)
        .bind(price.unit.as_str())
        .fetch_optional(conn)
        .await
    })?;
    dispatch_tx!(tx, conn => {
        sqlx::query(
            "INSERT INTO list_prices (region, gpu_model, unit, list_price, currency, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (region, gpu_model, unit) DO UPDATE SET \
             list_price = excluded.list_price, currency = excluded.currency, updated_at = excluded.updated_at",
        )
        .bind(&price.region)
        .bind(&price.gpu_model)
        .bind(price.unit.as_str())
        .bind(Money(price.list_price))
        .bind(&price.currency)
        .bind(price.updated_at)
        .execute(&mut *conn)
        .await?;
        sqlx::query(
            "INSERT INTO price_history (region, gpu_model, unit, list_price, previous_price, currency, changed_by, changed_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(&price.region)
        .bind(&price.gpu_model)
        .bind(price.unit.as_str())
        .bind(Money(price.list_price))
        .bind(previous)
        .bind(&price.currency)
        .bind(changed_by)
        .bind(price.updated_at)
        .execute(conn)
        .await
        .map(|r| r.rows_affected())
    })
    .context("failed to save a list price")?;
    Ok(previous.map(|m| m.0))
}

/// One recorded change of a list price.
#[derive(Debug, Clone)]
pub struct PriceChange {
    pub id: i64,
    pub region: String,
    pub gpu_model: String,
    pub unit: String,
    pub list_price: Decimal,
    pub previous_price: Option<Decimal>,
    pub currency: String,
    pub changed_at: DateTime<Utc>,
}

type ChangeRow = (
    i64,
    String,
    String,
    String,
    Money,
    Option<Money>,
    String,
    DateTime<Utc>,
);

/// Filters for [`history`].
pub struct HistoryFilter<'a> {
    pub region: Option<&'a str>,
    pub gpu_model: Option<&'a str>,
    pub unit: Option<&'a str>,
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
    pub limit: u32,
}

/// Price changes, newest first.
pub async fn history(db: &Db, f: &HistoryFilter<'_>) -> anyhow::Result<Vec<PriceChange>> {
    let rows: Vec<ChangeRow> = dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT id, region, gpu_model, unit, list_price, previous_price, currency, changed_at \
             FROM price_history \
             WHERE ($1 IS NULL OR region = $1) AND ($2 IS NULL OR gpu_model = $2) \
             AND ($3 IS NULL OR unit = $3) AND ($4 IS NULL OR changed_at >= $4) AND ($5 IS NULL OR changed_at < $5) \
             ORDER BY id DESC LIMIT $6",
        )
        .bind(f.region)
        .bind(f.gpu_model)
        .bind(f.unit)
        .bind(f.from)
        .bind(f.to)
        .bind(i64::from(f.limit))
        .fetch_all(pool)
        .await
    })
    .context("failed to read price history")?;
    Ok(rows
        .into_iter()
        .map(
            |(id, region, gpu_model, unit, price, previous, currency, changed_at)| PriceChange {
                id,
                region,
                gpu_model,
                unit,
                list_price: price.0,
                previous_price: previous.map(|m| m.0),
                currency,
                changed_at,
            },
        )
        .collect())
}
