//! The simulated cluster: what each node has left, and placing and releasing
//! tasks on it.
//!
//! Capacity is integer (milli-GPU, milli-CPU, MiB), as in the engine, and the
//! invariant "never oversold" is checked after every change in debug builds.

use super::trace::{GpuAsk, Task, Trace, MAX_GPUS, MILLI};

/// What one node has left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeState {
    pub kind: u8,
    pub gpus: u8,
    pub cpu_left: u32,
    pub mem_left: u64,
    /// Milli-GPU left per GPU; entries past `gpus` stay 0.
    pub gpu_left: [u16; MAX_GPUS],
    /// GPU tasks running here (the whole-node policy rents only nodes
    /// without one).
    pub gpu_tasks: u32,
}

impl NodeState {
    /// The left-over milli-GPU of the node's GPUs.
    pub fn left(&self) -> &[u16] {
        &self.gpu_left[..usize::from(self.gpus)]
    }

    /// Total milli-GPU left.
    pub fn total_left(&self) -> u32 {
        self.left().iter().map(|&l| u32::from(l)).sum()
    }

    /// Whether `task` fits here at all: model, CPU, memory and GPUs.
    pub fn fits(&self, task: &Task) -> bool {
        task.accepts(self.kind)
            && self.cpu_left >= task.cpu_milli
            && self.mem_left >= task.memory_mib
            && match task.gpu {
                GpuAsk::None => true,
                GpuAsk::Share(m) => self.left().iter().any(|&l| l >= m),
                GpuAsk::Whole(n) => self.free_gpus() >= usize::from(n),
            }
    }

    /// Gives back what `task` held on the GPUs of mask `gpus`.
    pub fn give(&mut self, task: &Task, gpus: u8) {
        self.cpu_left += task.cpu_milli;
        self.mem_left += task.memory_mib;
        self.gpu_tasks -= u32::from(task.gpu != GpuAsk::None);
        let per_gpu = task.gpu.milli_per_gpu();
        for i in 0..usize::from(self.gpus) {
            if gpus & (1 << i) != 0 {
                self.gpu_left[i] += per_gpu;
                debug_assert!(self.gpu_left[i] <= MILLI);
            }
        }
    }

    /// GPUs with nothing allocated.
    pub fn free_gpus(&self) -> usize {
        self.left().iter().filter(|&&l| l == MILLI).count()
    }

    /// The first `n` wholly free GPUs by index, as FGD's
    /// `AllocateExclusiveGpuId` picks them.
    pub fn first_free(&self, n: u8) -> u8 {
        let mut mask = 0u8;
        let mut need = n;
        for (i, &l) in self.left().iter().enumerate() {
            if need == 0 {
                break;
            }
            if l == MILLI {
                mask |= 1 << i;
                need -= 1;
            }
        }
        mask
    }
}

/// Where a task went: a node and the GPUs (bitmask) it uses there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allotment {
    pub node: usize,
    pub gpus: u8,
}

/// All nodes' states, the allocated total, and a version per node so that
/// policies can cache per-node scores.
#[derive(Debug, Clone)]
pub struct Cluster {
    pub nodes: Vec<NodeState>,
    /// Bumped whenever a node changes.
    pub version: Vec<u32>,
    pub capacity_milli: u64,
    pub allocated_milli: u64,
    /// GPUs with nothing allocated, over all nodes.
    pub whole_free: usize,
    /// GPUs over all nodes.
    pub gpus: usize,
}

impl Cluster {
    /// An empty cluster of the trace's nodes.
    pub fn new(trace: &Trace) -> Cluster {
        let nodes: Vec<NodeState> = trace
            .nodes
            .iter()
            .map(|n| {
                let mut gpu_left = [0; MAX_GPUS];
                gpu_left[..usize::from(n.gpus)].fill(MILLI);
                NodeState {
                    kind: n.kind,
                    gpus: n.gpus,
                    cpu_left: n.cpu_milli,
                    mem_left: n.memory_mib,
                    gpu_left,
                    gpu_tasks: 0,
                }
            })
            .collect();
        let gpus = nodes.iter().map(|n| usize::from(n.gpus)).sum();
        Cluster {
            version: vec![0; nodes.len()],
            whole_free: gpus,
            gpus,
            nodes,
            capacity_milli: trace.capacity_milli(),
            allocated_milli: 0,
        }
    }

