//! The GPU models gpuex can sell, with their published dense peaks.

use super::mig::{self, MigLayout};
use super::units::{Precision, UNIT_VRAM_GB};
use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;
use rust_decimal_macros::dec;
use serde::Serialize;

/// A GPU model and its dense (no sparsity) tensor peaks in TFLOPS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct GpuModel {
    /// The catalog name, e.g. `H100-SXM5-80GB`.
    pub name: &'static str,
    pub architecture: &'static str,
    pub memory_gb: u32,
    /// Dense FP16 peak: one standard TFLOPS is one TFLOPS of this.
    pub fp16: Decimal,
    pub bf16: Option<Decimal>,
    pub tf32: Option<Decimal>,
    pub fp8: Option<Decimal>,
    #[serde(skip)]
    pub mig: Option<&'static MigLayout>,
}

impl GpuModel {
    /// The dense peak at `precision`, or `None` when the model cannot run it.
    pub fn peak(&self, precision: Precision) -> Option<Decimal> {
        match precision {
            Precision::Fp16 => Some(self.fp16),
            Precision::Bf16 => self.bf16,
            Precision::Tf32 => self.tf32,
            Precision::Fp8 => self.fp8,
        }
    }

    /// Standard TFLOPS that `tflops` at `precision` cost on this model:
    /// `tflops × fp16_peak / precision_peak`. `None` when the precision is unsupported.
    pub fn standard_tflops(&self, precision: Precision, tflops: Decimal) -> Option<Decimal> {
        let peak = self.peak(precision)?;
        if peak.is_zero() {
            return None;
        }
        Some(tflops * self.fp16 / peak)
    }

    /// Standard TFLOPS of one milli-GPU, the smallest share placement makes,
    /// to 3 decimals like every held quantity: what a share holds at least.
    pub fn milli_tflops(&self) -> Decimal {
        (self.fp16 / dec!(1000))
            .round_dp_with_strategy(3, rust_decimal::RoundingStrategy::MidpointNearestEven)
    }

    /// The share of the whole GPU, in milli-GPU (rounded up), that `standard` TFLOPS need.
    pub fn milli_for(&self, standard: Decimal) -> u32 {
        (standard * dec!(1000) / self.fp16)
            .ceil()
            .to_u32()
            .unwrap_or(u32::MAX)
    }

    /// The GPU's capacity in `vram_h` units: memory in GB / 4, rounded down.
    pub fn vram_units(&self) -> Decimal {
        Decimal::from(self.memory_gb / UNIT_VRAM_GB)
    }

    /// The GPU's memory in MB, the engine's integer memory unit.
    pub fn memory_mb(&self) -> u64 {
        u64::from(self.memory_gb) * 1000
    }

    pub fn mig_capable(&self) -> bool {
        self.mig.is_some()
    }
}

macro_rules! model {
    ($name:literal, $arch:literal, $gb:literal, $fp16:expr, $bf16:expr, $tf32:expr, $fp8:expr, $mig:expr) => {
        GpuModel {
            name: $name,
            architecture: $arch,
            memory_gb: $gb,
            fp16: $fp16,
            bf16: $bf16,
            tf32: $tf32,
            fp8: $fp8,
            mig: $mig,
        }
    };
}

