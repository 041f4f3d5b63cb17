//! The FGD paper's experiment: sample a workload to `tune` × GPU capacity,
//! shuffle it, place it task by task with no departures, and read the
//! allocation and fragmentation when the arrived requests reach 100 % and
//! 130 % of capacity.
//!
//! Follows `Simulate` in `pkg/simulator/core.go`, `TunePodsByNodeTotalResource`
//! in `pkg/simulator/simulator.go`, and the analysis scripts
//! (`merge_alloc_discrete`, `merge_frag_discrete`), which bucket the
//! per-event readings by the arrived percentage rounded half to even.

use super::cluster::Cluster;
use super::policy::{Scheduler, Shared};
use super::rng::Rng;
use super::trace::Trace;
use super::PolicyName;

/// The highest arrived-percentage bucket the curve keeps.
pub const MAX_BUCKET: usize = 130;

/// One seed's readings.
#[derive(Debug, Clone)]
pub struct SeedRun {
    pub seed: u64,
    /// Allocation % per arrived-% bucket 0..=130 (`None` where no reading).
    pub alloc: Vec<Option<f64>>,
    /// Fragmented GPU (FGD's measure) as % of capacity, per bucket.
    pub frag: Vec<Option<f64>>,
    pub failed: usize,
    pub tasks: usize,
}

/// The workload of one seed, as trace task indices in arrival order.
///
/// As FGD: the original tasks, sorted by name, are shuffled; then, if their
/// GPU request is below `tune` × capacity, tasks drawn uniformly (with
/// replacement) from the original workload are appended until the next one
/// would pass the target (FGD's check adds the draw's milli-GPU per GPU, not
/// its total; kept, to be the same experiment); if above, random tasks are
/// removed until the request is at most the target.
pub fn workload(trace: &Trace, tune: f64, rng: &mut Rng) -> Vec<usize> {
    let mut order: Vec<usize> = (0..trace.tasks.len()).collect();
    order.sort_by(|&a, &b| trace.tasks[a].name.cmp(&trace.tasks[b].name));
    let by_name = order.clone();
    rng.shuffle(&mut order);
    let target = tune * trace.capacity_milli() as f64;
    let mut total: u64 = order
        .iter()
        .map(|&i| trace.tasks[i].gpu.total_milli())
        .sum();
    if tune <= 0.0 {
        return order;
    }
    if (total as f64) < target {
        loop {
            let pick = by_name[rng.below(by_name.len())];
            let ask = trace.tasks[pick].gpu;
            if (total + u64::from(ask.milli_per_gpu())) as f64 > target {
                break;
            }
            total += ask.total_milli();
            order.push(pick);
        }
    } else {
        while total as f64 > target && !order.is_empty() {
            let gone = order.remove(rng.below(order.len()));
            total -= trace.tasks[gone].gpu.total_milli();
        }
    }
    order
}

