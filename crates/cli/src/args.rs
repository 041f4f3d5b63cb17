//! The client subcommands' flags, as clap parses them.

use super::order::OrderArgs;
use super::{admin, tco};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Subcommand, ValueEnum};
use gpuex_api::market::Mode;
use serde_json::{json, Map, Value};
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Output {
    #[default]
    Table,
    Json,
}

/// Flags every client subcommand takes.
#[derive(Debug, Clone, Args)]
pub struct Global {
    /// The gpuex server (default: the one of the last `gpuex login`, else http://127.0.0.1:8080).
    #[arg(long, env = "GPUEX_SERVER", global = true)]
    pub server: Option<String>,
    /// Tables for people, JSON for scripts.
    #[arg(long, value_enum, global = true, default_value_t = Output::Table)]
    pub output: Output,
}

/// `--mode`: the engine's own `Mode`, its names listed as clap's possible values.
pub(super) fn mode_parser() -> impl TypedValueParser<Value = Mode> {
    PossibleValuesParser::new(Mode::ALL.map(Mode::as_str)).try_map(|name| name.parse::<Mode>())
}

/// What to buy, flag for field as the API names them (`resources.*` and the
/// order's own fields). Values go to the server as typed; it checks them.
#[derive(Debug, Clone, Args)]
pub struct Request {
    /// How to buy: on_demand, reserved, spot or pooled.
    #[arg(long, value_parser = mode_parser())]
    pub(super) mode: Mode,
    /// Standard TFLOPS wanted (resources.tflops).
    #[arg(long)]
    pub(super) tflops: String,
    /// GPU memory in GB (resources.vram_gb).
    #[arg(long)]
    pub(super) vram_gb: u64,
    /// Whole GPUs (resources.gpus).
    #[arg(long)]
    pub(super) gpus: Option<u64>,
    /// A GPU model, e.g. H100-SXM5-80GB (resources.gpu_model).
    #[arg(long)]
    pub(super) gpu_model: Option<String>,
    /// Host CPU in thousandths of a core (resources.cpu_milli).
    #[arg(long)]
    pub(super) cpu_milli: Option<u64>,
    /// Host memory in MiB (resources.memory_mib).
    #[arg(long)]
    pub(super) memory_mib: Option<u64>,
    /// shared, mig or whole (resources.isolation).
    #[arg(long)]
    pub(super) isolation: Option<String>,
    /// fp32, tf32, fp16, bf16, fp8 or int8 (resources.precision).
    #[arg(long)]
    pub(super) precision: Option<String>,
    /// e.g. nvlink (resources.interconnect).
    #[arg(long)]
    pub(super) interconnect: Option<String>,
    /// Lowest CUDA version, e.g. 12.2 (resources.min_cuda).
    #[arg(long)]
    pub(super) min_cuda: Option<String>,
    /// A region, e.g. eu-west.
    #[arg(long)]
    pub(super) region: Option<String>,
    /// How long, in seconds.
    #[arg(long)]
    pub(super) duration_s: Option<u64>,
    /// When a reservation starts (RFC 3339).
    #[arg(long)]
    pub(super) start_at: Option<String>,
    /// The most to pay per hour (per unit, with --count).
    #[arg(long)]
    pub(super) max_price: Option<String>,
    /// Identical units, each its own lease, placed together (1–64;
    /// on_demand and pooled).
    #[arg(long)]
    pub(super) count: Option<u32>,
}

impl Request {
    pub(super) fn body(&self) -> Map<String, Value> {
        let mut resources = Map::new();
        resources.insert("tflops".into(), json!(self.tflops));
        resources.insert("vram_gb".into(), json!(self.vram_gb));
        put(&mut resources, "gpus", self.gpus.map(Value::from));
        put(
            &mut resources,
            "gpu_model",
            self.gpu_model.as_deref().map(Value::from),
        );
        put(&mut resources, "cpu_milli", self.cpu_milli.map(Value::from));
        put(
            &mut resources,
            "memory_mib",
            self.memory_mib.map(Value::from),
        );
        put(
            &mut resources,
            "isolation",
            self.isolation.as_deref().map(Value::from),
        );
        put(
            &mut resources,
            "precision",
            self.precision.as_deref().map(Value::from),
        );
        put(
            &mut resources,
            "interconnect",
            self.interconnect.as_deref().map(Value::from),
        );
        put(
            &mut resources,
            "min_cuda",
            self.min_cuda.as_deref().map(Value::from),
        );
        let mut body = Map::new();
        body.insert("mode".into(), json!(self.mode.as_str()));
        body.insert("resources".into(), Value::Object(resources));
        put(&mut body, "region", self.region.as_deref().map(Value::from));
        put(&mut body, "duration_s", self.duration_s.map(Value::from));
        put(
            &mut body,
            "start_at",
            self.start_at.as_deref().map(Value::from),
        );
        put(
            &mut body,
            "max_price",
            self.max_price.as_deref().map(Value::from),
        );
        put(&mut body, "count", self.count.map(Value::from));
        body
    }
}

