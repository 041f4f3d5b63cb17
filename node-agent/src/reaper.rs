//! Finding a workload's processes wherever they went. Every workload starts
//! with two marks in its environment, which its children inherit: the agent
//! that owns it (its state directory) and its lease. A process that left the
//! workload's process group (`setsid`, a double fork) still carries them, and
//! so does one a killed agent left behind, which the next agent on the same
//! state directory finds in `/proc` and ends (ARCHITECTURE.md §13: no workload
//! outlives its agent unaccounted for).
//!
//! The marks are the initial environment (`/proc/PID/environ`), which a
//! process cannot take back once started; only one exec'd with a cleared
//! environment escapes them, and it is still ended with its process group.
//! Reading another user's environment needs privileges: processes the agent
//! may not read are not its own and are never signalled. Without `/proc`
//! (not Linux) nothing is found and process groups are all there is.

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use std::path::Path;
use std::time::Duration;
use uuid::Uuid;

/// The agent that owns a workload: its state directory, made absolute.
pub const OWNER_VAR: &str = "GPUEX_AGENT_OWNER";
/// The lease a workload belongs to.
pub const LEASE_VAR: &str = "GPUEX_LEASE_ID";

/// The owner mark of the agent keeping its state in `state_dir`.
pub fn owner_of(state_dir: &Path) -> String {
    std::fs::canonicalize(state_dir)
        .unwrap_or_else(|_| state_dir.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

/// A live process carrying the marks, and its process group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marked {
    pub pid: i32,
    pub pgid: i32,
}

/// The live (not zombie) processes marked with `owner`, and with `lease`
/// when given; never this process.
pub fn marked(owner: &str, lease: Option<Uuid>) -> Vec<Marked> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let own_pid = std::process::id() as i32;
    let owner_entry = format!("{OWNER_VAR}={owner}");
    let lease_entry = lease.map(|l| format!("{LEASE_VAR}={l}"));
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != own_pid)
        .filter_map(|pid| {
            let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
            let mut owned = false;
            let mut leased = lease_entry.is_none();
            for entry in environ.split(|b| *b == 0) {
                owned |= entry == owner_entry.as_bytes();
                if let Some(l) = &lease_entry {
                    leased |= entry == l.as_bytes();
                }
            }
            if !(owned && leased) {
                return None;
            }
            let (state, pgid) = stat_of(pid)?;
            (state != 'Z').then_some(Marked { pid, pgid })
        })
        .collect()
}

/// `signal` to every marked process, and to each group a marked process
/// leads (which takes along members that cleared their environment). A group
/// led by anyone else is left alone: a workload may join another group of
/// the agent's session, and that group is not the workload's to end.
/// Returns how many marked processes there were.
pub fn signal_marked(owner: &str, lease: Option<Uuid>, signal: Signal) -> usize {
    let found = marked(owner, lease);
    let own_group = nix::unistd::getpgrp().as_raw();
    for m in &found {
        if m.pid == m.pgid && m.pgid > 1 && m.pgid != own_group {
            let _ = killpg(Pid::from_raw(m.pgid), signal);
        }
        let _ = kill(Pid::from_raw(m.pid), signal);
    }
    found.len()
}

/// SIGKILL every marked process until none is left (each pass also takes
/// what forked meanwhile), for at most `within`. Returns whether none is left.
pub async fn kill_marked(owner: &str, lease: Option<Uuid>, within: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if signal_marked(owner, lease, Signal::SIGKILL) == 0 {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The live processes whose user is `uid` (the owner of `/proc/PID`, its
/// effective uid). A pool uid belongs to one lease at a time, so this is
/// every process of that lease, whatever it did to its environment, group
/// or session. Never root's or this process's own user.
pub fn owned_by(uid: u32) -> Vec<i32> {
    use std::os::unix::fs::MetadataExt;
    if uid == 0 || uid == nix::unistd::getuid().as_raw() {
        return Vec::new();
    }
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let e = e.ok()?;
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        let meta = std::fs::metadata(e.path()).ok()?;
        (meta.uid() == uid && stat_of(pid).is_some_and(|(state, _)| state != 'Z')).then_some(pid)
    })
    .collect()
}

/// The uids that own a live process now.
pub fn busy_uids() -> std::collections::BTreeSet<u32> {
    use std::os::unix::fs::MetadataExt;
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Default::default();
    };
    dir.filter_map(|e| {
        let e = e.ok()?;
        e.file_name().to_str()?.parse::<i32>().ok()?;
        Some(std::fs::metadata(e.path()).ok()?.uid())
    })
    .collect()
}

/// `signal` to every process of `uid` (see [`owned_by`]); how many there were.
pub fn signal_uid(uid: u32, signal: Signal) -> usize {
    let found = owned_by(uid);
    for &pid in &found {
        let _ = kill(Pid::from_raw(pid), signal);
    }
    found.len()
}

/// SIGKILL every process of `uid` until none is left, for at most `within`.
pub async fn kill_uid(uid: u32, within: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if signal_uid(uid, Signal::SIGKILL) == 0 {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// State and process group from `/proc/PID/stat` (the fields after the
/// command name are: state, ppid, pgrp).
pub fn stat_of(pid: i32) -> Option<(char, i32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = stat.get(stat.rfind(')')? + 1..)?.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let pgid = fields.nth(1)?.parse().ok()?;
    Some((state, pgid))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    fn spawn_marked(owner: &str, lease: Uuid, script: &str) -> std::process::Child {
        Command::new("sh")
            .args(["-c", script])
            .env(OWNER_VAR, owner)
            .env(LEASE_VAR, lease.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap()
    }

    #[tokio::test]
    async fn a_marked_process_is_found_after_leaving_its_group_and_is_killed() {
        let owner = format!("/test/owner/{}", Uuid::new_v4());
        let (lease, other) = (Uuid::new_v4(), Uuid::new_v4());
        let mut a = spawn_marked(&owner, lease, "setsid sleep 30 & sleep 30");
        // One process from its start: the shell execs `sleep` in place, so
        // the other lease's count cannot change between the two looks (a
        // shell that forked `sleep` counted 1 or 2 depending on when).
        let mut b = spawn_marked(&owner, other, "exec sleep 30");
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        // Two processes are not yet an escape: the background child is
        // marked from its fork on, and leaves the group only once `setsid`
        // runs in it.
        let escaped = |found: &[Marked]| found.iter().any(|m| m.pgid != found[0].pgid);
        while !escaped(&marked(&owner, Some(lease))) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{:?}",
                marked(&owner, None)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let others = marked(&owner, Some(other)).len();
        assert_eq!(others, 1);
        assert!(marked(&format!("{owner}-not"), None).is_empty());

        assert!(kill_marked(&owner, Some(lease), Duration::from_secs(5)).await);
        let _ = a.wait();
        assert_eq!(
            marked(&owner, None).len(),
            others,
            "the other lease is left alone"
        );
        assert!(kill_marked(&owner, None, Duration::from_secs(5)).await);
        let _ = b.wait();
    }
}
