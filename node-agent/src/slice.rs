//! What a placement means on this node: the units it holds (for metering) and
//! the environment its workload gets.

use gpuex_wire::catalog::GpuModel;
use gpuex_wire::protocol::{AgentPlacement, HeldUnits, Partition};
use rust_decimal::Decimal;
use std::collections::BTreeMap;

/// The units a placement holds, from the catalog (ARCHITECTURE.md §2): a MIG profile's
/// units, exactly the share asked for on a shared GPU, or whole GPUs.
pub fn held_units(model: &GpuModel, placement: &AgentPlacement) -> Result<HeldUnits, String> {
    let gpus = Decimal::from(placement.gpus.len());
    match &placement.partition {
        Partition::Mig { profile, .. } => {
            let p = model
                .mig
                .and_then(|layout| layout.profile(profile))
                .ok_or_else(|| format!("{} has no MIG profile `{profile}`", model.name))?;
            Ok(HeldUnits {
                tflops: p.tflops_units(model.fp16),
                vram_gb: Decimal::from(p.memory_gb),
            })
        }
        Partition::Shared { milli, memory_mb } => Ok(HeldUnits {
            tflops: model.fp16 * Decimal::from(*milli) / Decimal::from(1000),
            vram_gb: Decimal::from(*memory_mb) / Decimal::from(1000),
        }),
        Partition::Whole => Ok(HeldUnits {
            tflops: model.fp16 * gpus,
            vram_gb: Decimal::from(model.memory_gb) * gpus,
        }),
    }
}

/// The workload's environment: the assignment's own, then what the agent sets
/// (which wins): `CUDA_VISIBLE_DEVICES`, and for shared slices the MPS limits.
pub fn workload_env(
    placement: &AgentPlacement,
    device: &str,
    lease_env: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut env = lease_env.clone();
    env.insert("CUDA_VISIBLE_DEVICES".into(), device.to_string());
    if let Partition::Shared { milli, memory_mb } = placement.partition {
        let percent = milli.div_ceil(10).clamp(1, 100);
        env.insert(
            "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE".into(),
            percent.to_string(),
        );
        // MPS reads `M` as MiB; the lease's memory is in MB (10⁶ bytes).
        let mib = memory_mb * 1_000_000 / (1 << 20);
        env.insert(
            "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT".into(),
            format!("0={mib}M"),
        );
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuex_wire::catalog::lookup;
    use rust_decimal_macros::dec;

    fn placement(partition: Partition, gpus: Vec<u32>) -> AgentPlacement {
        AgentPlacement { gpus, partition }
    }

    #[test]
    fn a_mig_slice_holds_its_profiles_units() {
        let h100 = lookup("H100-SXM5-80GB").unwrap();
        let p = placement(
            Partition::Mig {
                profile: "1g.10gb".into(),
                start: 0,
            },
            vec![0],
        );
        let held = held_units(h100, &p).unwrap();
        assert_eq!(held.tflops, dec!(141.286));
        assert_eq!(held.vram_gb, dec!(10));
    }

    #[test]
    fn a_shared_slice_holds_exactly_what_was_asked() {
        let l40s = lookup("L40S-48GB").unwrap();
        let p = placement(
            Partition::Shared {
                milli: 250,
                memory_mb: 8000,
            },
            vec![1],
        );
        let held = held_units(l40s, &p).unwrap();
        assert_eq!(held.tflops, dec!(90.5));
        assert_eq!(held.vram_gb, dec!(8));
    }

    #[test]
    fn whole_gpus_hold_everything() {
        let a100 = lookup("A100-SXM4-80GB").unwrap();
        let held = held_units(a100, &placement(Partition::Whole, vec![0, 1])).unwrap();
        assert_eq!(held.tflops, dec!(624));
        assert_eq!(held.vram_gb, dec!(160));
    }

    #[test]
    fn a_shared_workload_gets_the_mps_limits() {
        let p = placement(
            Partition::Shared {
                milli: 255,
                memory_mb: 8000,
            },
            vec![0],
        );
        let lease_env = [("CUDA_VISIBLE_DEVICES".to_string(), "evil".to_string())].into();
        let env = workload_env(&p, "GPU-x", &lease_env);
        assert_eq!(env["CUDA_VISIBLE_DEVICES"], "GPU-x");
        assert_eq!(env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"], "26");
        assert_eq!(env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"], "0=7629M");
    }

    #[test]
    fn a_mig_workload_gets_no_mps_limits() {
        let p = placement(
            Partition::Mig {
                profile: "1g.10gb".into(),
                start: 0,
            },
            vec![0],
        );
        let env = workload_env(&p, "MIG-x", &BTreeMap::new());
        assert_eq!(env.len(), 1);
    }
}
