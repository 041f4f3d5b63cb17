//! No workload outlives its agent (ARCHITECTURE.md §13): one stopped with SIGTERM
//! ends every process of every lease, and one killed with SIGKILL has what
//! it left behind ended by the next agent on the same state directory.

use super::*;

/// A workload that forks a child in its own group, one that leaves the
/// group with `setsid`, and writes every pid to `pids`; with `ignore_term`
/// it also ignores SIGTERM.
pub(crate) fn forking_command(pids: &Path, ignore_term: bool) -> String {
    let trap = if ignore_term { "trap '' TERM; " } else { "" };
    format!(
        "{trap}sleep 300 & a=$!; setsid sleep 301 & b=$!; echo $$ $a $b > {tmp}; mv {tmp} {out}; \
         while true; do sleep 0.1; done",
        tmp = pids.with_extension("tmp").display(),
        out = pids.display()
    )
}

/// The pids a [`forking_command`] wrote, once it has.
pub(crate) async fn pids_of(server: &FakeServer, file: &Path) -> Vec<i32> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(text) = std::fs::read_to_string(file) {
            let pids: Vec<i32> = text
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect();
            if pids.len() == 3 {
                return pids;
            }
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the workload never wrote {}: {:?}",
            file.display(),
            server.with(|s| s.statuses.clone())
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Whether `pid` runs: it exists and is not a zombie waiting for a reaper.
pub(crate) fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let after_name = stat.get(stat.rfind(')')? + 1..)?.to_owned();
            after_name.split_whitespace().next().map(|s| s != "Z")
        })
        .unwrap_or(false)
}

pub(crate) async fn all_gone(pids: &[i32], secs: u64) -> bool {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    while tokio::time::Instant::now() < deadline {
        if !pids.iter().any(|p| alive(*p)) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

/// Kills whatever a failed test left running, so it never outlives the test.
pub(crate) struct Reap(pub(crate) Vec<i32>);

impl Drop for Reap {
    fn drop(&mut self) {
        for pid in &self.0 {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(*pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

#[tokio::test]
async fn an_agent_stopped_with_sigterm_ends_every_process_of_every_lease() {
    let server = FakeServer::start().await;
    let spool = temp_dir("sigterm");
    let mut agent = spawn_agent(&server, &spool, &[]);
    wait_for(&server, 20, "registration", |s| {
        s.registrations.first().cloned()
    })
    .await;

    let (polite, stubborn) = (Uuid::new_v4(), Uuid::new_v4());
    let (a, b) = (
        spool.with_extension("a.pids"),
        spool.with_extension("b.pids"),
    );
    server.with(|s| {
        s.queued.push(start(
            polite,
            Partition::Whole,
            4,
            &forking_command(&a, false),
        ));
        s.queued.push(start(
            stubborn,
            Partition::Whole,
            5,
            &forking_command(&b, true),
        ));
    });
    let mut pids = pids_of(&server, &a).await;
    pids.extend(pids_of(&server, &b).await);
    let _reap = Reap(pids.clone());
    assert!(pids.iter().all(|p| alive(*p)), "{pids:?}");

    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(agent.child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    // SIGTERM, then SIGKILL after --stop-grace (2 s) for what ignores it.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    let status = loop {
        if let Some(status) = agent.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the agent did not stop"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(status.success(), "{status:?}");
    let left: Vec<i32> = pids.iter().copied().filter(|p| alive(*p)).collect();
    assert!(
        left.is_empty(),
        "still running after the agent stopped: {left:?} of {pids:?}"
    );
    let _ = std::fs::remove_file(&a);
    let _ = std::fs::remove_file(&b);
}

#[tokio::test]
async fn what_a_killed_agent_left_running_is_ended_when_it_starts_again() {
    let server = FakeServer::start().await;
    let spool = temp_dir("leftover");
    let agent = spawn_agent(&server, &spool, &[]);
    wait_for(&server, 20, "registration", |s| {
        s.registrations.first().cloned()
    })
    .await;

    let lease = Uuid::new_v4();
    let file = spool.with_extension("pids");
    server.with(|s| {
        s.queued.push(start(
            lease,
            Partition::Whole,
            6,
            &forking_command(&file, true),
        ))
    });
    let pids = pids_of(&server, &file).await;
    let _reap = Reap(pids.clone());
    wait_for(&server, 10, "provisioned", |s| provisioned(s, lease)).await;

    drop(agent); // SIGKILL: nothing of the agent runs to stop the workload.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        pids.iter().all(|p| alive(*p)),
        "a killed agent cannot stop anything: {pids:?}"
    );

    let _agent = spawn_agent(&server, &spool, &[]);
    assert!(
        all_gone(&pids, 10).await,
        "left running by the killed agent: {:?}",
        pids.iter().filter(|p| alive(**p)).collect::<Vec<_>>()
    );
    let _ = std::fs::remove_file(&file);
}
