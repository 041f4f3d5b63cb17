//! The demo's container image: Debian's static busybox in a root file system
//! of its own, imported with `podman import` (no registry is needed or
//! reached). The demo's agents run every sample in it.

use std::path::Path;
use std::process::Command;

/// The image's name; `localhost` is the registry the demo's agents allow.
pub const DEMO_IMAGE: &str = "localhost/gpuex-demo:busybox";

fn run(cmd: &mut Command) -> Result<String, String> {
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
    }
}

/// The image, built under `data` unless podman has it already; else why the
/// container launcher cannot run here (podman, runc or a static busybox
/// missing), which the demo says before it falls back to processes.
pub fn prepare(data: &Path) -> Result<&'static str, String> {
    run(Command::new("podman").arg("--version")).map_err(|e| format!("podman: {e}"))?;
    run(Command::new("runc").arg("--version")).map_err(|e| format!("runc: {e}"))?;
    if run(Command::new("podman").args(["image", "exists", DEMO_IMAGE])).is_ok() {
        return Ok(DEMO_IMAGE);
    }
    // Debian's busybox-static: one binary with every applet, no libraries.
    let busybox = ["/bin/busybox", "/usr/bin/busybox"]
        .into_iter()
        .map(Path::new)
        .find(|p| p.exists())
        .ok_or("busybox is not installed (Debian: busybox-static)")?;
    let applets = run(Command::new(busybox).arg("--list"))?;
    let root = data.join("demo-image");
    let _ = std::fs::remove_dir_all(&root);
    let io = |e: std::io::Error| format!("cannot build the image's root: {e}");
    for dir in ["bin", "tmp", "etc"] {
        std::fs::create_dir_all(root.join(dir)).map_err(io)?;
    }
    std::fs::copy(busybox, root.join("bin/busybox")).map_err(io)?;
    for applet in applets.lines().map(str::trim).filter(|a| !a.is_empty()) {
        if applet != "busybox" && !applet.contains('/') {
            std::os::unix::fs::symlink("busybox", root.join("bin").join(applet)).map_err(io)?;
        }
    }
    std::fs::write(root.join("etc/passwd"), "root:x:0:0:root:/:/bin/sh\n").map_err(io)?;
    let tar = data.join("demo-image.tar");
    run(Command::new("tar")
        .arg("-C")
        .arg(&root)
        .arg("-cf")
        .arg(&tar)
        .arg("."))?;
    let imported = run(Command::new("podman")
        .arg("import")
        .arg(&tar)
        .arg(DEMO_IMAGE));
    let _ = std::fs::remove_file(&tar);
    let _ = std::fs::remove_dir_all(&root);
    imported.map_err(|e| format!("podman import: {e}"))?;
    Ok(DEMO_IMAGE)
}
