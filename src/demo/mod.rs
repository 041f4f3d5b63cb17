//! `gpuex demo`: the whole loop on one machine. A fresh SQLite server, an
//! admin, two priced regions, a provider with three simulated `gpuex-agent`
//! processes (H100 with MIG, A100, L40S and V100), and a credited buyer whose
//! leases (one of each mode) run small shell loops (the training one runs
//! `examples/train.sh`, shipped as an artifact the demo serves, which
//! checkpoints and leaves outputs) and who offers the tail of a reservation
//! for resale; a minute in, the training job's machine is stopped and the
//! job resumes elsewhere (`resume.rs`); then it waits for Ctrl-C.
//!
//! The agents run as root, as on a provider host. With podman, runc and a
//! static busybox here, every workload runs in a container of the demo's
//! busybox image (`image.rs`); otherwise as the pool's users on the host
//! (the process launcher), and the demo says so.
//!
//! Everything after start-up goes through the public HTTP API, as a real
//! provider and buyer would use it.

mod agents;
mod banner;
mod http;
mod image;
mod resume;

use crate::config::Settings;
use anyhow::{bail, Context};
use banner::print_banner;
use clap::Args;
use http::Client;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `gpuex demo` flags.
#[derive(Debug, Clone, Args)]
pub struct DemoArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Where the database, agent spools and logs go (the demo's files in it are replaced).
    #[arg(long, default_value = "./data")]
    pub data_dir: PathBuf,
    /// A `gpuex-agent` binary to run the agents with (default: this binary's own `gpuex agent`).
    #[arg(long)]
    pub agent: Option<PathBuf>,
    /// How the agents run workloads: `container` (podman, the demo's
    /// busybox image), `process`, or `auto`: container where podman, runc
    /// and a static busybox are installed, else process.
    #[arg(long, value_enum, default_value = "auto")]
    pub launcher: DemoLauncher,
    /// Seconds after start-up when the training job's machine is stopped to
    /// show the job resume elsewhere from its checkpoint; 0: never (for
    /// tests that need the fleet to stay up).
    #[arg(long, default_value_t = 60)]
    pub interrupt_after: u64,
}

/// `gpuex demo --launcher`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DemoLauncher {
    Auto,
    Container,
    Process,
}

/// The launcher `choice` comes to here, and a line saying why.
fn choose_launch(choice: DemoLauncher, data: &Path) -> anyhow::Result<(agents::Launch, String)> {
    use agents::Launch;
    if choice == DemoLauncher::Process {
        return Ok((Launch::Process, "the process launcher, as asked".into()));
    }
    match image::prepare(data) {
        Ok(image) => Ok((
            Launch::Container(image),
            format!("the container launcher: podman (runc), the demo's image {image}"),
        )),
        Err(why) if choice == DemoLauncher::Auto => Ok((
            Launch::Process,
            format!(
                "the process launcher (pool users, no namespaces), since containers cannot run here: {why}"
            ),
        )),
        Err(why) => bail!("--launcher container: {why}"),
    }
}

const ADMIN: (&str, &str) = ("admin@gpuex.demo", "demo-admin-password");
const PROVIDER: (&str, &str) = ("provider@gpuex.demo", "demo-provider-password");
const BUYER: (&str, &str) = ("buyer@gpuex.demo", "demo-buyer-password");

/// The three simulated machines: name, region, fleet file and its TOML, and
/// the inventory the provider declares (the agent's registration keeps the
/// declared partition modes where the hardware allows).
const NODES: [(&str, &str, &str, &str); 3] = [
    (
        "h100-mig",
        "eu-west",
        "h100-mig.toml",
        include_str!("../../node-agent/fleets/h100-mig.toml"),
    ),
    (
        "a100",
        "eu-west",
        "a100.toml",
        include_str!("../../node-agent/fleets/a100.toml"),
    ),
    (
        "l40s-v100",
        "us-east",
        "l40s-v100.toml",
        include_str!("../../node-agent/fleets/l40s-v100.toml"),
    ),
];

