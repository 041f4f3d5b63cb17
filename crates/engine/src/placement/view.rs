//! The capacity view placement reads: plain per-node, per-GPU free state, with
//! the indexes that keep the hot path off a scan of every slice of every GPU.
//!
//! The engine keeps one view in step with its calendars; the simulator builds
//! its own and calls [`CapacityView::allocate`] / [`CapacityView::release`].
//! Nodes are kept sorted by id so that ties break the same way however the view
//! was built (a restored engine must choose what the original would have).

use std::collections::{BTreeSet, HashMap};

use gpuex_wire::catalog::CudaVersion;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

pub use super::node_view::{
    give, model_at, model_idx, take, GpuFree, GpuView, ModelIdx, NodeSummary, NodeView,
    PartitionMode, RegionIdx,
};
use super::request::Placement;
use super::states::StateIndex;

/// A region as placement sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegionView {
    pub name: String,
    /// Whether local time is off-peak now: preferred for `region: any` (follow-the-sun).
    pub offpeak: bool,
}

/// List prices per unit-hour of one (region, model).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitPrices {
    pub tflops_h: Decimal,
    pub vram_h: Decimal,
}

/// The GPUs of one (region, model, mode): placement walks only the buckets a request can use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bucket {
    pub region: RegionIdx,
    pub model: ModelIdx,
    pub mode: PartitionMode,
    /// Positions in [`CapacityView::nodes`] of nodes holding such a GPU, ascending.
    pub nodes: Vec<u32>,
    /// This bucket's position in [`CapacityView::buckets`].
    pub position: u32,
}

/// Everything placement reads. Plain data: build it, place against it, mutate it.
#[derive(Debug, Clone, Default)]
pub struct CapacityView {
    pub regions: Vec<RegionView>,
    nodes: Vec<NodeView>,
    by_id: HashMap<Uuid, u32>,
    buckets: Vec<Bucket>,
    bucket_at: HashMap<(RegionIdx, ModelIdx, PartitionMode), u32>,
    /// Interned GPU hardware: see [`NodeView::hardware`].
    hardware: HashMap<Hardware, u32>,
    /// Uncordoned nodes grouped by free state, per bucket by room.
    states: StateIndex,
    /// Counts the changes that may have made room: anything freed, a node
    /// added, replaced or uncordoned, a price set. While it stands still,
    /// a request that found no room finds none.
    growth: u64,
    /// The nodes that grew, by the growth count each grew at, since
    /// `wide_growth`: what a memo of requests that found no room needs to
    /// look at again (see [`CapacityView::grown_since`]).
    grew: Vec<(u64, Uuid)>,
    /// The last growth that was not one node's (a price, a node added or
    /// replaced) or that the log above had no room for.
    wide_growth: u64,
    /// Counts every change placement could see (free state, nodes, cordons,
    /// prices, off-peak flags): equal values, the same placements.
    changes: u64,
    prices: HashMap<(RegionIdx, ModelIdx), UnitPrices>,
}

/// Where a view's counters stood, to come back to with
/// [`CapacityView::put_back`].
#[derive(Debug, Clone)]
pub struct ViewMark {
    growth: u64,
    grew: Vec<(u64, Uuid)>,
    wide_growth: u64,
    changes: u64,
}

impl CapacityView {
    pub fn new() -> CapacityView {
        CapacityView::default()
    }

    /// Where the counters stand now: see [`CapacityView::put_back`].
    pub fn mark(&self) -> ViewMark {
        ViewMark {
            growth: self.growth,
            grew: self.grew.clone(),
            wide_growth: self.wide_growth,
            changes: self.changes,
        }
    }

