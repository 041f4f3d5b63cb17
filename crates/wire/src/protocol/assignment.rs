//! Assignments the server hands out in heartbeat answers, and what the agent
//! reports back about them (`status` and `logs`).

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use uuid::Uuid;

/// Bytes of a workload's output the agent keeps and uploads: the last 64 KiB.
pub const LOGS_TAIL_BYTES: usize = 64 * 1024;

/// One thing to do about one lease. The assignment id is the lease id.
///
/// JSON: `{"lease_id": "…", "action": "start", "placement": {…}, …}`,
/// `{"lease_id": "…", "action": "stop"}` or
/// `{"lease_id": "…", "action": "preempt", "preempt_at": "…"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Assignment {
    pub lease_id: Uuid,
    #[serde(flatten)]
    pub action: AssignmentAction,
}

/// What to do, tagged by `action`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "action", rename_all = "snake_case")]
// A wire type, built once per heartbeat answer and moved: boxing `Start`
// would buy nothing and change every match on it.
#[allow(clippy::large_enum_variant)]
pub enum AssignmentAction {
    /// Provision the slice and run the workload. Idempotent: a lease the agent
    /// already runs is left alone.
    Start {
        /// Where the lease lives on this node.
        placement: AgentPlacement,
        /// Shell command run with `sh -c`; `None` provisions the slice only.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        command: Option<String>,
        /// Extra environment for the command.
        #[serde(default)]
        env: BTreeMap<String, String>,
        /// When the lease's window ends; the agent stops the job then. `None`: open-ended.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        end_at: Option<DateTime<Utc>>,
        /// The units the slice holds, which usage is metered in. `None`: the agent
        /// computes them from the catalog and the placement.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        held: Option<HeldUnits>,
        /// Files the agent fetches into the working folder before the workload
        /// starts; a failed fetch or a wrong hash fails the lease.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        artifacts: Vec<Artifact>,
        /// The OCI image the `container` launcher runs the command in.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        image: Option<String>,
        /// Whether the workload may use the network (`sandbox` and `container`
        /// give it none otherwise).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        network: bool,
        /// The host CPU and memory the lease holds, which the launcher enforces.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limits: Option<HostLimits>,
        /// The order's checkpoint: sent while the lease runs and when it
        /// ends, and restored first when the order resumes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        checkpoint: Option<CheckpointPlan>,
        /// The buyer's credentials for the image's registry: used for the
        /// pull only, never written where another lease could read them.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        registry_auth: Option<RegistryAuth>,
    },
    /// Stop the workload now (SIGTERM, SIGKILL after a short grace) and tear
    /// the slice down: release, end of window, or an unknown lease.
    Stop,
    /// Preemption notice: SIGTERM now, SIGKILL at `preempt_at`, then tear down.
    Preempt {
        /// The deadline.
        preempt_at: DateTime<Utc>,
    },
}

/// The GPUs a lease holds and how, as its agent sets them up: the GPU
/// indices and the partition, without the engine's units, scores and catalog
/// indices (the engine's `Placement` is the whole of it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AgentPlacement {
    /// GPU indices on this node (one for `mig` and `shared`).
    pub gpus: Vec<u32>,
    /// How the GPUs are cut.
    pub partition: Partition,
}

/// The partition mode of a placement (ARCHITECTURE.md §2), tagged by `kind`:
/// `{"kind": "mig", "profile": "1g.10gb", "start": 2}`,
/// `{"kind": "shared", "milli": 250, "memory_mb": 8000}`, `{"kind": "whole"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Partition {
    /// A MIG GPU instance of `profile` (catalog name) at memory slice `start`.
    Mig { profile: String, start: u8 },
    /// A soft MPS share: `milli`/1000 of the compute and `memory_mb` MB of memory.
    Shared { milli: u32, memory_mb: u64 },
    /// The whole GPU(s).
    Whole,
}

/// A buyer's credentials for a private registry. Its `Debug` hides the
/// password, so no log line or error message carries it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RegistryAuth {
    /// The registry's user name (for a token, the name the registry asks
    /// for, e.g. `oauth2accesstoken`); no `:` and no control characters.
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 256,
            pattern = "^[^:\\x00-\\x1f\\x7f-\\x9f]+$"
        )
    )]
    pub username: String,
    /// The password or access token; never shown again by the API.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 4096, pattern = "^[^\\x00-\\x1f\\x7f-\\x9f]+$", format = Password)
    )]
    pub password: String,
}

impl std::fmt::Debug for RegistryAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryAuth")
            .field("username", &self.username)
            .field("password", &"<hidden>")
            .finish()
    }
}

impl RegistryAuth {
    /// Limits of each field, checked where the order is placed; the name of
    /// the field and why, when one is broken.
    pub fn check(&self) -> Result<(), (&'static str, &'static str)> {
        let control = |s: &str| s.chars().any(char::is_control);
        let chars = |s: &str| s.chars().count();
        if !(1..=256).contains(&chars(&self.username)) {
            return Err(("username", "must be 1 to 256 characters"));
        }
        if self.username.contains(':') || control(&self.username) {
            return Err(("username", "must hold no `:` and no control characters"));
        }
        if !(1..=4096).contains(&chars(&self.password)) {
            return Err(("password", "must be 1 to 4096 characters"));
        }
        if control(&self.password) {
            return Err(("password", "must hold no control characters"));
        }
        Ok(())
    }
}

/// Where a container sees the checkpoint folder unless the order says.
pub const DEFAULT_CHECKPOINT_PATH: &str = "/checkpoint";

