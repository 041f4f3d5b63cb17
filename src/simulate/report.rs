//! Results: per-policy summaries over seeds, as a table, JSON, or an SVG chart.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{json, Value};

use super::foresight::Foresight;
use super::paper::{SeedRun, MAX_BUCKET};
use super::timeline::TimelineRun;
use super::{Format, PolicyName, SimulateArgs, SimulateError};

/// One policy's paper-mode runs and their means.
#[derive(Debug, Clone)]
pub struct PaperResult {
    pub policy: PolicyName,
    pub runs: Vec<SeedRun>,
    /// Mean allocation % per arrived-% bucket, over the seeds with a reading.
    pub curve: Vec<Option<f64>>,
    pub frag_curve: Vec<Option<f64>>,
    pub failed: f64,
}

fn mean_curve(curves: impl Iterator<Item = Vec<Option<f64>>> + Clone) -> Vec<Option<f64>> {
    (0..=MAX_BUCKET)
        .map(|b| {
            let vals: Vec<f64> = curves.clone().filter_map(|c| c[b]).collect();
            (!vals.is_empty()).then(|| vals.iter().sum::<f64>() / vals.len() as f64)
        })
        .collect()
}

impl PaperResult {
    pub fn new(policy: PolicyName, runs: Vec<SeedRun>) -> Self {
        let curve = mean_curve(runs.iter().map(|r| r.alloc.clone()));
        let frag_curve = mean_curve(runs.iter().map(|r| r.frag.clone()));
        let failed = runs.iter().map(|r| r.failed as f64).sum::<f64>() / runs.len() as f64;
        PaperResult {
            policy,
            runs,
            curve,
            frag_curve,
            failed,
        }
    }

    fn json(&self) -> Value {
        let per_seed: Vec<Value> = self
            .runs
            .iter()
            .map(|r| {
                json!({
                    "seed": r.seed,
                    "alloc_ratio_at_100": round2(r.alloc[100]),
                    "alloc_ratio_at_130": round2(r.alloc[130]),
                    "frag_ratio_at_130": round2(r.frag[130]),
                    "failed_tasks": r.failed,
                    "tasks": r.tasks,
                })
            })
            .collect();
        json!({
            "policy": self.policy.as_str(),
            "seeds": self.runs.iter().map(|r| r.seed).collect::<Vec<_>>(),
            "alloc_ratio_at_100": round2(self.curve[100]),
            "alloc_ratio_at_130": round2(self.curve[130]),
            "frag_ratio_at_130": round2(self.frag_curve[130]),
            "failed_tasks": (self.failed * 10.0).round() / 10.0,
            "per_seed": per_seed,
            "alloc_curve": self.curve.iter().map(|v| round2(*v)).collect::<Vec<_>>(),
        })
    }
}

fn round2(v: Option<f64>) -> Option<f64> {
    v.map(|x| (x * 100.0).round() / 100.0)
}

fn cell(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.2}"))
}

/// The paper-mode report.
pub fn paper(args: &SimulateArgs, results: &[PaperResult]) -> String {
    if args.format == Format::Json {
        let all: Vec<Value> = results.iter().map(PaperResult::json).collect();
        return serde_json::to_string_pretty(&all).unwrap_or_default() + "\n";
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "paper mode, tune {}, seeds {:?}; ratios in % of GPU capacity",
        args.tune, args.seeds.0
    );
    let _ = writeln!(
        out,
        "{:<11} {:>12} {:>12} {:>12} {:>12}",
        "policy", "alloc@100%", "alloc@130%", "frag@130%", "failed"
    );
    for r in results {
        let _ = writeln!(
            out,
            "{:<11} {:>12} {:>12} {:>12} {:>12.1}",
            r.policy.as_str(),
            cell(r.curve[100]),
            cell(r.curve[130]),
            cell(r.frag_curve[130]),
            r.failed
        );
    }
    out
}

/// One policy's timeline runs (with one [`Foresight`]) and their means.
#[derive(Debug, Clone)]
pub struct TimelineResult {
    pub policy: PolicyName,
    pub foresight: Foresight,
    pub runs: Vec<TimelineRun>,
}

impl TimelineResult {
    pub fn new(policy: PolicyName, foresight: Foresight, runs: Vec<TimelineRun>) -> Self {
        TimelineResult {
            policy,
            foresight,
            runs,
        }
    }

    /// The policy's name with its foresight: `gpuex+forecast`.
    pub fn label(&self) -> String {
        format!("{}{}", self.policy.as_str(), self.foresight.suffix())
    }

    fn mean(&self, f: impl Fn(&TimelineRun) -> f64) -> f64 {
        self.runs.iter().map(f).sum::<f64>() / self.runs.len() as f64
    }

