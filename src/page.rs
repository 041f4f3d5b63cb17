//! `limit`, the page size every list endpoint takes: 1 to `MAX`, `DEFAULT`
//! when absent. Checked where the query is read, so a bad one is a 422
//! naming `query.limit`, like any other malformed parameter.

use serde::de::{Deserialize, Deserializer, Error as _};

/// A page size in `1..=MAX`. In a query struct, the field wants
/// `#[serde(default)]` and, for the OpenAPI document,
/// `#[param(value_type = Option<u32>, minimum = 1, maximum = MAX)]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit<const MAX: u32, const DEFAULT: u32>(u32);

impl<const MAX: u32, const DEFAULT: u32> Limit<MAX, DEFAULT> {
    pub fn get(self) -> u32 {
        self.0
    }
}

impl<const MAX: u32, const DEFAULT: u32> Default for Limit<MAX, DEFAULT> {
    fn default() -> Self {
        Limit(DEFAULT)
    }
}

impl<'de, const MAX: u32, const DEFAULT: u32> Deserialize<'de> for Limit<MAX, DEFAULT> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let limit = u32::deserialize(deserializer)?;
        if (1..=MAX).contains(&limit) {
            Ok(Limit(limit))
        } else {
            Err(D::Error::custom(format!("must be between 1 and {MAX}")))
        }
    }
}

/// Cuts `rows`, read with one more than `limit` to tell whether another page
/// follows, down to the page, and returns the cursor to the next page: the
/// key of the last row kept, or `None` on the last page.
pub fn next_cursor<T, C>(rows: &mut Vec<T>, limit: u32, key: impl FnOnce(&T) -> C) -> Option<C> {
    let more = rows.len() > limit as usize;
    rows.truncate(limit as usize);
    if more {
        rows.last().map(key)
    } else {
        None
    }
}
