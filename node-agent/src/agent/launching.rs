//! Setting a workload up before it starts: its pool user, its working
//! folder, its GPUs and the launcher's plan.

use super::ending::{remove_launch_file, remove_workdir};
use super::*;

impl Agent {
    /// A uid of the pool that no lease of this agent holds and no process
    /// runs as, picked at random so two agents that share a pool by mistake
    /// rarely collide.
    pub(super) fn pick_user(&self) -> Option<(u32, u32)> {
        let (first, last) = self.cfg.uid_pool;
        let own = nix::unistd::getuid().as_raw();
        let taken: std::collections::BTreeSet<u32> = self
            .leases
            .values()
            .filter_map(|l| l.uid)
            .chain(self.fetching.values().map(|f| f.user.0))
            .chain(crate::reaper::busy_uids())
            .collect();
        let span = u64::from(last - first) + 1;
        let offset = (Uuid::new_v4().as_u128() % u128::from(span)) as u64;
        (0..span)
            .map(|i| first + ((offset + i) % span) as u32)
            .find(|uid| *uid != 0 && *uid != own && !taken.contains(uid))
            .map(|uid| (uid, uid))
    }

    /// `work/<lease>`, fresh, mode 0700, owned by the lease's user: a disk
    /// of the lease's quota of its own (see [`crate::disk`]), holding
    /// `outputs/` and `checkpoint/`.
    pub(super) fn make_workdir(&self, id: Uuid, (uid, gid): (u32, u32)) -> Result<PathBuf, String> {
        use std::os::unix::fs::PermissionsExt;
        let dir = self.cfg.work_dir.join(id.to_string());
        if dir.exists() {
            remove_workdir(&dir);
        }
        let folder = |e: std::io::Error| e.to_string();
        std::fs::create_dir(&dir).map_err(folder)?;
        if self.cfg.disk_quota_mib > 0 {
            crate::disk::create(&dir, (uid, gid), self.cfg.disk_quota_mib)?;
        }
        let made = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
            .and_then(|()| std::os::unix::fs::chown(&dir, Some(uid), Some(gid)))
            .and_then(|()| crate::disk::make_lease_folders(&dir, (uid, gid)))
            .and_then(|()| std::fs::canonicalize(&dir));
        made.map_err(|e| {
            remove_workdir(&dir);
            e.to_string()
        })
    }

