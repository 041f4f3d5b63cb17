//! The hub: reads each committed event once and hands it to its user's open
//! streams. Writers poke it after they commit; it also looks on its own
//! every second, so an event written by anyone else is heard too.
//!
//! Each user has a channel of its own, so an event wakes only its user's
//! streams however many are open. The channels are bounded: a stream that
//! falls [`PER_USER`] events behind is dropped, and its client resumes with
//! `Last-Event-ID`, losing nothing.

use super::store;
use super::EventType;
use super::StoredEvent;
use crate::db::Db;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::{broadcast, watch, Notify};
use uuid::Uuid;

/// Events a stream may fall behind its user's newest before it is dropped.
pub const PER_USER: usize = 256;

/// How often the hub looks for events without being poked.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// Rows read per trip.
const READ_BATCH: u32 = 512;

/// An event ready for the wire: its JSON is made once, whoever receives it.
#[derive(Debug)]
pub struct Published {
    pub id: i64,
    pub user_id: Uuid,
    pub kind: EventType,
    pub json: String,
}

impl Published {
    pub fn of(event: &StoredEvent) -> Published {
        Published {
            id: event.id,
            user_id: event.user_id,
            kind: event.kind,
            json: serde_json::to_string(event).unwrap_or_default(),
        }
    }
}

#[derive(Default)]
struct Channels {
    by_user: HashMap<Uuid, broadcast::Sender<Arc<Published>>>,
    handouts: u64,
}

/// A cheap, clonable handle to the hub.
#[derive(Clone)]
pub struct EventHub {
    inner: Arc<Inner>,
}

struct Inner {
    users: Mutex<Channels>,
    poke: Notify,
    /// The last id handed out.
    latest: watch::Sender<i64>,
    /// Set at shutdown: streams never end on their own, and the server's
    /// graceful shutdown waits for every open response.
    closed: watch::Sender<bool>,
}

impl EventHub {
    /// Starts reading after the last event already written.
    pub async fn start(db: Db) -> anyhow::Result<EventHub> {
        let from = store::last_id(&db).await?;
        let inner = Arc::new(Inner {
            users: Mutex::new(Channels::default()),
            poke: Notify::new(),
            latest: watch::Sender::new(from),
            closed: watch::Sender::new(false),
        });
        tokio::spawn(read_on(db, Arc::downgrade(&inner), from));
        Ok(EventHub { inner })
    }

    /// Says new events were committed.
    pub fn poke(&self) {
        self.inner.poke.notify_one();
    }

    /// `user`'s events from now on.
    pub fn subscribe(&self, user: Uuid) -> broadcast::Receiver<Arc<Published>> {
        let mut users = self
            .inner
            .users
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        users
            .by_user
            .entry(user)
            .or_insert_with(|| broadcast::channel(PER_USER).0)
            .subscribe()
    }

    /// The last id handed out, and its changes (for workers that follow
    /// every user, such as webhook delivery).
    pub fn latest(&self) -> watch::Receiver<i64> {
        self.inner.latest.subscribe()
    }

    /// The last id handed out.
    pub fn current(&self) -> i64 {
        *self.inner.latest.borrow()
    }

    /// Ends every stream, now and from now on (the server is shutting down).
    pub fn close(&self) {
        self.inner.closed.send_replace(true);
    }

    /// Resolves once [`EventHub::close`] was called.
    pub fn closed(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut closed = self.inner.closed.subscribe();
        async move {
            let _ = closed.wait_for(|c| *c).await;
        }
    }
}

impl Inner {
    fn hand_out(&self, events: &[StoredEvent]) {
        let mut users = self
            .users
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for event in events {
            let Some(channel) = users.by_user.get(&event.user_id) else {
                continue;
            };
            if channel.send(Arc::new(Published::of(event))).is_err() {
                // No stream of this user is open any more.
                users.by_user.remove(&event.user_id);
            }
        }
        // Users whose streams closed and who had no event since.
        users.handouts += 1;
        if users.handouts % 1024 == 0 {
            users
                .by_user
                .retain(|_, channel| channel.receiver_count() > 0);
        }
    }
}

/// The hub's reader, until the hub is dropped.
async fn read_on(db: Db, hub: Weak<Inner>, mut after: i64) {
    loop {
        {
            let Some(inner) = hub.upgrade() else { return };
            tokio::select! {
                () = inner.poke.notified() => {}
                () = tokio::time::sleep(LOOK_EVERY) => {}
            }
        }
        let Some(inner) = hub.upgrade() else { return };
        loop {
            let events = match store::tail(&db, after, READ_BATCH).await {
                Ok(events) => events,
                Err(e) => {
                    tracing::warn!(error = %e, "the event hub could not read new events");
                    break;
                }
            };
            let Some(last) = events.last().map(|e| e.id) else {
                break;
            };
            inner.hand_out(&events);
            after = last;
            inner.latest.send_replace(after);
            if events.len() < READ_BATCH as usize {
                break;
            }
        }
    }
}