    /// Puts `task` where `at` says. The policy chose a feasible placement;
    /// an infeasible one is a bug, caught here.
    pub fn place(&mut self, task: &Task, at: Allotment) {
        let n = &mut self.nodes[at.node];
        let free_before = n.free_gpus();
        assert!(
            n.fits(task),
            "placement on a node that cannot hold the task: {task:?} {n:?} {at:?}"
        );
        n.cpu_left -= task.cpu_milli;
        n.mem_left -= task.memory_mib;
        n.gpu_tasks += u32::from(task.gpu != GpuAsk::None);
        let per_gpu = task.gpu.milli_per_gpu();
        for i in 0..usize::from(n.gpus) {
            if at.gpus & (1 << i) != 0 {
                assert!(n.gpu_left[i] >= per_gpu, "GPU {i} oversold");
                n.gpu_left[i] -= per_gpu;
            }
        }
        debug_assert_eq!(at.gpus.count_ones(), u32::from(task.gpu.gpu_count()));
        self.whole_free = self.whole_free + n.free_gpus() - free_before;
        self.allocated_milli += task.gpu.total_milli();
        self.version[at.node] = self.version[at.node].wrapping_add(1);
    }

    /// Gives back what `task` held at `at`.
    pub fn release(&mut self, task: &Task, at: Allotment) {
        let n = &mut self.nodes[at.node];
        let free_before = n.free_gpus();
        n.give(task, at.gpus);
        self.whole_free = self.whole_free + n.free_gpus() - free_before;
        self.allocated_milli -= task.gpu.total_milli();
        self.version[at.node] = self.version[at.node].wrapping_add(1);
    }

    /// GPUs with nothing allocated, as a percentage of all GPUs.
    pub fn whole_free_percent(&self) -> f64 {
        100.0 * self.whole_free as f64 / self.gpus.max(1) as f64
    }

    /// Allocated milli-GPU as a percentage of capacity.
    pub fn alloc_percent(&self) -> f64 {
        100.0 * self.allocated_milli as f64 / self.capacity_milli as f64
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::simulate::trace::Trace;

    /// A hand-made cluster: node i has `gpus[i]` GPUs of kind 0 and plenty of
    /// CPU and memory, unless `cpu` says otherwise.
    pub fn cluster(gpus: &[u8], cpu: u32) -> (Trace, Cluster) {
        let mut nodes = String::from("sn,cpu_milli,memory_mib,gpu,model\n");
        for (i, g) in gpus.iter().enumerate() {
            nodes.push_str(&format!("n{i},{cpu},1000000,{g},T4\n"));
        }
        let pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,1,500\n";
        let t = Trace::parse(&nodes, pods).unwrap();
        let c = Cluster::new(&t);
        (t, c)
    }

    pub fn task(cpu: u32, gpu: GpuAsk) -> Task {
        Task {
            name: "t".into(),
            cpu_milli: cpu,
            memory_mib: 1,
            gpu,
            allowed: 0,
            gpu_spec: String::new(),
            creation: None,
            deletion: None,
            spot: false,
        }
    }

    #[test]
    fn place_then_release_restores_the_node() {
        let (_, mut c) = cluster(&[4], 32000);
        let before = c.nodes[0].clone();
        let t = task(4000, GpuAsk::Whole(2));
        let at = Allotment {
            node: 0,
            gpus: c.nodes[0].first_free(2),
        };
        assert_eq!(at.gpus, 0b11);
        c.place(&t, at);
        assert_eq!(c.nodes[0].left(), &[0, 0, 1000, 1000]);
        assert_eq!(c.allocated_milli, 2000);
        c.release(&t, at);
        assert_eq!(c.nodes[0], before);
        assert_eq!(c.allocated_milli, 0);
    }

    #[test]
    fn a_share_fits_only_where_one_gpu_has_room() {
        let (_, mut c) = cluster(&[1], 32000);
        c.place(&task(0, GpuAsk::Share(700)), Allotment { node: 0, gpus: 1 });
        assert!(!c.nodes[0].fits(&task(0, GpuAsk::Share(400))));
        assert!(c.nodes[0].fits(&task(0, GpuAsk::Share(300))));
        assert!(
            !c.nodes[0].fits(&task(40000, GpuAsk::None)),
            "CPU bounds too"
        );
    }
}