/// A lease's checkpoint (ARCHITECTURE.md §21): the agent sends its `checkpoint/`
/// folder to `PUT /v1/agent/assignments/{lease_id}/checkpoint` every
/// `every_s` and after the workload ends, and, with `restore`, puts the
/// order's last checkpoint there before the workload starts
/// (`GET` of the same path; 404: none yet).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CheckpointPlan {
    /// Where a container sees the folder (`/checkpoint` by default); the
    /// other launchers tell the workload in `$GPUEX_CHECKPOINT`.
    pub path: String,
    /// Seconds between uploads.
    pub every_s: u32,
    /// Whether the order's last checkpoint is put in place before the start.
    pub restore: bool,
}

/// A file a workload needs: fetched by the agent from `url`, checked against
/// `sha256`, placed at `path` under the lease's working folder (ARCHITECTURE.md §13).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Artifact {
    /// Where the agent fetches it from.
    #[cfg_attr(
        feature = "openapi",
        schema(max_length = 2048, pattern = r"^https?://\S*$")
    )]
    pub url: String,
    /// The SHA-256 of its content, 64 hex digits.
    #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9a-fA-F]{64}$"))]
    pub sha256: String,
    /// Relative to the working folder: names of letters, digits, `_ . -`
    /// joined by `/`, none of them only dots (e.g. `train.py`, `data/x.bin`).
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 255,
            pattern = r"^[A-Za-z0-9_.\-]*[A-Za-z0-9_\-][A-Za-z0-9_.\-]*(/[A-Za-z0-9_.\-]*[A-Za-z0-9_\-][A-Za-z0-9_.\-]*)*$"
        )
    )]
    pub path: String,
}

/// At most this many artifacts per order.
pub const MAX_ARTIFACTS: usize = 16;

impl Artifact {
    /// Whether `path` is a plain relative path of safe names, none of them
    /// only dots (so no `.` or `..`): it cannot leave the working folder.
    pub fn path_is_safe(path: &str) -> bool {
        !path.is_empty()
            && path.len() <= 255
            && path.split('/').all(|part| {
                part.chars().any(|c| c != '.')
                    && part
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
            })
    }

    /// Whether `sha256` is 64 hex digits.
    pub fn sha256_is_valid(sha256: &str) -> bool {
        sha256.len() == 64 && sha256.chars().all(|c| c.is_ascii_hexdigit())
    }
}

/// The host CPU and memory a lease holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HostLimits {
    /// Thousandths of a CPU core.
    pub cpu_milli: u64,
    /// Memory in MiB.
    pub memory_mib: u64,
}

/// The units a slice holds, per second of holding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HeldUnits {
    /// Standard TFLOPS.
    #[cfg_attr(feature = "openapi", schema(value_type = crate::decimal::DecimalInput))]
    pub tflops: Decimal,
    /// GPU memory in GB (10⁹ bytes).
    #[cfg_attr(feature = "openapi", schema(value_type = crate::decimal::DecimalInput))]
    pub vram_gb: Decimal,
}

/// Body of `POST /v1/agent/assignments/{lease_id}/status`.
///
/// JSON: `{"at": "…", "status": "provisioned", "device": "MIG-…"}`,
/// `{"at": "…", "status": "ended", "exit_code": 0, "reason": "exited"}`,
/// `{"at": "…", "status": "failed", "reason": "…"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StatusReport {
    /// When it happened on the agent's clock; billing starts at `provisioned`'s `at`.
    pub at: DateTime<Utc>,
    #[serde(flatten)]
    pub status: AssignmentStatus,
}

/// A lease's state change on the node, tagged by `status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum AssignmentStatus {
    /// The slice exists and the workload (if any) started: the lease is `running`.
    Provisioned {
        /// What the workload sees as `CUDA_VISIBLE_DEVICES`: a `MIG-…` UUID, or
        /// `GPU-…` UUIDs joined with commas.
        device: String,
        /// A container's image by the ID it resolved to (`sha256:` and 64
        /// hex digits); absent for a command without an image.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(pattern = "^sha256:[0-9a-f]{64}$"))]
        image_id: Option<String>,
    },
    /// The workload is over and the slice torn down.
    Ended {
        /// The command's exit code; `None` when it died by a signal or there was none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        /// The signal that ended it, e.g. 15 or 9.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signal: Option<i32>,
        /// Why it ended.
        reason: EndReason,
    },
    /// The slice could not be provisioned or the command not started.
    Failed {
        /// A human-readable reason, e.g. `MIG placement 3g.40gb@2 is not legal`.
        reason: String,
    },
}

/// Why a workload ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// The command exited by itself (or there was none and the lease was stopped).
    Exited,
    /// The server sent `stop`.
    Stopped,
    /// The server sent `preempt`.
    Preempted,
    /// `end_at` passed.
    LeaseEnd,
    /// The agent could not reach the server for `node_timeout` and stopped it.
    NodeTimeout,
    /// The lease's disk (its working folder, `/outputs` and `/checkpoint`)
    /// filled up to its quota.
    DiskQuota,
}

/// Body of `POST /v1/agent/assignments/{lease_id}/logs`: the workload's output
/// tail (stdout and stderr interleaved), replacing the one uploaded before.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LogsUpload {
    /// When the tail was taken.
    pub at: DateTime<Utc>,
    /// The last at most [`LOGS_TAIL_BYTES`] bytes, as UTF-8 (invalid bytes and NUL
    /// replaced with U+FFFD; the server refuses U+0000).
    pub tail: String,
    /// Bytes the workload wrote in all; more than the tail when output was dropped.
    pub total_bytes: u64,
    /// Whether the workload has finished, so this tail is final.
    pub complete: bool,
}
