//! Fragmentation scoring, FGD style (Weng et al., "Beware of Fragmentation",
//! ATC '23): a GPU's free capacity is a *fragment* for a kind of task when that
//! task cannot use it. Weighting by how often each kind of task arrives (the
//! recent [`DemandMix`]) gives a GPU's expected fragmentation; placement picks
//! the slot whose *increase* of that figure is smallest.
//!
//! Everything here is integer (weights × milli-GPU), so scores compare exactly
//! and replays choose the same slice. The simulator may tune this file.

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::view::{model_at, GpuFree, ModelIdx, PartitionMode};
use gpuex_wire::catalog::{GpuModel, MigLayout, COMPUTE_SLICES};

mod bound;
mod measures;
pub use measures::{frag_ratio, internal_waste};

/// One kind of task in the demand mix: what one of its GPUs needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct DemandClass {
    /// Compute per GPU, milli-GPU (1000 for whole and multi-GPU tasks).
    pub milli: u32,
    /// Memory per GPU, MB.
    pub memory_mb: u64,
    /// GPUs per task.
    pub gpus: u8,
    /// Host CPU per task, milli-CPU (0 when not known). A node whose free
    /// CPU is below this cannot run the class, whatever its GPUs have free.
    #[serde(default)]
    pub cpu_milli: u64,
}

impl DemandClass {
    /// The class of a request, quantized so the mix stays small: compute up to
    /// the next 50 milli, memory up to the next GB.
    pub fn quantized(milli_per_gpu: u32, memory_mb_per_gpu: u64, gpus: u8) -> DemandClass {
        let whole = gpus > 1 || milli_per_gpu >= 1000;
        DemandClass {
            milli: if whole {
                1000
            } else {
                milli_per_gpu.div_ceil(10).max(1) * 10
            },
            memory_mb: memory_mb_per_gpu.div_ceil(1000) * 1000,
            gpus: gpus.max(1),
            cpu_milli: 0,
        }
    }

    /// The same class with the task's host CPU, rounded up to whole cores so
    /// the mix stays small.
    pub fn with_host_cpu(self, cpu_milli: u64) -> DemandClass {
        DemandClass {
            cpu_milli: cpu_milli.div_ceil(1000) * 1000,
            ..self
        }
    }

    fn whole(&self) -> bool {
        self.gpus > 1 || self.milli >= 1000
    }
}

/// How many classes the score looks at: the most frequent ones.
const TOP_CLASSES: usize = 32;

/// The recent demand mix: the classes of the last `window` requests.
#[derive(Debug, Clone)]
pub struct DemandMix {
    window: usize,
    recent: VecDeque<DemandClass>,
    counts: BTreeMap<DemandClass, u32>,
    top: Vec<(DemandClass, u64)>,
    /// Classes recorded since this mix was made, so a writer can persist
    /// just the new ones.
    recorded: u64,
    /// MIG instances the demand forecast expects primary orders to ask for
    /// soon, per model: MIG placement keeps room for them (see
    /// [`Scorer::with_forecast`]). Not part of the recorded mix.
    forecast: Vec<ForecastClass>,
    /// Placement's scorers for this mix, per (model, mode): a spot clearing
    /// places thousands of bids against one mix, and building a scorer
    /// sorts the mix. Emptied whenever the mix or the forecast changes.
    scorers: ScorerCache,
}

/// Scorers built for one state of a [`DemandMix`]. A copy of the mix starts empty.
#[derive(Default)]
struct ScorerCache(Mutex<HashMap<(ModelIdx, PartitionMode), Scorer>>);

impl ScorerCache {
    /// The scorers (a panic while holding them leaves nothing half-changed).
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(ModelIdx, PartitionMode), Scorer>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn clear(&mut self) {
        self.0
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }
}

impl Clone for ScorerCache {
    fn clone(&self) -> ScorerCache {
        ScorerCache::default()
    }
}

impl std::fmt::Debug for ScorerCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ScorerCache")
    }
}

/// Instances of one MIG profile's class the forecast expects on one model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForecastClass {
    pub model: &'static str,
    pub class: DemandClass,
    pub instances: u32,
}

