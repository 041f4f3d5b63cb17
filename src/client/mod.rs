//! The client subcommands of `gpuex` (ARCHITECTURE.md §18): what a buyer or a
//! provider runs from a terminal against a gpuex server. They need no
//! database and start no server: everything goes through the public HTTP API.
//!
//! People get tables, scripts `--output json` (the API's own JSON, or one
//! JSON object a line for streams). Errors print the problem's `detail` and
//! its fields on stderr, and the exit code says what went wrong:
//! see [`EXIT_CODES`].

mod admin;
mod http;
mod order;
mod outputs;
mod quote;
mod session;
mod store;
mod tco;

use clap::{Args, Subcommand, ValueEnum};
use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};
use futures::StreamExt;
use http::Api;
use reqwest::Method;
use serde_json::{json, Map, Value};
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

/// Shown in `gpuex --help` and the README.
pub const EXIT_CODES: &str = "\
Exit codes of the client subcommands:
  0  success
  1  any other error (a file that cannot be written, an unexpected answer)
  2  usage: a missing or malformed flag
  3  not logged in, the credential was refused (401), or not allowed (403)
  4  not found (404)
  5  refused: a conflict (409), or an order rejected, expired or cancelled,
     or a lease that failed, while `--wait` followed it
  6  invalid input: the server refused a field or a request it cannot
     fill, e.g. no capacity free (400, 413, 415, 422)
  7  the server is unreachable, overloaded (429) or failing (5xx)
  8  `--wait` timed out";

/// What a client failure maps to (the process's exit code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Other = 1,
    Usage = 2,
    Auth = 3,
    NotFound = 4,
    Conflict = 5,
    Invalid = 6,
    Server = 7,
    Timeout = 8,
}

#[derive(Debug)]
pub struct CliError {
    pub exit: Exit,
    pub message: String,
    pub status: Option<u16>,
    pub code: Option<String>,
    pub fields: Vec<(String, String)>,
    pub hint: Option<String>,
}

impl CliError {
    pub fn new(exit: Exit, message: impl Into<String>) -> CliError {
        CliError {
            exit,
            message: message.into(),
            status: None,
            code: None,
            fields: Vec::new(),
            hint: None,
        }
    }

    pub fn io(message: impl Into<String>) -> CliError {
        CliError::new(Exit::Other, message)
    }

    fn print(&self) {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "error: {}", self.message);
        for (field, message) in &self.fields {
            let _ = writeln!(err, "  {field}: {message}");
        }
        if let Some(hint) = &self.hint {
            let _ = writeln!(err, "hint: {hint}");
        }
    }
}

type Result<T> = std::result::Result<T, CliError>;

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

#[derive(Debug, Clone, Copy, ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum Mode {
    OnDemand,
    Reserved,
    Spot,
    Pooled,
}

impl Mode {
    fn as_str(self) -> &'static str {
        match self {
            Mode::OnDemand => "on_demand",
            Mode::Reserved => "reserved",
            Mode::Spot => "spot",
            Mode::Pooled => "pooled",
        }
    }
}

/// What to buy, flag for field as the API names them (`resources.*` and the
/// order's own fields). Values go to the server as typed; it checks them.
#[derive(Debug, Clone, Args)]
pub struct Request {
    /// How to buy: on_demand, reserved, spot or pooled.
    #[arg(long, value_enum)]
    mode: Mode,
    /// Standard TFLOPS wanted (resources.tflops).
    #[arg(long)]
    tflops: String,
    /// GPU memory in GB (resources.vram_gb).
    #[arg(long)]
    vram_gb: u64,
    /// Whole GPUs (resources.gpus).
    #[arg(long)]
    gpus: Option<u64>,
    /// A GPU model, e.g. H100-SXM5-80GB (resources.gpu_model).
    #[arg(long)]
    gpu_model: Option<String>,
    /// Host CPU in thousandths of a core (resources.cpu_milli).
    #[arg(long)]
    cpu_milli: Option<u64>,
    /// Host memory in MiB (resources.memory_mib).
    #[arg(long)]
    memory_mib: Option<u64>,
    /// shared, mig or whole (resources.isolation).
    #[arg(long)]
    isolation: Option<String>,
    /// fp32, tf32, fp16, bf16, fp8 or int8 (resources.precision).
    #[arg(long)]
    precision: Option<String>,
    /// e.g. nvlink (resources.interconnect).
    #[arg(long)]
    interconnect: Option<String>,
    /// Lowest CUDA version, e.g. 12.2 (resources.min_cuda).
    #[arg(long)]
    min_cuda: Option<String>,
    /// A region, e.g. eu-west.
    #[arg(long)]
    region: Option<String>,
    /// How long, in seconds.
    #[arg(long)]
    duration_s: Option<u64>,
    /// When a reservation starts (RFC 3339).
    #[arg(long)]
    start_at: Option<String>,
    /// The most to pay per hour.
    #[arg(long)]
    max_price: Option<String>,
}

