//! The fleet file of the simulated backend: which GPUs a pretend node has.
//!
//! ```toml
//! hostname = "sim-h100"          # optional; --hostname overrides it
//! driver_version = "550.54.15"   # optional
//! cuda_version = "12.4"          # optional
//! [host]
//! cpu_milli = 96000
//! memory_mib = 1048576
//! [[gpus]]
//! model = "H100-SXM5-80GB"       # a catalog name
//! count = 4
//! mig = true                     # start in MIG mode (the model must be MIG-capable)
//! [[gpus]]
//! model = "H100-SXM5-80GB"
//! count = 4
//! [nvlink]
//! pairs = [[0, 1], [2, 3]]       # or: all = true (an NVSwitch mesh)
//! ```

use gpuex_wire::catalog::{self, GpuModel};
use gpuex_wire::protocol::HostInventory;
use serde::Deserialize;
use std::path::Path;

/// A parsed, checked fleet.
#[derive(Debug, Clone)]
pub struct Fleet {
    pub hostname: Option<String>,
    pub driver_version: String,
    pub cuda_version: String,
    pub host: HostInventory,
    /// One entry per GPU, in index order.
    pub gpus: Vec<FleetGpu>,
    /// NVLink pairs by GPU index, each with the lower index first.
    pub nvlink: Vec<(u32, u32)>,
}

/// One simulated GPU.
#[derive(Debug, Clone, Copy)]
pub struct FleetGpu {
    pub model: &'static GpuModel,
    pub mig_enabled: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FleetFile {
    hostname: Option<String>,
    #[serde(default = "default_driver")]
    driver_version: String,
    #[serde(default = "default_cuda")]
    cuda_version: String,
    host: HostInventory,
    gpus: Vec<GpuGroup>,
    #[serde(default)]
    nvlink: NvlinkFile,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GpuGroup {
    model: String,
    #[serde(default = "one")]
    count: u32,
    #[serde(default)]
    mig: bool,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct NvlinkFile {
    #[serde(default)]
    pairs: Vec<[u32; 2]>,
    #[serde(default)]
    all: bool,
}

fn default_driver() -> String {
    "550.54.15".into()
}
fn default_cuda() -> String {
    "12.4".into()
}
fn one() -> u32 {
    1
}

/// Why a fleet file was refused.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    #[error("cannot read the fleet file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("the fleet file is not valid: {0}")]
    Syntax(#[from] toml::de::Error),
    #[error("`{0}` is not a catalog GPU model")]
    UnknownModel(String),
    #[error("{0} cannot do MIG, so `mig = true` is not allowed")]
    NotMigCapable(String),
    #[error("NVLink pair [{0}, {1}] names a GPU the fleet does not have, or the same GPU twice")]
    BadNvlink(u32, u32),
    #[error("the fleet has no GPUs")]
    Empty,
}

impl Fleet {
    /// Read and check a fleet file.
    pub fn load(path: &Path) -> Result<Fleet, FleetError> {
        let text = std::fs::read_to_string(path).map_err(|source| FleetError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Fleet::parse(&text)
    }

    /// Parse and check fleet TOML.
    pub fn parse(text: &str) -> Result<Fleet, FleetError> {
        let file: FleetFile = toml::from_str(text)?;
        let mut gpus = Vec::new();
        for group in &file.gpus {
            let model = catalog::lookup(&group.model)
                .ok_or_else(|| FleetError::UnknownModel(group.model.clone()))?;
            if group.mig && !model.mig_capable() {
                return Err(FleetError::NotMigCapable(group.model.clone()));
            }
            gpus.extend((0..group.count).map(|_| FleetGpu {
                model,
                mig_enabled: group.mig,
            }));
        }
        if gpus.is_empty() {
            return Err(FleetError::Empty);
        }
        let n = u32::try_from(gpus.len()).unwrap_or(u32::MAX);
        let mut nvlink = Vec::new();
        if file.nvlink.all {
            for a in 0..n {
                nvlink.extend((a + 1..n).map(|b| (a, b)));
            }
        }
        for [a, b] in file.nvlink.pairs {
            if a >= n || b >= n || a == b {
                return Err(FleetError::BadNvlink(a, b));
            }
            let pair = (a.min(b), a.max(b));
            if !nvlink.contains(&pair) {
                nvlink.push(pair);
            }
        }
        Ok(Fleet {
            hostname: file.hostname,
            driver_version: file.driver_version,
            cuda_version: file.cuda_version,
            host: file.host,
            gpus,
            nvlink,
        })
    }
}
