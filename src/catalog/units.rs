//! The two sold units and the precisions a request may name.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Gigabytes of GPU memory in one `vram_h` unit (4 × 10⁹ bytes).
pub const UNIT_VRAM_GB: u32 = 4;

/// A unit gpuex sells, priced per hour and metered per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// One standard (dense FP16) TFLOPS held for one hour.
    TflopsH,
    /// 4 GB of GPU memory held for one hour.
    VramH,
}

impl Unit {
    pub const ALL: [Unit; 2] = [Unit::TflopsH, Unit::VramH];

    pub fn as_str(self) -> &'static str {
        match self {
            Unit::TflopsH => "tflops_h",
            Unit::VramH => "vram_h",
        }
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Unit {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "tflops_h" => Ok(Unit::TflopsH),
            "vram_h" => Ok(Unit::VramH),
            _ => Err(UnknownName(s.to_owned())),
        }
    }
}

/// The precision a request's TFLOPS are measured in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    #[default]
    Fp16,
    Bf16,
    Tf32,
    Fp8,
}

impl Precision {
    pub const ALL: [Precision; 4] = [
        Precision::Fp16,
        Precision::Bf16,
        Precision::Tf32,
        Precision::Fp8,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Precision::Fp16 => "fp16",
            Precision::Bf16 => "bf16",
            Precision::Tf32 => "tf32",
            Precision::Fp8 => "fp8",
        }
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Precision {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Precision::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| UnknownName(s.to_owned()))
    }
}

/// A name that is not a known unit or precision.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown name `{0}`")]
pub struct UnknownName(pub String);
