//! `gpuex order`: the request a buyer places, and `--wait`, which follows
//! it until its lease runs.

use super::render::{cell, read};
use super::{artifact, key_value, CliError, Exit};
use super::{
    lease_table, order_table, pairs, print_json, put, read_line, show, usage, Ctx, Request, Result,
};
use clap::Args;
use gpuex_api::market::{LeaseState, LeaseView, OrderState, OrderView};
use serde_json::{json, Map, Value};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Args)]
pub struct OrderArgs {
    #[command(flatten)]
    request: Request,
    /// The command the lease runs.
    #[arg(long)]
    command: Option<String>,
    /// An environment variable for the command (repeatable).
    #[arg(long = "env", value_parser = key_value, value_name = "KEY=VALUE")]
    env: Vec<(String, String)>,
    /// A cost-allocation tag (repeatable).
    #[arg(long = "tag", value_parser = key_value, value_name = "KEY=VALUE")]
    tags: Vec<(String, String)>,
    /// A file the agent fetches into the lease's folder before the command
    /// starts, checked against its SHA-256 (repeatable).
    #[arg(long = "artifact", value_parser = artifact, value_name = "URL,SHA256,PATH")]
    artifacts: Vec<Value>,
    /// The OCI image the container launcher runs.
    #[arg(long)]
    image: Option<String>,
    /// The user name for a private image's registry; the password comes
    /// from --registry-password-stdin or $GPUEX_REGISTRY_PASSWORD. Kept
    /// sealed by the server and handed only to the agent that pulls.
    #[arg(long, requires = "image", value_name = "USER")]
    registry_user: Option<String>,
    /// Read the registry password from the first line of stdin.
    #[arg(long, requires = "registry_user")]
    registry_password_stdin: bool,
    /// Let the workload reach the network (the sandbox launcher denies it otherwise).
    #[arg(long)]
    network: bool,
    /// Send the workload's checkpoint folder ($GPUEX_CHECKPOINT) every
    /// this many seconds and when the lease ends.
    #[arg(long, value_name = "SECONDS")]
    checkpoint_every: Option<u32>,
    /// Where a container sees the checkpoint folder (default /checkpoint).
    #[arg(long, requires = "checkpoint_every")]
    checkpoint_path: Option<String>,
    /// When a lease is preempted or its node lost, start the next one
    /// from the last checkpoint (`on_interrupt: resume`).
    #[arg(long, requires = "checkpoint_every")]
    resume: bool,
    /// realtime or batch (pooled orders).
    #[arg(long)]
    qos: Option<String>,
    /// How long an on-demand or pooled order may wait for capacity, in seconds.
    #[arg(long, conflicts_with = "time_in_force")]
    max_wait_s: Option<u64>,
    /// gtc (wait up to 7 days), ioc (what fills now), fok (every unit now
    /// or nothing) or gtt (wait until --expires-at).
    #[arg(long, value_parser = ["gtc", "ioc", "fok", "gtt"])]
    time_in_force: Option<String>,
    /// When a gtt order stops waiting (RFC 3339, within 7 days).
    #[arg(long)]
    expires_at: Option<String>,
    /// With --count: every unit together or none.
    #[arg(long, conflicts_with = "min_count")]
    all_or_none: bool,
    /// With --count: the fewest units worth placing (default 1).
    #[arg(long)]
    min_count: Option<u32>,
    /// Your own id for the order.
    #[arg(long)]
    client_order_id: Option<String>,
    /// A URL the server posts the order's events to (signed).
    #[arg(long)]
    webhook_url: Option<String>,
    /// Follow the order until its lease runs (exit 5 if it is refused or fails).
    #[arg(long)]
    wait: bool,
    /// How long `--wait` waits, in seconds (exit 8 past it).
    #[arg(long, default_value_t = 600)]
    wait_timeout: u64,
}

impl OrderArgs {
    /// The order's body. The registry password is read here (stdin or the
    /// environment), never from a flag: a flag shows in `ps`.
    fn body(self) -> Result<Map<String, Value>> {
        let mut body = self.request.body();
        put(&mut body, "command", self.command.map(Value::from));
        if !self.artifacts.is_empty() {
            body.insert("artifacts".into(), Value::Array(self.artifacts));
        }
        put(&mut body, "image", self.image.map(Value::from));
        if let Some(username) = self.registry_user {
            let password = if self.registry_password_stdin {
                read_line(&mut std::io::stdin().lock())?
            } else {
                std::env::var("GPUEX_REGISTRY_PASSWORD").map_err(|_| {
                    usage("--registry-user needs --registry-password-stdin or $GPUEX_REGISTRY_PASSWORD")
                })?
            };
            body.insert(
                "registry_auth".into(),
                json!({"username": username, "password": password}),
            );
        }
        if self.network {
            body.insert("network".into(), Value::Bool(true));
        }
        if let Some(every_s) = self.checkpoint_every {
            let mut checkpoint = Map::new();
            checkpoint.insert("every_s".into(), every_s.into());
            put(
                &mut checkpoint,
                "path",
                self.checkpoint_path.map(Value::from),
            );
            body.insert("checkpoint".into(), Value::Object(checkpoint));
        }
        if self.resume {
            body.insert("on_interrupt".into(), "resume".into());
        }
        if !self.env.is_empty() {
            body.insert("env".into(), pairs(self.env));
        }
        if !self.tags.is_empty() {
            body.insert("tags".into(), pairs(self.tags));
        }
        put(&mut body, "qos", self.qos.map(Value::from));
        put(&mut body, "max_wait_s", self.max_wait_s.map(Value::from));
        put(
            &mut body,
            "time_in_force",
            self.time_in_force.map(Value::from),
        );
        put(&mut body, "expires_at", self.expires_at.map(Value::from));
        if self.all_or_none {
            body.insert("all_or_none".into(), Value::Bool(true));
        }
        put(&mut body, "min_count", self.min_count.map(Value::from));
        put(
            &mut body,
            "client_order_id",
            self.client_order_id.map(Value::from),
        );
        put(&mut body, "webhook_url", self.webhook_url.map(Value::from));
        Ok(body)
    }
}

