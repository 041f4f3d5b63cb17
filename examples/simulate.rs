//! `gpuex simulate` without the server: the same flags and output.
//!
//! cargo run --release --no-default-features --features simulate --example simulate -- \
//!     --nodes data/openb/openb_node_list_gpu_node.csv \
//!     --pods data/openb/openb_pod_list_default.csv --policy fgd

use clap::Parser;

/// Replay a GPU cluster trace through placement policies.
#[derive(Parser)]
#[command(name = "simulate")]
struct Cli {
    #[command(flatten)]
    args: gpuex::simulate::SimulateArgs,
}

fn main() {
    match gpuex::simulate::run(Cli::parse().args) {
        Ok(report) => print!("{report}"),
        Err(e) => {
            eprintln!("simulate: {e}");
            std::process::exit(1);
        }
    }
}