impl DemandClass {
    /// The class a MIG profile serves: its compute and memory, so that the
    /// profile (and every larger one) is adequate for it.
    pub fn of_profile(profile: &gpuex_wire::catalog::MigProfile) -> DemandClass {
        DemandClass {
            milli: u32::from(profile.compute_slices) * 1000 / u32::from(COMPUTE_SLICES),
            memory_mb: profile.memory_mb(),
            gpus: 1,
            cpu_milli: 0,
        }
    }
}

impl Default for DemandMix {
    fn default() -> DemandMix {
        DemandMix::new(512)
    }
}

impl DemandMix {
    /// An empty mix over the last `window` requests. Until something is
    /// recorded it scores against a prior of whole GPUs, halves, quarters and 1g slices.
    pub fn new(window: usize) -> DemandMix {
        DemandMix {
            window: window.max(1),
            recent: VecDeque::new(),
            counts: BTreeMap::new(),
            top: Self::prior(),
            recorded: 0,
            forecast: Vec::new(),
            scorers: ScorerCache::default(),
        }
    }

    /// A fixed mix (the simulator's, or a test's).
    pub fn fixed(classes: Vec<(DemandClass, u64)>) -> DemandMix {
        let mut mix = DemandMix::new(1);
        mix.top = classes;
        mix
    }

    fn prior() -> Vec<(DemandClass, u64)> {
        [1000, 500, 250, 142]
            .into_iter()
            .map(|milli| {
                let gpus = 1;
                (
                    DemandClass {
                        milli,
                        memory_mb: 0,
                        gpus,
                        cpu_milli: 0,
                    },
                    1,
                )
            })
            .collect()
    }

    /// Records one request's class, forgetting the oldest beyond the window.
    pub fn record(&mut self, class: DemandClass) {
        self.recorded += 1;
        self.recent.push_back(class);
        *self.counts.entry(class).or_insert(0) += 1;
        while self.recent.len() > self.window {
            if let Some(old) = self.recent.pop_front() {
                if let Some(c) = self.counts.get_mut(&old) {
                    *c -= 1;
                    if *c == 0 {
                        self.counts.remove(&old);
                    }
                }
            }
        }
        let mut all: Vec<(DemandClass, u64)> = self
            .counts
            .iter()
            .map(|(k, v)| (*k, u64::from(*v)))
            .collect();
        // Most frequent first; the key breaks ties so the choice is
        // deterministic (and the order total, so selecting the top before
        // sorting them gives what sorting all would: a window holds
        // hundreds of classes and this runs on every grant).
        let order =
            |a: &(DemandClass, u64), b: &(DemandClass, u64)| b.1.cmp(&a.1).then(a.0.cmp(&b.0));
        if all.len() > TOP_CLASSES {
            all.select_nth_unstable_by(TOP_CLASSES - 1, order);
            all.truncate(TOP_CLASSES);
        }
        all.sort_unstable_by(order);
        self.top = all;
        self.scorers.clear();
    }

    /// The classes recorded in the window, oldest first (to persist and restore the mix).
    pub fn recent(&self) -> impl ExactSizeIterator<Item = &DemandClass> {
        self.recent.iter()
    }

    /// How many classes were recorded since the mix was made (restores included).
    pub fn recorded(&self) -> u64 {
        self.recorded
    }

    /// The window's length in requests.
    pub fn window(&self) -> usize {
        self.window
    }

    /// The classes scored and their weights.
    pub fn classes(&self) -> &[(DemandClass, u64)] {
        &self.top
    }

    /// Sum of the weights.
    pub fn total_weight(&self) -> u64 {
        self.top.iter().map(|c| c.1).sum()
    }

    /// Replaces the forecast MIG instances placement keeps room for.
    pub fn set_forecast(&mut self, classes: Vec<ForecastClass>) {
        self.forecast = classes;
        self.scorers.clear();
    }

    /// Placement's scorer for GPUs of `model` in `mode` under this mix
    /// ([`Scorer::with_forecast`]), built once per state of the mix. Hand
    /// it back with [`DemandMix::return_scorer`] to keep it.
    pub fn take_scorer(&self, model: ModelIdx, mode: PartitionMode) -> Scorer {
        match self.scorers.lock().remove(&(model, mode)) {
            Some(scorer) => scorer,
            None => Scorer::with_forecast(model_at(model), mode, self),
        }
    }