/// Runs one seed of one policy.
pub fn run_seed(
    trace: &Trace,
    shared: &mut Shared,
    policy: PolicyName,
    tune: f64,
    seed: u64,
) -> SeedRun {
    let mut rng = Rng::new(seed);
    let order = workload(trace, tune, &mut rng);
    let mut cluster = Cluster::new(trace);
    let capacity = cluster.capacity_milli as f64;
    // Per-node frag amounts, kept current so the cluster sum costs one memo
    // lookup per placement.
    let mut node_frag: Vec<f64> = cluster
        .nodes
        .iter()
        .map(|n| shared.memo.of(n, &shared.typical))
        .collect();
    let mut cluster_frag: f64 = node_frag.iter().sum();

    let buckets = MAX_BUCKET + 2;
    let (mut sum_alloc, mut sum_frag, mut count) =
        (vec![0.0; buckets], vec![0.0; buckets], vec![0u32; buckets]);
    let mut arrived: u64 = 0;
    let mut failed = 0;
    let mut sched = Scheduler::new(policy, trace, shared, seed);
    for &idx in &order {
        let task = &trace.tasks[idx];
        arrived += task.gpu.total_milli();
        match sched.choose(&cluster, idx) {
            Some(at) => {
                cluster.place(task, at);
                sched.commit(idx);
                let n = &cluster.nodes[at.node];
                let f = sched.frag_of(n);
                cluster_frag += f - node_frag[at.node];
                node_frag[at.node] = f;
            }
            None => failed += 1,
        }
        // pandas' round(x, 0) rounds half to even.
        let b = (100.0 * arrived as f64 / capacity).round_ties_even() as usize;
        if b < buckets {
            sum_alloc[b] += cluster.alloc_percent();
            sum_frag[b] += 100.0 * cluster_frag / capacity;
            count[b] += 1;
        }
    }
    // As the scripts do: the bucket's mean, or the mean over its neighbours
    // when it has no reading.
    let read = |sums: &[f64]| -> Vec<Option<f64>> {
        (0..=MAX_BUCKET)
            .map(|b| {
                if count[b] > 0 {
                    return Some(sums[b] / f64::from(count[b]));
                }
                let range = b.saturating_sub(1)..=(b + 1);
                let n: u32 = count[range.clone()].iter().sum();
                (n > 0).then(|| sums[range].iter().sum::<f64>() / f64::from(n))
            })
            .collect()
    };
    SeedRun {
        seed,
        alloc: read(&sum_alloc),
        frag: read(&sum_frag),
        failed,
        tasks: order.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(pods: &[(u32, u8, u16)]) -> Trace {
        let nodes =
            "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,4,T4\nn1,64000,262144,4,T4\n";
        let mut csv = String::from("name,cpu_milli,memory_mib,num_gpu,gpu_milli\n");
        for (i, (cpu, n, m)) in pods.iter().enumerate() {
            csv.push_str(&format!("p{i:03},{cpu},1024,{n},{m}\n"));
        }
        Trace::parse(nodes, &csv).unwrap()
    }

    #[test]
    fn tuning_up_samples_until_the_next_task_would_pass_the_target() {
        // Capacity 8000; original request 1500; target 1.3 × 8000 = 10400.
        let t = trace(&[(1000, 1, 1000), (1000, 1, 500)]);
        let w = workload(&t, 1.3, &mut Rng::new(42));
        let total: u64 = w.iter().map(|&i| t.tasks[i].gpu.total_milli()).sum();
        assert!(total <= 10_400 && total + 1000 > 10_400, "total {total}");
        // The original tasks come first, each once.
        let mut head = w[..2].to_vec();
        head.sort();
        assert_eq!(head, [0, 1]);
    }

    #[test]
    fn tuning_down_removes_tasks_until_at_most_the_target() {
        let t = trace(&[(1000, 4, 1000); 6]);
        let w = workload(&t, 1.3, &mut Rng::new(42));
        let total: u64 = w.iter().map(|&i| t.tasks[i].gpu.total_milli()).sum();
        assert_eq!(total, 8000, "24000 -> at most 10400 in steps of 4000");
    }

    #[test]
    fn the_workload_depends_only_on_the_seed() {
        let t = trace(&[(1000, 1, 300), (2000, 1, 1000), (0, 0, 0)]);
        assert_eq!(
            workload(&t, 1.3, &mut Rng::new(7)),
            workload(&t, 1.3, &mut Rng::new(7))
        );
        assert_ne!(
            workload(&t, 1.3, &mut Rng::new(7)),
            workload(&t, 1.3, &mut Rng::new(8))
        );
    }

    #[test]
    fn a_run_reads_allocation_at_100_and_130_and_counts_failures() {
        // Whole-GPU tasks only: every policy fills the 8 GPUs exactly.
        let t = trace(&[(1000, 1, 1000)]);
        let mut shared = Shared::new(&t);
        let r = run_seed(&t, &mut shared, PolicyName::BestFit, 1.3, 42);
        assert_eq!(r.tasks, 10);
        assert_eq!(r.failed, 2);
        assert_eq!(r.alloc[100], Some(100.0));
        // Arrivals stop at 125 %; 130 % has no reading, not even nearby.
        assert_eq!(r.alloc[125], Some(100.0));
        assert_eq!(r.alloc[130], None);
        assert_eq!(r.alloc[50], Some(50.0));
    }
}
