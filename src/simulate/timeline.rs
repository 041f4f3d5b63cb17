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
//! queued task that fits is placed, on-demand before spot. A queued task is
//! only retried when a node it could use has freed capacity since it last
//! failed, which keeps the replay fast without changing a single decision.
//!
//! Spot (ARCHITECTURE.md §3) from the trace's `qos`: `BE` tasks are spot, the rest
//! on-demand. An on-demand arrival that fits nowhere preempts spot tasks on
//! the node where the fewest (newest first) make room; they go back to the
//! queue and start over with their full duration (the work they did is
//! lost, and counted). The preemption is immediate: the engine's 120 s
//! notice is not modelled here.
//!
//! [`Foresight`] adds ARCHITECTURE.md §17's two aids: the forecast holdback (spot
//! does not start on idle capacity the forecast expects on-demand tasks to
//! ask for within the notice), and the duration prediction (placement gets
//! each task's predicted end, as the server hands it to the engine).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::cluster::{Allotment, Cluster};
use super::foresight::{Foresight, Holdback, Predictor};
use super::policy::{Scheduler, Shared};
use super::trace::Trace;
use super::{PolicyName, SimulateError};
use crate::engine::placement::EndHint;

/// The engine's preemption notice (`--preempt-notice-s`): the forecast's
/// holdback covers what on-demand asks within it.
const NOTICE_S: u64 = 120;

