//! The `gpuex` policy: the server's own placement (`crate::engine::placement`),
//! called through its public API over a capacity view that mirrors the
//! simulated cluster. No placement logic is copied here: the adapter only
//! translates trace tasks into `PlacementRequest`s and answers back, and keeps
//! the view and the demand mix current exactly as the engine does (the mix
//! records each granted request, like `Engine::grant`).
//!
//! Two things the engine does not cover are bridged here, and said so:
//! - the undisclosed G2/G3 GPUs have no catalog entry; the view needs a
//!   catalog model per GPU, so each borrows a catalog model no other trace
//!   model uses. Requests are in milli-GPU with no GPU-memory ask, so only the
//!   model's identity matters (buckets and `gpu_spec`), not its figures;
//! - CPU-only tasks are not the exchange's business (a placement request asks
//!   for at least one GPU). They go to the node with the least idle GPU
//!   capacity that has the CPU and memory, so they strand as little GPU as
//!   possible.

use std::collections::HashMap;

use uuid::Uuid;

use super::cluster::{Allotment, Cluster};
use super::trace::{GpuAsk, Task, Trace};
use crate::catalog;
use crate::engine::placement::{
    self as engine, CapacityView, Compute, DemandClass, DemandMix, EndHint, ModelIdx, ModelSet,
    NodeView, PartitionMode, PlacementRequest, ScoreKind,
};
use crate::engine::types::Isolation;

/// Whether the engine's placement is wired in.
pub const AVAILABLE: bool = true;

/// The engine's placement over a mirror of the simulated cluster.
#[derive(Debug)]
pub struct GpuexPlacer {
    view: CapacityView,
    mix: DemandMix,
    policy: engine::Policy,
    /// Catalog model per trace GPU kind.
    kind_model: Vec<ModelIdx>,
    /// The answer for the task being placed, until it is committed.
    pending: Option<Held>,
    /// Committed placements per trace task, to release them.
    held: HashMap<usize, Vec<Held>>,
}

/// What a task holds in the view.
#[derive(Debug)]
enum Held {
    /// A GPU task: the engine's own placement, and the predicted end it was
    /// booked with (`None`: placed without one).
    Engine(Box<engine::Placement>, Option<EndHint>),
    /// A CPU-only task: host CPU and memory on a node, booked by hand.
    Host { node: Uuid, cpu: u64, mem: u64 },
}

fn node_id(i: usize) -> Uuid {
    Uuid::from_u128(i as u128 + 1)
}

impl GpuexPlacer {
    /// Mirrors the trace's nodes into a view: one region, every GPU shared.
    pub fn new(trace: &Trace, walk: super::PlacementWalk) -> Self {
        let named: Vec<Option<ModelIdx>> = trace
            .kinds
            .iter()
            .map(|k| k.catalog.and_then(|m| engine::model_idx(m.name)))
            .collect();
        let mut spare = (0..catalog::all_models().len())
            .filter_map(|i| ModelIdx::try_from(i).ok())
            .filter(|m| !named.contains(&Some(*m)));
        let kind_model: Vec<ModelIdx> = named
            .iter()
            .map(|m| m.or_else(|| spare.next()).unwrap_or(0))
            .collect();
        let mut view = CapacityView::new();
        let region = view.region("trace");
        view.extend_nodes(trace.nodes.iter().enumerate().map(|(i, n)| {
            let mut node = NodeView::new(node_id(i), region, u64::from(n.cpu_milli), n.memory_mib);
            for _ in 0..n.gpus {
                node = node.with_gpu(kind_model[usize::from(n.kind)], PartitionMode::Shared, 0);
            }
            node
        }));
        GpuexPlacer {
            view,
            mix: DemandMix::default(),
            policy: engine::Policy {
                walk: match walk {
                    super::PlacementWalk::States => engine::Walk::States,
                    super::PlacementWalk::EveryNode => engine::Walk::EveryNode,
                },
                ..engine::Policy::simulation(ScoreKind::Fgd)
            },
            kind_model,
            pending: None,
            held: HashMap::new(),
        }
    }

    fn request(&self, task: &Task, ends: Option<EndHint>) -> PlacementRequest {
        let (milli, gpus) = match task.gpu {
            GpuAsk::Share(m) => (u32::from(m), 1),
            GpuAsk::Whole(k) => (1000 * u32::from(k), k),
            GpuAsk::None => (0, 1),
        };
        let models = if task.allowed == 0 {
            ModelSet::ANY
        } else {
            let mut set = 0u32;
            for (kind, &m) in self.kind_model.iter().enumerate() {
                if task.allowed & (1 << kind) != 0 {
                    set |= 1 << m;
                }
            }
            ModelSet(set)
        };
        PlacementRequest {
            compute: Compute::Milli(milli),
            memory_mb: 0,
            gpus,
            models,
            nvlink: false,
            isolation: Isolation::Any,
            region: None,
            node: None,
            cpu_milli: Some(u64::from(task.cpu_milli)),
            memory_mib: Some(task.memory_mib),
            ends,
            min_cuda: None,
        }
    }

