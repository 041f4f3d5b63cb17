//! The GPU catalog and the standardization engine (ARCHITECTURE.md §2).
//!
//! Every GPU model the exchange knows, with its dense peaks per precision and
//! its MIG layout, and the arithmetic that turns "N TFLOPS at precision P on
//! model M" into the two units gpuex sells. Pure data and pure functions: the
//! agent and the simulator use this module without the server.

mod cuda;
mod mig;
mod models;
mod region_choice;
mod units;

pub use cuda::{CudaVersion, NotACudaVersion};
pub use mig::{MigLayout, MigProfile, COMPUTE_SLICES, MEMORY_SLICES};
pub use models::{all_models, lookup, GpuModel};
pub use region_choice::{RegionChoice, ANY as ANY_REGION};
pub use units::text_names;
pub use units::{Precision, Unit, UnknownName, UNIT_VRAM_GB};
