//! What the parsers hand over: one call per row, a job, a skip or a
//! refusal. The collector keeps jobs compact (a million of them is 32 MB)
//! and tags and models as small indexes.

use crate::catalog::{self, GpuModel};
use gpuex_api::imports::RejectedRow;
use rust_decimal::Decimal;
use std::collections::HashMap;

/// Refused rows an answer lists; the rest are only counted.
pub const LISTED_REJECTIONS: usize = 100;
/// Distinct tags kept; later ones are grouped as [`OTHER_TAG`].
pub const MAX_TAGS: usize = 1000;
pub const OTHER_TAG: &str = "(other)";
/// Distinct GPU names whose catalog model is remembered.
const MAX_MODEL_NAMES: usize = 1000;
/// Rows one import takes: a 256 MiB file of short CSV rows is about this many.
pub const MAX_ROWS: usize = 10_000_000;
/// GPUs one job may hold.
pub const MAX_JOB_GPUS: u32 = 4096;
/// A job's GPUs are kept in thousandths (the CSV's fractional shares).
pub const GPU_MILLI: u32 = 1000;

/// One job as the profile reads it.
#[derive(Debug, Clone, Copy)]
pub struct Job {
    pub start: i64,
    pub end: i64,
    pub gpus_milli: u32,
    /// An index into the catalog's models.
    pub model: u16,
    /// An index into [`Collector::tags`], or `None` when untagged.
    pub tag: Option<u32>,
}

/// A row a parser read as a job.
#[derive(Debug, Clone)]
pub struct RawJob<'a> {
    pub start: i64,
    pub end: i64,
    pub gpus_milli: u32,
    /// The model as the file names it (a Slurm GRES type, a node label).
    pub model: Option<&'a str>,
    /// `key=value`.
    pub tag: Option<String>,
}

/// The whole file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("{0}")]
    Malformed(String),
    #[error("the file has more than {MAX_ROWS} rows")]
    TooManyRows,
    #[error("the file is over {0} bytes")]
    TooLarge(usize),
    #[error("the upload stopped: {0}")]
    Read(std::io::Error),
}

impl FileError {
    /// An IO error from the body reader: its limit, or the connection.
    pub fn from_io(e: std::io::Error, limit: usize) -> FileError {
        if e.kind() == std::io::ErrorKind::FileTooLarge {
            FileError::TooLarge(limit)
        } else if e.kind() == std::io::ErrorKind::InvalidData {
            FileError::Malformed(e.to_string())
        } else {
            FileError::Read(e)
        }
    }
}

pub struct Collector {
    default_model: u16,
    pub jobs: Vec<Job>,
    pub tags: Vec<String>,
    tag_index: HashMap<String, u32>,
    pub skipped: u64,
    pub rejected_count: u64,
    pub rejected: Vec<RejectedRow>,
    pub defaulted_model_rows: u64,
    /// Resolved model names, so each distinct name is matched once.
    model_cache: HashMap<String, Option<u16>>,
}

impl Collector {
    pub fn new(default_model: &'static GpuModel) -> Collector {
        Collector {
            default_model: model_index(default_model),
            jobs: Vec::new(),
            tags: Vec::new(),
            tag_index: HashMap::new(),
            skipped: 0,
            rejected_count: 0,
            rejected: Vec::new(),
            defaulted_model_rows: 0,
            model_cache: HashMap::new(),
        }
    }

    pub fn default_model(&self) -> &'static GpuModel {
        &catalog::all_models()[usize::from(self.default_model)]
    }

    pub fn skip(&mut self) {
        self.skipped += 1;
    }

    pub fn reject(&mut self, line: u64, reason: impl Into<String>) {
        self.rejected_count += 1;
        if self.rejected.len() < LISTED_REJECTIONS {
            self.rejected.push(RejectedRow {
                line,
                reason: reason.into(),
            });
        }
    }

    /// Takes a job, or refuses it with its line when it cannot be one.
    pub fn job(&mut self, line: u64, raw: RawJob<'_>) -> Result<(), FileError> {
        if raw.end < raw.start {
            self.reject(line, "ends before it starts");
            return Ok(());
        }
        if raw.end == raw.start || raw.gpus_milli == 0 {
            self.skip();
            return Ok(());
        }
        if raw.gpus_milli > MAX_JOB_GPUS * GPU_MILLI {
            self.reject(line, format!("more than {MAX_JOB_GPUS} GPUs"));
            return Ok(());
        }
        if self.jobs.len() >= MAX_ROWS {
            return Err(FileError::TooManyRows);
        }
        let model = match raw.model.map(|name| self.resolve(name)) {
            Some(Some(index)) => index,
            _ => {
                self.defaulted_model_rows += 1;
                self.default_model
            }
        };
        let tag = raw.tag.map(|t| self.intern(t));
        self.jobs.push(Job {
            start: raw.start,
            end: raw.end,
            gpus_milli: raw.gpus_milli,
            model,
            tag,
        });
        Ok(())
    }

    fn resolve(&mut self, name: &str) -> Option<u16> {
        if let Some(found) = self.model_cache.get(name) {
            return *found;
        }
        let found = resolve_model(name).map(model_index);
        if self.model_cache.len() < MAX_MODEL_NAMES {
            self.model_cache.insert(name.to_owned(), found);
        }
        found
    }

    fn intern(&mut self, tag: String) -> u32 {
        if let Some(index) = self.tag_index.get(&tag) {
            return *index;
        }
        let tag = if self.tags.len() < MAX_TAGS {
            tag
        } else {
            OTHER_TAG.to_owned()
        };
        if let Some(index) = self.tag_index.get(&tag) {
            return *index;
        }
        let index = u32::try_from(self.tags.len()).unwrap_or(u32::MAX);
        self.tag_index.insert(tag.clone(), index);
        self.tags.push(tag);
        index
    }
}

