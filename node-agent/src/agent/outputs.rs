//! Sending leases' outputs (see [`crate::outputs`]; the checkpoint goes
//! with the last ones, see [`super::checkpoints`]): every
//! `outputs_interval` while a lease runs, so a lost node's buyer keeps what
//! the last round sent, and a last time when it ends, however it ends,
//! before its folder goes.

use super::ending::remove_workdir;
use super::*;
use crate::outputs::{upload_changed, Sent, UploadError};
use std::sync::Arc;

/// How many times a lease's last upload is tried while the server is out of reach.
pub(super) const FINAL_TRIES: u32 = 3;
/// How long the agent's shutdown waits for the last uploads.
pub(super) const RETIRE_WAIT: Duration = Duration::from_secs(30);

/// A lease's uploads: what was sent, and the round in flight.
#[derive(Default)]
pub(super) struct Uploads {
    sent: Arc<tokio::sync::Mutex<Sent>>,
    in_flight: Option<tokio::task::JoinHandle<()>>,
}

impl Agent {
    /// Start a round for each running lease that has none in flight.
    pub(super) fn upload_outputs(&mut self) {
        for (id, lease) in &mut self.leases {
            if lease.state != LeaseRunState::Running {
                continue;
            }
            let Some(dir) = lease.workdir.as_ref().map(|w| w.join("outputs")) else {
                continue;
            };
            if lease
                .uploads
                .in_flight
                .as_ref()
                .is_some_and(|h| !h.is_finished())
            {
                continue;
            }
            let (client, sent, id) = (self.client.clone(), lease.uploads.sent.clone(), *id);
            lease.uploads.in_flight = Some(tokio::spawn(async move {
                let mut sent = sent.lock().await;
                match upload_changed(&client, id, &dir, &mut sent).await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(lease_id = %id, files = n, "outputs sent"),
                    Err(e) => tracing::warn!(lease_id = %id, "outputs not sent: {e}"),
                }
            }));
        }
    }

    /// The lease is over and its processes killed: send what changed in its
    /// outputs, then remove its folder. Off the agent's loop; the folder
    /// becomes root's first, so the pool uid's next lease cannot reach it.
    pub(super) fn retire_workdir(&mut self, id: Uuid, dir: PathBuf) {
        self.retiring.retain(|h| !h.is_finished());
        if let Err(e) = std::os::unix::fs::chown(&dir, Some(0), Some(0)) {
            tracing::warn!(lease_id = %id, "cannot take the working folder back: {e}");
        }
        let uploads = self
            .leases
            .get_mut(&id)
            .map(|l| std::mem::take(&mut l.uploads))
            .unwrap_or_default();
        let checkpoint = self.last_checkpoint(id, &dir);
        let client = self.client.clone();
        self.retiring.push(tokio::spawn(async move {
            if let Some(checkpoint) = checkpoint {
                checkpoint.await;
            }
            if let Some(round) = uploads.in_flight {
                let _ = round.await;
            }
            let mut sent = uploads.sent.lock().await;
            let outputs = dir.join("outputs");
            for attempt in 1..=FINAL_TRIES {
                match upload_changed(&client, id, &outputs, &mut sent).await {
                    Ok(n) => {
                        tracing::info!(lease_id = %id, files = n, "last outputs sent");
                        break;
                    }
                    Err(UploadError::Later(e)) if attempt < FINAL_TRIES => {
                        tracing::warn!(lease_id = %id, "outputs not sent, trying again: {e}");
                        tokio::time::sleep(Duration::from_secs(2)).await;
                    }
                    Err(e) => {
                        tracing::warn!(lease_id = %id, "the last outputs were not sent: {e}");
                        break;
                    }
                }
            }
            let _ = tokio::task::spawn_blocking(move || remove_workdir(&dir)).await;
        }));
    }

    /// Wait, at most `within`, for the ended leases' last uploads.
    pub(super) async fn wait_for_retiring(&mut self, within: Duration) {
        let all = futures_util::future::join_all(std::mem::take(&mut self.retiring));
        if tokio::time::timeout(within, all).await.is_err() {
            tracing::warn!("some ended leases' outputs were not all sent before the agent stopped");
        }
    }
}