    /// Undoes a trial: puts `nodes` back as they were when `mark` was
    /// taken, and the counters with them, so the view is exactly as it
    /// was. Only for a trial that changed these nodes and nothing else
    /// since `mark` (placements tried together, then given up).
    pub fn put_back(&mut self, nodes: Vec<(Uuid, NodeView)>, mark: ViewMark) {
        for (id, node) in nodes {
            self.update_node(id, |n| *n = node);
        }
        let ViewMark {
            growth,
            grew,
            wide_growth,
            changes,
        } = mark;
        self.growth = growth;
        self.grew = grew;
        self.wide_growth = wide_growth;
        self.changes = changes;
    }

    /// The index of a region, adding it if new.
    pub fn region(&mut self, name: &str) -> RegionIdx {
        if let Some(i) = self.region_idx(name) {
            return i;
        }
        self.changes += 1;
        self.regions.push(RegionView {
            name: name.to_owned(),
            offpeak: false,
        });
        RegionIdx::try_from(self.regions.len() - 1).unwrap_or(RegionIdx::MAX)
    }

    /// The index of a known region.
    pub fn region_idx(&self, name: &str) -> Option<RegionIdx> {
        self.regions
            .iter()
            .position(|r| r.name == name)
            .and_then(|i| RegionIdx::try_from(i).ok())
    }

    /// Sets whether a region is off-peak now.
    pub fn set_offpeak(&mut self, region: RegionIdx, offpeak: bool) {
        if let Some(r) = self.regions.get_mut(usize::from(region)) {
            if r.offpeak != offpeak {
                r.offpeak = offpeak;
                self.changes += 1;
            }
        }
    }

    /// Sets the list prices of one (region, model).
    pub fn set_price(&mut self, region: RegionIdx, model: ModelIdx, prices: UnitPrices) {
        if self.prices.insert((region, model), prices) != Some(prices) {
            self.grow(None);
            self.changes += 1;
        }
    }

    /// See [`CapacityView::growth`]'s field: equal values mean nothing was freed in between.
    pub fn growth(&self) -> u64 {
        self.growth
    }

    /// Counts a growth: of one node, or of anything else (`None`).
    fn grow(&mut self, node: Option<Uuid>) {
        /// Enough for the releases between two clearings; past it, a memo
        /// simply looks at everything again.
        const LOG: usize = 256;
        self.growth += 1;
        match node {
            Some(id) if self.grew.len() < LOG => self.grew.push((self.growth, id)),
            _ => {
                self.grew.clear();
                self.wide_growth = self.growth;
            }
        }
    }

    /// The nodes that grew since the growth count was `since`, or `None`
    /// when something else grew too or the log no longer reaches back that
    /// far. Every other node has only lost room since: a request that found
    /// no room then can find it only on these.
    pub fn grown_since(&self, since: u64) -> Option<BTreeSet<Uuid>> {
        (self.wide_growth <= since).then(|| {
            self.grew
                .iter()
                .filter(|(at, _)| *at > since)
                .map(|(_, id)| *id)
                .collect()
        })
    }

    /// See [`CapacityView::changes`]'s field: equal values mean nothing placement reads changed.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// The list prices of one (region, model), if set.
    pub fn price(&self, region: RegionIdx, model: ModelIdx) -> Option<UnitPrices> {
        self.prices.get(&(region, model)).copied()
    }

    /// Adds a node or replaces the one with the same id. A node that keeps
    /// its hardware, or a new one after every other (ids in order, as a
    /// fleet is restored), is filed in place; anything else rebuilds the
    /// indexes.
    pub fn upsert_node(&mut self, mut node: NodeView) {
        node.refresh_summary();
        self.grow(None);
        self.changes += 1;
        match self.nodes.binary_search_by(|n| n.id.cmp(&node.id)) {
            Ok(i) => {
                let old = &self.nodes[i];
                if old.region == node.region && hardware_of(old) == hardware_of(&node) {
                    node.hardware = old.hardware;
                    let pos = u32::try_from(i).unwrap_or(u32::MAX);
                    let buckets = buckets_of(&self.bucket_at, &node);
                    self.states.remove(pos);
                    self.states.insert(pos, &node, &buckets);
                    self.nodes[i] = node;
                    return;
                }
                self.nodes[i] = node;
            }
            Err(i) if i == self.nodes.len() => {
                let known = node
                    .gpus
                    .iter()
                    .all(|g| self.bucket_at.contains_key(&(node.region, g.model, g.mode)));
                self.nodes.push(node);
                if known {
                    self.index_last();
                    return;
                }
            }
            Err(i) => self.nodes.insert(i, node),
        }
        self.rebuild_index();
    }