    /// Keeps a scorer [`DemandMix::take_scorer`] gave for the next placement.
    pub fn return_scorer(&self, model: ModelIdx, mode: PartitionMode, scorer: Scorer) {
        self.scorers.lock().insert((model, mode), scorer);
    }

    /// The forecast MIG instances placement keeps room for.
    pub fn forecast(&self) -> &[ForecastClass] {
        &self.forecast
    }
}

/// How candidate slots are ranked once price (and off-peak) tie.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScoreKind {
    /// Least fragmentation added against the demand mix, then partly used GPUs, then best fit.
    #[default]
    Fgd,
    /// Least free capacity left on the GPU.
    BestFit,
    /// Most free capacity left on the GPU.
    WorstFit,
    /// The first GPU in node-id order.
    FirstFit,
}

/// The ranking key of one candidate GPU (lower is better), after price.
///
/// FGD: the fragmentation added, in steps of [`FRAG_STEP`] milli-GPU per unit
/// of demand weight, then the node left with the least free compute, then
/// the GPU left with the least. Coarse steps matter: an exact delta lets a
/// few milli-GPU of expected fragmentation outweigh packing, and spreading
/// work over emptier nodes breaks up the idle GPU sets and host CPU that
/// larger tasks need. FGD's own score has ~40 milli-GPU steps
/// (`⌊100·sigmoid(Δ/1000)⌋`); `gpuex simulate` on the openb trace found
/// 160–180 best (40: −0.6 points of allocation; 320 and up: worse again).
pub fn rank(
    kind: ScoreKind,
    frag_delta: i64,
    total_weight: u64,
    partly_used: bool,
    free_after: u32,
    node_free_after: u32,
) -> (i64, i64, i64) {
    let free_after = i64::from(free_after);
    // GPU free milli stays under 2048, so one key orders node first, GPU second.
    let packed = i64::from(node_free_after) << 11 | free_after;
    match kind {
        ScoreKind::Fgd => {
            let step = FRAG_STEP * i64::try_from(total_weight.max(1)).unwrap_or(i64::MAX);
            (frag_delta.div_euclid(step), packed, i64::from(!partly_used))
        }
        ScoreKind::BestFit => (free_after, i64::from(!partly_used), 0),
        ScoreKind::WorstFit => (-free_after, 0, 0),
        ScoreKind::FirstFit => (0, 0, 0),
    }
}

/// Resolution of the fragmentation delta in [`rank`], milli-GPU.
pub const FRAG_STEP: i64 = 180;

/// The predicted-end term of a candidate GPU for a lease predicted to end
/// at `hint.end` (lower is better), and the seconds the lease would keep
/// the GPU from being wholly free beyond its other leases' predicted ends.
///
/// The GPU is wholly free once its last lease ends. Taking the lease
/// extends that by `extends` (an idle GPU, or one holding a lease with no
/// known end: the lease's whole duration, so packing onto used GPUs is
/// never worse); among GPUs it does not extend, the one whose leases end
/// nearest after it (least `slack`) keeps the others for longer work. Both
/// in quarter-octave steps of minutes, so a few seconds of noise in a
/// prediction does not outweigh what comes after in the ranking (packing).
pub fn end_term(ends: &[Option<i64>], hint: super::EndHint) -> (i64, i64) {
    let end = hint.end.max(hint.now);
    let gpu_end = if ends.is_empty() {
        None
    } else {
        ends.iter()
            .try_fold(hint.now, |acc, e| e.map(|e| acc.max(e)))
    };
    let (extends, slack) = match gpu_end {
        None => (end - hint.now, 0),
        Some(g) => ((end - g).max(0), (g - end).max(0)),
    };
    (log_step(extends) * 128 + log_step(slack), extends)
}

/// ⌊4·log2(1 + s/60)⌋: 0 under a minute, then four steps per doubling (at
/// most 10 years are told apart).
fn log_step(seconds: i64) -> i64 {
    const TEN_YEARS_S: i64 = 10 * 366 * 86_400;
    let minutes = u128::try_from(seconds.clamp(0, TEN_YEARS_S) / 60).unwrap_or(0) + 1;
    i64::from(minutes.pow(4).ilog2())
}