    /// The engine's choice for `task`, predicted to end as `ends` says
    /// (the predicted-end term of placement, as the server hands it).
    pub fn choose(
        &mut self,
        cluster: &Cluster,
        task: &Task,
        ends: Option<EndHint>,
    ) -> Option<Allotment> {
        self.pending = None;
        if task.gpu == GpuAsk::None {
            let at = cpu_only(cluster, task)?;
            self.pending = Some(Held::Host {
                node: node_id(at.node),
                cpu: u64::from(task.cpu_milli),
                mem: task.memory_mib,
            });
            return Some(at);
        }
        let p = engine::place(
            &self.view,
            &self.request(task, ends),
            &self.mix,
            &self.policy,
        )?;
        let node = usize::try_from(p.node.as_u128().checked_sub(1)?).ok()?;
        let gpus = p.gpus.iter().fold(0u8, |m, g| m | 1 << g.index);
        self.pending = Some(Held::Engine(Box::new(p), ends));
        Some(Allotment { node, gpus })
    }

    /// The harness placed what `choose` answered: book it in the view and the mix.
    pub fn commit(&mut self, idx: usize) {
        let Some(held) = self.pending.take() else {
            return;
        };
        match &held {
            Held::Engine(p, ends) => {
                let booked = match ends {
                    // Predicted runs book their end, for the next ones' predicted-end term.
                    Some(h) => self.view.allocate_ending(p, Some(h.end)),
                    None => self.view.allocate(p),
                };
                booked.expect("the engine placed on free capacity");
                let gpus = u8::try_from(p.gpus.len()).unwrap_or(1).max(1);
                let per_gpu = p.asked_milli.div_ceil(u32::from(gpus));
                let class = DemandClass::quantized(per_gpu, 0, gpus).with_host_cpu(p.cpu_milli);
                self.mix.record(class);
            }
            Held::Host { node, cpu, mem } => {
                self.view.update_node(*node, |n| {
                    n.cpu_free -= cpu;
                    n.memory_free -= mem;
                });
            }
        }
        self.held.entry(idx).or_default().push(held);
    }

    /// Task `idx` left: give its capacity back to the view.
    pub fn release(&mut self, idx: usize) {
        match self.held.get_mut(&idx).and_then(Vec::pop) {
            Some(Held::Engine(p, ends)) => match ends {
                Some(h) => self.view.release_ending(&p, Some(h.end)),
                None => self.view.release(&p),
            }
            .expect("a committed placement releases"),
            Some(Held::Host { node, cpu, mem }) => {
                self.view.update_node(node, |n| {
                    n.cpu_free += cpu;
                    n.memory_free += mem;
                });
            }
            None => {}
        }
    }
}

/// CPU-only tasks: the feasible node with the least idle GPU milli, then the
/// most CPU left, then the lowest index.
fn cpu_only(cluster: &Cluster, task: &Task) -> Option<Allotment> {
    cluster
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.fits(task))
        .min_by_key(|(i, n)| (n.total_left(), std::cmp::Reverse(n.cpu_left), *i))
        .map(|(node, _)| Allotment { node, gpus: 0 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::cluster::tests::{cluster, task};

    #[test]
    fn gpuex_places_through_the_engine_and_keeps_its_view_in_step() {
        let (t, mut c) = cluster(&[2, 2], 32000);
        let mut g = GpuexPlacer::new(&t, crate::simulate::PlacementWalk::States);
        let a = task(1000, GpuAsk::Share(600));
        let at = g.choose(&c, &a, None).unwrap();
        c.place(&a, at);
        g.commit(0);
        // The next share goes to the same, partly used GPU.
        let b = task(1000, GpuAsk::Share(300));
        let at2 = g.choose(&c, &b, None).unwrap();
        assert_eq!(at2, at);
        c.place(&b, at2);
        g.commit(1);
        // Two whole GPUs: only the untouched node has them.
        let w = task(1000, GpuAsk::Whole(2));
        let at3 = g.choose(&c, &w, None).unwrap();
        assert_eq!(at3.node, 1 - at.node);
        assert_eq!(at3.gpus, 0b11);
        g.release(0);
        c.release(&a, at);
        assert!(g
            .choose(&c, &task(1000, GpuAsk::Share(700)), None)
            .is_some());
    }

    #[test]
    fn a_predicted_end_sends_a_share_to_the_gpu_whose_work_ends_near_it() {
        let hint = |end| Some(EndHint { now: 0, end });
        let third = |with: Option<EndHint>| {
            let (t, mut c) = cluster(&[2], 32000);
            let mut g = GpuexPlacer::new(&t, crate::simulate::PlacementWalk::States);
            // GPU 0 holds work predicted to end in an hour, GPU 1 in ten.
            for (i, end) in [(0, 3_600), (1, 36_000)] {
                let a = task(1000, GpuAsk::Share(600));
                let at = g.choose(&c, &a, hint(end)).unwrap();
                assert_eq!(at.gpus, 1 << i);
                c.place(&a, at);
                g.commit(i);
            }
            g.choose(&c, &task(1000, GpuAsk::Share(300)), with)
                .unwrap()
                .gpus
        };
        assert_eq!(third(hint(36_060)), 0b10);
        assert_eq!(third(hint(3_000)), 0b01);
        // Without a prediction the lower index wins, as before.
        assert_eq!(third(None), 0b01);
    }

    #[test]
    fn cpu_only_tasks_go_where_the_least_gpu_is_idle() {
        let (_, mut c) = cluster(&[2, 2], 32000);
        c.place(&task(0, GpuAsk::Whole(1)), Allotment { node: 1, gpus: 1 });
        assert_eq!(cpu_only(&c, &task(1000, GpuAsk::None)).unwrap().node, 1);
    }
}
