//! An import's capacity profile and concurrency series, from its jobs:
//! the same figures as a profile of gpuex leases (`billing::profile`), with
//! each job holding its GPUs' TFLOPS and VRAM units from start to end.

use super::collect::{Collector, Job, GPU_MILLI};
use crate::billing::profile::{dp, durations, from_changes};
use crate::catalog;
use chrono::{DateTime, Utc};
use gpuex_api::billing::{CapacityProfile, GroupProfile, HeldUtilization};
use gpuex_api::imports::ConcurrencyPoint;
use rust_decimal::Decimal;
use std::borrow::Borrow;

/// Stretches in an import's concurrency series.
pub const SERIES_POINTS: i64 = 240;

/// A second as a time (the epoch for one out of range).
pub fn at(seconds: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(seconds, 0).unwrap_or_default()
}

/// A job's units of each kind: its GPUs times its model's.
fn units(job: &Job) -> (Decimal, Decimal) {
    let model = &catalog::all_models()[usize::from(job.model)];
    let gpus = Decimal::new(i64::from(job.gpus_milli), 3);
    // At most 4,096 GPUs × a model's units: far inside Decimal.
    (gpus * model.fp16, gpus * model.vram_units())
}

/// One group's profile; the level changes of one unit at a time, so only
/// one list of them is ever held.
fn group<J: Borrow<Job>>(key: String, jobs: &[J], elapsed: i64) -> GroupProfile {
    let changes = |kind: fn(&Job) -> Decimal| {
        let mut changes = Vec::with_capacity(jobs.len() * 2);
        for job in jobs {
            let job = job.borrow();
            let units = kind(job);
            changes.push((job.start, units));
            changes.push((job.end, -units));
        }
        from_changes(changes, elapsed)
    };
    GroupProfile {
        key,
        tflops_units: changes(|j| units(j).0),
        vram_units: changes(|j| units(j).1),
        durations: durations(
            jobs.iter()
                .map(|j| j.borrow().end - j.borrow().start)
                .collect(),
        ),
        utilization: HeldUtilization {
            measured_tflops_h: Decimal::ZERO,
            used_tflops_h: Decimal::ZERO,
            fraction: None,
        },
    }
}

/// The window the jobs cover: the first start to the last end.
pub fn window(jobs: &[Job]) -> Option<(i64, i64)> {
    let from = jobs.iter().map(|j| j.start).min()?;
    let to = jobs.iter().map(|j| j.end).max()?;
    Some((from, to))
}

/// The profile of every job, by GPU model and by tag (imports have no modes).
pub fn profile(c: &Collector) -> Option<CapacityProfile> {
    let (from, to) = window(&c.jobs)?;
    let elapsed = to - from;
    let total = group("all".to_owned(), &c.jobs, elapsed);
    let mut by_model: Vec<&Job> = c.jobs.iter().collect();
    by_model.sort_unstable_by_key(|j| j.model);
    let by_gpu_model = by_model
        .chunk_by(|a, b| a.model == b.model)
        .map(|jobs| {
            let name = catalog::all_models()[usize::from(jobs[0].model)].name;
            group(name.to_owned(), jobs, elapsed)
        })
        .collect();
    drop(by_model);
    let mut by_tag_jobs: Vec<&Job> = c.jobs.iter().collect();
    by_tag_jobs.sort_unstable_by_key(|j| j.tag);
    let mut by_tag: Vec<GroupProfile> = by_tag_jobs
        .chunk_by(|a, b| a.tag == b.tag)
        .map(|jobs| {
            let key = match jobs[0].tag {
                Some(i) => c.tags[i as usize].clone(),
                None => "(untagged)".to_owned(),
            };
            group(key, jobs, elapsed)
        })
        .collect();
    by_tag.sort_by(|a, b| a.key.cmp(&b.key));
    Some(CapacityProfile {
        from: at(from),
        to: at(to),
        elapsed_s: elapsed,
        spot_share: Decimal::ZERO,
        total,
        by_mode: Vec::new(),
        by_gpu_model,
        by_tag,
    })
}

/// GPUs held over time in at most [`SERIES_POINTS`] equal stretches: each
/// stretch's mean and peak.
pub fn series(jobs: &[Job]) -> Vec<ConcurrencyPoint> {
    let Some((from, to)) = window(jobs) else {
        return Vec::new();
    };
    let width = ((to - from) + SERIES_POINTS - 1) / SERIES_POINTS;
    let width = width.max(1);
    let count = usize::try_from((to - from + width - 1) / width).unwrap_or(0);
    // Per stretch: GPU-thousandth-seconds held, and the peak in thousandths.
    let mut held = vec![0i128; count];
    let mut peak = vec![0i64; count];
    let mut changes: Vec<(i64, i64)> = Vec::with_capacity(jobs.len() * 2);
    for j in jobs {
        changes.push((j.start, i64::from(j.gpus_milli)));
        changes.push((j.end, -i64::from(j.gpus_milli)));
    }
    changes.sort_unstable_by_key(|c| c.0);
    let mut level = 0i64;
    let mut i = 0;
    while i < changes.len() {
        let start = changes[i].0;
        while i < changes.len() && changes[i].0 == start {
            level += changes[i].1;
            i += 1;
        }
        let end = changes.get(i).map_or(to, |c| c.0);
        // The constant level over [start, end), spread over its stretches.
        let mut t = start;
        while t < end {
            let k = usize::try_from((t - from) / width)
                .unwrap_or(0)
                .min(count - 1);
            let stretch_end = (from + (k as i64 + 1) * width).min(end);
            held[k] += i128::from(level) * i128::from(stretch_end - t);
            peak[k] = peak[k].max(level);
            t = stretch_end.max(t + 1);
        }
    }
    let milli = Decimal::from(GPU_MILLI);
    (0..count)
        .map(|k| {
            let a = from + k as i64 * width;
            let b = (a + width).min(to);
            let mean = Decimal::from_i128_with_scale(held[k], 0) / milli / Decimal::from(b - a);
            ConcurrencyPoint {
                from: at(a),
                to: at(b),
                mean_gpus: dp(mean, 3),
                peak_gpus: Decimal::new(peak[k], 3).normalize(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    fn job(start: i64, end: i64, gpus: u32) -> Job {
        Job {
            start,
            end,
            gpus_milli: gpus * GPU_MILLI,
            model: 0,
            tag: None,
        }
    }

    #[test]
    fn the_series_spreads_each_level_over_its_stretches() {
        // 2 GPUs over 0–480 s, 4 more over 240–360 s: 240 stretches of 2 s.
        let points = series(&[job(0, 480, 2), job(240, 360, 4)]);
        assert_eq!(points.len(), 240);
        assert_eq!(points[0].mean_gpus, dec!(2));
        assert_eq!(points[120].mean_gpus, dec!(6));
        assert_eq!(points[120].peak_gpus, dec!(6));
        assert_eq!(points[239].mean_gpus, dec!(2));
        let gpu_seconds: Decimal = points.iter().map(|p| p.mean_gpus * dec!(2)).sum();
        assert_eq!(gpu_seconds, dec!(1440));
    }

    #[test]
    fn a_stretch_half_held_has_half_the_mean_and_the_whole_peak() {
        // 1,000 s over 240 stretches of 5 s: a job of 0–2 s holds stretch 0 for 2 of 5.
        let points = series(&[job(0, 2, 5), job(999, 1000, 1)]);
        assert_eq!(points[0].mean_gpus, dec!(2));
        assert_eq!(points[0].peak_gpus, dec!(5));
        assert_eq!(points.last().map(|p| p.to.timestamp()), Some(1000));
    }
}
