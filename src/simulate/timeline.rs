//! Time-ordered replay: tasks arrive at their creation time, run for their
//! traced duration (deletion − creation) once placed, and wait in a queue
//! while they fit nowhere.
//!
//! The openb trace offers little load over its 149 days (its GPU-seconds fill
//! 0.23 % of the cluster), so `load` compresses the arrival times (durations
//! unchanged) until the offered demand over the arrival window is `load` ×
//! capacity; the replay is measured over that window. `load <= 0` replays the
//! trace's own times.
//!
//! The queue is not first-in-first-out blocking: like kube-scheduler, any
//! queued task that fits is placed. A queued task is only retried when a node
//! it could use has freed capacity since it last failed, which keeps the
//! replay fast without changing a single decision.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::cluster::{Cluster, Placement};
use super::policy::{Scheduler, Shared};
use super::trace::Trace;
use super::{PolicyName, SimulateError};

/// One replay's figures.
#[derive(Debug, Clone)]
pub struct TimelineRun {
    pub seed: u64,
    /// Time-weighted mean of allocated / capacity milli-GPU, in percent,
    /// from the first arrival to the last traced deletion.
    pub mean_utilization: f64,
    /// Utilization (percent) sampled at even steps over the same span.
    pub series: Vec<(f64, f64)>,
    /// Queue waits; a task not started by the horizon counts what it waited.
    pub wait_p50_s: f64,
    pub wait_p99_s: f64,
    pub wait_max_s: f64,
    /// Tasks that finished within the traced span, percent of all tasks.
    pub completed_ratio: f64,
    /// Tasks never started within the traced span.
    pub never_started: usize,
    pub tasks: usize,
}

const SERIES_POINTS: usize = 200;

/// Replays the trace under `policy` at `load` × capacity of offered demand.
pub fn run(
    trace: &Trace,
    shared: &mut Shared,
    policy: PolicyName,
    seed: u64,
    load: f64,
) -> Result<TimelineRun, SimulateError> {
    let mut arrivals: Vec<(u64, u64, usize)> = Vec::with_capacity(trace.tasks.len());
    for (i, t) in trace.tasks.iter().enumerate() {
        match (t.creation, t.deletion) {
            (Some(c), Some(d)) if d >= c => arrivals.push((c, d - c, i)),
            _ => {}
        }
    }
    if arrivals.is_empty() {
        return Err(SimulateError::Trace(
            "timeline mode needs creation_time and deletion_time columns".into(),
        ));
    }
    arrivals.sort_unstable();
    let start = arrivals[0].0;
    let last = arrivals[arrivals.len() - 1].0;
    let gpu_seconds: f64 = arrivals
        .iter()
        .map(|a| a.1 as f64 * trace.tasks[a.2].gpu.total_milli() as f64)
        .sum();
    let horizon = if load > 0.0 && last > start && gpu_seconds > 0.0 {
        // Offered demand over the window [start, last] is gpu_seconds / window;
        // shrinking the window by `factor` multiplies it by `factor`.
        let span = (last - start) as f64;
        let factor = load * trace.capacity_milli() as f64 * span / gpu_seconds;
        for a in &mut arrivals {
            a.0 = start + ((a.0 - start) as f64 / factor).round() as u64;
        }
        arrivals.sort_unstable();
        arrivals[arrivals.len() - 1].0.max(start + 1)
    } else {
        arrivals
            .iter()
            .map(|a| a.0 + a.1)
            .max()
            .unwrap_or(start)
            .max(start + 1)
    };

    let mut cluster = Cluster::new(trace);
    let mut sched = Scheduler::new(policy, trace, shared, seed);
    let mut running: BinaryHeap<Reverse<(u64, usize, usize, u8)>> = BinaryHeap::new();
    let mut queue: Vec<(u64, u64, usize)> = Vec::new();
    let mut dirty: Vec<usize> = Vec::new();
    let mut waits: Vec<u64> = Vec::new();
    let mut completed = 0usize;
    let (mut area, mut last_t) = (0.0f64, start);
    let step = (horizon - start) as f64 / SERIES_POINTS as f64;
    let mut series = Vec::with_capacity(SERIES_POINTS + 1);
    let mut next_sample = start as f64;
    let mut next = 0;

    loop {
        let t_arr = arrivals.get(next).map(|a| a.0);
        let t_dep = running.peek().map(|r| r.0 .0);
        let now = match (t_arr, t_dep) {
            (None, None) => break,
            (a, d) => a.unwrap_or(u64::MAX).min(d.unwrap_or(u64::MAX)),
        };
        if now > horizon {
            break;
        }
        // Utilization is piecewise constant between events.
        let util = cluster.alloc_percent();
        area += util * (now - last_t) as f64;
        while next_sample <= now as f64 && series.len() <= SERIES_POINTS {
            series.push(((next_sample - start as f64) / 3600.0, util));
            next_sample += step;
        }
        last_t = now;

        while let Some(Reverse((end, idx, node, gpus))) = running.peek().copied() {
            if end > now {
                break;
            }
            running.pop();
            cluster.release(&trace.tasks[idx], Placement { node, gpus });
            sched.release(idx);
            completed += 1;
            dirty.push(node);
        }
        let mut fresh = Vec::new();
        while let Some(&a) = arrivals.get(next) {
            if a.0 != now {
                break;
            }
            fresh.push(a);
            next += 1;
        }
        // Retry queued tasks only where capacity came back.
        let mut still = Vec::with_capacity(queue.len());
        if !dirty.is_empty() {
            for q in queue.drain(..) {
                let task = &trace.tasks[q.2];
                let could = dirty.iter().any(|&n| cluster.nodes[n].fits(task));
                if !(could && try_start(&mut sched, &mut cluster, &mut running, q, now, &mut waits))
                {
                    still.push(q);
                }
            }
            queue = still;
            dirty.clear();
        }
        for a in fresh {
            if !try_start(&mut sched, &mut cluster, &mut running, a, now, &mut waits) {
                queue.push(a);
            }
        }
    }
    area += cluster.alloc_percent() * horizon.saturating_sub(last_t) as f64;
    while series.len() <= SERIES_POINTS {
        series.push((
            (next_sample - start as f64) / 3600.0,
            cluster.alloc_percent(),
        ));
        next_sample += step;
    }

    let never_started = arrivals.len() - waits.len();
    // Tasks still queued at the horizon have waited at least until then.
    waits.extend(queue.iter().map(|q| horizon.saturating_sub(q.0)));
    waits.extend(arrivals[next..].iter().map(|a| horizon.saturating_sub(a.0)));
    waits.sort_unstable();
    let pct = |p: f64| -> f64 {
        if waits.is_empty() {
            return 0.0;
        }
        let i = ((p * waits.len() as f64).ceil() as usize).clamp(1, waits.len()) - 1;
        waits[i] as f64
    };
    let tasks = arrivals.len();
    Ok(TimelineRun {
        seed,
        mean_utilization: area / (horizon - start) as f64,
        series,
        wait_p50_s: pct(0.50),
        wait_p99_s: pct(0.99),
        wait_max_s: waits.last().copied().unwrap_or(0) as f64,
        completed_ratio: 100.0 * completed as f64 / tasks as f64,
        never_started,
        tasks,
    })
}

