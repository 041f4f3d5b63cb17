//! FGD's fragmentation measure (`pkg/utils/frag.go` of
//! hkust-adsl/kubernetes-scheduler-simulator), on our cluster state.
//!
//! A node's idle GPU capacity counts as fragmented, for each "typical" task
//! weighted by its share of the workload, when that task could not use it:
//! all of it when the task cannot run on the node at all (too few GPUs with
//! room, too little CPU, the wrong model, or a CPU-only task, which leaves
//! every idle GPU idle), and otherwise the GPUs too small for it.

use std::collections::HashMap;

use super::cluster::NodeState;
use super::trace::{Task, MAX_GPUS};

/// One entry of FGD's target workload: a task shape and its frequency.
#[derive(Debug, Clone, PartialEq)]
pub struct TypicalPod {
    pub cpu_milli: u32,
    /// Milli-GPU per GPU (0 for CPU-only).
    pub milli: u16,
    pub gpus: u8,
    /// Allowed models (bitmask, 0 = any) and FGD's key for them.
    pub allowed: u32,
    pub spec: String,
    /// Share of the workload, 0..=1; the list sums to 1.
    pub freq: f64,
}

/// FGD's `GetTypicalPods` with the experiment's settings (CPU pods included,
/// popularity threshold 95 %, step 1, no GPU weight): count each task shape
/// (CPU, milli-GPU per GPU, GPU count, model spec; memory is not part of it),
/// take the most frequent shapes until they cover 95 % of the tasks, and
/// renormalise their frequencies.
pub fn typical_pods(tasks: &[Task]) -> Vec<TypicalPod> {
    let mut counts: HashMap<(u32, u16, u8, &str), (u32, u32)> = HashMap::new();
    for t in tasks {
        let key = (
            t.cpu_milli,
            t.gpu.milli_per_gpu(),
            t.gpu.gpu_count(),
            t.gpu_spec.as_str(),
        );
        counts.entry(key).or_insert((0, t.allowed)).0 += 1;
    }
    let mut shapes: Vec<_> = counts.into_iter().collect();
    // Decreasing count; equal counts by decreasing (cpu, milli, gpus, spec),
    // which is `sort.Reverse` over FGD's `Less`.
    shapes.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then_with(|| b.0.cmp(&a.0)));
    let total = tasks.len() as f64;
    let wanted = 0.95 * total;
    let mut covered = 0.0;
    let mut out = Vec::new();
    for ((cpu_milli, milli, gpus, spec), (count, allowed)) in shapes {
        if covered >= wanted {
            break;
        }
        covered += f64::from(count);
        out.push(TypicalPod {
            cpu_milli,
            milli,
            gpus,
            allowed,
            spec: spec.to_string(),
            freq: f64::from(count),
        });
    }
    for p in &mut out {
        p.freq /= covered;
    }
    out
}

/// FGD's `NodeGpuShareFragAmountScore`: the node's fragmented milli-GPU
/// against the typical pods (everything except the Q3 "satisfied" share).
pub fn node_frag(kind: u8, cpu_left: u32, left: &[u16], typical: &[TypicalPod]) -> f64 {
    let total: u32 = left.iter().map(|&l| u32::from(l)).sum();
    if total == 0 {
        return 0.0;
    }
    let total = f64::from(total);
    let mut frag = 0.0;
    for p in typical {
        let accessible = p.allowed == 0 || p.allowed & (1 << kind) != 0;
        if p.milli == 0 || !accessible {
            // XL/XR (CPU-only) and no-access: all idle GPUs are fragment.
            frag += p.freq * total;
            continue;
        }
        let roomy = left.iter().filter(|&&l| l >= p.milli).count();
        if roomy >= usize::from(p.gpus) && cpu_left >= p.cpu_milli {
            // Q3: only the GPUs too small for this task are fragment (Q2).
            let small: u32 = left
                .iter()
                .filter(|&&l| l < p.milli)
                .map(|&l| u32::from(l))
                .sum();
            frag += p.freq * f64::from(small);
        } else {
            // Q1, Q2, Q4: the task cannot run; all idle GPUs are fragment.
            frag += p.freq * total;
        }
    }
    frag
}

/// Node frag amounts memoised by node shape. The frag amount depends only on
/// the model, CPU left and the multiset of GPU left, so sorting the GPUs gives
/// a key that many nodes share; the memo turns FGD's dominant cost into a
/// hash lookup.
#[derive(Debug, Default)]
pub struct FragMemo {
    map: HashMap<u128, f64, BuildFast>,
}

impl FragMemo {
    /// The frag amount of a node with this shape.
    pub fn frag(&mut self, kind: u8, cpu_left: u32, left: &[u16], typical: &[TypicalPod]) -> f64 {
        let mut sorted = [0u16; MAX_GPUS];
        sorted[..left.len()].copy_from_slice(left);
        sorted[..left.len()].sort_unstable();
        // 5 bits kind, 32 bits CPU, 8 × 11 bits GPU left: 125 bits.
        let mut key = u128::from(kind) << 120 | u128::from(cpu_left) << 88;
        for (i, &l) in sorted.iter().enumerate() {
            key |= u128::from(l) << (11 * i);
        }
        // Padding zeros are harmless: a GPU with nothing left adds nothing to
        // any term of the measure, so [0, 500] and [0, 0, 500] share a value.
        *self
            .map
            .entry(key)
            .or_insert_with(|| node_frag(kind, cpu_left, left, typical))
    }