    fn json(&self) -> Value {
        let r2 = |x: f64| (x * 100.0).round() / 100.0;
        json!({
            "policy": self.label(),
            "forecast": self.foresight.forecast,
            "prediction": self.foresight.prediction,
            "seeds": self.runs.iter().map(|r| r.seed).collect::<Vec<_>>(),
            "mean_utilization": r2(self.mean(|r| r.mean_utilization)),
            "mean_allocation": r2(self.mean(|r| r.mean_allocation)),
            "preemptions": r2(self.mean(|r| r.preemptions as f64)),
            "mean_whole_gpus_free": r2(self.mean(|r| r.mean_whole_free)),
            "wait_p50_s": r2(self.mean(|r| r.wait_p50_s)),
            "wait_p99_s": r2(self.mean(|r| r.wait_p99_s)),
            "wait_max_s": r2(self.mean(|r| r.wait_max_s)),
            "completed_ratio": r2(self.mean(|r| r.completed_ratio)),
            "never_started": r2(self.mean(|r| r.never_started as f64)),
            "tasks": self.runs.first().map(|r| r.tasks),
            "utilization_series": self.runs.first().map(|r| {
                r.series.iter().map(|&(h, u)| json!([r2(h), r2(u)])).collect::<Vec<_>>()
            }),
            "whole_gpus_free_series": self.runs.first().map(|r| {
                r.whole_free_series
                    .iter()
                    .map(|&(h, u)| json!([r2(h), r2(u)]))
                    .collect::<Vec<_>>()
            }),
        })
    }
}

/// The timeline-mode report.
pub fn timeline(args: &SimulateArgs, results: &[TimelineResult]) -> String {
    if args.format == Format::Json {
        let all: Vec<Value> = results.iter().map(TimelineResult::json).collect();
        return serde_json::to_string_pretty(&all).unwrap_or_default() + "\n";
    }
    let mut out = String::new();
    let _ = writeln!(out, "timeline mode, seeds {:?}", args.seeds.0);
    let _ = writeln!(
        out,
        "{:<17} {:>8} {:>8} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>9}",
        "policy",
        "util %",
        "alloc %",
        "preempt",
        "whole free",
        "wait p50 s",
        "wait p99 s",
        "wait max s",
        "completed%",
        "unstarted"
    );
    for r in results {
        let _ = writeln!(
            out,
            "{:<17} {:>8.2} {:>8.2} {:>8.0} {:>10.1} {:>10.0} {:>10.0} {:>10.0} {:>10.2} {:>9.0}",
            r.label(),
            r.mean(|r| r.mean_utilization),
            r.mean(|r| r.mean_allocation),
            r.mean(|r| r.preemptions as f64),
            r.mean(|r| r.mean_whole_free),
            r.mean(|r| r.wait_p50_s),
            r.mean(|r| r.wait_p99_s),
            r.mean(|r| r.wait_max_s),
            r.mean(|r| r.completed_ratio),
            r.mean(|r| r.never_started as f64),
        );
    }
    let util = |p| {
        results
            .iter()
            .find(|r| r.policy == p && r.foresight == Foresight::default())
            .map(|r| r.mean(|r| r.mean_utilization))
    };
    if let (Some(g), Some(w)) = (util(PolicyName::Gpuex), util(PolicyName::WholeNode)) {
        if w > 0.0 {
            let _ = writeln!(out, "gpuex / whole-node utilization: {:.2}x", g / w);
        }
    }
    out
}

/// Draws `lines` (name, points) into an SVG chart.
fn draw(
    path: &Path,
    caption: &str,
    x: (&str, f64),
    y_desc: &str,
    lines: &[(&str, Vec<(f64, f64)>)],
) -> Result<(), SimulateError> {
    use plotters::prelude::*;
    let err = |e: &dyn std::fmt::Display| SimulateError::Plot(e.to_string());
    let root = SVGBackend::new(path, (960, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 22))
        .margin(18)
        .x_label_area_size(44)
        .y_label_area_size(56)
        .build_cartesian_2d(0f64..x.1, 0f64..100f64)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc(x.0)
        .y_desc(y_desc)
        .draw()
        .map_err(|e| err(&e))?;
    for (i, (name, pts)) in lines.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba().stroke_width(2);
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), color))
            .map_err(|e| err(&e))?
            .label(*name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}

/// The allocation curve (0–130 % arrived) of each policy.
pub fn plot_paper(path: &Path, results: &[PaperResult]) -> Result<(), SimulateError> {
    let lines: Vec<(&str, Vec<(f64, f64)>)> = results
        .iter()
        .map(|r| {
            let pts = r
                .curve
                .iter()
                .enumerate()
                .filter_map(|(b, v)| v.map(|v| (b as f64, v)));
            (r.policy.as_str(), pts.collect())
        })
        .collect();
    draw(
        path,
        "GPU allocation vs arrived GPU requests (mean over seeds)",
        ("arrived GPU requests, % of capacity", MAX_BUCKET as f64),
        "allocated GPU, % of capacity",
        &lines,
    )
}

