//! How a lease's command and environment reach its workload without passing
//! through anything that runs as root or as the agent's user, and without
//! appearing on a command line (which every user of the host reads in
//! `/proc/PID/cmdline`); ARCHITECTURE.md §19.
//!
//! The agent writes them to a **launch file** in `<spool>/launch/` (the spool
//! is 0700, the file 0600, created afresh, never through a link):
//! - `process` and `sandbox`: JSON ([`LaunchRequest`]) owned by root, which
//!   `exec-workload` reads and deletes before anything else; it runs with a
//!   fixed environment of its own and hands the lease's only to the final
//!   exec (for bubblewrap, through `--clearenv --setenv …` in an `--args`
//!   memfd, so bubblewrap itself runs with the fixed environment too);
//! - `container`: a shell script owned by the lease's pool user, mounted
//!   read-only into the container and run by its `/bin/sh`; podman or docker
//!   runs with a fixed environment of its own.
//!
//! Either way the final exec is `/bin/sh -c` [`SHELL_SNIPPET`] (or the
//! script), a constant: the command itself travels in [`COMMAND_VAR`],
//! which the shell takes out of its environment before running it.

use gpuex_wire::workload_env::check_name;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The variable that carries the command to the final shell.
pub const COMMAND_VAR: &str = "GPUEX_COMMAND";

/// What the final shell runs: the command from [`COMMAND_VAR`], which it
/// removes from the environment its children inherit.
pub const SHELL_SNIPPET: &str =
    "gpuex_command=$GPUEX_COMMAND; unset GPUEX_COMMAND; eval \"$gpuex_command\"";

/// Where a container finds its launch script.
pub const CONTAINER_SCRIPT: &str = "/.gpuex-launch.sh";

/// What `exec-workload` reads from its launch file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchRequest {
    pub command: String,
    /// The final exec's whole environment.
    pub env: BTreeMap<String, String>,
}

/// A launch file the agent writes before it starts the workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchFile {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
    /// Who may read it besides root (the container's pool user), as uid, gid.
    pub owner: Option<(u32, u32)>,
}