fn declared_gpus(node: &str) -> Value {
    match node {
        "h100-mig" => {
            let mut gpus: Vec<Value> = (0..4)
                .map(|_| json!({"model": "H100-SXM5-80GB", "mode": "mig"}))
                .collect();
            gpus.extend((0..4).map(|_| json!({"model": "H100-SXM5-80GB", "mode": "whole"})));
            json!(gpus)
        }
        "a100" => json!([
            {"model": "A100-SXM4-80GB", "mode": "mig", "nvlink": [1]},
            {"model": "A100-SXM4-80GB", "mode": "shared", "nvlink": [0]},
            {"model": "A100-SXM4-80GB", "mode": "whole", "nvlink": [3]},
            {"model": "A100-SXM4-80GB", "mode": "whole", "nvlink": [2]}
        ]),
        _ => json!([
            {"model": "L40S-48GB", "mode": "shared"},
            {"model": "L40S-48GB", "mode": "shared"},
            {"model": "V100-SXM2-32GB", "mode": "whole", "nvlink": [3]},
            {"model": "V100-SXM2-32GB", "mode": "whole", "nvlink": [2]}
        ]),
    }
}

/// List prices per unit-hour: (model, TFLOPS-hour, 4GB-VRAM-hour) in eu-west;
/// us-east is a little cheaper.
const PRICES: [(&str, &str, &str); 4] = [
    ("H100-SXM5-80GB", "0.0021", "0.050"),
    ("A100-SXM4-80GB", "0.0016", "0.040"),
    ("L40S-48GB", "0.0012", "0.030"),
    ("V100-SXM2-32GB", "0.0010", "0.020"),
];

/// A workload that prints a line every two seconds until it is stopped.
fn workload(name: &str) -> String {
    format!(
        "echo \"{name} on $CUDA_VISIBLE_DEVICES\"; i=0; while true; do i=$((i+1)); \
         echo \"{name}: step $i\"; sleep 2; done"
    )
}

/// The example job the training order runs, as the artifact the agent
/// fetches: POSIX sh, so it runs in the busybox image and on any host.
const TRAIN_SH: &[u8] = include_bytes!("../../examples/train.sh");

/// Serves `examples/train.sh` on 127.0.0.1 for the demo's agents, and
/// returns the artifact that names it with its SHA-256.
async fn serve_example() -> anyhow::Result<Value> {
    use sha2::Digest;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = [0u8; 2048];
                let _ = stream.read(&mut request).await;
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/x-shellscript\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    TRAIN_SH.len()
                );
                let _ = stream.write_all(head.as_bytes()).await;
                let _ = stream.write_all(TRAIN_SH).await;
            });
        }
    });
    let sha256: String = sha2::Sha256::digest(TRAIN_SH)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok(json!({"url": format!("http://{addr}/train.sh"), "sha256": sha256, "path": "train.sh"}))
}