    /// The frag amount of a node in the cluster.
    pub fn of(&mut self, n: &NodeState, typical: &[TypicalPod]) -> f64 {
        self.frag(n.kind, n.cpu_left, n.left(), typical)
    }
}

/// A multiply-xorshift hasher for the memo's `u128` keys; SipHash would cost
/// more than the lookup saves.
#[derive(Debug, Default, Clone, Copy)]
pub struct BuildFast;

impl std::hash::BuildHasher for BuildFast {
    type Hasher = FastHasher;
    fn build_hasher(&self) -> FastHasher {
        FastHasher(0)
    }
}

/// See [`BuildFast`].
#[derive(Debug, Default, Clone, Copy)]
pub struct FastHasher(u64);

impl std::hash::Hasher for FastHasher {
    fn finish(&self) -> u64 {
        let z = self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z ^ (z >> 29)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x100_0000_01B3);
        }
    }
    fn write_u128(&mut self, v: u128) {
        let lo = v as u64;
        let hi = (v >> 64) as u64;
        self.0 = (lo ^ hi.rotate_left(32)).wrapping_mul(0xBF58_476D_1CE4_E5B9) ^ hi;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::cluster::tests::task;
    use crate::simulate::trace::GpuAsk;

    fn pod(cpu: u32, milli: u16, gpus: u8, freq: f64) -> TypicalPod {
        TypicalPod {
            cpu_milli: cpu,
            milli,
            gpus,
            allowed: 0,
            spec: String::new(),
            freq,
        }
    }

    // The cases of frag.go's GetNodePodFrag and NodeGpuShareFragAmount.

    #[test]
    fn a_task_that_fits_leaves_only_too_small_gpus_as_fragment() {
        // Q3: GPUs with 200 and 300 left are too small for a 500 task.
        let f = node_frag(0, 8000, &[200, 300, 1000, 600], &[pod(1000, 500, 1, 1.0)]);
        assert_eq!(f, 500.0);
    }

    #[test]
    fn lacking_gpu_makes_all_idle_gpu_fragment() {
        // Q2: enough CPU, no GPU with 800 left.
        assert_eq!(
            node_frag(0, 8000, &[200, 300], &[pod(1000, 800, 1, 1.0)]),
            500.0
        );
        // A 2-GPU task on a node with one free GPU.
        assert_eq!(
            node_frag(0, 8000, &[1000, 500], &[pod(1000, 1000, 2, 1.0)]),
            1500.0
        );
    }

    #[test]
    fn lacking_cpu_makes_all_idle_gpu_fragment() {
        // Q4 (GPU fits, CPU does not) and Q1 (neither).
        assert_eq!(
            node_frag(0, 500, &[1000, 1000], &[pod(1000, 500, 1, 1.0)]),
            2000.0
        );
        assert_eq!(node_frag(0, 500, &[100], &[pod(1000, 500, 1, 1.0)]), 100.0);
    }

    #[test]
    fn cpu_only_tasks_and_wrong_models_count_all_idle_gpu() {
        assert_eq!(
            node_frag(0, 8000, &[1000, 300], &[pod(1000, 0, 0, 1.0)]),
            1300.0
        );
        let mut other_model = pod(1000, 500, 1, 1.0);
        other_model.allowed = 0b10;
        assert_eq!(node_frag(0, 8000, &[1000], &[other_model.clone()]), 1000.0);
        assert_eq!(node_frag(1, 8000, &[1000], &[other_model]), 0.0);
    }

    #[test]
    fn frag_is_the_frequency_weighted_sum_and_zero_on_a_full_node() {
        let typical = [pod(1000, 500, 1, 0.5), pod(1000, 1000, 1, 0.5)];
        // 500 task: 300 is small -> 300. Whole-GPU task: no free GPU -> 900.
        assert_eq!(
            node_frag(0, 8000, &[600, 300], &typical),
            0.5 * 300.0 + 0.5 * 900.0
        );
        assert_eq!(node_frag(0, 8000, &[0, 0], &typical), 0.0);
    }

    #[test]
    fn the_memo_agrees_with_the_direct_computation_for_any_gpu_order() {
        let typical = [pod(1000, 500, 1, 0.7), pod(2000, 1000, 2, 0.3)];
        let mut memo = FragMemo::default();
        let a = memo.frag(0, 4000, &[1000, 300, 1000], &typical);
        let b = memo.frag(0, 4000, &[300, 1000, 1000], &typical);
        assert_eq!(a, b);
        assert_eq!(a, node_frag(0, 4000, &[1000, 300, 1000], &typical));
    }

    #[test]
    fn typical_pods_cover_95_percent_and_sum_to_one() {
        let mut tasks = Vec::new();
        for _ in 0..60 {
            tasks.push(task(1000, GpuAsk::Share(500)));
        }
        for _ in 0..36 {
            tasks.push(task(2000, GpuAsk::Whole(1)));
        }
        for _ in 0..4 {
            tasks.push(task(3000, GpuAsk::None));
        }
        let t = typical_pods(&tasks);
        // 60 + 36 = 96 % ≥ 95 %: the CPU-only shape is left out.
        assert_eq!(t.len(), 2);
        assert_eq!((t[0].milli, t[1].milli), (500, 1000));
        assert!((t[0].freq - 60.0 / 96.0).abs() < 1e-12);
        assert!((t.iter().map(|p| p.freq).sum::<f64>() - 1.0).abs() < 1e-12);
    }
}
