//! The `gpuex` command line: the server's `serve`, `migrate`, `openapi`,
//! `simulate`, `demo`, the client subcommands (`login`, `quote`, `order`,
//! ...), and `gpuex agent …`, the node agent exactly as `gpuex-agent …` (the
//! demo runs its agents so).
//!
//! In the library, and the binary only calls [`main`]. The library's
//! `async fn`s that the binary awaited had their bodies compiled in the
//! binary (rustc inlines the small function that makes a future across
//! crates, and the future's body goes with it): a 54 s unit after the
//! library's. Here that code is compiled with the library instead; the cold
//! build is about as long either way (BENCHMARKS.md), but the binary is a
//! link step and the command line lives with what it runs.

use crate::demo;
use gpuex_cli as client;

use crate::config::ServeArgs;
use clap::{Parser, Subcommand};
use std::ffi::{OsStr, OsString};
use std::process::ExitCode;
use tracing_subscriber::EnvFilter;

#[derive(Parser)]
#[command(
    name = "gpuex",
    version,
    about = "An exchange for atomized GPU capacity",
    after_help = client::EXIT_CODES
)]
struct Cli {
    #[command(flatten)]
    global: client::Global,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the API server.
    Serve(Box<ServeArgs>),
    /// Apply database migrations and exit.
    Migrate {
        #[arg(long, env = "DATABASE_URL", default_value = "sqlite://./data/gpuex.db")]
        database_url: String,
    },
    /// Print the OpenAPI document.
    Openapi,
    /// Run the whole loop locally: a server on SQLite, three simulated agents,
    /// a provider and a buyer with running leases. Stops on Ctrl-C.
    Demo(demo::DemoArgs),
    /// Replay a GPU cluster trace through the placement engine (see SIMULATE.md).
    #[cfg(feature = "simulate")]
    Simulate(Box<crate::simulate::SimulateArgs>),
    #[command(flatten)]
    Client(Box<client::ClientCommand>),
}

/// Runs the command line: what `gpuex` does with its arguments.
#[inline(never)]
pub fn main() -> anyhow::Result<ExitCode> {
    // Before clap: the agent parses its own flags, some of which (`--server`)
    // are also the client's global ones.
    let mut args = std::env::args_os();
    if args.nth(1).as_deref() == Some(OsStr::new("agent")) {
        let program = OsString::from("gpuex agent");
        let args = std::iter::once(program).chain(args).collect();
        return gpuex_agent::run_from(args, vec!["agent".into()]);
    }
    tokio::runtime::Runtime::new()?.block_on(run(Cli::parse()))?;
    Ok(ExitCode::SUCCESS)
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    if let Command::Client(command) = cli.command {
        // The client prints tables and errors of its own, and no logs.
        std::process::exit(client::run(cli.global, *command).await);
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn")),
        )
        .init();
    match cli.command {
        Command::Serve(args) => {
            let args = *args;
            let listener = tokio::net::TcpListener::bind(args.listen).await?;
            crate::serve(listener, args.settings, shutdown_signal()).await
        }
        Command::Migrate { database_url } => {
            let db = crate::db::Db::connect(&database_url).await?;
            db.migrate().await?;
            println!("migrations applied");
            Ok(())
        }
        Command::Openapi => {
            print!("{}", crate::api::openapi_json());
            Ok(())
        }
        Command::Demo(args) => demo::run(args).await,
        Command::Client(_) => unreachable!("handled above"),
        #[cfg(feature = "simulate")]
        Command::Simulate(args) => {
            // CPU-bound and synchronous: off the async workers.
            let report = tokio::task::spawn_blocking(move || crate::simulate::run(*args)).await??;
            print!("{report}");
            Ok(())
        }
    }
}

/// Resolves on SIGINT or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
    tracing::info!("shutting down");
}
