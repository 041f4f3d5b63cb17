//! Each bucket's node states by the free memory and compute of their GPUs,
//! for shares. A share needs both on one GPU; on a fleet near full, GPU
//! memory runs out first, so most states with the compute to spare have no
//! GPU with the memory too. Every distinct (free memory, free milli) of a
//! state's GPUs is filed, memory first: a share steps through the GPUs with
//! its memory, jumping over those without its compute with one seek per
//! distinct free memory. Memory is asked in whole GB (`vram_gb`), so a
//! model has at most its capacity in GB of distinct free memories, where
//! free compute takes any of 1,000 values. (Stepping through the GPUs by
//! memory and by compute together, to walk the shorter, cost 1.8× (10,000
//! GPUs) to 3.4× (100,000) as much per placement at the median: the
//! compute side seeks once per distinct free milli.)

use std::collections::btree_set::Range;
use std::collections::BTreeSet;

use super::view::NodeView;

/// One GPU's free compute (milli-GPU) and memory (MB).
pub type Point = (u32, u64);

/// The distinct free (compute, memory) of a node's GPUs, ascending.
pub fn points_of(node: &NodeView) -> Vec<Point> {
    let mut points: Vec<Point> = node
        .gpus
        .iter()
        .map(|g| (g.free.milli, g.free.memory_mb))
        .collect();
    points.sort_unstable();
    points.dedup();
    points
}

/// Per bucket, each state's GPU points as (memory, milli, state).
#[derive(Debug, Clone, Default)]
pub struct SharePoints {
    by_memory: Vec<BTreeSet<(u64, u32, u32)>>,
}

impl SharePoints {
    pub fn new(bucket_count: usize) -> SharePoints {
        SharePoints {
            by_memory: vec![BTreeSet::new(); bucket_count],
        }
    }

    /// Files (`insert`) or takes out the points of state `id` in `bucket`.
    pub fn file(&mut self, bucket: u32, id: u32, points: &[Point], insert: bool) {
        let Some(set) = self.by_memory.get_mut(bucket as usize) else {
            return;
        };
        for &(milli, memory) in points {
            if insert {
                set.insert((memory, milli, id));
            } else {
                set.remove(&(memory, milli, id));
            }
        }
    }

    /// The states of `bucket` with a GPU that has `milli` and `memory`
    /// free, each once, least memory first; `points` gives a state's points.
    pub fn fitting<'a>(
        &'a self,
        bucket: u32,
        milli: u32,
        memory: u64,
        points: impl Fn(u32) -> &'a [Point] + 'a,
    ) -> impl Iterator<Item = u32> + 'a {
        let fits = move |p: &Point| p.0 >= milli && p.1 >= memory;
        self.by_memory
            .get(bucket as usize)
            .map(|set| Dominating::new(set, memory, milli))
            .into_iter()
            .flatten()
            .filter_map(move |(mem, m, id)| {
                // A state is yielded at its first fitting point in memory order.
                let first = points(id)
                    .iter()
                    .copied()
                    .filter(fits)
                    .min_by_key(|&(m, mem)| (mem, m));
                (first == Some((m, mem))).then_some(id)
            })
    }

    /// Each bucket's points as (memory, milli, state), for a comparison
    /// with an index built from scratch (`member_of` names a state by its
    /// lowest member).
    pub fn canonical(
        &self,
        member_of: impl Fn(u32) -> Option<u32>,
    ) -> Vec<Vec<(u64, u32, Option<u32>)>> {
        self.by_memory
            .iter()
            .map(|set| {
                let mut v: Vec<_> = set
                    .iter()
                    .map(|&(mem, m, id)| (mem, m, member_of(id)))
                    .collect();
                v.sort_unstable();
                v
            })
            .collect()
    }
}

/// The entries (x, y, id) of a set with x ≥ `x` and y ≥ `y`, in order.
/// Within one x, the entries below `y` come first: the walk jumps over
/// them with one seek, so it costs the distinct x it meets, not the
/// entries it skips.
struct Dominating<'a, X, Y> {
    set: &'a BTreeSet<(X, Y, u32)>,
    y: Y,
    inner: Range<'a, (X, Y, u32)>,
}

impl<'a, X: Ord + Copy, Y: Ord + Copy> Dominating<'a, X, Y> {
    fn new(set: &'a BTreeSet<(X, Y, u32)>, x: X, y: Y) -> Self {
        Dominating {
            set,
            y,
            inner: set.range((x, y, 0)..),
        }
    }
}

impl<X: Ord + Copy, Y: Ord + Copy> Iterator for Dominating<'_, X, Y> {
    type Item = (X, Y, u32);

    fn next(&mut self) -> Option<(X, Y, u32)> {
        loop {
            let &(x, y, id) = self.inner.next()?;
            if y >= self.y {
                return Some((x, y, id));
            }
            self.inner = self.set.range((x, self.y, 0)..);
        }
    }
}