    /// Provision the slice, start the workload through the launcher and
    /// report `provisioned`: billing starts here, after any fetch.
    pub(super) fn launch(
        &mut self,
        id: Uuid,
        start: WaitingStart,
        user: (u32, u32),
        workdir: PathBuf,
        preamble: String,
    ) {
        let WaitingStart {
            placement,
            command,
            env,
            end_at,
            held,
            image,
            network,
            limits,
            checkpoint,
            ..
        } = start;
        let (device, mig, held, compute_share) = match self.provision(&placement, held) {
            Ok(p) => p,
            Err(reason) => {
                tracing::warn!(lease_id = %id, "cannot provision: {reason}");
                remove_workdir(&workdir);
                return self.report(id, AssignmentStatus::Failed { reason });
            }
        };
        let simulated = self.backend.kind() == BackendKind::Simulated;
        let mut cgroups = Vec::new();
        let mut image_id = None;
        let workload = match command.as_deref() {
            Some(cmd) => {
                if self.launcher.kind() != crate::config::LauncherKind::Container {
                    if let Some(l) = limits {
                        cgroups = crate::launcher::cgroup::create(&self.cgroup_tag, id, l);
                    }
                }
                let gpus = self.lease_gpus(&placement, mig.as_ref());
                let mut env = workload_env(&placement, &device, &env);
                env.entry("PATH".into())
                    .or_insert_with(|| "/usr/local/bin:/usr/bin:/bin".into());
                env.insert("HOME".into(), workdir.to_string_lossy().into_owned());
                for (folder, var) in crate::disk::LEASE_FOLDERS {
                    let path = workdir.join(folder);
                    env.insert(var.into(), path.to_string_lossy().into_owned());
                }
                // The marks, which the lease's own variables cannot override.
                env.insert(crate::reaper::OWNER_VAR.into(), self.owner.clone());
                env.insert(crate::reaper::LEASE_VAR.into(), id.to_string());
                let hide = [self.cfg.state_dir.clone(), self.cfg.work_dir.clone()];
                let launch_file = self.launch_path(id);
                // On the simulated backend the host's memory stands in for
                // the slice's GPU memory: a workload that allocates more than
                // its slice fails as it would on a GPU. Real GPUs' memory is
                // limited by their partition.
                let address_space = simulated.then(|| slice_memory_bytes(&held)).flatten();
                let spec = crate::launcher::LaunchSpec {
                    lease: id,
                    command: cmd,
                    workdir: &workdir,
                    hide: &hide,
                    user,
                    gpus: &gpus,
                    limits,
                    network,
                    image: image.as_deref(),
                    checkpoint_path: checkpoint.as_ref().map(|c| c.path.as_str()),
                    cgroups: &cgroups,
                    env: &env,
                    launch_file: &launch_file,
                    address_space,
                };
                let marks = Marks {
                    owner: self.owner.clone(),
                    lease: id,
                    uid: Some(user.0),
                };
                let spawned = self.launcher.plan(&spec).and_then(|plan| {
                    image_id.clone_from(&plan.image_id);
                    Workload::spawn(&plan, Some(&workdir), marks, &preamble)
                        .map_err(|e| e.to_string())
                });
                match spawned {
                    Ok(w) => Some(w),
                    Err(e) => {
                        remove_launch_file(&launch_file);
                        self.launcher.end(id); // its network namespace, if any
                        self.tear_down(mig.as_ref());
                        remove_workdir(&workdir);
                        self.stale_cgroups
                            .extend(crate::launcher::cgroup::remove(&cgroups));
                        let reason = format!("cannot start the command: {e}");
                        return self.report(id, AssignmentStatus::Failed { reason });
                    }
                }
            }
            None => None,
        };
        tracing::info!(lease_id = %id, %device, uid = user.0, "provisioned");
        // Billing starts at `provisioned`; metering starts at the same instant.
        let provisioned_at = Utc::now();
        self.leases.insert(
            id,
            Lease {
                placement,
                device: device.clone(),
                mig,
                held,
                compute_share,
                workload,
                state: LeaseRunState::Running,
                end_at,
                end_reason: None,
                metered_until: provisioned_at,
                util_sum: 0.0,
                util_samples: 0,
                peak_memory: if simulated {
                    super::peak_memory::PeakMemory::host(slice_memory_bytes(&held))
                } else {
                    super::peak_memory::PeakMemory::gpu()
                },
                logs_sent_total: 0,
                uid: Some(user.0),
                workdir: Some(workdir),
                cgroups,
                uploads: Default::default(),
                checkpointing: checkpoint
                    .filter(|_| command.is_some())
                    .map(super::checkpoints::Checkpointing::new),
            },
        );
        self.persist_leftovers();
        let provisioned = AssignmentStatus::Provisioned { device, image_id };
        self.report_at(id, provisioned, provisioned_at);
    }

    /// The placement's GPUs as the launchers see them.
    pub(super) fn lease_gpus(
        &self,
        placement: &AgentPlacement,
        mig: Option<&(u32, MigSlice)>,
    ) -> Vec<crate::launcher::LeaseGpu> {
        placement
            .gpus
            .iter()
            .filter_map(|&i| gpu_of(&self.inventory, i).ok())
            .map(|g| crate::launcher::LeaseGpu {
                index: g.index,
                uuid: g.uuid.clone(),
                mig: mig
                    .filter(|(gpu, _)| *gpu == g.index)
                    .map(|(_, m)| (m.uuid.clone(), m.gpu_instance_id, m.compute_instance_id)),
            })
            .collect()
    }
}

/// The GPU memory `held` (all of the lease's GPUs) in bytes (GB are 10⁹
/// bytes); `None` when that is nothing or does not fit (no limit then).
fn slice_memory_bytes(held: &HeldUnits) -> Option<u64> {
    use rust_decimal::prelude::ToPrimitive;
    held.vram_gb
        .checked_mul(Decimal::from(1_000_000_000_u64))?
        .floor()
        .to_u64()
        .filter(|b| *b > 0)
}
