//! The two sold units and the precisions a request may name.

use serde::{Deserialize, Serialize};

/// Gives a fieldless enum its text names, as the API, the rows and the
/// exports spell them: `ALL`, `as_str`, `Display`, and a `FromStr` that
/// refuses any other name with [`UnknownName`].
#[macro_export]
#[doc(hidden)]
macro_rules! __text_names {
    ($ty:ident { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            /// Every value, in declaration order.
            pub const ALL: [$ty; [$($name),+].len()] = [$($ty::$variant),+];

            /// The value's name.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $name),+
                }
            }
        }

        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $ty {
            type Err = $crate::catalog::UnknownName;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::ALL
                    .into_iter()
                    .find(|v| v.as_str() == s)
                    .ok_or_else(|| $crate::catalog::UnknownName(s.to_owned()))
            }
        }
    };
}
pub use crate::__text_names as text_names;

/// Gigabytes of GPU memory in one `vram_h` unit (4 × 10⁹ bytes).
pub const UNIT_VRAM_GB: u32 = 4;

/// A unit gpuex sells, priced per hour and metered per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// One standard (dense FP16) TFLOPS held for one hour.
    TflopsH,
    /// 4 GB of GPU memory held for one hour.
    VramH,
}

text_names!(Unit {
    TflopsH => "tflops_h",
    VramH => "vram_h",
});

/// The precision a request's TFLOPS are measured in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    #[default]
    Fp16,
    Bf16,
    Tf32,
    Fp8,
}

text_names!(Precision {
    Fp16 => "fp16",
    Bf16 => "bf16",
    Tf32 => "tf32",
    Fp8 => "fp8",
});

/// A name no value of the enum has (a unit, precision, mode or state).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown name `{0}`")]
pub struct UnknownName(pub String);
