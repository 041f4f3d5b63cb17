//! The market task's current history buckets: read lazily from
//! `market_history`, rolled in memory, upserted with the batch's final
//! writes. Only the market task writes the table, so memory is the truth
//! between batches; after a failed batch the task forgets it all and reads
//! again.

use super::bucket::{roll, Bucket, Clearing, Interval, Ohlc};
use crate::db::{dispatch, dispatch_tx, push_rows, Db, Money, Tx, Writes};
use crate::engine::placement::Units;
use crate::engine::Event;
use chrono::{DateTime, Utc};
use std::collections::{BTreeMap, HashMap};

/// One market and interval.
type Key = (String, String, Interval);

/// The current bucket of each (market, interval) the task has seen.
#[derive(Debug, Default)]
pub struct MarketHistory {
    current: HashMap<Key, Bucket>,
}

/// The buckets one batch changed, upserted with its final writes.
pub struct HistoryRows(BTreeMap<(Key, i64), Bucket>);

#[derive(sqlx::FromRow)]
struct StoredBucket {
    bucket_start: DateTime<Utc>,
    open_index: Money,
    high_index: Money,
    low_index: Money,
    close_index: Money,
    open_tflops_h: Money,
    high_tflops_h: Money,
    low_tflops_h: Money,
    close_tflops_h: Money,
    open_vram_h: Money,
    high_vram_h: Money,
    low_vram_h: Money,
    close_vram_h: Money,
    volume_tflops: Money,
    volume_vram: Money,
    auctions: i64,
}

impl StoredBucket {
    fn bucket(self) -> Bucket {
        let start = self.bucket_start.timestamp();
        let ohlc = |o: Money, h: Money, l: Money, c: Money| Ohlc {
            open: o.0,
            high: h.0,
            low: l.0,
            close: c.0,
        };
        Bucket {
            start,
            index: ohlc(
                self.open_index,
                self.high_index,
                self.low_index,
                self.close_index,
            ),
            tflops_h: ohlc(
                self.open_tflops_h,
                self.high_tflops_h,
                self.low_tflops_h,
                self.close_tflops_h,
            ),
            vram_h: ohlc(
                self.open_vram_h,
                self.high_vram_h,
                self.low_vram_h,
                self.close_vram_h,
            ),
            won: Units {
                tflops_h: self.volume_tflops.0,
                vram_h: self.volume_vram.0,
            },
            auctions: self.auctions,
        }
    }
}

fn time(ts: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(ts, 0).unwrap_or_default()
}

impl MarketHistory {
    /// Drops every bucket, so the next clearing reads its row again.
    pub fn forget(&mut self) {
        self.current.clear();
    }

    /// Whether `event` is a clearing that would leave every bucket it
    /// falls in exactly as it is (same interval, the close unchanged and
    /// within the range, nothing won): then a quiet tick need not write.
    /// Only the auction count would move; it is not shown.
    pub fn absorbs(&self, event: &Event) -> bool {
        let Event::AuctionCleared {
            gpu_model,
            region,
            clearing_index,
            unit_prices,
            won,
            at,
        } = event
        else {
            return false;
        };
        let same = |o: Ohlc, x| o.close == x;
        won.tflops_h.is_zero()
            && won.vram_h.is_zero()
            && Interval::ALL.into_iter().all(|interval| {
                let key = (gpu_model.clone(), region.clone(), interval);
                self.current.get(&key).is_some_and(|b| {
                    b.start >= interval.start_of(*at)
                        && same(b.index, *clearing_index)
                        && same(b.tflops_h, unit_prices.tflops_h)
                        && same(b.vram_h, unit_prices.vram_h)
                })
            })
    }

    /// Rolls `clearings` into the current buckets, reading a bucket's row
    /// in `tx` the first time its market is seen; returns the rows to write.
    pub async fn roll(
        &mut self,
        tx: &mut Tx<'_>,
        clearings: &[Clearing],
    ) -> anyhow::Result<HistoryRows> {
        let mut rows = BTreeMap::new();
        for c in clearings {
            for interval in Interval::ALL {
                let key = (c.gpu_model.clone(), c.region.clone(), interval);
                let current = match self.current.get(&key) {
                    Some(b) => Some(*b),
                    None => load(tx, &key, interval.start_of(c.at)).await?,
                };
                let next = roll(current, interval, c);
                rows.insert((key.clone(), next.start), next);
                self.current.insert(key, next);
            }
        }
        Ok(HistoryRows(rows))
    }
}