/// Runs the demo until Ctrl-C.
pub async fn run(args: DemoArgs) -> anyhow::Result<()> {
    // Take the port first: a clash should fail before anything is built or wiped.
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let agent = agents::find_agent(args.agent.as_deref())?;
    let data = args.data_dir.clone();
    // The demo's database and agents' spools live here: only we may enter.
    crate::owner_only::private_dir(&data)?;
    for stale in ["demo.db", "demo.db-wal", "demo.db-shm"] {
        let _ = std::fs::remove_file(data.join(stale));
    }
    let _ = std::fs::remove_dir_all(data.join("demo-spool"));
    let fleets = data.join("demo-fleets");
    std::fs::create_dir_all(&fleets)?;

    let mut settings =
        Settings::with_database(format!("sqlite://{}", data.join("demo.db").display()));
    settings.admin_email = Some(ADMIN.0.into());
    settings.admin_password = Some(ADMIN.1.into());
    settings.heartbeat_interval_s = 2;
    // A stopped machine is declared lost (and its leases placed again)
    // within seconds, which the resume scene shows.
    settings.node_timeout_s = 10;
    settings.billing_interval_s = 10;
    // The demo's webhook receivers, if any, run on this machine.
    settings.webhook_allow_private = true;
    let metrics_token = crate::auth::tokens::random_hex(16);
    settings.metrics_token = Some(metrics_token.clone());
    let addr = listener.local_addr()?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(crate::serve(listener, settings, async {
        let _ = stopped.await;
    }));
    let client = Client { addr };
    wait_ready(&client).await?;

    let (launch, launch_line) = choose_launch(args.launcher, &data)?;
    let mut fleet = agents::Fleet {
        agent,
        addr,
        data: data.clone(),
        launch,
        nodes: Vec::new(),
        agents: Vec::new(),
    };
    let outcome = async {
        let tokens = seed(&client).await?;
        for (n, ((_, _, file, toml), token)) in NODES.iter().zip(&tokens.nodes).enumerate() {
            let path = fleets.join(file);
            std::fs::write(&path, toml)?;
            fleet.nodes.push((path, token.clone()));
            fleet.start(n)?;
        }
        wait_online(&client, &tokens.provider, NODES.len()).await?;
        let example = serve_example().await?;
        let (leases, training) = place_orders(&client, &tokens.buyer, &example).await?;
        print_banner(addr, &data, &leases, &metrics_token, &launch_line);
        anyhow::Ok((tokens, training))
    }
    .await;
    match outcome {
        Err(e) => eprintln!("the demo could not start: {e:#}"),
        Ok((tokens, training)) => {
            let scene = async {
                if args.interrupt_after == 0 {
                    return std::future::pending().await;
                }
                tokio::time::sleep(Duration::from_secs(args.interrupt_after)).await;
                let Some(order) = training else {
                    return println!("  resume scene: skipped (the training order was not filled)");
                };
                let played = resume::play(
                    &client,
                    &tokens.buyer,
                    &tokens.provider,
                    &order,
                    &tokens.node_ids,
                    &mut fleet,
                )
                .await;
                if let Err(e) = played {
                    println!("  resume scene: {e:#}");
                }
                std::future::pending::<()>().await
            };
            tokio::select! {
                signal = tokio::signal::ctrl_c() => signal?,
                () = scene => {}
            }
            println!("\nstopping the agents and the server …");
        }
    }
    fleet.stop().await;
    let _ = stop.send(());
    server.await.context("server task")??;
    Ok(())
}

