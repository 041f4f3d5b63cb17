//! CUDA versions as drivers report them (`12.4`) and orders ask for them
//! (`min_cuda`): compared as numbers, so `12.10` is above `12.4`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// `major.minor.patch`, the parts a version leaves out being 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CudaVersion {
    pub major: u16,
    pub minor: u16,
    pub patch: u16,
}

/// Why a text is not a CUDA version. The API's schema states the same rule
/// (`^[0-9]{1,4}(\.[0-9]{1,4}){0,2}$`): four digits always fit a part.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be a version such as `12.2` (one to three numbers of at most four digits, joined by dots)")]
pub struct NotACudaVersion;

impl FromStr for CudaVersion {
    type Err = NotACudaVersion;

    fn from_str(text: &str) -> Result<CudaVersion, NotACudaVersion> {
        let mut parts = [0u16; 3];
        for (at, part) in text.split('.').enumerate() {
            let slot = parts.get_mut(at).ok_or(NotACudaVersion)?;
            if !(1..=4).contains(&part.len()) || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(NotACudaVersion);
            }
            *slot = part.parse().map_err(|_| NotACudaVersion)?;
        }
        let [major, minor, patch] = parts;
        Ok(CudaVersion {
            major,
            minor,
            patch,
        })
    }
}

impl fmt::Display for CudaVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)?;
        if self.patch != 0 {
            write!(f, ".{}", self.patch)?;
        }
        Ok(())
    }
}

/// As text (`"12.4"`), as the agent reports it and the API takes it.
impl Serialize for CudaVersion {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for CudaVersion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<CudaVersion, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse()
            .map_err(|_| serde::de::Error::custom(format!("`{text}` is not a CUDA version")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_as_numbers_and_missing_parts_are_zero() {
        let v = |t: &str| t.parse::<CudaVersion>().unwrap();
        assert!(v("12.10") > v("12.4"));
        assert_eq!(v("12"), v("12.0.0"));
        assert!(v("12.4.1") > v("12.4"));
        assert_eq!(v("12.4").to_string(), "12.4");
        assert_eq!(v("12.4.1").to_string(), "12.4.1");
        assert_eq!(v("0168.5515"), v("168.5515"));
        for bad in [
            "",
            "12.",
            ".4",
            "12.4.1.0",
            "v12",
            "12.x",
            "99999999",
            "0168.5515240273",
            "12.00004",
        ] {
            assert_eq!(bad.parse::<CudaVersion>(), Err(NotACudaVersion), "{bad}");
        }
        let json = serde_json::to_string(&v("12.4")).unwrap();
        assert_eq!(json, "\"12.4\"");
        assert_eq!(
            serde_json::from_str::<CudaVersion>(&json).unwrap(),
            v("12.4")
        );
        assert!(serde_json::from_str::<CudaVersion>("\"twelve\"").is_err());
    }
}