/// One replay's figures.
#[derive(Debug, Clone)]
pub struct TimelineRun {
    pub seed: u64,
    /// Time-weighted mean of the milli-GPU doing work that was kept, in
    /// percent of capacity: allocation less what preempted tasks had run.
    pub mean_utilization: f64,
    /// Time-weighted mean of allocated / capacity milli-GPU, in percent,
    /// from the first arrival to the horizon (preempted work included).
    pub mean_allocation: f64,
    /// Allocation (percent) sampled at even steps over the same span.
    pub series: Vec<(f64, f64)>,
    /// GPUs with nothing allocated: time-weighted mean count.
    pub mean_whole_free: f64,
    /// The same, sampled as a percentage of all GPUs.
    pub whole_free_series: Vec<(f64, f64)>,
    /// Spot tasks stopped to make room for on-demand ones.
    pub preemptions: usize,
    /// Queue waits per task (all its stays in the queue); a task not
    /// started by the horizon counts what it waited.
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

/// A task waiting: since when, how long it runs, which.
#[derive(Debug, Clone, Copy)]
struct Queued {
    since: u64,
    duration: u64,
    idx: usize,
}

/// A running task's run.
#[derive(Debug, Clone, Copy)]
struct Live {
    start: u64,
    node: usize,
    gpus: u8,
}

/// The replay's moving parts.
struct Replay<'t, 's> {
    trace: &'t Trace,
    sched: Scheduler<'s>,
    cluster: Cluster,
    /// (end, task, generation): entries of a run since preempted are stale.
    running: BinaryHeap<Reverse<(u64, usize, u32)>>,
    live: Vec<Option<Live>>,
    generation: Vec<u32>,
    /// Running spot tasks per node.
    spot_on: Vec<Vec<usize>>,
    queue: Vec<Queued>,
    waited: Vec<u64>,
    started: Vec<bool>,
    foresight: Foresight,
    predictor: Predictor,
    holdback: Option<Holdback>,
    preemptions: usize,
    /// Percent-of-capacity × seconds that preempted runs had done.
    lost_area: f64,
    completed: usize,
    dirty: Vec<usize>,
}

/// Replays the trace under `policy` at `load` × capacity of offered demand.
pub fn run(
    trace: &Trace,
    shared: &mut Shared,
    policy: PolicyName,
    seed: u64,
    load: f64,
    foresight: Foresight,
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

    let cluster = Cluster::new(trace);
    let n = trace.tasks.len();
    let mut r = Replay {
        trace,
        sched: Scheduler::new(policy, trace, shared, seed),
        spot_on: vec![Vec::new(); cluster.nodes.len()],
        cluster,
        running: BinaryHeap::new(),
        live: vec![None; n],
        generation: vec![0; n],
        queue: Vec::new(),
        waited: vec![0; n],
        started: vec![false; n],
        foresight,
        predictor: Predictor::default(),
        holdback: foresight.forecast.then(|| Holdback::new(NOTICE_S)),
        preemptions: 0,
        lost_area: 0.0,
        completed: 0,
        dirty: Vec::new(),
    };
    let (mut area, mut free_area, mut last_t) = (0.0f64, 0.0f64, start);
    let step = (horizon - start) as f64 / SERIES_POINTS as f64;
    let mut series = Vec::with_capacity(SERIES_POINTS + 1);
    let mut free_series = Vec::with_capacity(SERIES_POINTS + 1);
    let mut next_sample = start as f64;
    let mut next = 0;

    loop {
        let t_arr = arrivals.get(next).map(|a| a.0);
        let t_dep = r.running.peek().map(|e| e.0 .0);
        let now = match (t_arr, t_dep) {
            (None, None) => break,
            (a, d) => a.unwrap_or(u64::MAX).min(d.unwrap_or(u64::MAX)),
        };
        if now > horizon {
            break;
        }
        // Allocation and free GPUs are piecewise constant between events.
        let util = r.cluster.alloc_percent();
        area += util * (now - last_t) as f64;
        free_area += r.cluster.whole_free as f64 * (now - last_t) as f64;
        while next_sample <= now as f64 && series.len() <= SERIES_POINTS {
            let hours = (next_sample - start as f64) / 3600.0;
            series.push((hours, util));
            free_series.push((hours, r.cluster.whole_free_percent()));
            next_sample += step;
        }
        last_t = now;

        r.departures(now);
        if let Some(h) = r.holdback.as_mut() {
            h.advance(now);
        }
        let mut fresh = Vec::new();
        while let Some(&a) = arrivals.get(next) {
            if a.0 != now {
                break;
            }
            fresh.push(Queued {
                since: a.0,
                duration: a.1,
                idx: a.2,
            });
            next += 1;
        }
        r.retry(now);
        for q in fresh {
            let task = &trace.tasks[q.idx];
            if !task.spot {
                if let Some(h) = r.holdback.as_mut() {
                    h.asked(task.gpu.total_milli());
                }
            }
            if !r.try_start(q, now) && (task.spot || !r.preempt_for(q, now)) {
                r.queue.push(q);
            }
        }
    }
    area += r.cluster.alloc_percent() * horizon.saturating_sub(last_t) as f64;
    free_area += r.cluster.whole_free as f64 * horizon.saturating_sub(last_t) as f64;
    while series.len() <= SERIES_POINTS {
        let hours = (next_sample - start as f64) / 3600.0;
        series.push((hours, r.cluster.alloc_percent()));
        free_series.push((hours, r.cluster.whole_free_percent()));
        next_sample += step;
    }

    // Tasks still queued at the horizon have waited at least until then.
    for q in &r.queue {
        r.waited[q.idx] += horizon.saturating_sub(q.since);
    }
    for a in &arrivals[next..] {
        r.waited[a.2] += horizon.saturating_sub(a.0);
    }
    let never_started = arrivals.iter().filter(|a| !r.started[a.2]).count();
    let mut waits: Vec<u64> = arrivals.iter().map(|a| r.waited[a.2]).collect();
    waits.sort_unstable();
    let pct = |p: f64| -> f64 {
        if waits.is_empty() {
            return 0.0;
        }
        let i = ((p * waits.len() as f64).ceil() as usize).clamp(1, waits.len()) - 1;
        waits[i] as f64
    };
    let tasks = arrivals.len();
    let span = (horizon - start) as f64;
    Ok(TimelineRun {
        seed,
        mean_utilization: (area - r.lost_area) / span,
        mean_allocation: area / span,
        series,
        mean_whole_free: free_area / span,
        whole_free_series: free_series,
        preemptions: r.preemptions,
        wait_p50_s: pct(0.50),
        wait_p99_s: pct(0.99),
        wait_max_s: waits.last().copied().unwrap_or(0) as f64,
        completed_ratio: 100.0 * r.completed as f64 / tasks as f64,
        never_started,
        tasks,
    })
}

impl Replay<'_, '_> {
    /// Ends every run due by `now`; the predictor learns their durations.
    fn departures(&mut self, now: u64) {
        while let Some(Reverse((end, idx, generation))) = self.running.peek().copied() {
            if end > now {
                break;
            }
            self.running.pop();
            if self.generation[idx] != generation {
                continue;
            }
            let Some(run) = self.live[idx].take() else {
                continue;
            };
            let trace = self.trace;
            let task = &trace.tasks[idx];
            self.release(idx, run);
            self.predictor.finished(task, end - run.start);
            self.completed += 1;
        }
    }

