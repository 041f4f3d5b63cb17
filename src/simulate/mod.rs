//! `gpuex simulate`: replays a GPU cluster trace (the openb trace of the FGD
//! paper) through a placement policy, the server's own included, and reports
//! allocation, fragmentation, utilization and queue waits (ARCHITECTURE.md §5).
//!
//! Mount it as a subcommand with [`SimulateArgs`] (a `clap::Args`) and call
//! [`run`], which returns the report as text (a table or JSON).

mod cluster;
mod foresight;
mod frag;
mod gpuex;
mod paper;
mod policy;
mod report;
mod rng;
mod timeline;
mod trace;

use std::path::PathBuf;

pub use foresight::Foresight;
pub use trace::Trace;

/// Flags of `gpuex simulate`.
#[derive(Debug, Clone, clap::Args)]
pub struct SimulateArgs {
    /// Node list CSV (`sn,cpu_milli,memory_mib,gpu,model`).
    #[arg(long)]
    pub nodes: PathBuf,
    /// Pod list CSV (`name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,...]`).
    #[arg(long)]
    pub pods: PathBuf,
    /// Policies to compare; repeat the flag or give a comma list.
    #[arg(long, value_enum, value_delimiter = ',', num_args = 1..,
          default_values_t = [PolicyName::Random, PolicyName::BestFit, PolicyName::Fgd,
                              PolicyName::Gpuex, PolicyName::WholeNode])]
    pub policy: Vec<PolicyName>,
    /// `paper`: FGD's experiment (no departures); `timeline`: replay by time.
    #[arg(long, value_enum, default_value_t = Experiment::Paper)]
    pub mode: Experiment,
    /// Paper mode: sample tasks until their GPU request is this × capacity.
    /// Timeline mode: compress arrivals until the offered GPU demand is this
    /// × capacity (0 replays the trace's own times).
    #[arg(long, default_value_t = 1.3)]
    pub tune: f64,
    /// Replay on an evenly spaced share (0–1] of the nodes (the same tasks
    /// on a smaller cluster): the openb tasks never load the whole cluster
    /// in timeline mode, a quarter of it they do.
    #[arg(long, default_value_t = 1.0)]
    pub node_share: f64,
    /// How the gpuex policy's placement finds its candidates: `states`
    /// (the server's, each distinct node state once) or `every-node` (the
    /// reference walk). Both choose the same; only the speed differs.
    #[arg(long, value_enum, default_value_t = PlacementWalk::States)]
    pub placement_walk: PlacementWalk,
    /// Seeds: `42..51` (inclusive, as the paper's ten), `42..=51`, `1,2,3` or `42`.
    #[arg(long, default_value = "42..51", value_parser = parse_seeds)]
    pub seeds: Seeds,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Write an SVG chart here: allocation vs arrived requests (paper mode)
    /// or utilization over time (timeline mode), one line per policy.
    #[arg(long)]
    pub plot: Option<PathBuf>,
}

/// See [`SimulateArgs::placement_walk`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PlacementWalk {
    States,
    EveryNode,
}

/// A placement policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum PolicyName {
    /// A random feasible node and GPU (FGD paper's Random).
    Random,
    /// Least resources left after placement (FGD paper's BestFit).
    BestFit,
    /// Fragmentation gradient descent (FGD paper's FGD).
    Fgd,
    /// The gpuex server's placement engine.
    Gpuex,
    /// Every GPU task rents whole machines; no sharing.
    WholeNode,
}

impl PolicyName {
    /// The flag's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            PolicyName::Random => "random",
            PolicyName::BestFit => "best-fit",
            PolicyName::Fgd => "fgd",
            PolicyName::Gpuex => "gpuex",
            PolicyName::WholeNode => "whole-node",
        }
    }
}

/// Which experiment to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Experiment {
    Paper,
    Timeline,
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
}

/// A non-empty list of seeds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seeds(pub Vec<u64>);

/// Parses `42..51` (inclusive), `42..=51`, `1,2,3` or `42`.
pub fn parse_seeds(s: &str) -> Result<Seeds, String> {
    let bad = || format!("`{s}` is not a seed list (try 42..51 or 1,2,3)");
    let num = |x: &str| x.trim().parse::<u64>().map_err(|_| bad());
    let seeds: Vec<u64> = if let Some((a, b)) = s.split_once("..") {
        let (a, b) = (num(a)?, num(b.trim_start_matches('='))?);
        if a > b || b - a > 10_000 {
            return Err(bad());
        }
        (a..=b).collect()
    } else {
        s.split(',').map(num).collect::<Result<_, _>>()?
    };
    if seeds.is_empty() {
        return Err(bad());
    }
    Ok(Seeds(seeds))
}