fn model_index(model: &'static GpuModel) -> u16 {
    let index = catalog::all_models()
        .iter()
        .position(|m| m.name == model.name)
        .unwrap_or(0);
    u16::try_from(index).unwrap_or(0)
}

/// The catalog model a file's name for a GPU means: the catalog name
/// itself, or the family (`A100`, `h100`) with the memory when it is given
/// (`NVIDIA-A100-SXM4-80GB`, `a100_80g`); a family named without its memory
/// is the catalog's first model of it.
pub fn resolve_model(name: &str) -> Option<&'static GpuModel> {
    if let Some(model) = catalog::lookup(name) {
        return Some(model);
    }
    let upper = name.to_ascii_uppercase();
    let tokens: Vec<&str> = upper
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|t| !t.is_empty() && *t != "NVIDIA" && *t != "TESLA")
        .collect();
    let memory_gb = tokens.iter().find_map(|t| {
        let digits = t.strip_suffix("GB").or_else(|| t.strip_suffix('G'))?;
        digits.parse::<u32>().ok()
    });
    let family = tokens.first()?;
    let mut same_family = catalog::all_models()
        .iter()
        .filter(|m| m.name.split('-').next() == Some(*family));
    match memory_gb {
        Some(gb) => same_family.find(|m| m.memory_gb == gb),
        None => same_family.next(),
    }
}

/// A count of GPUs, in thousandths: a whole number for Slurm and
/// Kubernetes, up to three decimals in a CSV (a share of one GPU).
pub fn gpus_milli(text: &str) -> Result<u32, String> {
    let value: Decimal = text
        .trim()
        .parse()
        .map_err(|_| format!("GPUs `{text}` is not a number"))?;
    if value.is_sign_negative() || value.normalize().scale() > 3 {
        return Err(format!(
            "GPUs `{text}` must be positive with at most 3 decimals"
        ));
    }
    let milli = value
        .checked_mul(Decimal::from(GPU_MILLI))
        .and_then(|m| u32::try_from(m.trunc().mantissa()).ok())
        .filter(|m| *m <= MAX_JOB_GPUS * GPU_MILLI)
        .ok_or_else(|| format!("GPUs `{text}` is more than {MAX_JOB_GPUS}"))?;
    Ok(milli)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_names_from_files_resolve_to_catalog_models() {
        let name = |n: &str| resolve_model(n).map(|m| m.name);
        assert_eq!(name("H100-SXM5-80GB"), Some("H100-SXM5-80GB"));
        assert_eq!(name("NVIDIA-A100-SXM4-80GB"), Some("A100-SXM4-80GB"));
        assert_eq!(name("a100_80g"), Some("A100-SXM4-80GB"));
        assert_eq!(name("a100"), Some("A100-SXM4-40GB"));
        assert_eq!(name("Tesla-V100-SXM2-16GB"), Some("V100-SXM2-16GB"));
        assert_eq!(name("h100"), Some("H100-SXM5-80GB"));
        assert_eq!(name("gtx1080"), None);
        assert_eq!(name("a100_12g"), None);
    }

    #[test]
    fn gpu_counts_are_thousandths() {
        assert_eq!(gpus_milli("4"), Ok(4000));
        assert_eq!(gpus_milli("0.25"), Ok(250));
        assert!(gpus_milli("0.0001").is_err());
        assert!(gpus_milli("-1").is_err());
        assert!(gpus_milli("5000").is_err());
        assert!(gpus_milli("four").is_err());
    }
}