/// Places the order; with `--wait`, follows it until its lease runs.
pub async fn place(ctx: &Ctx, args: OrderArgs) -> Result<()> {
    let (wait, wait_timeout) = (args.wait, args.wait_timeout);
    let body = args.body()?;
    let order = ctx
        .api
        .post_idempotent("/v1/orders", &Value::Object(body))
        .await?;
    if !wait {
        return show(ctx, &order, order_table);
    }
    let (order, leases) = follow_order(ctx, order, Duration::from_secs(wait_timeout)).await?;
    if ctx.json() {
        // `lease` is the first (the only one, but for --count).
        let first = leases.first().cloned().unwrap_or(Value::Null);
        print_json(&json!({"order": order, "lease": first, "leases": leases}));
    } else {
        println!("{}", order_table(&read(&order)?));
        for lease in &leases {
            println!("{}", lease_table(&read(lease)?));
        }
    }
    Ok(())
}

/// Polls the order until filled, then each of its leases until running,
/// with a spinner on stderr when it is a terminal. Returns them as the
/// server sent them, for `--output json`.
async fn follow_order(ctx: &Ctx, mut raw: Value, timeout: Duration) -> Result<(Value, Vec<Value>)> {
    let api = &ctx.api;
    let deadline = Instant::now() + timeout;
    let spinner = indicatif::ProgressBar::new_spinner();
    spinner.enable_steady_tick(Duration::from_millis(120));
    let mut order: OrderView = read(&raw)?;
    let id = order.id;
    let result = async {
        loop {
            let state = cell(&order.state);
            spinner.set_message(format!("order {id}: {state}"));
            match order.state {
                OrderState::Filled => break,
                OrderState::Open => {}
                OrderState::Cancelled | OrderState::Rejected | OrderState::Expired => {
                    let why = order
                        .reject_message
                        .as_deref()
                        .or(order.reject_reason.as_deref())
                        .unwrap_or("");
                    let mut e =
                        CliError::new(Exit::Conflict, format!("order {id} is {state}: {why}"));
                    e.code = order.reject_reason.clone();
                    return Err(e);
                }
            }
            wait_a_bit(deadline, &format!("order {id} to fill")).await?;
            raw = api.get(&format!("/v1/orders/{id}"), &[]).await?;
            order = read(&raw)?;
        }
        // A filled order names its leases; were none named, the lookup
        // below fails as the untyped CLI's did (a 404 for an empty id).
        let ids: Vec<String> = if order.lease_ids.is_empty() {
            vec![cell(&order.lease_id)]
        } else {
            order.lease_ids.iter().map(cell).collect()
        };
        let mut running = Vec::with_capacity(ids.len());
        for lease_id in &ids {
            running.push(follow_lease(api, lease_id, &spinner, deadline).await?);
        }
        Ok((raw.clone(), running))
    }
    .await;
    spinner.finish_and_clear();
    result
}

/// Polls a lease until it runs; an end before that is an error.
async fn follow_lease(
    api: &super::http::Api,
    lease_id: &str,
    spinner: &indicatif::ProgressBar,
    deadline: Instant,
) -> Result<Value> {
    loop {
        let raw_lease = api.get(&format!("/v1/leases/{lease_id}"), &[]).await?;
        let lease: LeaseView = read(&raw_lease)?;
        spinner.set_message(format!("lease {lease_id}: {}", cell(&lease.state)));
        match lease.state {
            LeaseState::Running => return Ok(raw_lease),
            LeaseState::Ended | LeaseState::Failed => {
                return Err(CliError::new(
                    Exit::Conflict,
                    format!(
                        "lease {lease_id} {} before it ran: {}",
                        cell(&lease.state),
                        lease.end_reason.as_deref().unwrap_or("no reason given")
                    ),
                ))
            }
            _ => {}
        }
        wait_a_bit(deadline, &format!("lease {lease_id} to run")).await?;
    }
}

async fn wait_a_bit(deadline: Instant, what: &str) -> Result<()> {
    if Instant::now() >= deadline {
        return Err(CliError::new(
            Exit::Timeout,
            format!("timed out waiting for {what}"),
        ));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    Ok(())
}