/// The stored bucket of `key` starting at `start`, if any.
async fn load(tx: &mut Tx<'_>, key: &Key, start: i64) -> anyhow::Result<Option<Bucket>> {
    let (model, region, interval) = key;
    let stored: Option<StoredBucket> = dispatch_tx!(tx, conn => {
        sqlx::query_as(
            "SELECT bucket_start, open_index, high_index, low_index, close_index, \
             open_tflops_h, high_tflops_h, low_tflops_h, close_tflops_h, \
             open_vram_h, high_vram_h, low_vram_h, close_vram_h, \
             volume_tflops, volume_vram, auctions FROM market_history \
             WHERE gpu_model = $1 AND region = $2 AND period = $3 AND bucket_start = $4",
        )
        .bind(model)
        .bind(region)
        .bind(interval.as_str())
        .bind(time(start))
        .fetch_optional(conn)
        .await
    })?;
    Ok(stored.map(StoredBucket::bucket))
}

/// The buckets of one market and interval starting in `[from, to)` (engine
/// seconds), oldest first.
pub async fn range(
    db: &Db,
    gpu_model: &str,
    region: &str,
    interval: Interval,
    from: i64,
    to: i64,
) -> anyhow::Result<Vec<Bucket>> {
    let stored: Vec<StoredBucket> = dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT bucket_start, open_index, high_index, low_index, close_index, \
             open_tflops_h, high_tflops_h, low_tflops_h, close_tflops_h, \
             open_vram_h, high_vram_h, low_vram_h, close_vram_h, \
             volume_tflops, volume_vram, auctions FROM market_history \
             WHERE gpu_model = $1 AND region = $2 AND period = $3 \
             AND bucket_start >= $4 AND bucket_start < $5 ORDER BY bucket_start",
        )
        .bind(gpu_model)
        .bind(region)
        .bind(interval.as_str())
        .bind(time(from))
        .bind(time(to))
        .fetch_all(pool)
        .await
    })?;
    Ok(stored.into_iter().map(StoredBucket::bucket).collect())
}

impl HistoryRows {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Upserts every row in one statement per chunk, among the batch's final writes.
    pub fn push(&self, writes: &mut Writes<'_>) {
        let rows: Vec<_> = self.0.iter().collect();
        push_rows!(
            writes,
            "INSERT INTO market_history (gpu_model, region, period, bucket_start, \
             open_index, high_index, low_index, close_index, \
             open_tflops_h, high_tflops_h, low_tflops_h, close_tflops_h, \
             open_vram_h, high_vram_h, low_vram_h, close_vram_h, \
             volume_tflops, volume_vram, auctions) ",
            rows,
            |row, (((model, region, interval), start), b)| {
                row.push_bind(model.clone())
                    .push_bind(region.clone())
                    .push_bind(interval.as_str())
                    .push_bind(time(*start));
                for o in [b.index, b.tflops_h, b.vram_h] {
                    row.push_bind(Money(o.open))
                        .push_bind(Money(o.high))
                        .push_bind(Money(o.low))
                        .push_bind(Money(o.close));
                }
                row.push_bind(Money(b.won.tflops_h))
                    .push_bind(Money(b.won.vram_h))
                    .push_bind(b.auctions)
            },
            " ON CONFLICT (gpu_model, region, period, bucket_start) DO UPDATE SET \
             open_index = excluded.open_index, high_index = excluded.high_index, \
             low_index = excluded.low_index, close_index = excluded.close_index, \
             open_tflops_h = excluded.open_tflops_h, high_tflops_h = excluded.high_tflops_h, \
             low_tflops_h = excluded.low_tflops_h, close_tflops_h = excluded.close_tflops_h, \
             open_vram_h = excluded.open_vram_h, high_vram_h = excluded.high_vram_h, \
             low_vram_h = excluded.low_vram_h, close_vram_h = excluded.close_vram_h, \
             volume_tflops = excluded.volume_tflops, volume_vram = excluded.volume_vram, \
             auctions = excluded.auctions"
        );
    }
}