    /// Files the last node, whose buckets all exist, in every index.
    fn index_last(&mut self) {
        let pos = u32::try_from(self.nodes.len().saturating_sub(1)).unwrap_or(u32::MAX);
        let Some(node) = self.nodes.last_mut() else {
            return;
        };
        self.by_id.insert(node.id, pos);
        let next = u32::try_from(self.hardware.len() + 1).unwrap_or(0);
        node.hardware = *self.hardware.entry(hardware_of(node)).or_insert(next);
        let buckets = buckets_of(&self.bucket_at, node);
        for &b in &buckets {
            if let Some(bucket) = self.buckets.get_mut(b as usize) {
                bucket.nodes.push(pos);
            }
        }
        self.states.insert(pos, node, &buckets);
    }

    /// Adds many nodes at once (one index rebuild).
    pub fn extend_nodes(&mut self, nodes: impl IntoIterator<Item = NodeView>) {
        self.grow(None);
        self.changes += 1;
        for mut n in nodes {
            n.refresh_summary();
            self.by_id.remove(&n.id);
            self.nodes.retain(|m| m.id != n.id);
            self.nodes.push(n);
        }
        self.nodes.sort_by_key(|n| n.id);
        self.rebuild_index();
    }

    /// Removes a node.
    pub fn remove_node(&mut self, id: Uuid) -> Option<NodeView> {
        let pos = *self.by_id.get(&id)? as usize;
        self.changes += 1;
        let node = self.nodes.remove(pos);
        self.rebuild_index();
        Some(node)
    }

    fn rebuild_index(&mut self) {
        self.by_id.clear();
        self.hardware.clear();
        let mut buckets: HashMap<(RegionIdx, ModelIdx, PartitionMode), Vec<u32>> = HashMap::new();
        for (i, n) in self.nodes.iter_mut().enumerate() {
            let pos = u32::try_from(i).unwrap_or(u32::MAX);
            self.by_id.insert(n.id, pos);
            let next = u32::try_from(self.hardware.len() + 1).unwrap_or(0);
            n.hardware = *self.hardware.entry(hardware_of(n)).or_insert(next);
            for g in &n.gpus {
                let list = buckets.entry((n.region, g.model, g.mode)).or_default();
                if list.last() != Some(&pos) {
                    list.push(pos);
                }
            }
        }
        let mut out: Vec<Bucket> = buckets
            .into_iter()
            .map(|((region, model, mode), nodes)| Bucket {
                region,
                model,
                mode,
                nodes,
                position: 0,
            })
            .collect();
        out.sort_by_key(|b| (b.region, b.model, b.mode));
        self.bucket_at.clear();
        for (i, b) in out.iter_mut().enumerate() {
            b.position = u32::try_from(i).unwrap_or(u32::MAX);
            self.bucket_at
                .insert((b.region, b.model, b.mode), b.position);
        }
        self.buckets = out;
        let bucket_at = &self.bucket_at;
        self.states = StateIndex::build(&self.nodes, self.buckets.len(), |n| {
            buckets_of(bucket_at, n)
        });
    }

    /// Whether the state index equals one built from scratch over today's
    /// nodes (the engine's invariants and the property tests check it).
    pub fn states_in_step(&self) -> bool {
        let bucket_at = &self.bucket_at;
        let fresh = StateIndex::build(&self.nodes, self.buckets.len(), |n| {
            buckets_of(bucket_at, n)
        });
        fresh.canonical() == self.states.canonical()
    }

