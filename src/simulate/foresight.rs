//! The two kinds of foresight of ARCHITECTURE.md §17, as the timeline replay runs
//! them: a duration [`Predictor`] (the server's rule, on the trace's keys)
//! and the forecast [`Holdback`] of idle capacity from spot (the server's
//! forecast code, on the replay's own past).

use std::collections::{HashMap, VecDeque};

use super::trace::{GpuAsk, Task};
use crate::forecast::model;

/// Which foresight a timeline run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Foresight {
    /// Hold back from spot the idle capacity the forecast expects on-demand
    /// tasks to ask for within the notice period.
    pub forecast: bool,
    /// Hand placement each task's predicted end.
    pub prediction: bool,
}

impl Foresight {
    /// Plain, +forecast, +prediction, +both: the side-by-side set.
    pub const ALL: [Foresight; 4] = [
        Foresight {
            forecast: false,
            prediction: false,
        },
        Foresight {
            forecast: true,
            prediction: false,
        },
        Foresight {
            forecast: false,
            prediction: true,
        },
        Foresight {
            forecast: true,
            prediction: true,
        },
    ];

    /// The suffix of a policy's name in the report: `+forecast`, `+prediction`, `+both`.
    pub fn suffix(self) -> &'static str {
        match (self.forecast, self.prediction) {
            (false, false) => "",
            (true, false) => "+forecast",
            (false, true) => "+prediction",
            (true, true) => "+both",
        }
    }
}

/// Finished durations a prediction takes the median of, as the server does
/// (`market::predict::SAMPLES`).
const SAMPLES: usize = 50;

/// A task's shape: what the trace has in place of tags or a command (it
/// has neither). Tasks of one shape are mostly replicas of one job.
type Shape = (GpuAsk, u32, u64);

fn shape(task: &Task) -> Shape {
    (task.gpu, task.cpu_milli, task.memory_mib)
}

/// Predicts a task's duration from earlier tasks that finished (not
/// preempted): the median of the last [`SAMPLES`] of the same shape (GPU
/// ask, CPU, memory), else of every finished task (the server's
/// `fallback`), else none.
#[derive(Debug, Default)]
pub struct Predictor {
    by_shape: HashMap<Shape, VecDeque<u64>>,
    all: VecDeque<u64>,
}

impl Predictor {
    /// A task finished after running `seconds`.
    pub fn finished(&mut self, task: &Task, seconds: u64) {
        for q in [self.by_shape.entry(shape(task)).or_default(), &mut self.all] {
            q.push_front(seconds);
            q.truncate(SAMPLES);
        }
    }

    /// The predicted duration of `task`, seconds.
    pub fn predict(&self, task: &Task) -> Option<u64> {
        self.by_shape
            .get(&shape(task))
            .and_then(median)
            .or_else(|| median(&self.all))
    }
}

fn median(q: &VecDeque<u64>) -> Option<u64> {
    if q.is_empty() {
        return None;
    }
    let mut v: Vec<u64> = q.iter().copied().collect();
    v.sort_unstable();
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[mid]
    } else {
        v[mid - 1] + (v[mid] - v[mid - 1]) / 2
    })
}

/// Minutes of history each forecast fits: the server's default
/// (`--forecast-history-minutes`).
const HISTORY_MINUTES: usize = 360;

/// The forecast holdback: on-demand milli-GPU asked per minute of the
/// replay so far, refitted once per minute with the server's forecast
/// ([`model::forecast`]); what the forecast expects over the notice period
/// is kept idle from spot, as the engine's `SpotRoom` keeps it (one market
/// here: the trace's tasks mostly take any model).
#[derive(Debug)]
pub struct Holdback {
    notice_minutes: usize,
    /// Milli-GPU asked per minute, oldest first, the last for `minute`.
    asked: VecDeque<f64>,
    minute: Option<u64>,
    /// Milli-GPU kept from spot until the next refit.
    held: u64,
    /// Refits, for the report.
    pub fits: usize,
}

