//! What a test needs from the host, asked in one place for both test crates
//! (`tests/api` and `node-agent/tests/agent` include this file).
//!
//! Under CI (`GPUEX_CI=1`, which `.ci/run` exports) a missing tool fails the
//! test: CI installs and starts everything, so an absence there is a broken
//! run, never a quiet pass. Anywhere else the test prints why it skips and
//! returns.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// Whether this run is CI's: a missing tool is then a failure.
pub fn under_ci() -> bool {
    std::env::var_os("GPUEX_CI").is_some_and(|v| !v.is_empty() && v != "0")
}

/// `check`'s value, or: under CI a panic naming `what` and why; elsewhere
/// `None` after printing that the test skips and why.
pub fn require<T>(what: &str, check: Result<T, String>) -> Option<T> {
    match check {
        Ok(value) => Some(value),
        Err(why) if under_ci() => panic!("{what} is needed under CI (GPUEX_CI=1): {why}"),
        Err(why) => {
            eprintln!("SKIPPED: needs {what}: {why}");
            None
        }
    }
}

/// The PostgreSQL server the tests may use (`GPUEX_TEST_POSTGRES_URL`).
pub fn postgres() -> Result<String, String> {
    std::env::var("GPUEX_TEST_POSTGRES_URL")
        .ok()
        .filter(|url| !url.is_empty())
        .ok_or_else(|| "GPUEX_TEST_POSTGRES_URL is not set".to_string())
}

/// Root, which giving files away and the uid pools need.
pub fn root() -> Result<(), String> {
    if nix::unistd::geteuid().is_root() {
        Ok(())
    } else {
        Err("the test must run as root".into())
    }
}

/// A program that answers `--version`.
pub fn program(name: &str) -> Result<(), String> {
    let out = Command::new(name)
        .arg("--version")
        .output()
        .map_err(|e| format!("{name} cannot run: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("`{name} --version` failed"))
    }
}

/// Bubblewrap, able to make the namespaces the sandbox launcher asks for.
pub fn bubblewrap() -> Result<(), String> {
    let out = Command::new("bwrap")
        .args(["--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"])
        .args([
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-net",
            "--",
            "/bin/true",
        ])
        .output()
        .map_err(|e| format!("bubblewrap (bwrap) cannot run: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "bubblewrap cannot make namespaces here: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// A cgroup of its own can be made (the agent's resource limits need it).
pub fn cgroups() -> Result<(), String> {
    let root = Path::new("/sys/fs/cgroup");
    let parent = if root.join("cgroup.controllers").exists() {
        root.to_path_buf()
    } else {
        root.join("memory")
    };
    let probe = parent.join(format!("gpuex-probe-{}", std::process::id()));
    match std::fs::create_dir(&probe) {
        Ok(()) => {
            let _ = std::fs::remove_dir(&probe);
            Ok(())
        }
        Err(e) => Err(format!(
            "cannot make a cgroup under {}: {e}",
            parent.display()
        )),
    }
}

/// A container image made here.
pub struct PodmanImage {
    /// The image's name, `localhost/…`.
    pub image: String,
}

/// Podman with a busybox image imported from a root file system built here
/// (no registry is reachable).
pub fn podman_image(scratch: &Path) -> Result<PodmanImage, String> {
    let run = |cmd: &mut Command| -> Result<(), String> {
        let out = cmd.output().map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
        }
    };
    run(Command::new("podman").arg("--version")).map_err(|e| format!("podman: {e}"))?;
    run(Command::new("runc").arg("--version")).map_err(|e| format!("runc: {e}"))?;
    let busybox = ["/bin/busybox", "/usr/bin/busybox"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .ok_or("busybox (static) is not installed")?;
    let unique = format!("{}-{}", std::process::id(), rand_suffix());
    let root = scratch.join(format!("rootfs-{unique}"));
    std::fs::create_dir_all(root.join("bin")).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(root.join("tmp")).map_err(|e| e.to_string())?;
    std::fs::copy(busybox, root.join("bin/busybox")).map_err(|e| e.to_string())?;
    for applet in [
        "sh", "echo", "sleep", "id", "cat", "env", "ls", "true", "touch", "mkdir", "test",
    ] {
        std::os::unix::fs::symlink("busybox", root.join("bin").join(applet))
            .map_err(|e| e.to_string())?;
    }
    let tar = scratch.join(format!("rootfs-{unique}.tar"));
    run(Command::new("tar")
        .arg("-C")
        .arg(&root)
        .arg("-cf")
        .arg(&tar)
        .arg("."))?;
    // A tag of its own: tests running side by side import their own, and
    // one's import never moves the tag another resolved.
    let image = format!("localhost/gpuex-test:busybox-{unique}");
    let imported = run(Command::new("podman").arg("import").arg(&tar).arg(&image));
    let _ = std::fs::remove_file(&tar);
    let _ = std::fs::remove_dir_all(&root);
    imported.map_err(|e| format!("podman import: {e}"))?;
    Ok(PodmanImage { image })
}

/// A name part unique within this process's run.
fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() as u64)
        .unwrap_or(0);
    nanos ^ (NEXT.fetch_add(1, Ordering::Relaxed) << 32)
}
