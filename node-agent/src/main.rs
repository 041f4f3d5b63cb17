//! `gpuex-agent`: the gpuex node agent (see the library's documentation).

use std::process::ExitCode;

fn main() -> anyhow::Result<ExitCode> {
    gpuex_agent::run_from(std::env::args_os().collect(), Vec::new())
}
