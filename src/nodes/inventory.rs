//! A node's inventory as the engine sees it ([`NodeSpec`]): parsed from what a
//! provider declares with `POST /v1/nodes`, or from what the agent reports at
//! registration, and the check for GPUs that changed under live leases.

use super::store::LeaseRow;
use crate::catalog;
use crate::engine::placement::PartitionMode;
use crate::engine::{GpuSpec, NodeSpec};
use crate::error::FieldError;
use crate::protocol::{MigMode, RegisterRequest};
use serde::Deserialize;
use std::collections::BTreeSet;
use utoipa::ToSchema;
use uuid::Uuid;

/// Host CPU a declared GPU brings when the provider does not say (milli-CPU).
const DEFAULT_CPU_MILLI_PER_GPU: u64 = 16_000;
/// Host memory a declared GPU brings when the provider does not say (MiB).
const DEFAULT_MEMORY_MIB_PER_GPU: u64 = 131_072;
/// GPU indices the engine accepts.
const MAX_GPUS: usize = 32;

/// One GPU a provider declares before its agent registers.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeclaredGpu {
    /// Catalog model name, e.g. `H100-SXM5-80GB`.
    pub model: String,
    /// Index on the node (default: its position in the list).
    pub index: Option<u32>,
    /// GPU memory in MiB; must not exceed the model's.
    pub memory_mib: Option<u64>,
    /// Whether the GPU can run MIG (default: whether the model can).
    pub mig_capable: Option<bool>,
    /// How it is sold: `mig`, `shared` or `whole` (default `whole`).
    #[schema(value_type = Option<super::view::GpuMode>, example = "mig")]
    pub mode: Option<PartitionMode>,
    /// Indices of the GPUs joined to this one by NVLink.
    #[serde(default)]
    pub nvlink: Vec<u32>,
}

/// The declared inventory of a node.
pub struct Declared<'a> {
    pub zone: Option<&'a str>,
    pub gpus: &'a [DeclaredGpu],
    pub cpu_milli: Option<u64>,
    pub memory_mib: Option<u64>,
}

