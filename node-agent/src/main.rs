//! `gpuex-agent`: the gpuex node agent (DESIGN §7).
//!
//! It registers this node's GPUs with a gpuex server, heartbeats every few
//! seconds with DCGM-named metrics, carries out the leases the server assigns
//! (MIG instances, MPS shares, whole GPUs), runs each lease's command, meters
//! usage into a crash-safe spool and serves its own `/metrics`.
//!
//! HTTP is plain `http://` through hyper (no TLS stack to compile); put TLS in
//! front of the server when the link leaves the machine room.

mod agent;
mod backend;
mod client;
mod config;
mod exporter;
mod reaper;
mod slice;
mod spool;
mod workload;

use anyhow::{bail, Context};
use backend::nvml::NvmlBackend;
use backend::simulated::{Fleet, SimulatedBackend};
use backend::{system_hostname, GpuBackend};
use clap::Parser;
use config::{Backend, Cli, Command, RunArgs};
use std::sync::{Arc, Mutex};

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(log_level())
        .init();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let backend = open_backend(&cli.run)?;
        match cli.command {
            Some(Command::Probe) => probe(backend),
            None => run(cli.run, backend).await,
        }
    })
}

fn log_level() -> tracing::Level {
    std::env::var("GPUEX_AGENT_LOG")
        .ok()
        .and_then(|l| l.parse().ok())
        .unwrap_or(tracing::Level::INFO)
}

fn open_backend(args: &RunArgs) -> anyhow::Result<Box<dyn GpuBackend>> {
    Ok(match args.backend {
        Backend::Nvml => Box::new(NvmlBackend::open(args.hostname.clone())),
        Backend::Simulated => {
            let Some(path) = &args.fleet else {
                bail!("--backend simulated needs --fleet FILE.toml");
            };
            let fleet = Fleet::load(path)?;
            let hostname = args
                .hostname
                .clone()
                .or_else(|| fleet.hostname.clone())
                .unwrap_or_else(system_hostname);
            Box::new(SimulatedBackend::new(fleet, hostname))
        }
    })
}

/// Print the inventory and one sample as JSON. Reads only.
fn probe(mut backend: Box<dyn GpuBackend>) -> anyhow::Result<()> {
    let inventory = backend.inventory()?;
    // NVML utilization needs a moment between samples to mean anything.
    let _ = backend.sample();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let metrics = backend.sample();
    let fields_present: Vec<usize> = metrics.iter().map(|m| m.fields.present()).collect();
    let out = serde_json::json!({
        "backend": backend.kind(),
        "hostname": inventory.hostname,
        "host": inventory.host,
        "gpus": inventory.gpus,
        "metrics": metrics,
        "fields_present": fields_present,
    });
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

async fn run(args: RunArgs, backend: Box<dyn GpuBackend>) -> anyhow::Result<()> {
    let (Some(server), Some(token)) = (&args.server, &args.token) else {
        bail!("--server and --token are required (or GPUEX_AGENT_SERVER / GPUEX_AGENT_TOKEN)");
    };
    let client = client::ApiClient::new(server, token).map_err(anyhow::Error::msg)?;
    let snapshot = Arc::new(Mutex::new(exporter::Snapshot::default()));
    if let Some(addr) = args.metrics_listen {
        let local = exporter::serve(addr, snapshot.clone())
            .await
            .with_context(|| format!("cannot serve /metrics on {addr}"))?;
        tracing::info!("serving /metrics on http://{local}/metrics");
    }
    let cfg = agent::AgentConfig {
        heartbeat_interval: args.heartbeat_interval,
        usage_interval: args.usage_interval,
        node_timeout: args.node_timeout,
        stop_grace: args.stop_grace,
        state_dir: args.spool.clone(),
    };
    let agent = agent::Agent::new(cfg, client, backend, snapshot)
        .with_context(|| format!("cannot start with the spool in {}", args.spool.display()))?;
    agent.run(shutdown_signal()).await;
    Ok(())
}

/// SIGTERM or SIGINT.
async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) {
        (Ok(mut term), Ok(mut int)) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        }
        _ => std::future::pending().await,
    }
}