/// Allocation over time of each policy, and the share of GPUs wholly free
/// (dashed in name: `… whole free`), first seed.
pub fn plot_timeline(path: &Path, results: &[TimelineResult]) -> Result<(), SimulateError> {
    let labels: Vec<(String, String)> = results
        .iter()
        .map(|r| (r.label(), format!("{} whole GPUs free", r.label())))
        .collect();
    let mut lines: Vec<(&str, Vec<(f64, f64)>)> = Vec::new();
    for (r, (alloc, free)) in results.iter().zip(&labels) {
        let first = r.runs.first();
        lines.push((
            alloc.as_str(),
            first.map(|r| r.series.clone()).unwrap_or_default(),
        ));
        lines.push((
            free.as_str(),
            first
                .map(|r| r.whole_free_series.clone())
                .unwrap_or_default(),
        ));
    }
    let span = lines
        .iter()
        .flat_map(|l| l.1.last())
        .map(|p| p.0)
        .fold(1.0, f64::max);
    draw(
        path,
        "GPU allocation and wholly free GPUs over time",
        ("hours since the first arrival", span),
        "% of capacity (allocated) / % of GPUs (wholly free)",
        &lines,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::{parse_seeds, Experiment};

    fn args(format: Format) -> SimulateArgs {
        SimulateArgs {
            nodes: "n.csv".into(),
            pods: "p.csv".into(),
            policy: vec![PolicyName::Fgd],
            mode: Experiment::Paper,
            tune: 1.3,
            seeds: parse_seeds("42").unwrap(),
            node_share: 1.0,
            placement_walk: crate::simulate::PlacementWalk::States,
            format,
            plot: None,
        }
    }

    fn keys(v: &Value) -> Vec<&str> {
        v.as_object().unwrap().keys().map(String::as_str).collect()
    }

    #[test]
    fn paper_json_has_the_agreed_keys() {
        let mut curve = vec![None; MAX_BUCKET + 1];
        curve[100] = Some(95.0);
        curve[130] = Some(96.0);
        let run = SeedRun {
            seed: 42,
            alloc: curve.clone(),
            frag: curve,
            failed: 3,
            tasks: 10,
        };
        let out = paper(
            &args(Format::Json),
            &[PaperResult::new(PolicyName::Fgd, vec![run])],
        );
        let v: Value = serde_json::from_str(&out).unwrap();
        let r = &v[0];
        for k in [
            "policy",
            "seeds",
            "alloc_ratio_at_100",
            "alloc_ratio_at_130",
            "frag_ratio_at_130",
            "failed_tasks",
        ] {
            assert!(keys(r).contains(&k), "missing {k}");
        }
        assert_eq!(r["policy"], "fgd");
        assert_eq!(r["seeds"], json!([42]));
        assert_eq!(r["alloc_ratio_at_130"], json!(96.0));
    }

    #[test]
    fn timeline_json_has_the_agreed_keys() {
        let run = TimelineRun {
            seed: 1,
            mean_utilization: 50.0,
            mean_allocation: 51.0,
            series: vec![(0.0, 50.0)],
            mean_whole_free: 3.0,
            whole_free_series: vec![(0.0, 10.0)],
            preemptions: 2,
            wait_p50_s: 0.0,
            wait_p99_s: 10.0,
            wait_max_s: 20.0,
            completed_ratio: 100.0,
            never_started: 0,
            tasks: 3,
        };
        let out = timeline(
            &args(Format::Json),
            &[TimelineResult::new(
                PolicyName::Gpuex,
                Foresight {
                    forecast: true,
                    prediction: false,
                },
                vec![run],
            )],
        );
        let v: Value = serde_json::from_str(&out).unwrap();
        for k in [
            "policy",
            "seeds",
            "mean_utilization",
            "wait_p50_s",
            "wait_p99_s",
            "completed_ratio",
            "mean_allocation",
            "preemptions",
            "mean_whole_gpus_free",
            "whole_gpus_free_series",
        ] {
            assert!(keys(&v[0]).contains(&k), "missing {k}");
        }
        assert_eq!(v[0]["policy"], "gpuex+forecast");
    }

    #[test]
    fn the_table_names_each_policy_once() {
        let run = SeedRun {
            seed: 42,
            alloc: vec![Some(1.0); MAX_BUCKET + 1],
            frag: vec![Some(1.0); MAX_BUCKET + 1],
            failed: 0,
            tasks: 1,
        };
        let out = paper(
            &args(Format::Table),
            &[PaperResult::new(PolicyName::Random, vec![run])],
        );
        assert_eq!(out.matches("random").count(), 1);
    }
}
