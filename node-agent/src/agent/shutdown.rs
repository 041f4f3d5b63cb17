//! Stopping the agent (SIGTERM, SIGINT): no workload outlives it (ARCHITECTURE.md
//! §13). Each lease's processes get SIGTERM, then SIGKILL after the stop
//! grace; slices are torn down, usage is metered up to the end and spooled,
//! and what can still reach the server in a moment is sent.
//!
//! Leases the server still thinks running are not reported ended: an agent
//! restarted within the node timeout is told to start them again, as after
//! a crash, and one that stays away has its node lost, with charges up to
//! its last heartbeat.

use super::*;

/// How long the agent keeps trying to send its last reports and usage.
const LAST_WORDS: Duration = Duration::from_secs(3);
/// How long SIGKILLed processes get to disappear.
const KILL_WAIT: Duration = Duration::from_secs(2);

/// A lease, its pool uid, working folder and cgroups.
type LeaseFiles = (Uuid, Option<u32>, Option<PathBuf>, Vec<PathBuf>);

impl Agent {
    /// Ends every workload (SIGTERM, SIGKILL after `stop_grace`), then
    /// meters, spools, checkpoints and sends what it can.
    pub(super) async fn stop_everything(&mut self) {
        let live: Vec<Uuid> = self
            .leases
            .iter()
            .filter(|(_, l)| l.workload.as_ref().is_some_and(|w| w.exit().is_none()))
            .map(|(id, _)| *id)
            .collect();
        tracing::info!(workloads = live.len(), "stopping: ending every workload");
        for id in &live {
            if let Some(w) = self.leases.get(id).and_then(|l| l.workload.as_ref()) {
                w.signal(Signal::SIGTERM);
            }
        }
        let deadline = Instant::now() + self.cfg.stop_grace;
        while Instant::now() < deadline && self.any_workload_running() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        for lease in self.leases.values() {
            if let Some(w) = &lease.workload {
                w.end_the_rest();
            }
        }
        // Anything else of this agent's: strays of leases already forgotten.
        if !crate::reaper::kill_marked(&self.owner, None, KILL_WAIT).await {
            tracing::error!("some workload processes would not die");
        }
        // Leases being stopped at the server's request are over: say so.
        let stopping: Vec<Uuid> = self
            .leases
            .iter()
            .filter(|(_, l)| l.state == LeaseRunState::Stopping)
            .map(|(id, _)| *id)
            .collect();
        for id in stopping {
            let exit = self
                .leases
                .get(&id)
                .and_then(|l| l.workload.as_ref())
                .and_then(Workload::exit);
            self.finish(id, exit);
        }
        // The rest is metered up to now and its slices torn down; the
        // checkpoint then lists nothing left to clean up.
        self.meter_running();
        let slices: Vec<(u32, MigSlice)> = self
            .leases
            .values_mut()
            .filter(|l| l.state != LeaseRunState::Ended)
            .filter_map(|l| l.mig.take())
            .collect();
        for slice in &slices {
            self.tear_down(Some(slice));
        }
        // Whatever of theirs escaped group and marks still runs as their
        // pool user; then their folders, cgroups and containers go.
        let rest: Vec<LeaseFiles> = self
            .leases
            .iter_mut()
            .filter(|(_, l)| l.state != LeaseRunState::Ended)
            .map(|(id, l)| {
                (
                    *id,
                    l.uid.take(),
                    l.workdir.take(),
                    std::mem::take(&mut l.cgroups),
                )
            })
            .collect();
        for (id, uid, workdir, cgroups) in rest {
            if let Some(uid) = uid {
                if !crate::reaper::kill_uid(uid, KILL_WAIT).await {
                    tracing::error!(uid, "some processes of uid {uid} would not die");
                }
            }
            self.end_lease_files(id, uid, workdir, &cgroups);
        }
        for (id, f) in std::mem::take(&mut self.fetching) {
            f.task.abort();
            super::ending::remove_workdir(&f.workdir);
            tracing::info!(lease_id = %id, "artifact fetch abandoned");
        }
        self.wait_for_retiring(super::outputs::RETIRE_WAIT).await;
        self.leases.retain(|_, l| l.state == LeaseRunState::Ended);
        self.spool_records();
        self.persist_leftovers();
        if self.registered {
            let send = async {
                self.flush_outbox().await;
                self.flush_usage().await;
            };
            if tokio::time::timeout(LAST_WORDS, send).await.is_err() {
                tracing::warn!("the server did not take the last reports in time");
            }
        }
        tracing::info!("stopped; unsent usage stays in the spool");
    }

    fn any_workload_running(&self) -> bool {
        self.leases
            .values()
            .any(|l| l.workload.as_ref().is_some_and(|w| w.exit().is_none()))
    }
}