    /// How many distinct node states placement walks at most (uncordoned
    /// nodes collapse into one state when interchangeable).
    pub fn node_states(&self) -> usize {
        self.states.count()
    }

    /// The state index placement walks.
    pub(super) fn states(&self) -> &StateIndex {
        &self.states
    }

    /// Changes the node with this id through `change` and files it under its
    /// new state. Every change to a node's free state or cordon goes
    /// through here (or [`CapacityView::upsert_node`]), so the index stays
    /// equal to one built from scratch.
    pub fn update_node<R>(
        &mut self,
        id: Uuid,
        change: impl FnOnce(&mut NodeView) -> R,
    ) -> Option<R> {
        let pos = *self.by_id.get(&id)?;
        let node = self.nodes.get_mut(pos as usize)?;
        let buckets = buckets_of(&self.bucket_at, node);
        self.states.remove(pos);
        let before = Room::of(node);
        let out = change(node);
        node.refresh_summary();
        let after = Room::of(node);
        if after != before {
            self.changes += 1;
        }
        let grew = after.exceeds(&before);
        self.states.insert(pos, node, &buckets);
        if grew {
            self.grow(Some(id));
        }
        Some(out)
    }

    /// All nodes, sorted by id.
    pub fn nodes(&self) -> &[NodeView] {
        &self.nodes
    }

    /// The buckets, sorted by (region, model, mode).
    pub fn buckets(&self) -> &[Bucket] {
        &self.buckets
    }

    /// The node with this id.
    pub fn node(&self, id: Uuid) -> Option<&NodeView> {
        self.by_id.get(&id).map(|&i| &self.nodes[i as usize])
    }

    /// The position of the node with this id (as buckets list them).
    pub fn position_of(&self, id: Uuid) -> Option<u32> {
        self.by_id.get(&id).copied()
    }

    /// The node at a position (as buckets list them).
    pub fn node_at(&self, pos: u32) -> Option<&NodeView> {
        self.nodes.get(pos as usize)
    }

    /// Cordons or uncordons a node.
    pub fn set_cordoned(&mut self, id: Uuid, cordoned: bool) {
        self.update_node(id, |n| n.cordoned = cordoned);
    }

    /// Takes a placement's capacity out of the view. Fails (and changes nothing)
    /// when the placement no longer fits.
    pub fn allocate(&mut self, p: &Placement) -> Result<(), ViewError> {
        let node = self.node(p.node).ok_or(ViewError::UnknownNode(p.node))?;
        if node.cpu_free < p.cpu_milli || node.memory_free < p.memory_mib {
            return Err(ViewError::DoesNotFit(p.node));
        }
        let mut next = node.gpus.clone();
        for gs in &p.gpus {
            let pos = node
                .gpu_pos(gs.index)
                .ok_or(ViewError::DoesNotFit(p.node))?;
            let g = &mut next[pos];
            g.free = take(g.free, g.mode, &gs.slot, model_at(g.model))
                .ok_or(ViewError::DoesNotFit(p.node))?;
        }
        self.update_node(p.node, |node| {
            node.gpus = next;
            node.cpu_free -= p.cpu_milli;
            node.memory_free -= p.memory_mib;
        });
        Ok(())
    }

    /// [`CapacityView::allocate`], recording the lease's predicted end
    /// (`None`: unknown) on each of its GPUs for the predicted-end term.
    pub fn allocate_ending(&mut self, p: &Placement, end: Option<i64>) -> Result<(), ViewError> {
        self.allocate(p)?;
        self.each_gpu_of(p, |g| g.ends.push(end));
        Ok(())
    }

