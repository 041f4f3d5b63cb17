//! A lease's workload: its launcher's program in its own process group, its
//! output tail kept in memory, and signals sent to the whole group and to
//! every process that carries the lease's marks (see [`crate::reaper`]).

use crate::launcher::Plan;
use crate::reaper::{self, LEASE_VAR, OWNER_VAR};
use gpuex_wire::protocol::LOGS_TAIL_BYTES;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use std::collections::VecDeque;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio::sync::watch;
use uuid::Uuid;

/// How a workload ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exit {
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

/// The last [`LOGS_TAIL_BYTES`] bytes of output and how much was written in all.
#[derive(Debug, Default)]
pub struct Tail {
    bytes: VecDeque<u8>,
    total: u64,
}

impl Tail {
    fn push(&mut self, chunk: &[u8]) {
        self.total += chunk.len() as u64;
        self.bytes.extend(chunk);
        let excess = self.bytes.len().saturating_sub(LOGS_TAIL_BYTES);
        self.bytes.drain(..excess);
    }

    /// The tail as text and the total bytes written. Invalid UTF-8 and NUL
    /// bytes become U+FFFD: the server refuses text with U+0000, which
    /// PostgreSQL cannot store, and would refuse the whole upload.
    pub fn snapshot(&self) -> (String, u64) {
        let (a, b) = self.bytes.as_slices();
        let mut all = Vec::with_capacity(a.len() + b.len());
        all.extend_from_slice(a);
        all.extend_from_slice(b);
        let text = String::from_utf8_lossy(&all).replace('\0', "\u{FFFD}");
        (text, self.total)
    }
}

/// Whose a workload is: the agent's owner mark, the lease, and the pool
/// user it runs as.
#[derive(Debug, Clone)]
pub struct Marks {
    pub owner: String,
    pub lease: Uuid,
    pub uid: Option<u32>,
}

/// A running (or finished) workload.
pub struct Workload {
    pgid: i32,
    /// A notice goes to the program alone, which relays it (containers).
    relays_signals: bool,
    marks: Marks,
    tail: Arc<Mutex<Tail>>,
    exit: watch::Receiver<Option<Exit>>,
}

impl Workload {
    /// Write `plan`'s launch file, then run its program with exactly its
    /// environment (nothing of the agent's own, nothing of the lease's) in
    /// `cwd`, marked with `marks`. `preamble` starts the output tail (the
    /// artifact fetch's progress).
    pub fn spawn(
        plan: &Plan,
        cwd: Option<&Path>,
        marks: Marks,
        preamble: &str,
    ) -> std::io::Result<Workload> {
        if let Some(file) = &plan.launch {
            file.write()?;
        }
        let mut command = Command::new(&plan.program);
        command
            .args(&plan.args)
            .env_clear()
            .envs(&plan.env)
            .env(OWNER_VAR, &marks.owner)
            .env(LEASE_VAR, marks.lease.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(dir) = cwd {
            command.current_dir(dir);
        }
        if !plan.sets_session {
            // Its own group, so signals reach everything the command forks
            // and the workload outlives neither a stop nor a preemption. A
            // plan that starts its own session leads its group already.
            command.process_group(0);
        }
        let mut child = command.spawn()?;
        let pid = child.id().map_or(0, |p| p as i32);
        let tail = Arc::new(Mutex::new(Tail::default()));
        if !preamble.is_empty() {
            if let Ok(mut t) = tail.lock() {
                t.push(preamble.as_bytes());
            }
        }
        let readers: Vec<_> = [
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn AsyncRead + Send + Unpin>),
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn AsyncRead + Send + Unpin>),
        ]
        .into_iter()
        .flatten()
        .map(|stream| tokio::spawn(read_into(stream, tail.clone())))
        .collect();
        let (tx, exit) = watch::channel(None);
        tokio::spawn(async move {
            let status = child.wait().await;
            // Let the readers drain what the command wrote last; a grandchild
            // that keeps the pipe open must not hold the exit back.
            for reader in readers {
                let _ = tokio::time::timeout(Duration::from_millis(500), reader).await;
            }
            let exit = match status {
                Ok(s) => Exit {
                    code: s.code(),
                    signal: s.signal(),
                },
                Err(_) => Exit {
                    code: None,
                    signal: None,
                },
            };
            let _ = tx.send(Some(exit));
        });
        Ok(Workload {
            pgid: pid,
            relays_signals: plan.relays_signals,
            marks,
            tail,
            exit,
        })
    }

    /// `sh -c command` with `env`, as the agent's own user: the unit tests'
    /// workload.
    #[cfg(test)]
    pub fn spawn_shell(
        command: &str,
        env: &std::collections::BTreeMap<String, String>,
        marks: Marks,
    ) -> std::io::Result<Workload> {
        let mut env = env.clone();
        env.insert("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into());
        let plan = Plan {
            program: "sh".into(),
            args: vec!["-c".into(), command.into()],
            sets_session: false,
            env,
            launch: None,
            image_id: None,
            relays_signals: false,
        };
        Workload::spawn(&plan, None, marks, "")
    }

    /// The process group id (the shell's pid).
    pub fn pgid(&self) -> i32 {
        self.pgid
    }

    /// How it ended, once it has.
    pub fn exit(&self) -> Option<Exit> {
        *self.exit.borrow()
    }

    /// The output tail and total bytes written.
    pub fn tail(&self) -> (String, u64) {
        self.tail.lock().map(|t| t.snapshot()).unwrap_or_default()
    }

    /// Send `signal` to the whole group and to whatever of the lease left
    /// it; a group that is gone is fine.
    pub fn signal(&self, signal: Signal) {
        if self.relays_signals && signal != Signal::SIGKILL {
            if self.pgid > 1 {
                let _ = nix::sys::signal::kill(Pid::from_raw(self.pgid), signal);
            }
            return;
        }
        signal_lease(self.pgid, &self.marks, signal);
    }

    /// SIGKILL the group and the lease's strays at `deadline` unless the
    /// workload ended before.
    pub fn kill_at(&self, deadline: tokio::time::Instant) {
        let (pgid, marks) = (self.pgid, self.marks.clone());
        let mut exit = self.exit.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = tokio::time::sleep_until(deadline) => signal_lease(pgid, &marks, Signal::SIGKILL),
                _ = exit.wait_for(Option::is_some) => {}
            }
        });
    }

    /// The workload has ended: SIGKILL what it left running (background
    /// children, processes that left its group), since a lease's processes
    /// end with the lease.
    pub fn end_the_rest(&self) {
        signal_lease(self.pgid, &self.marks, Signal::SIGKILL);
    }
}

