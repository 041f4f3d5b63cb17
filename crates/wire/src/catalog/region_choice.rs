//! Where an order may run: one named region, or `any`, which lets gpuex
//! choose (cheapest first). One type for the API bodies, the engine's order
//! spec and the CLI, so the word `any` is read in one place.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The name that lets gpuex choose; no region may take it.
pub const ANY: &str = "any";

#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RegionChoice {
    /// Any region: gpuex picks.
    #[default]
    Any,
    /// This region only.
    Named(String),
}

impl RegionChoice {
    /// The region asked for, if one is.
    pub fn named(&self) -> Option<&str> {
        match self {
            RegionChoice::Any => None,
            RegionChoice::Named(name) => Some(name),
        }
    }

    /// As the API writes it: the region's name, or `any`.
    pub fn as_str(&self) -> &str {
        self.named().unwrap_or(ANY)
    }
}

impl From<Option<String>> for RegionChoice {
    fn from(name: Option<String>) -> RegionChoice {
        match name {
            Some(name) if name != ANY => RegionChoice::Named(name),
            _ => RegionChoice::Any,
        }
    }
}

impl From<&str> for RegionChoice {
    fn from(name: &str) -> RegionChoice {
        RegionChoice::from(Some(name.to_owned()))
    }
}

impl std::fmt::Display for RegionChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for RegionChoice {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// A name, `"any"`, or `null` (how the engine's journal wrote `any` before
/// this type: old rows read the same).
impl<'de> Deserialize<'de> for RegionChoice {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<RegionChoice, D::Error> {
        Option::<String>::deserialize(deserializer).map(RegionChoice::from)
    }
}

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for RegionChoice {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        <String as utoipa::PartialSchema>::schema()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for RegionChoice {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_null_and_a_name_read_as_the_api_and_the_old_journal_wrote_them() {
        let read = |json: &str| serde_json::from_str::<RegionChoice>(json).expect("a choice");
        assert_eq!(read(r#""any""#), RegionChoice::Any);
        assert_eq!(read("null"), RegionChoice::Any);
        assert_eq!(read(r#""eu-west""#), RegionChoice::Named("eu-west".into()));
        let written = |c: RegionChoice| serde_json::to_string(&c).expect("json");
        assert_eq!(written(RegionChoice::Any), r#""any""#);
        assert_eq!(written("eu-west".into()), r#""eu-west""#);
        assert_eq!(RegionChoice::from("any").named(), None);
    }
}
