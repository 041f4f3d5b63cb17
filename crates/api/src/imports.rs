//! What a job-history import answers (DESIGN §22): the rows it took, the
//! rows it refused and why, and the capacity profile and concurrency they
//! make.

use crate::billing::CapacityProfile;
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// The formats an import reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ImportFormat {
    /// `sacct --parsable2` output with a header naming at least JobID, Start,
    /// End and AllocTRES.
    Slurm,
    /// `kubectl get pods -o json`.
    K8s,
    /// `start,end,gpus[,gpu_model][,tag]` with that header (docs/IMPORTS.md).
    Csv,
}

impl ImportFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            ImportFormat::Slurm => "slurm",
            ImportFormat::K8s => "k8s",
            ImportFormat::Csv => "csv",
        }
    }

    pub fn parse(text: &str) -> Option<ImportFormat> {
        match text {
            "slurm" => Some(ImportFormat::Slurm),
            "k8s" => Some(ImportFormat::K8s),
            "csv" => Some(ImportFormat::Csv),
            _ => None,
        }
    }
}

/// A row the import refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct RejectedRow {
    /// The row's line in the file (1 = the first line, the header included);
    /// for `k8s`, the pod's position in `items`, from 1.
    pub line: u64,
    pub reason: String,
}

/// An import of job history.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ProfileImport {
    pub id: Uuid,
    pub format: ImportFormat,
    pub created_at: DateTime<Utc>,
    /// Jobs taken into the profile.
    pub rows: u64,
    /// Rows that held no GPU: job steps, jobs that never started, CPU-only jobs.
    pub skipped: u64,
    /// How many rows were refused (`rejected` lists the first 100).
    pub rejected_count: u64,
    pub rejected: Vec<RejectedRow>,
    /// Rows whose GPU model was missing or not in the catalog, priced as
    /// `default_gpu_model`.
    pub defaulted_model_rows: u64,
    pub default_gpu_model: String,
    /// The first job's start and the last job's end (absent with no rows).
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
    /// The file's size.
    pub bytes: u64,
}

/// How many GPUs were held at once in one stretch of an import's window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ConcurrencyPoint {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    /// GPUs held on average over the stretch, to 3 decimals.
    #[schema(value_type = String, example = "12.5")]
    pub mean_gpus: Decimal,
    /// The most GPUs held at any second of it.
    #[schema(value_type = String, example = "16")]
    pub peak_gpus: Decimal,
}

/// An import with the profile its jobs make and their concurrency over time.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ProfileImportDetail {
    #[serde(flatten)]
    pub import: ProfileImport,
    /// Absent when no row was taken.
    pub profile: Option<CapacityProfile>,
    /// At most 240 equal stretches of the import's window.
    pub concurrency: Vec<ConcurrencyPoint>,
}

/// One page of a caller's imports, newest first.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ProfileImportList {
    pub imports: Vec<ProfileImport>,
}
