//! CPU time from `/proc`: what each replica, the bench itself and the whole
//! machine spent during a measured window.

use super::*;

/// CPU cores busy on average over a window: each replica, the bench, the machine.
pub(super) struct Cores {
    pub(super) replicas: Vec<f64>,
    pub(super) client: f64,
    pub(super) machine: f64,
}

/// Clock ticks a second of `/proc`'s CPU times (`getconf CLK_TCK`: 100 on
/// Linux everywhere this runs).
pub(super) const TICKS_PER_S: f64 = 100.0;

/// User and system CPU ticks of a process, from `/proc/<pid>/stat`.
pub(super) fn process_ticks(pid: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command name in parentheses: state is field 3, utime 14, stime 15.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// Busy ticks of the whole machine (all but idle and iowait), from `/proc/stat`.
pub(super) fn machine_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let ticks: Vec<u64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .filter_map(|v| v.parse().ok())
        .collect();
    let total: u64 = ticks.iter().take(8).sum();
    Some(total - ticks.get(3)? - ticks.get(4)?)
}

/// CPU ticks of the replicas, this process and the machine, at one moment.
pub(super) fn ticks(replicas: &[Replica]) -> Option<(Vec<u64>, u64, u64)> {
    let each = replicas
        .iter()
        .map(|r| process_ticks(&r.child.id()?.to_string()))
        .collect::<Option<Vec<u64>>>()?;
    Some((each, process_ticks("self")?, machine_ticks()?))
}
