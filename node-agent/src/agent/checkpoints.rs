//! A lease's checkpoint (see [`crate::checkpoint`]): put in place before the
//! workload starts when its order resumes, sent every `every_s` while it
//! runs (when the folder changed), and once more when it ends, however it
//! ends, before its folder goes.

use super::*;
use crate::checkpoint::{listing, pack, unpack, Listing};
use crate::outputs::UploadError;
use gpuex_wire::protocol::CheckpointPlan;
use std::path::Path;
use std::sync::Arc;

/// The spool's folder of archives being packed or unpacked.
pub(super) const SCRATCH_DIR: &str = "checkpoints";

/// A running lease's checkpointing.
pub(super) struct Checkpointing {
    pub(super) plan: CheckpointPlan,
    next_at: Instant,
    /// The folder as last sent.
    sent: Arc<tokio::sync::Mutex<Option<Listing>>>,
    in_flight: Option<tokio::task::JoinHandle<()>>,
}

impl Checkpointing {
    pub(super) fn new(plan: CheckpointPlan) -> Checkpointing {
        let next_at = Instant::now() + Duration::from_secs(u64::from(plan.every_s));
        Checkpointing {
            plan,
            next_at,
            sent: Default::default(),
            in_flight: None,
        }
    }
}

/// Where a lease's archive is packed or unpacked.
fn scratch(state_dir: &Path, lease: Uuid) -> PathBuf {
    state_dir.join(SCRATCH_DIR).join(format!("{lease}.tar"))
}

/// Pack `dir` and send it as the lease's checkpoint, unless it is as last
/// sent. Whether it sent one.
async fn send(
    client: &ApiClient,
    lease: Uuid,
    dir: PathBuf,
    archive: PathBuf,
    sent: &mut Option<Listing>,
) -> Result<bool, UploadError> {
    let Ok(dir) = std::fs::canonicalize(&dir) else {
        return Ok(false);
    };
    let packed = {
        let (dir, archive, last) = (dir.clone(), archive.clone(), sent.clone());
        tokio::task::spawn_blocking(move || {
            let (found, now) = listing(&dir);
            if last.as_ref() == Some(&now) {
                return Ok(None);
            }
            let out = std::fs::File::create(&archive)?;
            pack(&dir, &found, out)?;
            let size = std::fs::metadata(&archive)?.len();
            Ok::<_, std::io::Error>(Some((now, size)))
        })
        .await
        .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string())))
    };
    let (now, size) = match packed {
        Ok(Some(p)) => p,
        Ok(None) => return Ok(false),
        Err(e) => {
            tracing::warn!(lease_id = %lease, "cannot pack the checkpoint: {e}");
            return Ok(false);
        }
    };
    let file = match tokio::fs::File::open(&archive).await {
        Ok(f) => f,
        Err(e) => {
            tracing::warn!(lease_id = %lease, "cannot read the packed checkpoint: {e}");
            return Ok(false);
        }
    };
    let path = format!("/v1/agent/assignments/{lease}/checkpoint");
    let result = client.put_file(&path, file, size).await;
    let _ = tokio::fs::remove_file(&archive).await;
    match result {
        Ok(()) => {
            *sent = Some(now);
            Ok(true)
        }
        Err(e) if e.is_permanent() => Err(UploadError::Refused(e)),
        Err(e) => Err(UploadError::Later(e)),
    }
}

/// Put the order's last checkpoint into `dir` (fresh, the lease user's
/// `owner`); nothing when the order has none yet. How many files.
pub(super) async fn restore(
    client: &ApiClient,
    lease: Uuid,
    state_dir: &Path,
    dir: PathBuf,
    owner: (u32, u32),
) -> Result<usize, String> {
    let archive = scratch(state_dir, lease);
    let path = format!("/v1/agent/assignments/{lease}/checkpoint");
    let got = client
        .get_file(&path, &archive)
        .await
        .map_err(|e| format!("cannot fetch the checkpoint: {e}"))?;
    let Some(headers) = got else {
        return Ok(0);
    };
    let seq = headers
        .get("gpuex-checkpoint-seq")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("?")
        .to_owned();
    let unpacked = tokio::task::spawn_blocking(move || {
        let file = std::fs::File::open(&archive).map_err(|e| e.to_string());
        let result = file.and_then(|f| unpack(f, &dir, owner));
        let _ = std::fs::remove_file(&archive);
        result
    })
    .await
    .unwrap_or_else(|e| Err(e.to_string()))
    .map_err(|e| format!("cannot restore checkpoint {seq}: {e}"))?;
    tracing::info!(lease_id = %lease, seq, files = unpacked, "checkpoint restored");
    Ok(unpacked)
}

impl Agent {
    /// Send the checkpoints that are due and not already on their way.
    pub(super) fn send_checkpoints(&mut self) {
        let now = Instant::now();
        for (id, lease) in &mut self.leases {
            let (Some(cp), Some(workdir)) = (lease.checkpointing.as_mut(), lease.workdir.as_ref())
            else {
                continue;
            };
            if lease.state != LeaseRunState::Running
                || now < cp.next_at
                || cp.in_flight.as_ref().is_some_and(|h| !h.is_finished())
            {
                continue;
            }
            cp.next_at = now + Duration::from_secs(u64::from(cp.plan.every_s));
            let (client, sent, id) = (self.client.clone(), cp.sent.clone(), *id);
            let (dir, archive) = (workdir.join("checkpoint"), scratch(&self.cfg.state_dir, id));
            cp.in_flight = Some(tokio::spawn(async move {
                let mut sent = sent.lock().await;
                match send(&client, id, dir, archive, &mut sent).await {
                    Ok(true) => tracing::info!(lease_id = %id, "checkpoint sent"),
                    Ok(false) => {}
                    Err(e) => tracing::warn!(lease_id = %id, "checkpoint not sent: {e}"),
                }
            }));
        }
    }

    /// The ended lease's last checkpoint, sent before its folder goes (see
    /// [`Self::retire_workdir`]); `None` when it has none.
    pub(super) fn last_checkpoint(
        &mut self,
        id: Uuid,
        dir: &Path,
    ) -> Option<impl std::future::Future<Output = ()> + Send + 'static> {
        let cp = self.leases.get_mut(&id)?.checkpointing.take()?;
        let (client, dir) = (self.client.clone(), dir.join("checkpoint"));
        let archive = scratch(&self.cfg.state_dir, id);
        Some(async move {
            if let Some(round) = cp.in_flight {
                let _ = round.await;
            }
            let mut sent = cp.sent.lock().await;
            for attempt in 1..=super::outputs::FINAL_TRIES {
                match send(&client, id, dir.clone(), archive.clone(), &mut sent).await {
                    Ok(_) => break,
                    Err(UploadError::Later(e)) if attempt < super::outputs::FINAL_TRIES => {
                        tracing::warn!(lease_id = %id, "checkpoint not sent, trying again: {e}");
                        tokio::time::sleep(Duration::from_secs(2)).await;
                    }
                    Err(e) => {
                        tracing::warn!(lease_id = %id, "the last checkpoint was not sent: {e}");
                        break;
                    }
                }
            }
        })
    }
}
