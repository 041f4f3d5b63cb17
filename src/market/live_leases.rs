//! Each node's live leases and their states, as the leading engine holds
//! them after its last commit (issue 38): a heartbeat whose agent already
//! runs what it should is answered from here without reading the leases'
//! rows; one that has something to change reads them as before.
//!
//! The market task keeps it: rebuilt from the engine when this replica
//! takes the lead or rebuilds its engine, updated with the leases each
//! committed batch wrote, before that batch's commands are answered (so an
//! agent that heard of a new lease, through its buyer or provider, finds it
//! here). A replica that does not lead answers nothing from it: its mirror
//! follows the leader's commits late.

use crate::engine::{Engine, LeaseState};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, PoisonError, RwLock};
use uuid::Uuid;

/// The table. Cheap to clone.
#[derive(Clone, Default)]
pub struct LiveLeases(Arc<RwLock<Table>>);

#[derive(Default)]
struct Table {
    /// Whether it follows a leading engine; nothing is answered otherwise.
    current: bool,
    by_node: HashMap<Uuid, BTreeMap<Uuid, LeaseState>>,
    /// Each lease's node, to take it off when it ends.
    node_of: HashMap<Uuid, Uuid>,
}

impl Table {
    /// Files live lease `id` under `node`, in `state`.
    fn file(&mut self, id: Uuid, node: Uuid, state: LeaseState) {
        self.by_node.entry(node).or_default().insert(id, state);
        self.node_of.insert(id, node);
    }
}

impl LiveLeases {
    /// `node`'s live leases and their states; `None` when this replica does
    /// not lead (read the rows instead).
    pub fn of_node(&self, node: Uuid) -> Option<Vec<(Uuid, LeaseState)>> {
        let table = self.0.read().unwrap_or_else(PoisonError::into_inner);
        table.current.then(|| {
            table
                .by_node
                .get(&node)
                .map(|leases| leases.iter().map(|(id, state)| (*id, *state)).collect())
                .unwrap_or_default()
        })
    }

    /// Everything again from `engine`, which leads.
    pub(super) fn rebuild(&self, engine: &Engine) {
        let mut table = self.0.write().unwrap_or_else(PoisonError::into_inner);
        *table = Table {
            current: true,
            ..Table::default()
        };
        for lease in engine.leases().filter(|l| l.state.live()) {
            table.file(lease.id, lease.node, lease.state);
        }
    }

    /// The leases `changed` as `engine` holds them after a commit.
    pub(super) fn update(&self, engine: &Engine, changed: impl IntoIterator<Item = Uuid>) {
        let mut table = self.0.write().unwrap_or_else(PoisonError::into_inner);
        if !table.current {
            return;
        }
        for id in changed {
            if let Some(node) = table.node_of.remove(&id) {
                if let Some(leases) = table.by_node.get_mut(&node) {
                    leases.remove(&id);
                    if leases.is_empty() {
                        table.by_node.remove(&node);
                    }
                }
            }
            let Some(lease) = engine.lease(id).filter(|l| l.state.live()) else {
                continue;
            };
            table.file(id, lease.node, lease.state);
        }
    }

    /// This replica stopped leading, or its engine is being rebuilt.
    pub(super) fn forget(&self) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = Table::default();
    }
}