/// Scores GPUs of one (model, mode) against a mix; built once per bucket.
pub struct Scorer {
    mode: PartitionMode,
    layout: Option<&'static MigLayout>,
    model: &'static GpuModel,
    /// (weight, class, for MIG: the profiles adequate for the class as a bit set)
    classes: Vec<(u64, DemandClass, u8)>,
    /// Shared mode without GPU-memory asks: share classes by milli with the
    /// weight of all classes needing more (suffix sums), and the weight of
    /// whole-GPU classes, so a GPU's fragmentation is one binary search.
    by_milli: Option<(Vec<(u32, u64)>, u64)>,
    /// Classes by host CPU with the weight of all classes needing more.
    by_cpu: Vec<(u64, u64)>,
    /// MIG: what [`Scorer::frag`] derives from a free state, filled as
    /// states are met. A scan scores the same few states on thousands of
    /// GPUs, and each is a search over every profile's starts.
    mig: Option<MigMemo>,
}

/// Lazily filled tables of a MIG scorer (`None` until computed).
struct MigMemo {
    /// The placeable profiles per (free slice mask, free compute slices).
    placeable: Vec<Cell<Option<u8>>>,
    /// The weight of the classes no placeable profile serves, per set of placeable profiles.
    unusable: Vec<Cell<Option<u64>>>,
}

impl MigMemo {
    fn new() -> MigMemo {
        MigMemo {
            placeable: vec![Cell::new(None); 256 * (usize::from(COMPUTE_SLICES) + 1)],
            unusable: vec![Cell::new(None); 256],
        }
    }
}

/// Sorts (key, weight) and turns weights into "weight of keys above this one":
/// entry i holds the total weight of the entries at and after i.
fn suffix_sums<K: Ord + Copy>(mut v: Vec<(K, u64)>) -> Vec<(K, u64)> {
    v.sort_by_key(|e| e.0);
    let mut acc = 0;
    for e in v.iter_mut().rev() {
        acc += e.1;
        e.1 = acc;
    }
    v
}

/// The total weight of the entries whose key is above `x`.
fn weight_above<K: Ord + Copy>(v: &[(K, u64)], x: K) -> u64 {
    let i = v.partition_point(|e| e.0 <= x);
    v.get(i).map_or(0, |e| e.1)
}

impl Scorer {
    pub fn new(model: &'static GpuModel, mode: PartitionMode, mix: &DemandMix) -> Scorer {
        let layout = model.mig;
        let classes = mix
            .classes()
            .iter()
            .map(|(c, w)| {
                let profiles = layout.map_or(0, |l| adequate_profiles(l, c.milli, c.memory_mb));
                (*w, *c, profiles)
            })
            .collect();
        let classes: Vec<(u64, DemandClass, u8)> = classes;
        let by_milli = (mode == PartitionMode::Shared
            && classes.iter().all(|(_, c, _)| c.memory_mb == 0))
        .then(|| {
            let share = classes
                .iter()
                .filter(|(_, c, _)| !c.whole())
                .map(|(w, c, _)| (c.milli, *w))
                .collect();
            let whole = classes
                .iter()
                .filter(|(_, c, _)| c.whole())
                .map(|(w, _, _)| w)
                .sum();
            (suffix_sums(share), whole)
        });
        let by_cpu = suffix_sums(classes.iter().map(|(w, c, _)| (c.cpu_milli, *w)).collect());
        let mig = (mode == PartitionMode::Mig && layout.is_some()).then(MigMemo::new);
        Scorer {
            mode,
            layout,
            model,
            classes,
            by_milli,
            by_cpu,
            mig,
        }
    }

    /// A scorer for placement: on MIG GPUs the forecast's instances count
    /// as classes too, each weighing as much as the whole recent mix, so a
    /// placement that leaves no room for an instance the forecast expects
    /// within the notice period ranks behind one that keeps it, whatever
    /// the recent mix asked. (The forecast is per market; a model's
    /// instances are summed over its regions here.)
    pub fn with_forecast(model: &'static GpuModel, mode: PartitionMode, mix: &DemandMix) -> Scorer {
        let mut scorer = Scorer::new(model, mode, mix);
        let Some(layout) = scorer.layout.filter(|_| mode == PartitionMode::Mig) else {
            return scorer;
        };
        let per_instance = mix.total_weight().max(1);
        for f in mix.forecast().iter().filter(|f| f.model == model.name) {
            let profiles = adequate_profiles(layout, f.class.milli, f.class.memory_mb);
            let weight = u64::from(f.instances).saturating_mul(per_instance);
            scorer.classes.push((weight, f.class, profiles));
        }
        scorer
    }