impl LaunchFile {
    /// Create it, mode 0600, replacing a leftover of a crash; a link in its
    /// place is removed, never followed.
    pub fn write(&self) -> std::io::Result<()> {
        use std::os::unix::fs::OpenOptionsExt;
        match std::fs::remove_file(&self.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(&self.path)?;
        if let Some((uid, gid)) = self.owner {
            std::os::unix::fs::fchown(&file, Some(uid), Some(gid))?;
        }
        file.write_all(&self.bytes)
    }
}

/// Whether a lease's environment and command can be handed to a workload:
/// every name passes [`check_name`] (loader and runtime hooks never reach
/// anything), and nothing holds a NUL byte, which no environment can carry.
/// The reason names the variable, as the server's 422 does (`env.NAME`).
pub fn check_lease_env(env: &BTreeMap<String, String>, command: &str) -> Result<(), String> {
    for (name, value) in env {
        if let Err(e) = check_name(name) {
            return Err(format!("env.{name} {e}"));
        }
        if value.contains('\0') {
            return Err(format!("env.{name} holds a NUL byte"));
        }
    }
    if command.contains('\0') {
        return Err("the command holds a NUL byte".into());
    }
    Ok(())
}

/// The JSON launch file of the `process` and `sandbox` launchers.
pub fn request_file(path: &Path, command: &str, env: &BTreeMap<String, String>) -> LaunchFile {
    let request = LaunchRequest {
        command: command.to_string(),
        env: env.clone(),
    };
    LaunchFile {
        path: path.to_path_buf(),
        // A map of strings always serializes.
        bytes: serde_json::to_vec(&request).unwrap_or_default(),
        owner: None,
    }
}

/// The container's launch script: the environment exported, then the
/// command run as [`SHELL_SNIPPET`] runs it.
pub fn container_script(command: &str, env: &BTreeMap<String, String>) -> String {
    let mut script = String::from("# gpuex launch script: the lease's environment and command\n");
    for (name, value) in env {
        // Names passed check_name: plain shell names, never quoted.
        script.push_str(&format!("export {name}={}\n", shell_quote(value)));
    }
    script.push_str(&format!("gpuex_command={}\n", shell_quote(command)));
    script.push_str("eval \"$gpuex_command\"\n");
    script
}

/// `'…'`, with each `'` written as `'\''`: the shell takes everything else
/// (newlines included) literally.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Read the launch file at `path` and delete it. It must be a regular file
/// of this process's user (root), readable and writable by nobody else: one
/// anybody else could have written, or read, is refused.
pub fn consume(path: &Path) -> anyhow::Result<LaunchRequest> {
    use anyhow::{bail, Context};
    use std::io::Read;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
        .with_context(|| format!("cannot open the launch file {}", path.display()))?;
    let meta = file.metadata()?;
    let euid = nix::unistd::geteuid().as_raw();
    if !meta.is_file() || meta.uid() != euid || meta.mode() & 0o077 != 0 {
        bail!(
            "refusing the launch file {}: it must be a regular file of uid {euid} with mode 0600 \
             (it is uid {}, mode {:o})",
            path.display(),
            meta.uid(),
            meta.mode() & 0o7777
        );
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    std::fs::remove_file(path)
        .with_context(|| format!("cannot remove the launch file {}", path.display()))?;
    let request: LaunchRequest =
        serde_json::from_slice(&bytes).context("the launch file is not a launch request")?;
    if let Err(reason) = check_lease_env(&request.env, &request.command) {
        bail!("refusing to start the workload: {reason}");
    }
    Ok(request)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn temp_path() -> PathBuf {
        std::env::temp_dir().join(format!("gpuex-launch-{}", uuid::Uuid::new_v4()))
    }

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_launch_file_is_0600_and_replaces_a_link_instead_of_following_it() {
        let path = temp_path();
        let target = temp_path();
        std::fs::write(&target, "not yours").unwrap();
        std::os::unix::fs::symlink(&target, &path).unwrap();
        let file = request_file(&path, "echo hi", &env(&[("A", "1")]));
        file.write().unwrap();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        assert!(meta.is_file());
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(meta.uid(), nix::unistd::geteuid().as_raw());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "not yours");
        let read = consume(&path).unwrap();
        assert_eq!(read.command, "echo hi");
        assert_eq!(read.env, env(&[("A", "1")]));
        assert!(!path.exists(), "consumed");
        let _ = std::fs::remove_file(target);
    }

    #[test]
    fn a_launch_file_others_could_read_is_refused() {
        let path = temp_path();
        request_file(&path, "true", &BTreeMap::new())
            .write()
            .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = consume(&path).unwrap_err().to_string();
        assert!(
            err.contains("mode 0600") && err.contains("mode 644"),
            "{err}"
        );
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn a_launch_file_with_a_loader_hook_is_refused_by_the_helper_too() {
        let path = temp_path();
        request_file(&path, "true", &env(&[("LD_PRELOAD", "/x.so")]))
            .write()
            .unwrap();
        let err = consume(&path).unwrap_err().to_string();
        assert!(err.contains("env.LD_PRELOAD"), "{err}");
    }

    #[test]
    fn lease_env_names_values_and_commands_are_checked() {
        assert_eq!(
            check_lease_env(&env(&[("HF_TOKEN", "x\ny")]), "a\nb"),
            Ok(())
        );
        let err = check_lease_env(&env(&[("LD_PRELOAD", "/x.so")]), "true").unwrap_err();
        assert!(
            err.starts_with("env.LD_PRELOAD is a loader or runtime hook"),
            "{err}"
        );
        let err = check_lease_env(&env(&[("A-B", "1")]), "true").unwrap_err();
        assert!(
            err.starts_with("env.A-B must be a shell variable name"),
            "{err}"
        );
        assert!(check_lease_env(&env(&[("A", "x\0y")]), "true").is_err());
        assert!(check_lease_env(&BTreeMap::new(), "tr\0ue").is_err());
    }

    #[test]
    fn the_container_script_runs_the_command_with_its_env_as_sh_c_would() {
        let script = container_script(
            "echo \"[$GREETING]\"; echo 'it''s'; exit 3",
            &env(&[("GREETING", "hello 'world'\nsecond line")]),
        );
        let out = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(&script)
            .env_clear()
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "[hello 'world'\nsecond line]\nits\n"
        );
    }

    #[test]
    fn the_shell_snippet_runs_the_command_and_keeps_it_from_its_children() {
        let out = std::process::Command::new("/bin/sh")
            .args(["-c", SHELL_SNIPPET])
            .env_clear()
            .env(
                COMMAND_VAR,
                "echo one\necho \"child sees [${GPUEX_COMMAND:-nothing}]\"; sh -c 'env' | grep -c GPUEX_COMMAND; exit 4",
            )
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(4));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "one\nchild sees [nothing]\n0\n"
        );
    }
}