/// The catalog. Peaks are NVIDIA's published dense tensor figures (half the
/// "with sparsity" numbers); P100 has no tensor cores, so its FP16 vector peak.
static MODELS: [GpuModel; 11] = [
    model!(
        "P100-SXM2-16GB",
        "Pascal",
        16,
        dec!(21.2),
        None,
        None,
        None,
        None
    ),
    model!(
        "V100-SXM2-16GB",
        "Volta",
        16,
        dec!(125),
        None,
        None,
        None,
        None
    ),
    model!(
        "V100-SXM2-32GB",
        "Volta",
        32,
        dec!(125),
        None,
        None,
        None,
        None
    ),
    model!("T4-16GB", "Turing", 16, dec!(65), None, None, None, None),
    model!(
        "A10-24GB",
        "Ampere",
        24,
        dec!(125),
        Some(dec!(125)),
        Some(dec!(62.5)),
        None,
        None
    ),
    model!(
        "A100-SXM4-40GB",
        "Ampere",
        40,
        dec!(312),
        Some(dec!(312)),
        Some(dec!(156)),
        None,
        Some(&mig::A100_40)
    ),
    model!(
        "A100-SXM4-80GB",
        "Ampere",
        80,
        dec!(312),
        Some(dec!(312)),
        Some(dec!(156)),
        None,
        Some(&mig::GB80)
    ),
    model!(
        "L40S-48GB",
        "Ada Lovelace",
        48,
        dec!(362),
        Some(dec!(362)),
        Some(dec!(183)),
        Some(dec!(733)),
        None
    ),
    model!(
        "H100-SXM5-80GB",
        "Hopper",
        80,
        dec!(989),
        Some(dec!(989)),
        Some(dec!(495)),
        Some(dec!(1979)),
        Some(&mig::GB80)
    ),
    model!(
        "H200-SXM-141GB",
        "Hopper",
        141,
        dec!(989),
        Some(dec!(989)),
        Some(dec!(495)),
        Some(dec!(1979)),
        Some(&mig::H200)
    ),
    model!(
        "B200-SXM-180GB",
        "Blackwell",
        180,
        dec!(2250),
        Some(dec!(2250)),
        Some(dec!(1100)),
        Some(dec!(4500)),
        Some(&mig::B200)
    ),
];

/// Every model in the catalog.
pub fn all_models() -> &'static [GpuModel] {
    &MODELS
}

/// The model with this catalog name.
pub fn lookup(name: &str) -> Option<&'static GpuModel> {
    MODELS.iter().find(|m| m.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fp8_on_h100_costs_half_as_many_standard_tflops() {
        let h100 = lookup("H100-SXM5-80GB").unwrap();
        let std = h100.standard_tflops(Precision::Fp8, dec!(100)).unwrap();
        assert_eq!(std.round_dp(2), dec!(49.97));
    }

    #[test]
    fn a_model_without_the_precision_cannot_serve_it() {
        let v100 = lookup("V100-SXM2-32GB").unwrap();
        assert_eq!(v100.standard_tflops(Precision::Fp8, dec!(10)), None);
        assert_eq!(v100.standard_tflops(Precision::Bf16, dec!(10)), None);
    }

    #[test]
    fn h100_1g_10gb_holds_the_units_design_names() {
        let h100 = lookup("H100-SXM5-80GB").unwrap();
        let profile = h100.mig.unwrap().profile("1g.10gb").unwrap();
        assert_eq!(profile.tflops_units(h100.fp16), dec!(141.286));
        assert_eq!(profile.vram_units(), dec!(2.5));
    }

    #[test]
    fn vram_units_round_down_to_whole_4gb() {
        assert_eq!(lookup("H200-SXM-141GB").unwrap().vram_units(), dec!(35));
        assert_eq!(lookup("A10-24GB").unwrap().vram_units(), dec!(6));
    }

    #[test]
    fn mig_placements_match_nvidia_smi_lgipp() {
        let a100 = lookup("A100-SXM4-40GB").unwrap().mig.unwrap();
        let starts = |n: &str| a100.profile(n).unwrap().starts.to_vec();
        assert_eq!(starts("1g.5gb"), vec![0, 1, 2, 3, 4, 5, 6]);
        assert_eq!(starts("1g.10gb"), vec![0, 2, 4, 6]);
        assert_eq!(starts("2g.10gb"), vec![0, 2, 4]);
        assert_eq!(starts("3g.20gb"), vec![0, 4]);
        assert_eq!(starts("4g.20gb"), vec![0]);
        assert_eq!(starts("7g.40gb"), vec![0]);
        assert_eq!(a100.profile("3g.20gb").unwrap().slice_mask(4), 0b1111_0000);
    }

    #[test]
    fn milli_for_rounds_up() {
        let a100 = lookup("A100-SXM4-40GB").unwrap();
        assert_eq!(a100.milli_for(dec!(312)), 1000);
        assert_eq!(a100.milli_for(dec!(31.3)), 101);
    }
}
