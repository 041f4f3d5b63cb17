//! The engine's recent demand mix, appended to `demand_log` at each commit
//! so a restart scores placements as before.

use crate::db::{push_rows, push_statement, Writes};
use crate::engine::placement::{DemandClass, DemandMix};

/// What of the engine's demand mix the `demand_log` table already holds.
#[derive(Debug, Clone, Copy, Default)]
pub struct DemandCursor {
    /// The mix's [`DemandMix::recorded`] count as last stored.
    pub persisted: u64,
    pub next_seq: i64,
}

/// The `demand_log` rows a batch appends, and the cursor after them.
#[derive(Debug, Default)]
pub(super) struct DemandLogWrite {
    rows: Vec<(i64, DemandClass)>,
    trim_before: Option<i64>,
    pub cursor: DemandCursor,
}

impl DemandLogWrite {
    /// The classes the mix recorded since the last commit, as `demand_log`
    /// rows, and the trim that keeps the log to the window (once per
    /// window's worth of appends).
    pub fn since(mix: &DemandMix, cursor: DemandCursor) -> DemandLogWrite {
        let new = mix.recorded().saturating_sub(cursor.persisted);
        let kept = mix.recent().len();
        let fresh = usize::try_from(new).unwrap_or(usize::MAX).min(kept);
        if fresh == 0 {
            return DemandLogWrite {
                cursor,
                ..DemandLogWrite::default()
            };
        }
        let rows: Vec<(i64, DemandClass)> = mix
            .recent()
            .skip(kept - fresh)
            .zip(cursor.next_seq..)
            .map(|(c, seq)| (seq, *c))
            .collect();
        let window = i64::try_from(mix.window()).unwrap_or(i64::MAX).max(1);
        let first = cursor.next_seq;
        let next_seq = first + i64::try_from(fresh).unwrap_or(i64::MAX);
        DemandLogWrite {
            rows,
            trim_before: ((first - 1) / window != (next_seq - 1) / window)
                .then_some(next_seq - window),
            cursor: DemandCursor {
                persisted: mix.recorded(),
                next_seq,
            },
        }
    }

    pub fn push<'a>(&'a self, writes: &mut Writes<'a>) {
        push_rows!(
            writes,
            "INSERT INTO demand_log (seq, milli, memory_mb, gpus, cpu_milli) ",
            self.rows,
            |row, (seq, c)| row
                .push_bind(*seq)
                .push_bind(i64::from(c.milli))
                .push_bind(i64::try_from(c.memory_mb).unwrap_or(i64::MAX))
                .push_bind(i64::from(c.gpus))
                .push_bind(i64::try_from(c.cpu_milli).unwrap_or(i64::MAX))
        );
        if let Some(before) = self.trim_before {
            push_statement!(writes, |delete| delete
                .push("DELETE FROM demand_log WHERE seq < ")
                .push_bind(before));
        }
    }
}
