//! Each bucket's node states by the free compute and memory of their GPUs,
//! for shares. A share needs both on one GPU; on a fleet near full, GPU
//! memory runs out first, so most states with the compute to spare have no
//! GPU with the memory too. Filing every distinct (free milli, free memory)
//! of a state's GPUs, ordered each way, lets a request step through only
//! the GPUs with one of the two, and take the shorter list.

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

/// Per bucket, each state's GPU points by compute then memory, and by
/// memory then compute.
#[derive(Debug, Clone, Default)]
pub struct SharePoints {
    by_milli: Vec<BTreeSet<(u32, u64, u32)>>,
    by_memory: Vec<BTreeSet<(u64, u32, u32)>>,
}

impl SharePoints {
    pub fn new(bucket_count: usize) -> SharePoints {
        SharePoints {
            by_milli: vec![BTreeSet::new(); bucket_count],
            by_memory: vec![BTreeSet::new(); bucket_count],
        }
    }

    /// Files (`insert`) or takes out the points of state `id` in `bucket`.
    pub fn file(&mut self, bucket: u32, id: u32, points: &[Point], insert: bool) {
        let b = bucket as usize;
        let (Some(by_milli), Some(by_memory)) =
            (self.by_milli.get_mut(b), self.by_memory.get_mut(b))
        else {
            return;
        };
        for &(milli, memory) in points {
            if insert {
                by_milli.insert((milli, memory, id));
                by_memory.insert((memory, milli, id));
            } else {
                by_milli.remove(&(milli, memory, id));
                by_memory.remove(&(memory, milli, id));
            }
        }
    }

    /// The states of `bucket` with a GPU that has `milli` and `memory`
    /// free, each once, tightest GPU first; `points` gives a state's
    /// points. Walks the GPUs by compute or by memory, whichever finds
    /// fewer (stepping through both together finds which at twice the
    /// shorter's cost).
    pub fn fitting<'a>(
        &'a self,
        bucket: u32,
        milli: u32,
        memory: u64,
        points: impl Fn(u32) -> &'a [Point] + Copy + 'a,
    ) -> impl Iterator<Item = u32> + 'a {
        let b = bucket as usize;
        let by_milli = move || {
            self.by_milli
                .get(b)
                .map(|set| Dominating::new(set, milli, memory))
        };
        let by_memory = move || {
            self.by_memory
                .get(b)
                .map(|set| Dominating::new(set, memory, milli))
        };
        let memory_first = {
            let (mut c, mut m) = (
                by_milli().into_iter().flatten(),
                by_memory().into_iter().flatten(),
            );
            loop {
                match (c.next(), m.next()) {
                    (Some(_), Some(_)) => continue,
                    (_, None) => break true,
                    (None, Some(_)) => break false,
                }
            }
        };
        let fits = move |p: &Point| p.0 >= milli && p.1 >= memory;
        // A state is yielded at its first fitting point in the order walked.
        let first = move |id: u32, memory_order: bool| -> Option<Point> {
            let fitting = points(id).iter().copied().filter(fits);
            if memory_order {
                fitting.min_by_key(|&(m, mem)| (mem, m))
            } else {
                fitting.min()
            }
        };
        let (compute_walk, memory_walk) = if memory_first {
            (None, by_memory())
        } else {
            (by_milli(), None)
        };
        let compute_walk = compute_walk
            .into_iter()
            .flatten()
            .filter_map(move |(m, mem, id)| (first(id, false) == Some((m, mem))).then_some(id));
        let memory_walk = memory_walk
            .into_iter()
            .flatten()
            .filter_map(move |(mem, m, id)| (first(id, true) == Some((m, mem))).then_some(id));
        compute_walk.chain(memory_walk)
    }

    /// Each bucket's points, both orders, as (compute, memory, state) in
    /// compute order, for a comparison with an index built from scratch
    /// (`member_of` names a state by its lowest member).
    pub fn canonical(
        &self,
        member_of: impl Fn(u32) -> Option<u32>,
    ) -> Vec<Vec<(u32, u64, Option<u32>)>> {
        let by_milli = self.by_milli.iter().map(|set| {
            let mut v: Vec<_> = set
                .iter()
                .map(|&(m, mem, id)| (m, mem, member_of(id)))
                .collect();
            v.sort_unstable();
            v
        });
        let by_memory = self.by_memory.iter().map(|set| {
            let mut v: Vec<_> = set
                .iter()
                .map(|&(mem, m, id)| (m, mem, member_of(id)))
                .collect();
            v.sort_unstable();
            v
        });
        by_milli.chain(by_memory).collect()
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
