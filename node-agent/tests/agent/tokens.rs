//! The agent's own files and its token (ARCHITECTURE.md §19), with the real binary:
//! the spool is 0700 and its files 0600 whatever the umask; a token file
//! open to others is tightened when it is the agent's and refused if not;
//! a 401 (node token revoked, node deleted) stops every lease as a shutdown
//! does and the agent exits with status 3.

use super::leftovers::{alive, all_gone, forking_command, pids_of, Reap};
use super::*;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

/// The agent with its token in `token_file`, started under `umask 000`.
fn spawn_with_token_file(server: &FakeServer, spool: &Path, token_file: &Path) -> AgentProcess {
    let log = std::fs::File::create(spool.with_extension("log")).unwrap();
    let child = Command::new("/bin/sh")
        .args(["-c", "umask 000; exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_gpuex-agent"))
        .args(["--server", &server.url()])
        .arg("--token-file")
        .arg(token_file)
        .args(["--backend", "simulated"])
        .arg("--fleet")
        .arg(fleet("h100-mig.toml"))
        .arg("--spool")
        .arg(spool)
        .args(["--heartbeat-interval", "1s", "--usage-interval", "1s"])
        .args(["--uid-pool", &uid_pool_of(spool)])
        .env_remove("GPUEX_AGENT_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    AgentProcess { child }
}

fn mode_of(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().mode() & 0o7777
}

#[tokio::test]
async fn the_spool_is_the_agents_alone_under_any_umask_and_its_own_wide_token_file_is_tightened() {
    let server = FakeServer::start().await;
    let spool = temp_dir("modes");
    let token = TempFile(spool.with_extension("token"));
    std::fs::write(&token.0, "node-token\n").unwrap();
    std::fs::set_permissions(&token.0, std::fs::Permissions::from_mode(0o644)).unwrap();
    let _agent = spawn_with_token_file(&server, &spool, &token.0);
    wait_for(&server, 20, "registration", |s| {
        s.registrations.first().cloned()
    })
    .await;
    let lease = Uuid::new_v4();
    server.with(|s| s.queued.push(start(lease, Partition::Whole, 6, "sleep 60")));
    wait_for(&server, 10, "provisioned", |s| provisioned(s, lease)).await;
    wait_for(&server, 10, "usage", |s| s.applied.keys().next().copied()).await;

    assert_eq!(mode_of(&token.0), 0o600, "the token file was tightened");
    assert!(
        agent_log(&spool).contains("the token file was mode 644, open to other users: made it 600"),
        "{}",
        agent_log(&spool)
    );
    assert_eq!(mode_of(&spool), 0o700);
    assert_eq!(mode_of(&spool.join("launch")), 0o700);
    let names: Vec<String> = std::fs::read_dir(&*spool)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for name in ["agent_id", "seq", "leases.json"] {
        assert!(names.contains(&name.to_string()), "{name} in {names:?}");
    }
    for entry in std::fs::read_dir(&*spool).unwrap() {
        let entry = entry.unwrap();
        if entry.metadata().unwrap().is_file() {
            assert_eq!(
                mode_of(&entry.path()),
                0o600,
                "{}",
                entry.file_name().to_string_lossy()
            );
        }
    }
    // The leases' folders are beside the spool: reachable, not listable,
    // each its pool user's alone.
    let work = work_root(&spool);
    assert_eq!(mode_of(&work), 0o711);
    let folder = work.join(lease.to_string());
    assert_eq!(mode_of(&folder), 0o700);
    assert_ne!(std::fs::metadata(&folder).unwrap().uid(), 0);
}

#[tokio::test]
async fn a_token_file_open_to_others_that_the_agent_does_not_own_is_refused() {
    let server = FakeServer::start().await;
    let spool = temp_dir("foreign-token");
    let token = TempFile(spool.with_extension("token"));
    std::fs::write(&token.0, "node-token\n").unwrap();
    std::fs::set_permissions(&token.0, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::os::unix::fs::chown(&token.0, Some(4242), Some(4242)).unwrap();
    let mut agent = spawn_with_token_file(&server, &spool, &token.0);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = agent.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the agent kept running"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(status.code(), Some(1));
    let log = agent_log(&spool);
    assert!(
        log.contains(&format!(
            "the token file {} is mode 644, open to other users, and belongs to uid 4242",
            token.0.display()
        )) && log.contains("chmod 600"),
        "{log}"
    );
    assert_eq!(mode_of(&token.0), 0o644, "not the agent's to change");
    assert!(server.with(|s| s.registrations.is_empty()));
}

#[tokio::test]
async fn a_revoked_node_token_stops_every_lease_cleanly_and_the_agent_exits_with_status_3() {
    let server = FakeServer::start().await;
    let spool = temp_dir("revoked");
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
    let _pid_files = (TempFile(a.clone()), TempFile(b.clone()));
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

    // The node is deleted: its token is refused from now on.
    server.with(|s| s.revoked = true);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = agent.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the agent kept running with a revoked token: {}",
            agent_log(&spool)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(status.code(), Some(3), "{}", agent_log(&spool));
    let log = agent_log(&spool);
    let said: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("refused this node's token"))
        .collect();
    assert_eq!(said.len(), 1, "{log}");
    assert!(
        said[0].contains(
            "the server refused this node's token (401): it was revoked or the node deleted; \
             stopping every lease and exiting"
        ),
        "{}",
        said[0]
    );
    // As at shutdown: every process of both leases ended, their folders gone.
    assert!(all_gone(&pids, 5).await, "{pids:?} outlived the agent");
    let left: Vec<PathBuf> = std::fs::read_dir(work_root(&spool))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(left, Vec::<PathBuf>::new(), "lease folders left behind");
    assert_eq!(std::fs::read_dir(spool.join("launch")).unwrap().count(), 0);
    assert!(server.with(|s| !s.refused.is_empty()));
}
