//! A trial's shapes as resources an on-demand order asks for: `mig-<profile>`
//! (a MIG profile of the trial's model, e.g. `mig-1g.10gb`), `shared-<milli>`
//! (a soft share, thousandths of the GPU, e.g. `shared-250`) and `whole`.

use crate::pricing::quotes::{Isolation, Resources};
use gpuex_wire::catalog::{GpuModel, UNIT_VRAM_GB};
use rust_decimal::Decimal;

/// The resources that place `shape` on `model`: the shape's compute and as
/// much of its memory as whole 4 GB units hold, so the smallest adequate
/// slice is the shape itself.
pub fn resources(model: &GpuModel, shape: &str) -> Result<Resources, String> {
    let (compute, memory_gb, isolation) = if shape == "whole" {
        (model.fp16, model.memory_gb, Isolation::Whole)
    } else if let Some(profile) = shape.strip_prefix("mig-") {
        let layout = model
            .mig
            .ok_or_else(|| format!("{} has no MIG profiles", model.name))?;
        let p = layout.profile(profile).ok_or_else(|| {
            let names: Vec<&str> = layout.profiles.iter().map(|p| p.name).collect();
            format!(
                "{} has no MIG profile `{profile}` (it has {})",
                model.name,
                names.join(", ")
            )
        })?;
        // Just under the profile's compute: placement counts compute in
        // thousandths of a GPU rounded up, and a whole seventh rounds past
        // the profile to the next one.
        let compute = (p.tflops_units(model.fp16) * Decimal::new(95, 2)).round_dp(3);
        (compute, p.memory_gb, Isolation::Mig)
    } else if let Some(milli) = shape.strip_prefix("shared-") {
        let milli: u32 = milli
            .parse()
            .ok()
            .filter(|m| (1..1000).contains(m))
            .ok_or("a share is `shared-` and 1 to 999 thousandths of the GPU")?;
        let share = Decimal::from(milli) / Decimal::from(1000);
        let memory = (Decimal::from(model.memory_gb) * share)
            .floor()
            .try_into()
            .unwrap_or(0u32);
        ((model.fp16 * share).round_dp(3), memory, Isolation::Any)
    } else {
        return Err("a shape is `mig-<profile>`, `shared-<thousandths>` or `whole`".into());
    };
    let vram_gb = memory_gb / UNIT_VRAM_GB * UNIT_VRAM_GB;
    if vram_gb == 0 {
        return Err(format!("`{shape}` holds less than {UNIT_VRAM_GB} GB"));
    }
    Ok(Resources {
        tflops: compute,
        vram_gb,
        precision: None,
        gpu_model: Some(model.name.to_owned()),
        gpus: None,
        interconnect: None,
        isolation: Some(isolation),
        min_cuda: None,
        cpu_milli: None,
        memory_mib: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuex_wire::catalog::lookup;

    #[test]
    fn each_shape_asks_for_what_its_slice_holds() {
        let h100 = lookup("H100-SXM5-80GB").expect("in the catalog");
        let one = resources(h100, "mig-1g.10gb").expect("a profile");
        assert_eq!((one.vram_gb, one.isolation), (8, Some(Isolation::Mig)));
        // Just under the profile's seventh, so 1g.10gb is the smallest that holds it.
        let seventh = h100
            .mig
            .and_then(|m| m.profile("1g.10gb"))
            .map(|p| p.tflops_units(h100.fp16));
        let seventh = seventh.expect("an H100 has 1g.10gb");
        assert!(one.tflops < seventh && one.tflops > seventh * Decimal::new(9, 1));
        assert_eq!(resources(h100, "whole").unwrap().vram_gb, 80);
        assert_eq!(resources(h100, "shared-250").unwrap().vram_gb, 20);
        for bad in [
            "mig-9g.99gb",
            "shared-0",
            "shared-1000",
            "half",
            "shared-x",
            "shared-10",
        ] {
            assert!(resources(h100, bad).is_err(), "{bad}");
        }
        let l40s = lookup("L40S-48GB").expect("in the catalog");
        assert!(resources(l40s, "mig-1g.10gb")
            .unwrap_err()
            .contains("no MIG"));
    }
}