pub(super) fn put(map: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    if let Some(v) = value {
        map.insert(key.into(), v);
    }
}

/// `KEY=VALUE`, for `--tag` and `--env`.
pub(super) fn key_value(s: &str) -> std::result::Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_owned(), v.to_owned())),
        _ => Err(format!("expected KEY=VALUE, got `{s}`")),
    }
}

/// `URL,SHA256,PATH`, for `--artifact`: the server checks each part.
pub(super) fn artifact(s: &str) -> std::result::Result<Value, String> {
    let parts: Vec<&str> = s.splitn(3, ',').collect();
    match parts.as_slice() {
        [url, sha256, path] if !url.is_empty() && !sha256.is_empty() && !path.is_empty() => {
            Ok(json!({"url": url, "sha256": sha256, "path": path}))
        }
        _ => Err(format!("expected URL,SHA256,PATH, got `{s}`")),
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ExportFormat {
    FocusCsv,
    FocusJson,
    Csv,
}

// Parsed once per run from the command line: the size of the largest
// variant costs nothing worth boxing for.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Subcommand)]
pub enum ClientCommand {
    /// Log in and keep the credential in the config folder (0600).
    ///
    /// Asks for the password without echo, or reads it from stdin with
    /// --password-stdin. Keeps a long-lived API key minted for this machine
    /// (revoked by `gpuex logout`), or with --session the short-lived access
    /// token and its rotating refresh token, refreshed when it expires.
    Login {
        /// The account's email (asked when missing).
        #[arg(long, env = "GPUEX_EMAIL")]
        email: Option<String>,
        /// Read the password from the first line of stdin (for scripts).
        #[arg(long)]
        password_stdin: bool,
        /// Keep the short-lived access token and its refresh token instead
        /// of minting an API key.
        #[arg(long)]
        session: bool,
    },
    /// Revoke the kept API key or session and forget the credential.
    Logout,
    /// Who the kept credential belongs to.
    Whoami,
    /// What a request would cost, per model and region, without ordering.
    Quote(Request),
    /// Place an order (every mode); `--wait` follows it until its lease runs.
    Order(OrderArgs),
    /// Your orders, newest first, or one order with its id (its attempts,
    /// and the checkpoint it resumed from).
    Orders {
        id: Option<String>,
        #[arg(long)]
        state: Option<String>,
        #[arg(long, value_parser = mode_parser())]
        mode: Option<Mode>,
        /// How many (all pages are read up to this many).
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Your leases, or one lease with its id.
    Leases {
        id: Option<String>,
        #[arg(long)]
        state: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// A lease's output; --follow prints new output until the lease ends.
    Logs {
        id: String,
        #[arg(long, short)]
        follow: bool,
    },
    /// What a lease's workload left in /outputs; --get NAME downloads one
    /// (checking its SHA-256) to --out (default: its file name; `-`: stdout).
    Outputs {
        id: String,
        #[arg(long)]
        get: Option<String>,
        #[arg(long, requires = "get")]
        out: Option<PathBuf>,
    },
    /// Release a lease now: its workload stops, and its billing with it.
    Release { id: String },
    /// Convert a lease to another mode (e.g. on_demand to reserved).
    Convert {
        id: String,
        #[arg(long, value_parser = mode_parser())]
        to: Mode,
        /// From when (RFC 3339; default now).
        #[arg(long)]
        from: Option<String>,
        /// Until when (RFC 3339), for a reservation.
        #[arg(long)]
        until: Option<String>,
    },
    /// Offer the rest of a reservation for resale.
    Resell {
        /// The lease.
        id: String,
        /// From when (RFC 3339).
        #[arg(long)]
        from: String,
        /// The asking price per hour.
        #[arg(long)]
        ask_per_hour: String,
    },
    /// Your resale listings, or with --open the market's open offers.
    Listings {
        #[arg(long)]
        open: bool,
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Your events; --follow keeps the live stream open (SSE).
    Events {
        #[arg(long, short)]
        follow: bool,
        /// Start after this event id.
        #[arg(long)]
        after: Option<i64>,
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// What you used and what it cost, grouped by tag:KEY, mode, gpu_model, region or day.
    Bill {
        #[arg(long, default_value = "mode")]
        group_by: String,
        /// RFC 3339 (default: this month).
        #[arg(long)]
        from: Option<String>,
        #[arg(long)]
        to: Option<String>,
    },
    /// Download billing lines (FOCUS 1.2 CSV by default) to a file.
    Export {
        #[arg(long, value_enum, default_value_t = ExportFormat::FocusCsv)]
        format: ExportFormat,
        /// Where to write it (`-` for stdout).
        #[arg(long, short = 'o')]
        output_file: PathBuf,
        #[arg(long)]
        from: Option<String>,
        #[arg(long)]
        to: Option<String>,
    },
    /// Whole 8-GPU nodes against gpuex units over months, from your last
    /// 30 days, an imported history (--import) or the load given by
    /// --peak-*/--mean-*/--baseline-* flags.
    Tco(tco::TcoArgs),
    /// Your capacity profile: units held at once, lease durations, utilization.
    Profile {
        /// RFC 3339 (default: this month).
        #[arg(long)]
        from: Option<String>,
        #[arg(long)]
        to: Option<String>,
        /// The profile of an imported job history instead (`gpuex import`).
        #[arg(long, conflicts_with_all = ["from", "to"])]
        import: Option<String>,
    },
    /// Import a job history (Slurm `sacct --parsable2`, `kubectl get pods -o
    /// json`, or a CSV of start,end,gpus[,gpu_model][,tag]) as a capacity
    /// profile; the file is streamed, so it may be hundreds of megabytes.
    Import {
        file: PathBuf,
        #[arg(long, value_enum)]
        format: crate::imports::ImportFileFormat,
        /// The model of rows naming none the catalog knows (server default H100-SXM5-80GB).
        #[arg(long)]
        gpu_model: Option<String>,
    },
    /// Your imported job histories, or one of them (`show ID`, `delete ID`).
    Imports {
        #[command(subcommand)]
        command: Option<crate::imports::ImportsCommand>,
    },
    /// Run a workload once per GPU shape (at most 10 minutes each, at the
    /// on-demand price) to find the smallest slice it runs on.
    Trial(crate::trials::TrialArgs),
    /// Your trials, or one of them with each shape's outcome.
    Trials { id: Option<String> },
    /// Providers: your nodes (`gpuex nodes`), or delete one.
    Nodes {
        #[command(subcommand)]
        command: Option<NodesCommand>,
    },
    /// Admins: manage accounts.
    #[command(subcommand)]
    Admin(AdminCommand),
    /// Providers: what your nodes earned.
    Earnings {
        /// month or day.
        #[arg(long)]
        period: Option<String>,
        #[arg(long)]
        from: Option<String>,
        #[arg(long)]
        to: Option<String>,
    },
}

/// `gpuex nodes …`.
#[derive(Debug, Clone, Subcommand)]
pub enum NodesCommand {
    /// Delete a node: its token stops working at once. A node with live
    /// leases is refused (exit 5) unless --force, which ends them as on node
    /// loss (buyers are credited past the last heartbeat).
    Delete {
        id: String,
        #[arg(long)]
        force: bool,
    },
}

/// `gpuex admin …`.
#[derive(Debug, Clone, Subcommand)]
pub enum AdminCommand {
    /// Give an account another role (buyer, provider or admin). Its sessions
    /// and API keys stop working; one made a buyer loses its node tokens.
    SetRole {
        /// The account's id.
        user: String,
        /// buyer, provider or admin.
        role: String,
    },
    /// Mark a node simulated (its agent may run the simulated backend) or
    /// end its review.
    Node(admin::AdminNodeArgs),
    /// The replicas serving the market: which leads, how far each has
    /// applied the journal, which have gone silent.
    Replicas,
}