    fn release(&mut self, idx: usize, run: Live) {
        let trace = self.trace;
        let task = &trace.tasks[idx];
        self.cluster.release(
            task,
            Allotment {
                node: run.node,
                gpus: run.gpus,
            },
        );
        self.sched.release(idx);
        if task.spot {
            self.spot_on[run.node].retain(|&s| s != idx);
        }
        self.dirty.push(run.node);
    }

    /// Retries queued tasks (on-demand first) where capacity came back.
    fn retry(&mut self, now: u64) {
        if self.dirty.is_empty() {
            return;
        }
        let mut queue = std::mem::take(&mut self.queue);
        queue.sort_by_key(|q| (self.trace.tasks[q.idx].spot, q.since, q.idx));
        let dirty = std::mem::take(&mut self.dirty);
        let trace = self.trace;
        for q in queue {
            let task = &trace.tasks[q.idx];
            let could = dirty.iter().any(|&n| self.cluster.nodes[n].fits(task));
            if !(could && self.try_start(q, now)) {
                self.queue.push(q);
            }
        }
        // What this round freed by preempting is retried at the next event.
    }

    /// Starts `q` if the policy finds room (and, for spot under the
    /// forecast, the holdback leaves it room).
    fn try_start(&mut self, q: Queued, now: u64) -> bool {
        let trace = self.trace;
        let task = &trace.tasks[q.idx];
        if task.spot {
            let idle = self.cluster.capacity_milli - self.cluster.allocated_milli;
            if self
                .holdback
                .as_ref()
                .is_some_and(|h| !h.allows(idle, task.gpu.total_milli()))
            {
                return false;
            }
        }
        let hint = if self.foresight.prediction {
            self.predictor.predict(task).and_then(|d| {
                Some(EndHint {
                    now: i64::try_from(now).ok()?,
                    end: i64::try_from(now.saturating_add(d)).ok()?,
                })
            })
        } else {
            None
        };
        self.sched.set_hint(hint);
        let Some(at) = self.sched.choose(&self.cluster, q.idx) else {
            return false;
        };
        self.cluster.place(task, at);
        self.sched.commit(q.idx);
        self.generation[q.idx] += 1;
        self.live[q.idx] = Some(Live {
            start: now,
            node: at.node,
            gpus: at.gpus,
        });
        self.running
            .push(Reverse((now + q.duration, q.idx, self.generation[q.idx])));
        if task.spot {
            self.spot_on[at.node].push(q.idx);
        }
        self.waited[q.idx] += now - q.since;
        self.started[q.idx] = true;
        true
    }

    /// Makes room for on-demand `q` by preempting spot tasks on the node
    /// where the fewest of them (newest first) free enough, then starts it.
    fn preempt_for(&mut self, q: Queued, now: u64) -> bool {
        let trace = self.trace;
        let task = &trace.tasks[q.idx];
        let mut best: Option<(usize, Vec<usize>)> = None;
        for (n, on) in self.spot_on.iter().enumerate() {
            let node = &self.cluster.nodes[n];
            if on.is_empty() || !task.accepts(node.kind) {
                continue;
            }
            let mut state = node.clone();
            let mut order: Vec<(u64, usize, u8)> = on
                .iter()
                .filter_map(|&s| self.live[s].map(|l| (l.start, s, l.gpus)))
                .collect();
            order.sort_unstable_by_key(|&(start, s, _)| Reverse((start, s)));
            let mut victims = Vec::new();
            for (_, s, gpus) in order {
                if state.fits(task) {
                    break;
                }
                state.give(&self.trace.tasks[s], gpus);
                victims.push(s);
            }
            if state.fits(task) && best.as_ref().is_none_or(|b| victims.len() < b.1.len()) {
                best = Some((n, victims));
            }
        }
        let Some((_, victims)) = best else {
            return false;
        };
        for s in victims {
            let Some(run) = self.live[s].take() else {
                continue;
            };
            self.release(s, run);
            let milli = self.trace.tasks[s].gpu.total_milli();
            self.lost_area += 100.0 * milli as f64 * (now - run.start) as f64
                / self.cluster.capacity_milli as f64;
            self.preemptions += 1;
            let duration = self.trace.tasks[s]
                .deletion
                .zip(self.trace.tasks[s].creation)
                .map_or(0, |(d, c)| d.saturating_sub(c));
            self.queue.push(Queued {
                since: now,
                duration,
                idx: s,
            });
        }
        self.try_start(q, now)
    }
}

#[cfg(test)]
mod tests;
