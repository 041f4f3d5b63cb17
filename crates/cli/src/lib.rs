//! The client subcommands of `gpuex` (ARCHITECTURE.md §18): what a buyer or a
//! provider runs from a terminal against a gpuex server. They need no
//! database and start no server: everything goes through the public HTTP API.
//!
//! People get tables, scripts `--output json` (the API's own JSON, or one
//! JSON object a line for streams). Errors print the problem's `detail` and
//! its fields on stderr, and the exit code says what went wrong:
//! see [`EXIT_CODES`].

mod admin;
mod args;
mod follow;
mod http;
mod imports;
mod login;
mod order;
mod outputs;
mod quote;
mod render;
mod session;
mod store;
mod tco;
mod trials;

use args::{artifact, key_value, put};
pub use args::{AdminCommand, ClientCommand, ExportFormat, Global, NodesCommand, Output, Request};
use follow::{events, export, logs};
use login::{login, logout, read_line};
use render::{cell, kv_table, lease_table, order_table, print_json, show, show_list, table};

use gpuex_api::auth::UserView;
use gpuex_api::billing::Earnings;
use gpuex_api::billing::UsageReport;
use gpuex_api::market::{LeaseView, OrderView};
use gpuex_api::market::{ListingView, ResaleOffer};
use gpuex_api::nodes::NodeSummary;

use http::Api;
use reqwest::Method;
use serde_json::{json, Map, Value};
use std::io::Write;

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
            show(ctx, &me, |me: &UserView| {
                kv_table(&[
                    ("email", me.email.clone()),
                    ("role", cell(&me.role)),
                    ("id", cell(&me.id)),
                    ("server", api.server.clone()),
                ])
            })
        }
        ClientCommand::Quote(request) => {
            let quote = api
                .post("/v1/quotes", &Value::Object(request.body()))
                .await?;
            show(ctx, &quote, quote::quote_text)
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
                return show(ctx, &order, order_table);
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
                |o: &OrderView| {
                    vec![
                        cell(&o.id),
                        cell(&o.mode),
                        cell(&o.state),
                        o.region.clone(),
                        cell(&o.lease_id),
                        cell(&o.created_at),
                    ]
                },
            )
        }
        ClientCommand::Leases { id, state, limit } => {
            if let Some(id) = id {
                let lease = api.get(&format!("/v1/leases/{id}"), &[]).await?;
                return show(ctx, &lease, lease_table);
            }
            let q: Vec<_> = state.into_iter().map(|s| ("state", s)).collect();
            let items = api.pages("/v1/leases", &q, Some(limit)).await?;
            show_list(
                ctx,
                &items,
                &[
                    "id",
                    "mode",
                    "state",
                    "gpu_model",
                    "region",
                    "charged",
                    "ends_at",
                    "vacate_at",
                ],
                |l: &LeaseView| {
                    vec![
                        cell(&l.id),
                        cell(&l.mode),
                        cell(&l.state),
                        l.gpu_model.clone(),
                        l.region.clone(),
                        cell(&l.usage.charged),
                        cell(&l.ends_at),
                        cell(&l.vacate_at),
                    ]
                },
            )
        }
        ClientCommand::Logs { id, follow } => logs(ctx, &id, follow).await,
        ClientCommand::Outputs { id, get, out } => outputs::outputs(ctx, &id, get, out).await,
        ClientCommand::Release { id } => {
            let lease = api
                .post(&format!("/v1/leases/{id}/release"), &json!({}))
                .await?;
            show(ctx, &lease, lease_table)
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
            show(ctx, &lease, lease_table)
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
            show(ctx, &listing, |l: &ListingView| {
                kv_table(&[
                    ("listing", cell(&l.id)),
                    ("lease", cell(&l.lease_id)),
                    ("state", l.state.clone()),
                    ("gpu_model", l.gpu_model.clone()),
                    ("from", cell(&l.from)),
                    ("until", cell(&l.until)),
                    ("ask/h", cell(&l.ask_per_hour)),
                ])
            })
        }
        ClientCommand::Listings { open, limit } => {
            if open {
                let offers = api.get("/v1/market/resale", &[]).await?;
                let items = offers.as_array().cloned().unwrap_or_default();
                show_list(
                    ctx,
                    &items,
                    &["id", "gpu_model", "region", "from", "until", "ask_per_hour"],
                    |o: &ResaleOffer| {
                        vec![
                            cell(&o.id),
                            o.gpu_model.clone(),
                            o.region.clone(),
                            cell(&o.from),
                            cell(&o.until),
                            cell(&o.ask_per_hour),
                        ]
                    },
                )
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
                    |l: &ListingView| {
                        vec![
                            cell(&l.id),
                            cell(&l.lease_id),
                            l.state.clone(),
                            l.gpu_model.clone(),
                            cell(&l.from),
                            cell(&l.until),
                            cell(&l.ask_per_hour),
                        ]
                    },
                )
            }
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
            show(ctx, &report, |r: &UsageReport| {
                let mut t = table(&[r.group_by.as_str(), "lines", "cost"]);
                for g in &r.groups {
                    t.add_row(vec![g.key.clone(), cell(&g.lines), cell(&g.cost)]);
                }
                t.add_row(vec![
                    "total".into(),
                    String::new(),
                    format!("{} {}", cell(&r.total), r.currency),
                ]);
                format!("{} to {}\n{t}", cell(&r.from), cell(&r.to))
            })
        }
        ClientCommand::Export {
            format,
            output_file,
            from,
            to,
        } => export(ctx, format, &output_file, from, to).await,
        ClientCommand::Tco(args) => tco::tco(ctx, &args).await,
        ClientCommand::Profile { from, to, import } => tco::profile(ctx, from, to, import).await,
        ClientCommand::Import {
            file,
            format,
            gpu_model,
        } => imports::import(ctx, &file, format, gpu_model).await,
        ClientCommand::Imports { command } => imports::imports(ctx, command).await,
        ClientCommand::Trial(args) => trials::trial(ctx, args).await,
        ClientCommand::Trials { id } => trials::trials(ctx, id).await,
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
            show(ctx, &account, |a: &UserView| {
                kv_table(&[
                    ("id", cell(&a.id)),
                    ("email", a.email.clone()),
                    ("role", cell(&a.role)),
                ])
            })
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
                |n: &NodeSummary| {
                    vec![
                        cell(&n.id),
                        n.name.clone(),
                        n.region.clone(),
                        cell(&n.zone),
                        cell(&n.status),
                        cell(&n.gpu_count),
                        cell(&n.cordoned),
                        cell(&n.under_review),
                        cell(&n.last_heartbeat_at),
                    ]
                },
            )
        }
        ClientCommand::Earnings { period, from, to } => {
            let mut q = Vec::new();
            q.extend(period.map(|p| ("period", p)));
            q.extend(from.map(|f| ("from", f)));
            q.extend(to.map(|t| ("to", t)));
            let e = api.get("/v1/provider/earnings", &q).await?;
            show(ctx, &e, |e: &Earnings| {
                let mut t = table(&["period", "node", "gpu_model", "mode", "gross", "fee", "net"]);
                for g in &e.groups {
                    t.add_row(vec![
                        g.period.clone(),
                        cell(&g.node_id),
                        cell(&g.gpu_model),
                        cell(&g.mode),
                        cell(&g.gross),
                        cell(&g.platform_fee),
                        cell(&g.net),
                    ]);
                }
                format!(
                    "{t}\ngross {} fee {} net {} payable {} {}",
                    cell(&e.gross),
                    cell(&e.platform_fee),
                    cell(&e.net),
                    cell(&e.payable_balance),
                    e.currency
                )
            })
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