/// Why a simulation could not run.
#[derive(Debug, thiserror::Error)]
pub enum SimulateError {
    #[error("cannot read {0}: {1}")]
    Io(String, #[source] std::io::Error),
    #[error("bad trace: {0}")]
    Trace(String),
    #[error("cannot draw the plot: {0}")]
    Plot(String),
    #[error("policy `{0}` is not available in this build")]
    Unavailable(&'static str),
}

/// Runs the simulation the flags describe and returns the report.
pub fn run(args: SimulateArgs) -> Result<String, SimulateError> {
    let mut trace = Trace::load(&args.nodes, &args.pods)?;
    if !(args.node_share > 0.0 && args.node_share <= 1.0) {
        return Err(SimulateError::Trace(format!(
            "--node-share {} is not in (0, 1]",
            args.node_share
        )));
    }
    trace.thin_nodes(args.node_share);
    if trace.nodes.is_empty() {
        return Err(SimulateError::Trace("--node-share keeps no node".into()));
    }
    let mut policies = args.policy.clone();
    policies.dedup();
    if policies.contains(&PolicyName::Gpuex) && !gpuex::AVAILABLE {
        return Err(SimulateError::Unavailable("gpuex"));
    }
    let mut shared = policy::Shared::new(&trace);
    shared.walk = args.placement_walk;
    match args.mode {
        Experiment::Paper => {
            let mut results = Vec::new();
            for &p in &policies {
                let runs = args
                    .seeds
                    .0
                    .iter()
                    .map(|&seed| paper::run_seed(&trace, &mut shared, p, args.tune, seed))
                    .collect::<Vec<_>>();
                results.push(report::PaperResult::new(p, runs));
            }
            if let Some(path) = &args.plot {
                report::plot_paper(path, &results)?;
            }
            Ok(report::paper(&args, &results))
        }
        Experiment::Timeline => {
            let mut results = Vec::new();
            for &p in &policies {
                // The server's placement runs plain and with each foresight
                // (ARCHITECTURE.md §17), side by side.
                let variants: &[Foresight] = if p == PolicyName::Gpuex {
                    &Foresight::ALL
                } else {
                    &[Foresight {
                        forecast: false,
                        prediction: false,
                    }]
                };
                for &f in variants {
                    let runs = args
                        .seeds
                        .0
                        .iter()
                        .map(|&seed| timeline::run(&trace, &mut shared, p, seed, args.tune, f))
                        .collect::<Result<Vec<_>, _>>()?;
                    results.push(report::TimelineResult::new(p, f, runs));
                }
            }
            if let Some(path) = &args.plot {
                report::plot_timeline(path, &results)?;
            }
            Ok(report::timeline(&args, &results))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: SimulateArgs,
    }

    #[test]
    fn seeds_parse_as_an_inclusive_range_or_a_list() {
        assert_eq!(
            parse_seeds("42..51").unwrap().0,
            (42..=51).collect::<Vec<_>>()
        );
        assert_eq!(parse_seeds("42..=43").unwrap().0, vec![42, 43]);
        assert_eq!(parse_seeds("1,5").unwrap().0, vec![1, 5]);
        assert_eq!(parse_seeds("7").unwrap().0, vec![7]);
        assert!(parse_seeds("9..3").is_err());
        assert!(parse_seeds("x").is_err());
    }

    #[test]
    fn policies_come_repeated_or_comma_separated() {
        let cli = Cli::parse_from([
            "x",
            "--nodes",
            "n.csv",
            "--pods",
            "p.csv",
            "--policy",
            "random,best-fit",
            "--policy",
            "whole-node",
            "--format",
            "json",
        ]);
        assert_eq!(
            cli.args.policy,
            [
                PolicyName::Random,
                PolicyName::BestFit,
                PolicyName::WholeNode
            ]
        );
        assert_eq!(cli.args.format, Format::Json);
        assert_eq!(cli.args.mode, Experiment::Paper);
        assert_eq!(cli.args.seeds.0.len(), 10);
        assert_eq!(cli.args.tune, 1.3);
    }
}
