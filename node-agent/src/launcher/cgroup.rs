//! A lease's CPU and memory limits as cgroups: cgroup v2 where the unified
//! hierarchy is mounted at `/sys/fs/cgroup` with the `cpu` and `memory`
//! controllers, else the v1 `cpu` and `memory` hierarchies. Where neither is
//! writable (an unprivileged agent, a container without cgroup access) the
//! lease runs without them and the agent says so once.

use gpuex_wire::protocol::HostLimits;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use uuid::Uuid;

const ROOT: &str = "/sys/fs/cgroup";
/// cpu.max / cpu.cfs_period_us.
const PERIOD_US: u64 = 100_000;

static WARNED: AtomicBool = AtomicBool::new(false);

/// The cgroup folders for `lease` with `limits` written, empty where cgroups
/// are not available.
pub fn create(owner_tag: &str, lease: Uuid, limits: HostLimits) -> Vec<PathBuf> {
    let quota = (limits.cpu_milli.max(1) * PERIOD_US / 1000).max(1000);
    let memory = limits.memory_mib.max(16) * 1024 * 1024;
    let root = Path::new(ROOT);
    let made = if root.join("cgroup.controllers").exists() {
        v2(root, owner_tag, lease, quota, memory)
    } else {
        v1(root, owner_tag, lease, quota, memory)
    };
    match made {
        Ok(paths) => paths,
        Err(e) => {
            if !WARNED.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    "cgroups unavailable ({e}): leases run without CPU and memory limits"
                );
            }
            Vec::new()
        }
    }
}

fn v2(
    root: &Path,
    tag: &str,
    lease: Uuid,
    quota: u64,
    memory: u64,
) -> std::io::Result<Vec<PathBuf>> {
    let parent = root.join(format!("gpuex-{tag}"));
    std::fs::create_dir_all(&parent)?;
    // Delegate the controllers down to the lease's group.
    std::fs::write(root.join("cgroup.subtree_control"), "+cpu +memory")?;
    std::fs::write(parent.join("cgroup.subtree_control"), "+cpu +memory")?;
    let dir = parent.join(lease.to_string());
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("cpu.max"), format!("{quota} {PERIOD_US}"))?;
    std::fs::write(dir.join("memory.max"), memory.to_string())?;
    let _ = std::fs::write(dir.join("memory.swap.max"), "0");
    Ok(vec![dir])
}

fn v1(
    root: &Path,
    tag: &str,
    lease: Uuid,
    quota: u64,
    memory: u64,
) -> std::io::Result<Vec<PathBuf>> {
    let mem = root
        .join("memory")
        .join(format!("gpuex-{tag}"))
        .join(lease.to_string());
    let cpu = root
        .join("cpu")
        .join(format!("gpuex-{tag}"))
        .join(lease.to_string());
    std::fs::create_dir_all(&mem)?;
    std::fs::write(mem.join("memory.limit_in_bytes"), memory.to_string())?;
    std::fs::create_dir_all(&cpu)?;
    std::fs::write(cpu.join("cpu.cfs_period_us"), PERIOD_US.to_string())?;
    std::fs::write(cpu.join("cpu.cfs_quota_us"), quota.to_string())?;
    Ok(vec![mem, cpu])
}

/// Remove the lease's cgroups; one that still holds a dying process is
/// left for the next try. Returns the ones left.
pub fn remove(paths: &[PathBuf]) -> Vec<PathBuf> {
    paths
        .iter()
        .filter(|p| p.exists() && std::fs::remove_dir(p).is_err())
        .cloned()
        .collect()
}

/// The pids in the lease's cgroups: a process that cleared its marks and
/// left its group is still here.
pub fn pids(paths: &[PathBuf]) -> Vec<i32> {
    paths
        .iter()
        .filter_map(|p| std::fs::read_to_string(p.join("cgroup.procs")).ok())
        .flat_map(|t| {
            t.lines()
                .filter_map(|l| l.trim().parse().ok())
                .collect::<Vec<i32>>()
        })
        .collect()
}

/// What the lease's memory cgroup holds, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryUse {
    /// Now: v2 `memory.current`, v1 `memory.usage_in_bytes`.
    pub current: u64,
    /// The most it has held: v2 `memory.peak` (since the cgroup was made;
    /// kernels before 5.19 have none), v1 `memory.max_usage_in_bytes`
    /// (since [`reset_peak`]).
    pub peak: Option<u64>,
    /// The peak restarts at [`reset_peak`] (v1); v2's cannot be reset for
    /// another reader (a write resets it for the writer's own handle only).
    pub resettable: bool,
}

fn read_bytes(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// The memory of the lease whose cgroups are `paths`; `None` when none of
/// them is a memory cgroup.
pub fn memory_use(paths: &[PathBuf]) -> Option<MemoryUse> {
    paths.iter().find_map(|p| {
        if let Some(current) = read_bytes(&p.join("memory.current")) {
            return Some(MemoryUse {
                current,
                peak: read_bytes(&p.join("memory.peak")),
                resettable: false,
            });
        }
        Some(MemoryUse {
            current: read_bytes(&p.join("memory.usage_in_bytes"))?,
            peak: read_bytes(&p.join("memory.max_usage_in_bytes")),
            resettable: true,
        })
    })
}

/// Start the v1 peak of the lease's memory cgroup over (writing 0 sets it
/// to the current usage), so the next read is the next interval's own.
pub fn reset_peak(paths: &[PathBuf]) {
    for p in paths {
        let file = p.join("memory.max_usage_in_bytes");
        if file.exists() {
            if let Err(e) = std::fs::write(&file, "0") {
                tracing::debug!(cgroup = %p.display(), "cannot reset the memory peak: {e}");
            }
        }
    }
}
