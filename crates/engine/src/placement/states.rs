//! Nodes grouped by state. Two nodes in the same region, with the same GPU
//! hardware, the same free host CPU and memory and the same free state on
//! every GPU offer a request the same candidates with the same scores; only
//! the node id, the last tie-break, tells them apart. So placement scores
//! each state once and takes its lowest-id node, and its cost follows the
//! number of distinct free shapes, not the number of GPUs.
//!
//! Each bucket keeps its states ordered by the most free compute on one of
//! their GPUs, so a request walks only the states with room for it: a full
//! or nearly full node is never visited. Shares, which need compute and
//! memory on one GPU, walk the states' GPU points instead
//! ([`super::shares`]). Each state keeps a card of its host and GPUs, so a
//! scan can count and bound its candidates without reading its nodes
//! ([`super::bound`]).

use std::collections::{BTreeSet, HashMap};

use super::bound::Card;
use super::shares::{points_of, Point, SharePoints};
use super::view::{GpuFree, NodeView, RegionIdx};

/// What makes two nodes interchangeable to placement. Predicted ends are left
/// out: they are read only for requests with a predicted end, which score
/// each member of a state on its own.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct StateKey {
    region: RegionIdx,
    hardware: u32,
    host: [u64; 4],
    gpus: Vec<GpuFree>,
}

impl StateKey {
    fn of(node: &NodeView) -> StateKey {
        StateKey {
            region: node.region,
            hardware: node.hardware,
            host: [
                node.cpu_milli,
                node.memory_mib,
                node.cpu_free,
                node.memory_free,
            ],
            gpus: node.gpus.iter().map(|g| g.free).collect(),
        }
    }
}

/// The nodes of one state, by position in the view (ascending positions are
/// ascending ids).
#[derive(Debug, Clone, Default)]
pub struct State {
    key: Option<StateKey>,
    pub members: BTreeSet<u32>,
    /// The buckets the state's nodes are in, and the room it is filed under there.
    filed: Vec<(u32, u32)>,
    /// The distinct free (milli-GPU, memory) of its GPUs, filed for shares.
    points: Vec<Point>,
    /// What a scan reads to bound the state's candidates without reading
    /// its nodes (`None` for nodes too large for a card).
    pub card: Option<Card>,
}

/// Every uncordoned node filed under its state, and each bucket's states
/// ordered by room.
#[derive(Debug, Clone, Default)]
pub struct StateIndex {
    states: Vec<State>,
    by_key: HashMap<StateKey, u32>,
    spare: Vec<u32>,
    /// Per node position, its state (none while cordoned).
    of_node: Vec<Option<u32>>,
    /// Per bucket, (room, state): room is the most free milli-GPU on one GPU
    /// of the node, what every kind of request needs at least.
    by_room: Vec<BTreeSet<(u32, u32)>>,
    /// Per bucket, the states by the free compute and memory of their GPUs.
    shares: SharePoints,
}

impl StateIndex {
    /// An index of `nodes` (in view order), each in the buckets `buckets_of` gives.
    pub fn build(
        nodes: &[NodeView],
        bucket_count: usize,
        mut buckets_of: impl FnMut(&NodeView) -> Vec<u32>,
    ) -> StateIndex {
        let mut index = StateIndex {
            of_node: vec![None; nodes.len()],
            by_room: vec![BTreeSet::new(); bucket_count],
            shares: SharePoints::new(bucket_count),
            ..StateIndex::default()
        };
        for (pos, node) in nodes.iter().enumerate() {
            let pos = u32::try_from(pos).unwrap_or(u32::MAX);
            let buckets = buckets_of(node);
            index.insert(pos, node, &buckets);
        }
        index
    }