/// Places a (creation, duration, task) if the policy finds room.
fn try_start(
    sched: &mut Scheduler<'_>,
    cluster: &mut Cluster,
    running: &mut BinaryHeap<Reverse<(u64, usize, usize, u8)>>,
    (created, duration, idx): (u64, u64, usize),
    now: u64,
    waits: &mut Vec<u64>,
) -> bool {
    let Some(at) = sched.choose(cluster, idx) else {
        return false;
    };
    cluster.place(&sched.trace().tasks[idx], at);
    sched.commit(idx);
    running.push(Reverse((now + duration, idx, at.node, at.gpus)));
    waits.push(now - created);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_compresses_arrivals_until_demand_meets_capacity_times_load() {
        // Two 1-GPU tasks of 100 s arriving 1000 s apart on one GPU: demand
        // 200 GPU·s over 1000 s is 20 %; at load 1.0 the window shrinks to
        // 200 s, so the second task arrives at 200 and runs at once.
        let nodes = "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,1,T4\n";
        let pods =
            "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,creation_time,deletion_time\n\
            a,1,1,1,1000,,0,100\nb,1,1,1,1000,,1000,1100\n";
        let t = Trace::parse(nodes, pods).unwrap();
        let mut shared = Shared::new(&t);
        let r = run(&t, &mut shared, PolicyName::BestFit, 1, 1.0).unwrap();
        assert_eq!(r.wait_max_s, 0.0);
        // Over [0, 200]: busy 0..100 only (b starts at the horizon).
        assert!((r.mean_utilization - 50.0).abs() < 1e-9);
    }

    #[test]
    fn a_task_waits_for_a_departure_then_runs_its_full_duration() {
        let nodes = "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,1,T4\n";
        let pods =
            "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,creation_time,deletion_time\n\
            a,1000,1,1,1000,,0,100\nb,1000,1,1,1000,,10,60\nc,1000,1,1,500,,300,400\n";
        let t = Trace::parse(nodes, pods).unwrap();
        let mut shared = Shared::new(&t);
        let r = run(&t, &mut shared, PolicyName::BestFit, 1, 0.0).unwrap();
        // b waits 90 s and then runs 50 s (100..150); c runs 300..400.
        assert_eq!(r.wait_max_s, 90.0);
        assert_eq!(r.wait_p50_s, 0.0);
        assert_eq!(r.completed_ratio, 100.0);
        // GPU-seconds: 100 (a) + 50 (b) + 50 (c) over 400 s of one GPU.
        assert!((r.mean_utilization - 100.0 * 200.0 / 400.0).abs() < 1e-9);
    }

    #[test]
    fn a_trace_without_times_is_refused() {
        let nodes = "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,1,T4\n";
        let pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1,1,1,1000\n";
        let t = Trace::parse(nodes, pods).unwrap();
        let mut shared = Shared::new(&t);
        assert!(run(&t, &mut shared, PolicyName::Random, 1, 0.0).is_err());
    }
}