async fn wait_ready(client: &Client) -> anyhow::Result<()> {
    for _ in 0..200 {
        if let Ok((200, _)) = client.call("GET", "/readyz", None, None).await {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    bail!("the server did not become ready")
}

/// The demo's access tokens.
struct Tokens {
    provider: String,
    buyer: String,
    /// Each node's agent token, in [`NODES`] order.
    nodes: Vec<String>,
    node_ids: Vec<String>,
}

async fn login(client: &Client, (email, password): (&str, &str)) -> anyhow::Result<String> {
    let r = client
        .ok(
            "POST",
            "/v1/auth/login",
            None,
            Some(&json!({"email": email, "password": password})),
        )
        .await?;
    Ok(r["access_token"]
        .as_str()
        .context("no access token")?
        .to_owned())
}

/// Regions, prices, a provider with three nodes and a credited buyer.
async fn seed(client: &Client) -> anyhow::Result<Tokens> {
    let admin = login(client, ADMIN).await?;
    let admin = Some(admin.as_str());
    for (region, tz) in [
        ("eu-west", "Europe/Amsterdam"),
        ("us-east", "America/New_York"),
    ] {
        client
            .ok(
                "PUT",
                &format!("/v1/admin/regions/{region}"),
                admin,
                Some(&json!({"timezone": tz})),
            )
            .await?;
    }
    let mut prices = Vec::new();
    for (region, factor) in [("eu-west", 100), ("us-east", 95)] {
        for (model, tflops, vram) in PRICES {
            for (unit, list) in [("tflops_h", tflops), ("vram_h", vram)] {
                let list: rust_decimal::Decimal = list.parse()?;
                let price = (list * rust_decimal::Decimal::from(factor)
                    / rust_decimal::Decimal::from(100))
                .normalize();
                prices.push(json!({"region": region, "gpu_model": model, "unit": unit, "list_price": price.to_string()}));
            }
        }
    }
    client
        .ok("PUT", "/v1/admin/prices", admin, Some(&json!(prices)))
        .await?;
    let mut ids = Vec::new();
    for (who, role) in [(PROVIDER, "provider"), (BUYER, "buyer")] {
        let r = client
            .ok(
                "POST",
                "/v1/auth/register",
                None,
                Some(&json!({
                    "email": who.0, "password": who.1, "name": format!("Demo {role}"), "role": role
                })),
            )
            .await?;
        ids.push(r["id"].clone());
    }
    client
        .ok(
            "POST",
            "/v1/admin/credits",
            admin,
            Some(&json!({"user_id": ids[1], "amount": "10000"})),
        )
        .await?;
    let provider = login(client, PROVIDER).await?;
    let buyer = login(client, BUYER).await?;
    let mut nodes = Vec::new();
    let mut node_ids = Vec::new();
    for (name, region, _, _) in NODES {
        let r = client
            .ok(
                "POST",
                "/v1/nodes",
                Some(&provider),
                Some(&json!({
                    "name": name, "region": region, "gpus": declared_gpus(name)
                })),
            )
            .await?;
        // The demo's agents run the simulated backend, which the server
        // accepts only on nodes an admin marked simulated.
        let id = r["id"].as_str().context("no node id")?;
        client
            .ok(
                "PUT",
                &format!("/v1/admin/nodes/{id}"),
                admin,
                Some(&json!({"simulated": true})),
            )
            .await?;
        nodes.push(r["token"].as_str().context("no node token")?.to_owned());
        node_ids.push(id.to_owned());
    }
    Ok(Tokens {
        provider,
        buyer,
        nodes,
        node_ids,
    })
}

async fn wait_online(client: &Client, provider: &str, count: usize) -> anyhow::Result<()> {
    for _ in 0..300 {
        let nodes = client.ok("GET", "/v1/nodes", Some(provider), None).await?;
        let online = nodes
            .as_array()
            .map_or(0, |n| n.iter().filter(|n| n["status"] == "online").count());
        if online == count {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!("the agents did not register within 30 s (see the demo-agent-*.log files)")
}

/// The buyer's orders: two on-demand leases, a spot bid, and a reserved window
/// on the first whole hour at least an hour ahead (reserved bookings start
/// on a whole hour, at least an hour out).
async fn place_orders(
    client: &Client,
    buyer: &str,
    example: &Value,
) -> anyhow::Result<(Vec<String>, Option<String>)> {
    let earliest = chrono::Utc::now().timestamp() + 3660;
    let start = chrono::DateTime::from_timestamp(earliest.div_euclid(3600) * 3600 + 3600, 0)
        .context("a time out of range")?
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let orders = [
        (
            TRAINING,
            json!({"mode": "on_demand", "resources": {"tflops": 100, "vram_gb": 16},
            "region": "eu-west", "command": "sh train.sh 100000 2", "artifacts": [example],
            "checkpoint": {"every_s": 5}, "on_interrupt": "resume"}),
        ),
        (
            "inference (on-demand, us-east)",
            json!({"mode": "on_demand", "resources": {"tflops": 40, "vram_gb": 8},
            "region": "us-east", "duration_s": 7200, "command": workload("inference")}),
        ),
        (
            "batch (spot, eu-west)",
            json!({"mode": "spot", "resources": {"tflops": 200, "vram_gb": 40},
            "region": "eu-west", "max_price": "2.00", "command": workload("batch")}),
        ),
        (
            "small (pooled, eu-west)",
            json!({"mode": "pooled", "resources": {"tflops": 20, "vram_gb": 4},
            "region": "eu-west", "max_wait_s": 600, "command": workload("small")}),
        ),
        (
            "nightly (reserved, us-east, from the first whole hour 1 h ahead)",
            json!({"mode": "reserved", "resources": {"tflops": 80, "vram_gb": 24},
            "region": "us-east", "start_at": start, "duration_s": 3600, "command": workload("nightly")}),
        ),
    ];
    let mut lines = Vec::new();
    let mut training = None;
    for (label, body) in orders {
        let (status, r) = client
            .call("POST", "/v1/orders", Some(buyer), Some(&body))
            .await?;
        if label == TRAINING && r["lease_id"].is_string() {
            training = r["id"].as_str().map(str::to_owned);
        }
        let line = if (200..300).contains(&status) {
            match r["lease_id"].as_str() {
                Some(lease) => format!(
                    "{label}: order {} → lease {lease}",
                    r["id"].as_str().unwrap_or("?")
                ),
                None => format!(
                    "{label}: order {} is {} (a spot bid fills at the next auction, within 10 s)",
                    r["id"].as_str().unwrap_or("?"),
                    r["state"].as_str().unwrap_or("?")
                ),
            }
        } else {
            format!(
                "{label}: refused ({status}): {}",
                r["detail"].as_str().unwrap_or("")
            )
        };
        lines.push(line);
    }
    lines.push(match resale_offer(client, buyer).await {
        Ok(line) => line,
        Err(e) => format!("resale offer: not listed: {e:#}"),
    });
    Ok((lines, training))
}

/// The training order's label: it checkpoints every 5 s, resumes when
/// interrupted, and leaves `loss.csv` in its outputs.
const TRAINING: &str = "training (on-demand, eu-west; examples/train.sh shipped as an artifact, \
                        checkpointed, resumes when interrupted, outputs loss.csv)";

/// A resale offer for the market: a four-hour reservation from the next whole
/// hour at least an hour ahead, its last two hours listed at 0.8 × its price.
async fn resale_offer(client: &Client, buyer: &str) -> anyhow::Result<String> {
    const HOUR: i64 = 3600;
    let earliest = chrono::Utc::now().timestamp() + HOUR + 60;
    let start = (earliest + HOUR - 1) / HOUR * HOUR;
    let at = |t: i64| {
        chrono::DateTime::from_timestamp(t, 0)
            .context("a time out of range")
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
    };
    let order = client
        .ok(
            "POST",
            "/v1/orders",
            Some(buyer),
            Some(
                &json!({"mode": "reserved", "resources": {"tflops": 100, "vram_gb": 16},
                "region": "eu-west", "start_at": at(start)?, "duration_s": 4 * HOUR,
                "command": workload("resold")}),
            ),
        )
        .await?;
    let lease_id = order["lease_id"]
        .as_str()
        .context("the reservation got no lease")?;
    let lease = client
        .ok("GET", &format!("/v1/leases/{lease_id}"), Some(buyer), None)
        .await?;
    let price: rust_decimal::Decimal = lease["price_per_hour"]
        .as_str()
        .context("no price per hour")?
        .parse()?;
    let ask = price
        .checked_mul(rust_decimal::Decimal::new(8, 1))
        .context("ask overflow")?
        .round_dp(6)
        .normalize();
    let from = at(start + 2 * HOUR)?;
    let listing = client
        .ok(
            "POST",
            "/v1/resale-listings",
            Some(buyer),
            Some(&json!({"lease_id": lease_id, "from": from, "ask_per_hour": ask.to_string()})),
        )
        .await?;
    Ok(format!(
        "resold (reserved, eu-west, 4 h from {}): lease {lease_id}, its last 2 h listed for resale at {ask}/h (listing {})",
        at(start)?,
        listing["id"].as_str().unwrap_or("?")
    ))
}