    /// Files the node at `pos` under its current state (nothing while cordoned).
    pub fn insert(&mut self, pos: u32, node: &NodeView, buckets: &[u32]) {
        if node.cordoned {
            return;
        }
        let key = StateKey::of(node);
        let id = match self.by_key.get(&key) {
            Some(&id) => id,
            None => {
                let room = node.summary.max_free_milli;
                let state = State {
                    points: points_of(node),
                    key: Some(key.clone()),
                    members: BTreeSet::new(),
                    filed: buckets.iter().map(|&b| (b, room)).collect(),
                    card: Card::of(node),
                };
                let id = match self.spare.pop() {
                    Some(id) => {
                        self.states[id as usize] = state;
                        id
                    }
                    None => {
                        self.states.push(state);
                        u32::try_from(self.states.len() - 1).unwrap_or(u32::MAX)
                    }
                };
                for &b in buckets {
                    if let Some(set) = self.by_room.get_mut(b as usize) {
                        set.insert((room, id));
                    }
                }
                for &b in buckets {
                    self.shares
                        .file(b, id, &self.states[id as usize].points, true);
                }
                self.by_key.insert(key, id);
                id
            }
        };
        self.states[id as usize].members.insert(pos);
        let at = pos as usize;
        if at >= self.of_node.len() {
            self.of_node.resize(at + 1, None);
        }
        self.of_node[at] = Some(id);
    }

    /// Takes the node at `pos` out of its state, before it changes.
    pub fn remove(&mut self, pos: u32) {
        let Some(id) = self.of_node.get_mut(pos as usize).and_then(Option::take) else {
            return;
        };
        let state = &mut self.states[id as usize];
        state.members.remove(&pos);
        if !state.members.is_empty() {
            return;
        }
        for &(b, room) in &state.filed {
            if let Some(set) = self.by_room.get_mut(b as usize) {
                set.remove(&(room, id));
            }
            self.shares.file(b, id, &state.points, false);
        }
        if let Some(key) = state.key.take() {
            self.by_key.remove(&key);
        }
        state.filed.clear();
        state.points.clear();
        state.card = None;
        self.spare.push(id);
    }

    /// The states of bucket `bucket` with at least `room` free milli-GPU on
    /// one GPU, each with its nodes, least room first.
    pub fn with_room(&self, bucket: u32, room: u32) -> impl Iterator<Item = &State> + '_ {
        self.by_room
            .get(bucket as usize)
            .into_iter()
            .flat_map(move |set| set.range((room, 0)..))
            .map(|&(_, id)| &self.states[id as usize])
    }

    /// The states of bucket `bucket` with a GPU that has `milli` and
    /// `memory` free, each once, tightest GPU first.
    pub fn with_share_room(
        &self,
        bucket: u32,
        milli: u32,
        memory: u64,
    ) -> impl Iterator<Item = &State> + '_ {
        let points =
            |id: u32| -> &[Point] { self.states.get(id as usize).map_or(&[], |s| &s.points) };
        self.shares
            .fitting(bucket, milli, memory, points)
            .map(|id| &self.states[id as usize])
    }

    /// How many distinct states hold at least one node.
    pub fn count(&self) -> usize {
        self.by_key.len()
    }

    /// Each bucket's states by room and its share points, in a canonical order: two indexes of the same nodes compare equal
    /// whatever ids their states got.
    pub fn canonical(&self) -> Canonical {
        let by_room = self
            .by_room
            .iter()
            .map(|set| {
                let mut states: Vec<CanonicalState> = set
                    .iter()
                    .map(|&(room, id)| {
                        let state = &self.states[id as usize];
                        let members = state.members.iter().copied().collect();
                        (room, members, state.card.clone())
                    })
                    .collect();
                states.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
                states
            })
            .collect();
        let first = |id: u32| {
            self.states
                .get(id as usize)
                .and_then(|s| s.members.first().copied())
        };
        (by_room, self.shares.canonical(first))
    }
}

/// A state as [`StateIndex::canonical`] lists it: room, members, card.
pub type CanonicalState = (u32, Vec<u32>, Option<Card>);

/// [`StateIndex::canonical`]: each bucket's states by room, and its share points.
pub type Canonical = (Vec<Vec<CanonicalState>>, Vec<Vec<(u64, u32, Option<u32>)>>);