impl Request {
    fn body(&self) -> Map<String, Value> {
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
        body
    }
}

fn put(map: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    if let Some(v) = value {
        map.insert(key.into(), v);
    }
}

/// `KEY=VALUE`, for `--tag` and `--env`.
fn key_value(s: &str) -> std::result::Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_owned(), v.to_owned())),
        _ => Err(format!("expected KEY=VALUE, got `{s}`")),
    }
}

/// `URL,SHA256,PATH`, for `--artifact`: the server checks each part.
fn artifact(s: &str) -> std::result::Result<Value, String> {
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
    Order(order::OrderArgs),
    /// Your orders, newest first, or one order with its id (its attempts,
    /// and the checkpoint it resumed from).
    Orders {
        id: Option<String>,
        #[arg(long)]
        state: Option<String>,
        #[arg(long, value_enum)]
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
        #[arg(long, value_enum)]
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
    /// 30 days or the load given by --peak-*/--mean-*/--baseline-* flags.
    Tco(tco::TcoArgs),
    /// Your capacity profile: units held at once, lease durations, utilization.
    Profile {
        /// RFC 3339 (default: this month).
        #[arg(long)]
        from: Option<String>,
        #[arg(long)]
        to: Option<String>,
    },
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

/// Runs a client subcommand and returns the process's exit code.
pub async fn run(global: Global, command: ClientCommand) -> i32 {
    match dispatch(global, command).await {
        Ok(()) => 0,
        Err(e) => {
            e.print();
            e.exit as i32
        }
    }
}

const DEFAULT_SERVER: &str = "http://127.0.0.1:8080";

struct Ctx {
    api: Api,
    output: Output,
}

impl Ctx {
    fn json(&self) -> bool {
        self.output == Output::Json
    }
}

fn server_of(global: &Global, stored: &store::Credentials) -> String {
    global
        .server
        .clone()
        .filter(|s| !s.is_empty())
        .or_else(|| stored.default_server.clone())
        .unwrap_or_else(|| DEFAULT_SERVER.into())
        .trim_end_matches('/')
        .to_owned()
}

async fn dispatch(global: Global, command: ClientCommand) -> Result<()> {
    let mut stored = store::load()?;
    let server = server_of(&global, &stored);
    match command {
        ClientCommand::Login {
            email,
            password_stdin,
            session,
        } => {
            login(
                &server,
                global.output,
                stored,
                email,
                password_stdin,
                session,
            )
            .await
        }
        ClientCommand::Logout => logout(&server, stored).await,
        command => {
            let token = session::token_for(&server, &mut stored).await?;
            let ctx = Ctx {
                api: Api::new(&server, Some(token))?,
                output: global.output,
            };
            authenticated(&ctx, command).await
        }
    }
}

async fn login(
    server: &str,
    output: Output,
    mut stored: store::Credentials,
    email: Option<String>,
    password_stdin: bool,
    session: bool,
) -> Result<()> {
    let stdin = std::io::stdin();
    let email = match email {
        Some(e) => e,
        None if !password_stdin && stdin.is_terminal() => {
            eprint!("Email: ");
            let _ = std::io::stderr().flush();
            read_line(&mut stdin.lock())?
        }
        None => {
            return Err(usage(
                "--email is required when the password comes from stdin",
            ));
        }
    };
    let password = if password_stdin {
        read_line(&mut stdin.lock())?
    } else if stdin.is_terminal() {
        rpassword::prompt_password("Password: ")
            .map_err(|e| CliError::io(format!("cannot read the password: {e}")))?
    } else {
        return Err(usage(
            "stdin is not a terminal: pass the password with --password-stdin",
        ));
    };
    let anonymous = Api::new(server, None)?;
    let tokens = anonymous
        .post(
            "/v1/auth/login",
            &json!({"email": email, "password": password}),
        )
        .await?;
    let access = tokens["access_token"]
        .as_str()
        .ok_or_else(|| CliError::new(Exit::Server, "the login answer has no access_token"))?
        .to_owned();
    let mut credential = store::Credential {
        email: email.clone(),
        api_key: None,
        api_key_id: None,
        access_token: None,
        expires_at: None,
        refresh_token: None,
        refresh_expires_at: None,
    };
    // A key minted at an earlier login would otherwise be left behind.
    if let Some(old) = stored.servers.get(server).cloned() {
        revoke(server, &old).await;
    }
    if session {
        stored.servers.insert(server.to_owned(), credential);
        session::keep_pair(server, &mut stored, &tokens)?;
    } else {
        // A key named for this machine lasts until `gpuex logout` revokes
        // it; the login's own session is not kept, so it is ended now.
        let api = Api::new(server, Some(access))?;
        let host = std::env::var("HOSTNAME")
            .ok()
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "this machine".into());
        let name: String = format!("gpuex CLI on {host}").chars().take(100).collect();
        let key = api.post("/v1/api-keys", &json!({"name": name})).await?;
        credential.api_key = key["key"].as_str().map(str::to_owned);
        credential.api_key_id = key["id"].as_str().map(str::to_owned);
        if let Some(refresh) = tokens["refresh_token"].as_str() {
            session::log_out(server, refresh).await;
        }
        stored.servers.insert(server.to_owned(), credential);
    }
    stored.default_server = Some(server.to_owned());
    let path = store::save(&stored)?;
    if output == Output::Json {
        print_json(&json!({"server": server, "email": email, "credentials": path}));
    } else {
        println!(
            "logged in to {server} as {email} (credential kept in {})",
            path.display()
        );
    }
    Ok(())
}

/// Best effort: the key or session may already be gone.
async fn revoke(server: &str, cred: &store::Credential) {
    if let Some(refresh) = &cred.refresh_token {
        session::log_out(server, refresh).await;
    }
    if let (Some(key), Some(id)) = (&cred.api_key, &cred.api_key_id) {
        if let Ok(api) = Api::new(server, Some(key.clone())) {
            let _ = api
                .send(api.request(Method::DELETE, &format!("/v1/api-keys/{id}")))
                .await;
        }
    }
}

async fn logout(server: &str, mut stored: store::Credentials) -> Result<()> {
    let Some(cred) = stored.servers.remove(server) else {
        println!("not logged in to {server}");
        return Ok(());
    };
    revoke(server, &cred).await;
    if stored.default_server.as_deref() == Some(server) {
        stored.default_server = stored.servers.keys().next().cloned();
    }
    store::save(&stored)?;
    println!("logged out of {server}");
    Ok(())
}

fn read_line(input: &mut impl BufRead) -> Result<String> {
    let mut line = String::new();
    input
        .read_line(&mut line)
        .map_err(|e| CliError::io(format!("cannot read stdin: {e}")))?;
    Ok(line.trim_end_matches(['\r', '\n']).to_owned())
}

fn usage(message: &str) -> CliError {
    // Exit 2, as clap's own usage errors.
    CliError::new(Exit::Usage, message)
}

async fn authenticated(ctx: &Ctx, command: ClientCommand) -> Result<()> {
    let api = &ctx.api;
    match command {
        ClientCommand::Login { .. } | ClientCommand::Logout => Ok(()),
        ClientCommand::Whoami => {
            let me = api.get("/v1/me", &[]).await?;
            show(ctx, &me, |me| {
                kv_table(&[
                    ("email", text(&me["email"])),
                    ("role", text(&me["role"])),
                    ("id", text(&me["id"])),
                    ("server", api.server.clone()),
                ])
            });
            Ok(())
        }
        ClientCommand::Quote(request) => {
            let quote = api
                .post("/v1/quotes", &Value::Object(request.body()))
                .await?;
            show(ctx, &quote, quote::quote_text);
            Ok(())
        }
        ClientCommand::Order(args) => order::place(ctx, args).await,
        ClientCommand::Orders {
            id,
            state,
            mode,
            limit,
        } => {
            if let Some(id) = id {
                let order = api.get(&format!("/v1/orders/{id}"), &[]).await?;
                show(ctx, &order, order_table);
                return Ok(());
            }
            let mut q = Vec::new();
            if let Some(s) = state {
                q.push(("state", s));
            }
            if let Some(m) = mode {
                q.push(("mode", m.as_str().to_owned()));
            }
            let items = api.pages("/v1/orders", &q, Some(limit)).await?;
            show_list(
                ctx,
                &items,
                &["id", "mode", "state", "region", "lease_id", "created_at"],
            );
            Ok(())
        }
        ClientCommand::Leases { id, state, limit } => {
            if let Some(id) = id {
                let lease = api.get(&format!("/v1/leases/{id}"), &[]).await?;
                show(ctx, &lease, lease_table);
                return Ok(());
            }
            let q: Vec<_> = state.into_iter().map(|s| ("state", s)).collect();
            let items = api.pages("/v1/leases", &q, Some(limit)).await?;
            if ctx.json() {
                print_json(&Value::Array(items));
            } else {
                let mut t = table(&[
                    "id",
                    "mode",
                    "state",
                    "gpu_model",
                    "region",
                    "charged",
                    "ends_at",
                    "vacate_at",
                ]);
                for l in &items {
                    t.add_row(vec![
                        text(&l["id"]),
                        text(&l["mode"]),
                        text(&l["state"]),
                        text(&l["gpu_model"]),
                        text(&l["region"]),
                        text(&l["usage"]["charged"]),
                        text(&l["ends_at"]),
                        text(&l["vacate_at"]),
                    ]);
                }
                println!("{t}");
            }
            Ok(())
        }
        ClientCommand::Logs { id, follow } => logs(ctx, &id, follow).await,
        ClientCommand::Outputs { id, get, out } => outputs::outputs(ctx, &id, get, out).await,
        ClientCommand::Release { id } => {
            let lease = api
                .post(&format!("/v1/leases/{id}/release"), &json!({}))
                .await?;
            show(ctx, &lease, lease_table);
            Ok(())
        }
        ClientCommand::Convert {
            id,
            to,
            from,
            until,
        } => {
            let mut body = Map::new();
            body.insert("to".into(), json!(to.as_str()));
            put(&mut body, "from", from.map(Value::from));
            put(&mut body, "until", until.map(Value::from));
            let lease = api
                .post(&format!("/v1/leases/{id}/convert"), &Value::Object(body))
                .await?;
            show(ctx, &lease, lease_table);
            Ok(())
        }
        ClientCommand::Resell {
            id,
            from,
            ask_per_hour,
        } => {
            let listing = api
                .post(
                    "/v1/resale-listings",
                    &json!({"lease_id": id, "from": from, "ask_per_hour": ask_per_hour}),
                )
                .await?;
            show(ctx, &listing, |l| {
                kv_table(&[
                    ("listing", text(&l["id"])),
                    ("lease", text(&l["lease_id"])),
                    ("state", text(&l["state"])),
                    ("gpu_model", text(&l["gpu_model"])),
                    ("from", text(&l["from"])),
                    ("until", text(&l["until"])),
                    ("ask/h", text(&l["ask_per_hour"])),
                ])
            });
            Ok(())
        }
        ClientCommand::Listings { open, limit } => {
            if open {
                let offers = api.get("/v1/market/resale", &[]).await?;
                let items = offers.as_array().cloned().unwrap_or_default();
                show_list(
                    ctx,
                    &items,
                    &["id", "gpu_model", "region", "from", "until", "ask_per_hour"],
                );
            } else {
                let items = api.pages("/v1/resale-listings", &[], Some(limit)).await?;
                show_list(
                    ctx,
                    &items,
                    &[
                        "id",
                        "lease_id",
                        "state",
                        "gpu_model",
                        "from",
                        "until",
                        "ask_per_hour",
                    ],
                );
            }
            Ok(())
        }
        ClientCommand::Events {
            follow,
            after,
            limit,
        } => events(ctx, follow, after, limit).await,
        ClientCommand::Bill { group_by, from, to } => {
            let mut q = vec![("group_by", group_by)];
            q.extend(from.map(|f| ("from", f)));
            q.extend(to.map(|t| ("to", t)));
            let report = api.get("/v1/billing/usage", &q).await?;
            show(ctx, &report, |r| {
                let mut t = table(&[&text(&r["group_by"]), "lines", "cost"]);
                for g in r["groups"].as_array().into_iter().flatten() {
                    t.add_row(vec![text(&g["key"]), text(&g["lines"]), text(&g["cost"])]);
                }
                t.add_row(vec![
                    "total".into(),
                    String::new(),
                    format!("{} {}", text(&r["total"]), text(&r["currency"])),
                ]);
                format!("{} to {}\n{t}", text(&r["from"]), text(&r["to"]))
            });
            Ok(())
        }
        ClientCommand::Export {
            format,
            output_file,
            from,
            to,
        } => export(ctx, format, &output_file, from, to).await,
        ClientCommand::Tco(args) => tco::tco(ctx, &args).await,
        ClientCommand::Profile { from, to } => tco::profile(ctx, from, to).await,
        ClientCommand::Nodes {
            command: Some(NodesCommand::Delete { id, force }),
        } => {
            let path = format!("/v1/nodes/{id}");
            let query = [("force", force.to_string())];
            api.send(api.request(Method::DELETE, &path).query(&query))
                .await?;
            if ctx.json() {
                print_json(&json!({"id": id, "deleted": true}));
            } else {
                println!("deleted node {id}");
            }
            Ok(())
        }
        ClientCommand::Admin(AdminCommand::SetRole { user, role }) => {
            let account = api
                .send(
                    api.request(Method::PUT, &format!("/v1/admin/users/{user}/role"))
                        .json(&json!({ "role": role })),
                )
                .await?;
            show(ctx, &account, |a| {
                kv_table(&[
                    ("id", text(&a["id"])),
                    ("email", text(&a["email"])),
                    ("role", text(&a["role"])),
                ])
            });
            Ok(())
        }
        ClientCommand::Admin(AdminCommand::Node(args)) => admin::node(ctx, &args).await,
        ClientCommand::Admin(AdminCommand::Replicas) => admin::replicas(ctx).await,
        ClientCommand::Nodes { command: None } => {
            let nodes = api.get("/v1/nodes", &[]).await?;
            let items = nodes.as_array().cloned().unwrap_or_default();
            show_list(
                ctx,
                &items,
                &[
                    "id",
                    "name",
                    "region",
                    "zone",
                    "status",
                    "gpu_count",
                    "cordoned",
                    "under_review",
                    "last_heartbeat_at",
                ],
            );
            Ok(())
        }
        ClientCommand::Earnings { period, from, to } => {
            let mut q = Vec::new();
            q.extend(period.map(|p| ("period", p)));
            q.extend(from.map(|f| ("from", f)));
            q.extend(to.map(|t| ("to", t)));
            let e = api.get("/v1/provider/earnings", &q).await?;
            show(ctx, &e, |e| {
                let mut t = table(&["period", "node", "gpu_model", "mode", "gross", "fee", "net"]);
                for g in e["groups"].as_array().into_iter().flatten() {
                    t.add_row(vec![
                        text(&g["period"]),
                        text(&g["node_id"]),
                        text(&g["gpu_model"]),
                        text(&g["mode"]),
                        text(&g["gross"]),
                        text(&g["platform_fee"]),
                        text(&g["net"]),
                    ]);
                }
                format!(
                    "{t}\ngross {} fee {} net {} payable {} {}",
                    text(&e["gross"]),
                    text(&e["platform_fee"]),
                    text(&e["net"]),
                    text(&e["payable_balance"]),
                    text(&e["currency"])
                )
            });
            Ok(())
        }
    }
}

fn pairs(list: Vec<(String, String)>) -> Value {
    Value::Object(
        list.into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect(),
    )
}

/// Prints the lease's output; with `follow`, what is new every second until
/// the lease has ended and its last output arrived.
async fn logs(ctx: &Ctx, id: &str, follow: bool) -> Result<()> {
    let path = format!("/v1/leases/{id}/logs");
    let mut seen: u64 = 0;
    let mut stdout = std::io::stdout();
    loop {
        let logs = ctx.api.get(&path, &[]).await?;
        let total = logs["total_bytes"].as_u64().unwrap_or(0);
        let tail = logs["tail"].as_str().unwrap_or("");
        let complete = logs["complete"].as_bool().unwrap_or(false);
        if ctx.json() && !follow {
            print_json(&logs);
            return Ok(());
        }
        if total > seen {
            let new = usize::try_from(total - seen).unwrap_or(usize::MAX);
            // The server keeps a tail: what scrolled out of it is gone.
            let start = tail.len().saturating_sub(new);
            let start = (start..=tail.len())
                .find(|i| tail.is_char_boundary(*i))
                .unwrap_or(tail.len());
            let chunk = &tail[start..];
            if ctx.json() {
                print_json_line(&json!({"lease_id": id, "offset": seen, "text": chunk}));
            } else {
                let _ = stdout.write_all(chunk.as_bytes());
                let _ = stdout.flush();
            }
            seen = total;
        }
        if !follow || complete {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// A page of events, or the live SSE stream (reconnecting after the last id seen).
async fn events(ctx: &Ctx, follow: bool, after: Option<i64>, limit: usize) -> Result<()> {
    if !follow {
        let mut q = vec![("limit", limit.clamp(1, 500).to_string())];
        q.extend(after.map(|a| ("after", a.to_string())));
        let page = ctx.api.get("/v1/events", &q).await?;
        let items = page["items"].as_array().cloned().unwrap_or_default();
        if ctx.json() {
            print_json(&page);
        } else {
            let mut t = table(&["id", "type", "at", "data"]);
            for e in &items {
                t.add_row(vec![
                    text(&e["id"]),
                    text(&e["type"]),
                    text(&e["at"]),
                    compact(&e["data"]),
                ]);
            }
            println!("{t}");
        }
        return Ok(());
    }
    use eventsource_stream::Eventsource;
    let mut last = after;
    let mut failures = 0u32;
    loop {
        let mut request = ctx
            .api
            .stream_request("/v1/events/stream")
            .header("Accept", "text/event-stream");
        if let Some(id) = last {
            request = request.query(&[("after", id)]);
        }
        let response = match ctx.api.execute(request).await {
            Ok(r) => r,
            Err(e) if e.exit == Exit::Server && failures < 5 => {
                failures += 1;
                tokio::time::sleep(Duration::from_secs(u64::from(failures))).await;
                continue;
            }
            Err(e) => return Err(e),
        };
        failures = 0;
        let mut stream = response.bytes_stream().eventsource();
        while let Some(item) = stream.next().await {
            let Ok(event) = item else { break };
            if event.data.is_empty() {
                continue;
            }
            let data: Value =
                serde_json::from_str(&event.data).unwrap_or(Value::String(event.data.clone()));
            if let Ok(id) = event.id.parse::<i64>() {
                last = Some(id);
            }
            if ctx.json() {
                print_json_line(&data);
            } else {
                println!(
                    "{:>6}  {:<24} {}",
                    event.id,
                    event.event,
                    compact(data.get("data").unwrap_or(&data))
                );
            }
        }
        // The server closed the stream (restart, idle proxy): resume after the last id.
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn export(
    ctx: &Ctx,
    format: ExportFormat,
    output_file: &std::path::Path,
    from: Option<String>,
    to: Option<String>,
) -> Result<()> {
    let format = match format {
        ExportFormat::FocusCsv => "focus-csv",
        ExportFormat::FocusJson => "focus-json",
        ExportFormat::Csv => "csv",
    };
    let mut q = vec![("format", format.to_owned())];
    q.extend(from.map(|f| ("from", f)));
    q.extend(to.map(|t| ("to", t)));
    let response = ctx
        .api
        .execute(ctx.api.stream_request("/v1/billing/export").query(&q))
        .await?;
    let (written, _) = outputs::save(ctx, response, output_file).await?;
    if output_file.as_os_str() != "-" {
        if ctx.json() {
            print_json(&json!({"file": output_file, "bytes": written, "format": format}));
        } else {
            eprintln!("wrote {written} bytes to {}", output_file.display());
        }
    }
    Ok(())
}

fn show(ctx: &Ctx, value: &Value, render: impl FnOnce(&Value) -> String) {
    if ctx.json() {
        print_json(value);
    } else {
        println!("{}", render(value));
    }
}

fn show_list(ctx: &Ctx, items: &[Value], columns: &[&str]) {
    if ctx.json() {
        print_json(&Value::Array(items.to_vec()));
        return;
    }
    let mut t = table(columns);
    for item in items {
        t.add_row(columns.iter().map(|c| text(&item[*c])).collect::<Vec<_>>());
    }
    println!("{t}");
}

fn order_table(o: &Value) -> String {
    let mut rows = vec![
        ("order", text(&o["id"])),
        ("mode", text(&o["mode"])),
        ("state", text(&o["state"])),
        ("region", text(&o["region"])),
        ("lease", text(&o["lease_id"])),
    ];
    if let Some(m) = o["reject_message"].as_str() {
        rows.push(("rejected", m.to_owned()));
    }
    // Placed again after a preemption or a lost node.
    if let Some(attempts) = o["attempts"].as_array().filter(|a| a.len() > 1) {
        let ids: Vec<String> = attempts.iter().map(text).collect();
        rows.push(("attempts", ids.join(", ")));
    }
    if o["resumed_from"].is_object() {
        let r = &o["resumed_from"];
        rows.push((
            "resumed_from",
            format!(
                "checkpoint {} of {}",
                text(&r["seq"]),
                text(&r["stored_at"])
            ),
        ));
    }
    kv_table(&rows)
}

fn lease_table(l: &Value) -> String {
    kv_table(&[
        ("lease", text(&l["id"])),
        ("state", text(&l["state"])),
        ("mode", text(&l["mode"])),
        ("gpu_model", text(&l["gpu_model"])),
        ("device", text(&l["device"])),
        ("image_id", text(&l["image_id"])),
        ("region", text(&l["region"])),
        ("price/h", text(&l["price_per_hour"])),
        ("charged", text(&l["usage"]["charged"])),
        ("starts_at", text(&l["starts_at"])),
        ("ends_at", text(&l["ends_at"])),
        // Listed for resale: the slice is given up here, sold or not.
        ("vacate_at", text(&l["vacate_at"])),
    ])
}

fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(header.to_vec());
    t
}

fn kv_table(rows: &[(&str, String)]) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic);
    for (k, v) in rows {
        t.add_row(vec![(*k).to_owned(), v.clone()]);
    }
    t.to_string()
}

/// A JSON value as a table cell: strings bare, null empty.
fn text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A JSON value on one line, cut short for a table cell.
fn compact(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 100 {
        let cut: String = s.chars().take(99).collect();
        format!("{cut}…")
    } else {
        s
    }
}

fn print_json(v: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer_pretty(&mut out, v);
    let _ = writeln!(out);
}

fn print_json_line(v: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer(&mut out, v);
    let _ = writeln!(out);
    let _ = out.flush();
}