/// Parses a declared inventory into the engine's spec, naming each bad field.
pub fn declared_spec(
    id: Uuid,
    region: &str,
    declared: &Declared<'_>,
) -> Result<NodeSpec, Vec<FieldError>> {
    let mut errors = Vec::new();
    if declared.gpus.len() > MAX_GPUS {
        errors.push(FieldError::new("gpus", "at most 32 GPUs per node"));
        return Err(errors);
    }
    let indices: Vec<u32> = declared
        .gpus
        .iter()
        .enumerate()
        .map(|(i, g)| g.index.unwrap_or(i as u32))
        .collect();
    let mut seen = BTreeSet::new();
    let mut gpus = Vec::new();
    for (i, g) in declared.gpus.iter().enumerate() {
        let at = |f: &str| format!("gpus[{i}].{f}");
        let index = indices[i];
        if index as usize >= MAX_GPUS || !seen.insert(index) {
            errors.push(FieldError::new(at("index"), "must be unique and below 32"));
        }
        let Some(model) = catalog::lookup(&g.model) else {
            errors.push(FieldError::new(
                at("model"),
                format!(
                    "`{}` is not a catalog model (see GET /v1/catalog/gpus)",
                    g.model
                ),
            ));
            continue;
        };
        if let Some(memory) = g.memory_mib {
            // The catalog's GB are marketing GB; allow the GiB a driver reports.
            let most = u64::from(model.memory_gb) * 1024 * 11 / 10;
            if memory == 0 || memory > most {
                errors.push(FieldError::new(
                    at("memory_mib"),
                    format!("must be between 1 and {}'s memory", model.name),
                ));
            }
        }
        let mig_capable = g.mig_capable.unwrap_or(model.mig_capable());
        if mig_capable && !model.mig_capable() {
            errors.push(FieldError::new(
                at("mig_capable"),
                format!("{} cannot run MIG", model.name),
            ));
        }
        let mode = g.mode.unwrap_or(PartitionMode::Whole);
        if mode == PartitionMode::Mig && !(mig_capable && model.mig_capable()) {
            errors.push(FieldError::new(at("mode"), "`mig` needs a MIG-capable GPU"));
        }
        for peer in &g.nvlink {
            if *peer == index || !indices.contains(peer) {
                errors.push(FieldError::new(
                    at("nvlink"),
                    format!("{peer} is not another GPU of this node"),
                ));
            }
        }
        gpus.push(GpuSpec {
            index: index.min(MAX_GPUS as u32 - 1) as u8,
            model: model.name.to_owned(),
            mode,
            nvlink: g.nvlink.iter().map(|p| (*p).min(31) as u8).collect(),
        });
    }
    let count = declared.gpus.len() as u64;
    if declared.cpu_milli == Some(0) && count > 0 {
        errors.push(FieldError::new("cpu_milli", "must be positive"));
    }
    if declared.memory_mib == Some(0) && count > 0 {
        errors.push(FieldError::new("memory_mib", "must be positive"));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(NodeSpec {
        id,
        region: region.to_owned(),
        zone: declared.zone.map(str::to_owned),
        cpu_milli: declared
            .cpu_milli
            .unwrap_or(count * DEFAULT_CPU_MILLI_PER_GPU),
        memory_mib: declared
            .memory_mib
            .unwrap_or(count * DEFAULT_MEMORY_MIB_PER_GPU),
        gpus,
        // Its agent says, when it registers.
        cuda: None,
    })
}

/// The spec an agent's registration describes. GPUs the catalog lacks are
/// reported but never sold. A GPU keeps the partition mode declared for it
/// (same index and model) where the hardware allows; a GPU in MIG mode is sold
/// as MIG; anything else is sold whole.
pub fn registered_spec(previous: &NodeSpec, req: &RegisterRequest) -> NodeSpec {
    let sellable: Vec<&crate::protocol::GpuInventory> = req
        .gpus
        .iter()
        .filter(|g| (g.index as usize) < MAX_GPUS)
        .filter(|g| g.model.as_deref().and_then(catalog::lookup).is_some())
        .collect();
    let indices: BTreeSet<u32> = sellable.iter().map(|g| g.index).collect();
    let mut seen = BTreeSet::new();
    let gpus = sellable
        .into_iter()
        .filter(|g| seen.insert(g.index))
        .filter_map(|g| {
            let model = catalog::lookup(g.model.as_deref()?)?;
            let mig_on = g.mig_capable && g.mig_mode == Some(MigMode::Enabled);
            let declared = previous
                .gpus
                .iter()
                .find(|d| u32::from(d.index) == g.index && d.model == model.name)
                .map(|d| d.mode);
            let mode = match (mig_on && model.mig_capable(), declared) {
                (true, _) => PartitionMode::Mig,
                (false, Some(PartitionMode::Mig)) | (false, None) => PartitionMode::Whole,
                (false, Some(mode)) => mode,
            };
            Some(GpuSpec {
                index: g.index as u8,
                model: model.name.to_owned(),
                mode,
                nvlink: g
                    .nvlink_peers
                    .iter()
                    .filter(|p| **p != g.index && indices.contains(p))
                    .map(|p| *p as u8)
                    .collect(),
            })
        })
        .collect();
    NodeSpec {
        id: previous.id,
        region: previous.region.clone(),
        zone: previous.zone.clone(),
        cpu_milli: u64::from(req.host.cpu_milli),
        memory_mib: req.host.memory_mib,
        gpus,
        cuda: driver_cuda(&req.gpus),
    }
}

/// The CUDA version a node's driver supports: the lowest its GPUs report
/// (one driver serves them all, so they agree but for a lying agent);
/// `None` when any says no version, which no `min_cuda` order accepts.
fn driver_cuda(gpus: &[crate::protocol::GpuInventory]) -> Option<catalog::CudaVersion> {
    gpus.iter()
        .map(|g| g.cuda_version.parse::<catalog::CudaVersion>().ok())
        .min()
        .flatten()
}

/// How a re-inventory changed what a node has, in words, when its GPU count
/// or its models (as a multiset) differ from the previous registration's;
/// `None` when they are the same.
pub fn inventory_change(previous: &RegisterRequest, new: &RegisterRequest) -> Option<String> {
    let models = |r: &RegisterRequest| {
        let mut m: Vec<String> = r
            .gpus
            .iter()
            .map(|g| g.model.clone().unwrap_or_else(|| g.product_name.clone()))
            .collect();
        m.sort();
        m
    };
    let (before, after) = (models(previous), models(new));
    if before.len() != after.len() {
        Some(format!(
            "re-inventory changed the GPU count from {} to {} ({} → {})",
            before.len(),
            after.len(),
            before.join(", "),
            after.join(", ")
        ))
    } else if before != after {
        Some(format!(
            "re-inventory changed the GPU models from {} to {}",
            before.join(", "),
            after.join(", ")
        ))
    } else {
        None
    }
}

/// The live leases whose GPUs the new spec no longer has as they were
/// (same index, model and partition mode).
pub fn leases_broken_by(old: &NodeSpec, new: &NodeSpec, live: &[LeaseRow]) -> Vec<Uuid> {
    let same = |index: u8| {
        let o = old.gpus.iter().find(|g| g.index == index);
        let n = new.gpus.iter().find(|g| g.index == index);
        matches!((o, n), (Some(o), Some(n)) if o.model == n.model && o.mode == n.mode)
    };
    live.iter()
        .filter(|l| !l.record.placement.gpus.iter().all(|g| same(g.index)))
        .map(|l| l.id)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{BackendKind, GpuInventory, HostInventory};

    fn inventory(model: Option<&str>, index: u32, mig: bool) -> GpuInventory {
        GpuInventory {
            index,
            model: model.map(str::to_owned),
            product_name: "x".into(),
            uuid: format!("GPU-{index}"),
            memory_mib: 81_559,
            mig_capable: mig,
            mig_mode: mig.then_some(MigMode::Enabled),
            mig_mode_pending: None,
            mig_instances: vec![],
            nvlink_peers: vec![0, 1, 7],
            pci_bus_id: None,
            driver_version: "550".into(),
            cuda_version: "12.4".into(),
            calibration_ratio: None,
        }
    }

    #[test]
    fn registration_keeps_declared_modes_sells_mig_as_mig_and_skips_unknown_gpus() {
        let previous = NodeSpec {
            id: Uuid::nil(),
            region: "eu-west".into(),
            zone: None,
            cpu_milli: 1,
            memory_mib: 1,
            gpus: vec![GpuSpec {
                index: 1,
                model: "H100-SXM5-80GB".into(),
                mode: PartitionMode::Shared,
                nvlink: vec![],
            }],
            cuda: None,
        };
        let mut req = RegisterRequest {
            agent_version: "0.1.0".into(),
            backend: BackendKind::Simulated,
            hostname: "h".into(),
            host: HostInventory {
                cpu_milli: 64_000,
                memory_mib: 1_000_000,
            },
            gpus: vec![
                inventory(Some("H100-SXM5-80GB"), 0, true),
                inventory(Some("H100-SXM5-80GB"), 1, false),
                inventory(None, 2, false),
            ],
        };
        let spec = registered_spec(&previous, &req);
        let modes: Vec<_> = spec.gpus.iter().map(|g| (g.index, g.mode)).collect();
        assert_eq!(
            modes,
            vec![(0, PartitionMode::Mig), (1, PartitionMode::Shared)]
        );
        assert_eq!(spec.gpus[0].nvlink, vec![1], "peers exist and are not self");
        assert_eq!(spec.cpu_milli, 64_000);
        assert_eq!(spec.cuda, "12.4".parse().ok(), "the driver's CUDA version");
        // One GPU that says no version leaves the node without one.
        req.gpus[1].cuda_version = "N/A".into();
        assert_eq!(registered_spec(&previous, &req).cuda, None);
    }

    #[test]
    fn declared_inventories_name_each_bad_field() {
        let gpus = vec![
            DeclaredGpu {
                model: "NOPE".into(),
                index: None,
                memory_mib: None,
                mig_capable: None,
                mode: None,
                nvlink: vec![],
            },
            DeclaredGpu {
                model: "L40S-48GB".into(),
                index: None,
                memory_mib: None,
                mig_capable: None,
                mode: Some(PartitionMode::Mig),
                nvlink: vec![5],
            },
        ];
        let declared = Declared {
            zone: None,
            gpus: &gpus,
            cpu_milli: None,
            memory_mib: None,
        };
        let errors = declared_spec(Uuid::nil(), "eu-west", &declared).unwrap_err();
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            vec!["gpus[0].model", "gpus[1].mode", "gpus[1].nvlink"]
        );
    }
}