    /// The weight of the classes that no profile still placeable on a MIG
    /// GPU in state `free` can serve.
    fn unusable_mig_weight(&self, free: &GpuFree) -> u64 {
        let unusable = |placeable: u8| -> u64 {
            self.classes
                .iter()
                .filter(|(_, _, adequate)| placeable & adequate == 0)
                .map(|(w, _, _)| w)
                .sum()
        };
        let Some(memo) = &self.mig else {
            return unusable(self.layout.map_or(0, |l| placeable_profiles(l, free)));
        };
        let at = usize::from(free.mig_mask) * (usize::from(COMPUTE_SLICES) + 1)
            + usize::from(free.mig_compute);
        let placeable = match memo.placeable.get(at) {
            Some(cell) => cell.get().unwrap_or_else(|| {
                let p = self.layout.map_or(0, |l| placeable_profiles(l, free));
                cell.set(Some(p));
                p
            }),
            // Not a state a GPU can be in (more than 7 compute slices free).
            None => self.layout.map_or(0, |l| placeable_profiles(l, free)),
        };
        let cell = &memo.unusable[usize::from(placeable)];
        cell.get().unwrap_or_else(|| {
            let weight = unusable(placeable);
            cell.set(Some(weight));
            weight
        })
    }

    /// Fragmentation from the host: the node's free GPU compute is of no use
    /// to the classes that need more CPU than the node has free (FGD's "lack
    /// CPU" quadrant). Σ weight × free milli-GPU over those classes.
    pub fn host_frag(&self, node_free_milli: u64, cpu_free: u64) -> u64 {
        node_free_milli * weight_above(&self.by_cpu, cpu_free)
    }

    /// Expected fragmentation of a GPU in this free state: Σ weight × free
    /// milli-GPU over the classes that cannot use it.
    pub fn frag(&self, free: &GpuFree) -> u64 {
        let fm = u64::from(free.free_milli(self.mode));
        if fm == 0 {
            return 0;
        }
        let mut total = 0;
        match self.mode {
            PartitionMode::Mig => total = self.unusable_mig_weight(free) * fm,
            PartitionMode::Whole => {}
            PartitionMode::Shared if self.by_milli.is_some() => {
                if let Some((share, whole)) = &self.by_milli {
                    let idle = free.is_idle(self.model, self.mode);
                    let w = weight_above(share, free.milli) + if idle { 0 } else { *whole };
                    total = w * fm;
                }
            }
            PartitionMode::Shared => {
                let idle = free.is_idle(self.model, self.mode);
                for (w, c, _) in &self.classes {
                    let fits = if c.whole() {
                        idle
                    } else {
                        free.milli >= c.milli && free.memory_mb >= c.memory_mb
                    };
                    if !fits {
                        total += w * fm;
                    }
                }
            }
        }
        total
    }
}

/// Profiles (bit i = the layout's profile i) with compute and memory for a class.
pub fn adequate_profiles(layout: &MigLayout, milli: u32, memory_mb: u64) -> u8 {
    let mut set = 0u8;
    for (i, p) in layout.profiles.iter().enumerate() {
        if u32::from(p.compute_slices) * 1000 >= milli * u32::from(COMPUTE_SLICES)
            && p.memory_mb() >= memory_mb
        {
            set |= 1 << i;
        }
    }
    set
}

/// Profiles (bit i = the layout's profile i) that still have a legal free start.
pub fn placeable_profiles(layout: &MigLayout, free: &GpuFree) -> u8 {
    let mut set = 0u8;
    for (i, p) in layout.profiles.iter().enumerate() {
        if free.mig_compute < p.compute_slices {
            continue;
        }
        if p.starts.iter().any(|&s| {
            let m = p.slice_mask(s);
            free.mig_mask & m == m
        }) {
            set |= 1 << i;
        }
    }
    set
}