    /// [`CapacityView::release`] of a placement booked with
    /// [`CapacityView::allocate_ending`] and the same `end`.
    pub fn release_ending(&mut self, p: &Placement, end: Option<i64>) -> Result<(), ViewError> {
        self.release(p)?;
        self.each_gpu_of(p, |g| {
            if let Some(i) = g.ends.iter().position(|e| *e == end) {
                g.ends.swap_remove(i);
            }
        });
        Ok(())
    }

    fn each_gpu_of(&mut self, p: &Placement, mut f: impl FnMut(&mut GpuView)) {
        // Predicted ends are not part of a node's state: no refiling.
        if let Some(&pos) = self.by_id.get(&p.node) {
            if let Some(node) = self.nodes.get_mut(pos as usize) {
                for gs in &p.gpus {
                    if let Some(g) = node.gpus.iter_mut().find(|g| g.index == gs.index) {
                        f(g);
                    }
                }
            }
        }
    }

    /// Gives a placement's capacity back to the view.
    pub fn release(&mut self, p: &Placement) -> Result<(), ViewError> {
        let node = self.node(p.node).ok_or(ViewError::UnknownNode(p.node))?;
        let mut next = node.gpus.clone();
        for gs in &p.gpus {
            let pos = node
                .gpu_pos(gs.index)
                .ok_or(ViewError::DoesNotFit(p.node))?;
            let g = &mut next[pos];
            g.free = give(g.free, &gs.slot, model_at(g.model));
        }
        self.update_node(p.node, |node| {
            node.gpus = next;
            node.cpu_free = (node.cpu_free + p.cpu_milli).min(node.cpu_milli);
            node.memory_free = (node.memory_free + p.memory_mib).min(node.memory_mib);
        });
        Ok(())
    }
}

/// What a node has free, to tell whether a change freed anything.
#[derive(PartialEq)]
struct Room {
    open: bool,
    cpu: u64,
    memory: u64,
    gpus: Vec<GpuFree>,
}

impl Room {
    fn of(node: &NodeView) -> Room {
        Room {
            open: !node.cordoned,
            cpu: node.cpu_free,
            memory: node.memory_free,
            gpus: node.gpus.iter().map(|g| g.free).collect(),
        }
    }

    /// Whether anything is free here that was not in `before`.
    fn exceeds(&self, before: &Room) -> bool {
        (self.open && !before.open)
            || self.cpu > before.cpu
            || self.memory > before.memory
            || self.gpus.len() != before.gpus.len()
            || self.gpus.iter().zip(&before.gpus).any(|(now, was)| {
                now.milli > was.milli
                    || now.memory_mb > was.memory_mb
                    || now.mig_mask & !was.mig_mask != 0
                    || now.mig_compute > was.mig_compute
            })
    }
}

/// One GPU's hardware as a node's interned hardware id covers it.
type HardwareGpu = (u8, ModelIdx, PartitionMode, u32);

/// A node's hardware: its driver's CUDA version and its GPUs. The driver is
/// in it so that a state's nodes, which placement checks at one member,
/// all accept the same `min_cuda`.
type Hardware = (Option<CudaVersion>, Vec<HardwareGpu>);

fn hardware_of(node: &NodeView) -> Hardware {
    let gpus = node
        .gpus
        .iter()
        .map(|g| (g.index, g.model, g.mode, g.nvlink))
        .collect();
    (node.cuda, gpus)
}

/// The buckets a node's GPUs are in.
fn buckets_of(
    bucket_at: &HashMap<(RegionIdx, ModelIdx, PartitionMode), u32>,
    node: &NodeView,
) -> Vec<u32> {
    let mut out: Vec<u32> = node
        .gpus
        .iter()
        .filter_map(|g| bucket_at.get(&(node.region, g.model, g.mode)).copied())
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Why a view mutation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ViewError {
    #[error("node {0} is not in the view")]
    UnknownNode(Uuid),
    #[error("the placement no longer fits on node {0}")]
    DoesNotFit(Uuid),
}
