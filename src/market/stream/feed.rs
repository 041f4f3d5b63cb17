//! The one feed behind `GET /v1/market/stream`: the market task hands it
//! each batch's clearings after commit, the price route its new list
//! prices after commit, and a watcher turns "the book may have changed"
//! into `book` events, at most once a second.

use crate::market::book::{book_entries, BookEntry};
use crate::market::history::Clearing;
use crate::market::MarketHandle;
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, watch, Notify};

/// Events a stream may fall behind before it is dropped (it reconnects).
const BACKLOG: usize = 1024;
/// The book's bids per market, as `GET /v1/market/book` shows by default.
const BOOK_DEPTH: usize = 10;
/// The least time between two reads of the book: each market's `book`
/// event comes at most this often.
const BOOK_EVERY: Duration = Duration::from_secs(1);

/// What a market stream event is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedKind {
    Clearing,
    Price,
    Book,
}

impl FeedKind {
    /// The SSE event name.
    pub fn as_str(self) -> &'static str {
        match self {
            FeedKind::Clearing => "clearing",
            FeedKind::Price => "price",
            FeedKind::Book => "book",
        }
    }
}

/// One event, serialized once for every stream.
#[derive(Debug)]
pub struct FeedEvent {
    pub kind: FeedKind,
    pub gpu_model: String,
    pub region: String,
    pub json: String,
}

/// A cheap, clonable handle to the feed.
#[derive(Clone)]
pub struct MarketFeed {
    tx: broadcast::Sender<Arc<FeedEvent>>,
    book_dirty: Arc<Notify>,
    /// Set at shutdown: streams never end on their own, and the server's
    /// graceful shutdown waits for every open response.
    closed: Arc<watch::Sender<bool>>,
}

impl Default for MarketFeed {
    fn default() -> Self {
        MarketFeed {
            tx: broadcast::channel(BACKLOG).0,
            book_dirty: Arc::new(Notify::new()),
            closed: Arc::new(watch::channel(false).0),
        }
    }
}

impl MarketFeed {
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<FeedEvent>> {
        self.tx.subscribe()
    }

    /// Ends every stream, now and from now on (the server is shutting down).
    pub fn close(&self) {
        self.closed.send_replace(true);
    }

    /// Resolves once [`MarketFeed::close`] was called.
    pub fn closed(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut closed = self.closed.subscribe();
        async move {
            let _ = closed.wait_for(|c| *c).await;
        }
    }

    fn publish(&self, kind: FeedKind, gpu_model: &str, region: &str, data: &serde_json::Value) {
        if self.tx.receiver_count() == 0 {
            return;
        }
        let event = FeedEvent {
            kind,
            gpu_model: gpu_model.to_owned(),
            region: region.to_owned(),
            json: data.to_string(),
        };
        // No receiver left since the count: nobody to tell.
        let _ = self.tx.send(Arc::new(event));
    }

    /// A batch committed with these clearings (none for most batches); its
    /// changes may have moved the book.
    pub fn committed(&self, clearings: &[Clearing], wrote: bool) {
        for c in clearings {
            let data = json!({
                "gpu_model": c.gpu_model,
                "region": c.region,
                "clearing_index": c.clearing_index,
                "unit_prices": c.unit_prices,
                "volume": {"tflops": c.won.tflops_h, "vram": c.won.vram_h},
                "at": chrono::DateTime::from_timestamp(c.at, 0).unwrap_or_default(),
            });
            self.publish(FeedKind::Clearing, &c.gpu_model, &c.region, &data);
        }
        if wrote {
            // One permit however many batches: the watcher coalesces them.
            self.book_dirty.notify_one();
        }
    }

    /// A list price set by the admin, after its commit; `data` as `GET
    /// /v1/prices` shows it.
    pub fn price(&self, gpu_model: &str, region: &str, data: &serde_json::Value) {
        self.publish(FeedKind::Price, gpu_model, region, data);
    }

    /// Starts the watcher that reads the book from `market` when it may
    /// have changed and publishes the markets whose entry did.
    pub fn watch_book(&self, market: MarketHandle) -> tokio::task::JoinHandle<()> {
        let feed = self.clone();
        tokio::spawn(async move {
            let mut last: BTreeMap<(String, String), String> = BTreeMap::new();
            loop {
                feed.book_dirty.notified().await;
                if feed.tx.receiver_count() == 0 {
                    // Nobody listens: whoever comes next hears every market that moves.
                    last.clear();
                    continue;
                }
                let Ok(entries) = market.read(|e| book_entries(e, BOOK_DEPTH)).await else {
                    break;
                };
                feed.publish_book(&mut last, entries);
                tokio::time::sleep(BOOK_EVERY).await;
            }
        })
    }

    /// Publishes each entry unlike the last one sent for its market, and an
    /// empty entry for a market that left the book.
    fn publish_book(&self, last: &mut BTreeMap<(String, String), String>, entries: Vec<BookEntry>) {
        let mut now = BTreeMap::new();
        for entry in entries {
            let key = (entry.pool.gpu_model.clone(), entry.pool.region.clone());
            now.insert(key, serde_json::to_value(&entry).unwrap_or_default());
        }
        for (gpu_model, region) in last.keys() {
            if !now.contains_key(&(gpu_model.clone(), region.clone())) {
                let gone = BookEntry::empty(gpu_model.clone(), region.clone());
                let data = serde_json::to_value(&gone).unwrap_or_default();
                self.publish(FeedKind::Book, gpu_model, region, &data);
            }
        }
        last.retain(|key, _| now.contains_key(key));
        for ((gpu_model, region), data) in now {
            let json = data.to_string();
            if last.get(&(gpu_model.clone(), region.clone())) == Some(&json) {
                continue;
            }
            self.publish(FeedKind::Book, &gpu_model, &region, &data);
            last.insert((gpu_model, region), json);
        }
    }
}
