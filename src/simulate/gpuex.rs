//! The `gpuex` policy: the server's own placement (`crate::engine::placement`),
//! called through its public API over a capacity view of the simulated
//! cluster. No placement logic lives here, only the translation.

use super::cluster::{Cluster, Placement};
use super::frag::FragMemo;
use super::trace::{Task, Trace};

/// Whether the engine's placement is wired in yet.
pub const AVAILABLE: bool = false;

/// Adapter from the simulator's cluster to the engine's placement API.
#[derive(Debug)]
pub struct GpuexPlacer;

impl GpuexPlacer {
    pub fn new(_trace: &Trace) -> Self {
        GpuexPlacer
    }

    /// The engine's choice for `task`.
    pub fn choose(&mut self, _c: &Cluster, _t: &Task, _m: &mut FragMemo) -> Option<Placement> {
        None
    }
}