fn signal_lease(pgid: i32, marks: &Marks, signal: Signal) {
    signal_group(pgid, signal);
    reaper::signal_marked(&marks.owner, Some(marks.lease), signal);
    if let Some(uid) = marks.uid {
        reaper::signal_uid(uid, signal);
    }
}

/// Signal a process group by id, ignoring one that no longer exists.
pub fn signal_group(pgid: i32, signal: Signal) {
    if pgid > 1 {
        let _ = killpg(Pid::from_raw(pgid), signal);
    }
}

async fn read_into(mut stream: Box<dyn AsyncRead + Send + Unpin>, tail: Arc<Mutex<Tail>>) {
    let mut buf = vec![0u8; 8192];
    while let Ok(n) = stream.read(&mut buf).await {
        if n == 0 {
            break;
        }
        if let Ok(mut t) = tail.lock() {
            t.push(&buf[..n]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn marks() -> Marks {
        Marks {
            owner: format!("/test/workload/{}", Uuid::new_v4()),
            lease: Uuid::new_v4(),
            uid: None,
        }
    }

    async fn finished(w: &Workload) -> Exit {
        let mut rx = w.exit.clone();
        let exit = tokio::time::timeout(Duration::from_secs(10), rx.wait_for(Option::is_some))
            .await
            .expect("the workload ended in time")
            .unwrap();
        exit.unwrap()
    }

    #[tokio::test]
    async fn the_command_sees_its_env_and_its_output_is_kept() {
        let env = [("GREETING".to_string(), "hello".to_string())].into();
        let w =
            Workload::spawn_shell("echo $GREETING; echo oops >&2; exit 3", &env, marks()).unwrap();
        let exit = finished(&w).await;
        assert_eq!(
            exit,
            Exit {
                code: Some(3),
                signal: None
            }
        );
        let (tail, total) = w.tail();
        assert!(tail.contains("hello") && tail.contains("oops"), "{tail}");
        assert_eq!(total, 11);
    }

    #[tokio::test]
    async fn nul_bytes_in_the_output_are_replaced_in_the_tail() {
        let w = Workload::spawn_shell("printf 'a\\000b'", &BTreeMap::new(), marks()).unwrap();
        finished(&w).await;
        let (tail, total) = w.tail();
        assert_eq!(tail, "a\u{FFFD}b");
        assert_eq!(total, 3);
    }

    #[tokio::test]
    async fn only_the_last_64_kib_of_output_are_kept() {
        let w = Workload::spawn_shell(
            "head -c 200000 /dev/zero | tr '\\0' x; echo END",
            &BTreeMap::new(),
            marks(),
        )
        .unwrap();
        finished(&w).await;
        let (tail, total) = w.tail();
        assert_eq!(total, 200_004);
        assert_eq!(tail.len(), LOGS_TAIL_BYTES);
        assert!(tail.ends_with("END\n"));
    }

    #[tokio::test]
    async fn sigterm_reaches_a_command_that_traps_it() {
        let w = Workload::spawn_shell(
            "trap 'echo got-term; exit 0' TERM; echo ready; while true; do sleep 0.1; done",
            &BTreeMap::new(),
            marks(),
        )
        .unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        w.signal(Signal::SIGTERM);
        assert_eq!(finished(&w).await.code, Some(0));
        assert!(w.tail().0.contains("got-term"));
    }

    #[tokio::test]
    async fn a_command_that_ignores_sigterm_dies_at_the_kill_deadline() {
        let w = Workload::spawn_shell(
            "trap '' TERM; while true; do sleep 0.1; done",
            &BTreeMap::new(),
            marks(),
        )
        .unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
        w.signal(Signal::SIGTERM);
        w.kill_at(tokio::time::Instant::now() + Duration::from_millis(300));
        assert_eq!(finished(&w).await.signal, Some(9));
    }

    #[tokio::test]
    async fn what_a_finished_workload_left_running_ends_with_it() {
        let m = marks();
        let w = Workload::spawn_shell(
            "setsid sleep 30 & sleep 30 & echo started",
            &BTreeMap::new(),
            m.clone(),
        )
        .unwrap();
        finished(&w).await;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while reaper::marked(&m.owner, Some(m.lease)).len() < 2 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the children never started"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        w.end_the_rest();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
        while !reaper::marked(&m.owner, Some(m.lease)).is_empty() {
            assert!(
                tokio::time::Instant::now() < deadline,
                "a child outlived its lease"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}
