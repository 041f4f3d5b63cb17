//! Each lease's disk quota (ARCHITECTURE.md §21): its working folder is a file system
//! of its own. A sparse file of the quota's size beside the folder
//! (`<work>/<lease>.disk`) holds an ext4 file system that is loop-mounted
//! over the folder, so the kernel refuses the write that would pass the
//! quota (ENOSPC) whatever the workload does; no poller races it. The agent
//! then notices the full disk and ends the lease `disk_quota`.
//!
//! The file system has no journal and no reserved blocks (a lease's folder
//! needs neither), its root belongs to the lease's pool user, and it is
//! mounted `nosuid,nodev`: nothing the workload leaves there gains rights.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What every lease's folder holds besides the workload's own files:
/// `outputs/` comes back to the buyer, `checkpoint/` survives the lease.
/// Each pair: the folder's name and the variable that tells the workload
/// where it is.
pub const LEASE_FOLDERS: [(&str, &str); 2] = [
    ("outputs", "GPUEX_OUTPUTS"),
    ("checkpoint", "GPUEX_CHECKPOINT"),
];

/// The sparse file behind the lease folder `dir`.
pub fn image_of(dir: &Path) -> PathBuf {
    dir.with_extension("disk")
}

/// Make `dir` a fresh file system of `quota_mib` MiB owned by `owner`, with
/// its [`LEASE_FOLDERS`]. On failure nothing is left mounted.
pub fn create(dir: &Path, owner: (u32, u32), quota_mib: u64) -> Result<(), String> {
    let image = image_of(dir);
    let _ = std::fs::remove_file(&image);
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&image)
        .map_err(|e| format!("cannot create {}: {e}", image.display()))?;
    file.set_len(quota_mib.saturating_mul(1 << 20))
        .map_err(|e| format!("cannot size {}: {e}", image.display()))?;
    drop(file);
    let made = run(Command::new(program("mkfs.ext4")?)
        .args(["-q", "-F", "-m", "0", "-O", "^has_journal", "-E"])
        .arg(format!(
            "root_owner={}:{},lazy_itable_init=1,nodiscard",
            owner.0, owner.1
        ))
        .arg(&image))
    .and_then(|()| {
        run(Command::new(program("mount")?)
            .args(["-t", "ext4", "-o", "loop,nosuid,nodev"])
            .arg(&image)
            .arg(dir))
    });
    if let Err(e) = made {
        let _ = std::fs::remove_file(&image);
        return Err(e);
    }
    let _ = std::fs::remove_dir(dir.join("lost+found"));
    Ok(())
}

/// The lease's `outputs/` and `checkpoint/`, mode 0700, owned by `owner`.
pub fn make_lease_folders(dir: &Path, owner: (u32, u32)) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    for (name, _) in LEASE_FOLDERS {
        let sub = dir.join(name);
        std::fs::create_dir(&sub)?;
        std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o700))?;
        std::os::unix::fs::chown(&sub, Some(owner.0), Some(owner.1))?;
    }
    Ok(())
}

/// Unmount the lease's file system (lazily: a process that still holds a
/// file in it lets go when it dies) and remove its file. A folder without
/// one is left as it is.
pub fn remove(dir: &Path) {
    let image = image_of(dir);
    if !image.exists() {
        return;
    }
    if is_mount_point(dir) {
        if let Err(e) = nix::mount::umount2(dir, nix::mount::MntFlags::MNT_DETACH) {
            tracing::warn!(dir = %dir.display(), "cannot unmount the lease's disk: {e}");
        }
    }
    if let Err(e) = std::fs::remove_file(&image) {
        tracing::warn!(file = %image.display(), "cannot remove the lease's disk: {e}");
    }
}

/// Whether the lease's disk is (nearly) full: less free than 1% of it,
/// at least 1 MiB and at most 64 MiB. The kernel has refused or is about to
/// refuse its writes.
pub fn is_full(dir: &Path) -> bool {
    let Ok(stat) = nix::sys::statvfs::statvfs(dir) else {
        return false;
    };
    let block = stat.fragment_size();
    let size = stat.blocks().saturating_mul(block);
    let free = stat.blocks_available().saturating_mul(block);
    free < (size / 100).clamp(1 << 20, 64 << 20)
}

/// Whether `dir` is a mount point (its device differs from its parent's).
fn is_mount_point(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let parent = dir.parent().unwrap_or(Path::new("/"));
    match (std::fs::metadata(dir), std::fs::metadata(parent)) {
        (Ok(d), Ok(p)) => d.dev() != p.dev(),
        _ => false,
    }
}

/// The loop file systems' files a killed agent left in `work_root` whose
/// folder is gone: remove them (a folder's own is removed with it).
pub fn sweep_strays(work_root: &Path) {
    let Ok(entries) = std::fs::read_dir(work_root) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "disk") && !path.with_extension("").exists() {
            tracing::warn!(file = %path.display(), "removing a lease disk a previous agent process left");
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Whether this host can give leases disks: root, `mkfs.ext4` and `mount`.
pub fn supported() -> Result<(), String> {
    if !nix::unistd::geteuid().is_root() {
        return Err("lease disks need the agent to run as root".into());
    }
    program("mkfs.ext4").and(program("mount")).map(|_| ())
}

fn program(name: &str) -> Result<PathBuf, String> {
    ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
        .ok_or_else(|| format!("`{name}` is missing (Debian: e2fsprogs, mount)"))
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let out = cmd
        .env_clear()
        .env("PATH", crate::launcher::HELPER_PATH)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{:?} failed ({}): {}",
            cmd.get_program(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_disk_is_the_folder_beside_it_with_disk_appended() {
        let dir = Path::new("/var/lib/gpuex-work/0190a1b2-0000-7000-8000-000000000001");
        assert_eq!(
            image_of(dir),
            Path::new("/var/lib/gpuex-work/0190a1b2-0000-7000-8000-000000000001.disk")
        );
    }

    #[test]
    fn a_disk_fills_the_kernel_refuses_past_its_quota_and_it_reads_full() {
        if let Err(why) = supported() {
            // CI installs e2fsprogs and runs as root: there a skip is a failure.
            assert!(std::env::var_os("GPUEX_CI").is_none(), "lease disks: {why}");
            eprintln!("SKIPPED: lease disks: {why}");
            return;
        }
        let root = tempfile::tempdir().expect("tempdir");
        let dir = root.path().join("lease");
        std::fs::create_dir(&dir).expect("mkdir");
        create(&dir, (61_234, 61_234), 16).expect("disk");
        make_lease_folders(&dir, (61_234, 61_234)).expect("folders");
        assert!(is_mount_point(&dir));
        assert!(!is_full(&dir));
        use std::io::Write;
        let mut f = std::fs::File::create(dir.join("outputs/big")).expect("file");
        let chunk = vec![7u8; 1 << 20];
        let refused = (0..64).find_map(|_| f.write_all(&chunk).err());
        let err = refused.expect("the kernel refuses writes past 16 MiB");
        assert_eq!(err.raw_os_error(), Some(nix::libc::ENOSPC), "{err}");
        assert!(is_full(&dir));
        drop(f);
        remove(&dir);
        assert!(!is_mount_point(&dir));
        assert!(!image_of(&dir).exists());
    }
}
