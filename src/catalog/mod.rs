//! The GPU catalog (ARCHITECTURE.md §2) as the server serves it: the pure catalog from
//! `gpuex-wire`, plus the regions the exchange knows and the routes that
//! list both.

pub use gpuex_wire::catalog::*;

pub mod regions;
mod routes;
pub use routes::{router, CatalogState};
