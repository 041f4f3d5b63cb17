//! NVIDIA MIG layouts: profiles with their fixed (start, size) placements over
//! the GPU's memory slices, as `nvidia-smi mig -lgipp` lists them.

use rust_decimal::{Decimal, RoundingStrategy};
use serde::Serialize;

/// Memory slices of a MIG-capable GPU.
pub const MEMORY_SLICES: u8 = 8;
/// Compute slices of a MIG-capable GPU.
pub const COMPUTE_SLICES: u8 = 7;

/// One GPU-instance profile, e.g. `1g.10gb`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MigProfile {
    pub name: &'static str,
    /// Compute slices out of [`COMPUTE_SLICES`]: the profile carries this many sevenths of the GPU.
    pub compute_slices: u8,
    /// Consecutive memory slices the instance occupies.
    pub memory_slices: u8,
    /// The memory slice indices where an instance of this profile may start.
    pub starts: &'static [u8],
    pub memory_gb: u32,
}

/// The MIG profiles of one GPU model, smallest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MigLayout {
    pub profiles: &'static [MigProfile],
}

impl MigLayout {
    pub fn profile(&self, name: &str) -> Option<&'static MigProfile> {
        self.profiles.iter().find(|p| p.name == name)
    }
}

impl MigProfile {
    /// Standard TFLOPS the profile holds on a GPU whose dense FP16 peak is `fp16_peak`,
    /// rounded half-even to 3 decimals (ARCHITECTURE.md §2).
    pub fn tflops_units(&self, fp16_peak: Decimal) -> Decimal {
        (fp16_peak * Decimal::from(self.compute_slices) / Decimal::from(COMPUTE_SLICES))
            .round_dp_with_strategy(3, RoundingStrategy::MidpointNearestEven)
            .normalize()
    }

    /// `vram_h` units the profile holds: its memory in GB / 4, 3 decimals.
    pub fn vram_units(&self) -> Decimal {
        (Decimal::from(self.memory_gb) / Decimal::from(super::UNIT_VRAM_GB))
            .round_dp_with_strategy(3, RoundingStrategy::MidpointNearestEven)
            .normalize()
    }

    /// Memory of the instance in MB, the engine's integer memory unit.
    pub fn memory_mb(&self) -> u64 {
        u64::from(self.memory_gb) * 1000
    }

    /// The slice mask (bit i = memory slice i) of an instance starting at `start`.
    pub fn slice_mask(&self, start: u8) -> u8 {
        let ones: u16 = (1u16 << self.memory_slices) - 1;
        ((ones << start) & 0xff) as u8
    }
}

const STARTS_1G_SMALL: &[u8] = &[0, 1, 2, 3, 4, 5, 6];
const STARTS_1G_LARGE: &[u8] = &[0, 2, 4, 6];
const STARTS_2G: &[u8] = &[0, 2, 4];
const STARTS_3G: &[u8] = &[0, 4];
const STARTS_4G_7G: &[u8] = &[0];

/// Every MIG-capable model shares these six shapes; only the memory differs.
const fn layout_profiles(names: [&'static str; 6], gb: [u32; 6]) -> [MigProfile; 6] {
    [
        MigProfile {
            name: names[0],
            compute_slices: 1,
            memory_slices: 1,
            starts: STARTS_1G_SMALL,
            memory_gb: gb[0],
        },
        MigProfile {
            name: names[1],
            compute_slices: 1,
            memory_slices: 2,
            starts: STARTS_1G_LARGE,
            memory_gb: gb[1],
        },
        MigProfile {
            name: names[2],
            compute_slices: 2,
            memory_slices: 2,
            starts: STARTS_2G,
            memory_gb: gb[2],
        },
        MigProfile {
            name: names[3],
            compute_slices: 3,
            memory_slices: 4,
            starts: STARTS_3G,
            memory_gb: gb[3],
        },
        MigProfile {
            name: names[4],
            compute_slices: 4,
            memory_slices: 4,
            starts: STARTS_4G_7G,
            memory_gb: gb[4],
        },
        MigProfile {
            name: names[5],
            compute_slices: 7,
            memory_slices: 8,
            starts: STARTS_4G_7G,
            memory_gb: gb[5],
        },
    ]
}

const A100_40_PROFILES: [MigProfile; 6] = layout_profiles(
    [
        "1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb",
    ],
    [5, 10, 10, 20, 20, 40],
);
const GB80_PROFILES: [MigProfile; 6] = layout_profiles(
    [
        "1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb",
    ],
    [10, 20, 20, 40, 40, 80],
);
const H200_PROFILES: [MigProfile; 6] = layout_profiles(
    [
        "1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb",
    ],
    [18, 35, 35, 71, 71, 141],
);
const B200_PROFILES: [MigProfile; 6] = layout_profiles(
    [
        "1g.23gb", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb", "7g.180gb",
    ],
    [23, 45, 45, 90, 90, 180],
);

pub(super) static A100_40: MigLayout = MigLayout {
    profiles: &A100_40_PROFILES,
};
pub(super) static GB80: MigLayout = MigLayout {
    profiles: &GB80_PROFILES,
};
pub(super) static H200: MigLayout = MigLayout {
    profiles: &H200_PROFILES,
};
pub(super) static B200: MigLayout = MigLayout {
    profiles: &B200_PROFILES,
};