impl Holdback {
    pub fn new(notice_s: u64) -> Holdback {
        Holdback {
            notice_minutes: usize::try_from(notice_s.max(1).div_ceil(60))
                .unwrap_or(1)
                .clamp(1, model::HORIZON_MINUTES),
            asked: VecDeque::new(),
            minute: None,
            held: 0,
            fits: 0,
        }
    }

    /// Moves the series on to the minute of `now`, refitting on a new minute
    /// from the finished minutes before it.
    pub fn advance(&mut self, now: u64) {
        let minute = now / 60;
        let Some(last) = self.minute else {
            self.minute = Some(minute);
            self.asked.push_back(0.0);
            return;
        };
        if minute <= last {
            return;
        }
        // Whole empty minutes in between count as zero demand (at most a history's worth).
        let gap = usize::try_from(minute - last).unwrap_or(usize::MAX);
        for _ in 0..gap.min(HISTORY_MINUTES + 1) {
            self.asked.push_back(0.0);
        }
        while self.asked.len() > HISTORY_MINUTES + 1 {
            self.asked.pop_front();
        }
        self.minute = Some(minute);
        let history: Vec<f64> = self
            .asked
            .iter()
            .take(self.asked.len() - 1)
            .copied()
            .collect();
        if history.is_empty() {
            return;
        }
        let f = model::forecast(&history, model::HORIZON_MINUTES);
        self.fits += 1;
        let expected: f64 = f.point.iter().take(self.notice_minutes).sum();
        self.held = expected.max(0.0).round() as u64;
    }

    /// An on-demand task asked for `milli` in the current minute.
    pub fn asked(&mut self, milli: u64) {
        if let Some(last) = self.asked.back_mut() {
            *last += milli as f64;
        }
    }

    /// Milli-GPU kept idle from spot now.
    #[cfg(test)]
    pub fn held(&self) -> u64 {
        self.held
    }

    /// Whether a spot task asking `milli` may start with `idle` milli-GPU free.
    pub fn allows(&self, idle: u64, milli: u64) -> bool {
        idle.saturating_sub(self.held) >= milli
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::cluster::tests::task;

    #[test]
    fn a_prediction_is_the_median_of_the_same_shape_else_of_every_finished_task() {
        let mut p = Predictor::default();
        let half = task(1000, GpuAsk::Share(500));
        let whole = task(1000, GpuAsk::Whole(1));
        assert_eq!(p.predict(&half), None);
        p.finished(&half, 100);
        p.finished(&half, 300);
        p.finished(&half, 200);
        assert_eq!(p.predict(&half), Some(200));
        // No whole-GPU task finished yet: every task's median.
        assert_eq!(p.predict(&whole), Some(200));
        p.finished(&whole, 5000);
        assert_eq!(p.predict(&whole), Some(5000));
        // Only the last SAMPLES count.
        for _ in 0..SAMPLES {
            p.finished(&half, 7);
        }
        assert_eq!(p.predict(&half), Some(7));
    }

    #[test]
    fn the_holdback_keeps_what_the_forecast_expects_over_the_notice() {
        let mut h = Holdback::new(120);
        assert_eq!(h.held(), 0);
        // A steady 1000 milli-GPU of on-demand asks a minute for an hour.
        for minute in 0..60u64 {
            h.advance(minute * 60);
            h.asked(1000);
        }
        h.advance(60 * 60);
        // Two notice minutes of 1000 each (the fit of a flat series is its mean).
        assert_eq!(h.held(), 2000);
        assert!(h.allows(3000, 1000));
        assert!(!h.allows(2500, 1000));
        assert_eq!(h.fits, 60);
    }

    #[test]
    fn empty_minutes_count_as_no_demand() {
        let mut h = Holdback::new(60);
        h.advance(0);
        h.asked(600);
        // Ten minutes later, one of them busy: too few to fit, so the mean
        // of the last ten minutes (60) over one notice minute.
        h.advance(10 * 60);
        assert_eq!(h.held(), 60);
        // Forty quiet minutes: nothing is expected.
        h.advance(50 * 60);
        assert_eq!(h.held(), 0);
    }
}
