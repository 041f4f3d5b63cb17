//! A lease's life on a real agent: the server lost and found, an ack lost,
//! an end time reached, a GPU scrubbed.

use super::*;

#[tokio::test]
async fn an_agent_that_loses_the_server_stops_its_workloads_and_registers_again() {
    let server = FakeServer::start().await;
    let spool = temp_dir("timeout");
    let _agent = spawn_agent(&server, &spool, &["--node-timeout", "3s"]);
    wait_for(&server, 20, "registration", |s| {
        s.registrations.first().cloned()
    })
    .await;

    let lease = Uuid::new_v4();
    server.with(|s| s.queued.push(start(lease, Partition::Whole, 7, "sleep 60")));
    wait_for(&server, 10, "provisioned", |s| provisioned(s, lease)).await;

    server.with(|s| s.down = true);
    tokio::time::sleep(Duration::from_secs(6)).await;
    server.with(|s| s.down = false);

    let report = wait_for(&server, 20, "ended after reconnecting", |s| ended(s, lease)).await;
    let AssignmentStatus::Ended { reason, signal, .. } = report.status else {
        unreachable!()
    };
    assert_eq!(reason, EndReason::NodeTimeout);
    assert_eq!(signal, Some(15));
    assert!(server.with(|s| s.registrations.len()) >= 2);
}

#[tokio::test]
async fn a_batch_whose_ack_was_lost_is_sent_again_and_applied_once() {
    let server = FakeServer::start().await;
    server.with(|s| s.lose_acks = 1);
    let spool = temp_dir("lost-ack");
    let _agent = spawn_agent(&server, &spool, &[]);
    wait_for(&server, 20, "registration", |s| {
        s.registrations.first().cloned()
    })
    .await;

    let lease = Uuid::new_v4();
    server.with(|s| s.queued.push(start(lease, Partition::Whole, 4, "sleep 60")));
    let posts = wait_for(&server, 20, "a resent batch", |s| {
        (s.usage_posts.len() >= 3).then(|| s.usage_posts.clone())
    })
    .await;
    assert_eq!(posts[0], posts[1], "the unacknowledged batch is sent again");
    assert!(posts[2] > posts[1]);
    let applied = server.with(|s| s.applied.clone());
    assert_eq!(
        applied.keys().copied().collect::<Vec<_>>(),
        (1..=applied.len() as u64).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn a_lease_stops_at_its_end_time_and_a_stop_for_an_unknown_lease_is_answered_ended() {
    let server = FakeServer::start().await;
    let spool = temp_dir("end-at");
    let _agent = spawn_agent(&server, &spool, &[]);
    wait_for(&server, 20, "registration", |s| {
        s.registrations.first().cloned()
    })
    .await;

    let lease = Uuid::new_v4();
    let mut assignment = start(lease, Partition::Whole, 6, "sleep 60");
    if let AssignmentAction::Start { end_at, .. } = &mut assignment.action {
        *end_at = Some(Utc::now() + chrono::Duration::seconds(3));
    }
    let unknown = Uuid::new_v4();
    server.with(|s| {
        s.queued.push(assignment);
        s.queued.push(Assignment {
            lease_id: unknown,
            action: AssignmentAction::Stop,
        });
    });
    wait_for(&server, 10, "provisioned", |s| provisioned(s, lease)).await;
    // While it runs, heartbeats attribute the workload's GPU process to the lease.
    wait_for(&server, 10, "a process of the lease", |s| {
        s.heartbeats
            .iter()
            .flat_map(|h| &h.gpus)
            .filter(|g| g.index == 6)
            .flat_map(|g| &g.processes)
            .find(|p| p.lease_id == Some(lease))
            .cloned()
    })
    .await;
    let report = wait_for(&server, 15, "ended at end_at", |s| ended(s, lease)).await;
    let AssignmentStatus::Ended { reason, signal, .. } = report.status else {
        unreachable!()
    };
    assert_eq!((reason, signal), (EndReason::LeaseEnd, Some(15)));
    let unknown_report = wait_for(&server, 5, "ended for the unknown lease", |s| {
        ended(s, unknown)
    })
    .await;
    assert!(matches!(
        unknown_report.status,
        AssignmentStatus::Ended {
            reason: EndReason::Stopped,
            exit_code: None,
            ..
        }
    ));
}

#[tokio::test]
async fn a_whole_gpu_is_scrubbed_when_its_lease_ends_and_a_mig_slice_is_destroyed_instead() {
    let server = FakeServer::start().await;
    let spool = temp_dir("scrub");
    let _agent = spawn_agent(&server, &spool, &[]);
    wait_for(&server, 20, "registration", |s| {
        s.registrations.first().cloned()
    })
    .await;
    let (whole, mig) = (Uuid::new_v4(), Uuid::new_v4());
    let mig_partition = Partition::Mig {
        profile: "1g.10gb".into(),
        start: 0,
    };
    server.with(|s| {
        s.queued
            .push(start(whole, Partition::Whole, 5, "echo whole; exit 0"));
        s.queued
            .push(start(mig, mig_partition, 1, "echo mig; exit 0"));
    });
    wait_for(&server, 15, "both to end", |s| {
        ended(s, whole).and(ended(s, mig))
    })
    .await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !agent_log(&spool).contains("scrubbed GPU memory") {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{}",
            agent_log(&spool)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let scrubs: Vec<String> = agent_log(&spool)
        .lines()
        .filter(|l| l.contains("scrubbed GPU memory"))
        .map(str::to_owned)
        .collect();
    assert_eq!(scrubs.len(), 1, "only the whole GPU: {scrubs:?}");
    assert!(
        scrubs[0].contains("gpu") && scrubs[0].contains('5'),
        "{scrubs:?}"
    );
    // And the provider hears of it: the next heartbeat reports the scrub of
    // GPU 5, and of no other.
    let gpus = wait_for(&server, 10, "a heartbeat with the scrub", |s| {
        s.heartbeats
            .iter()
            .rev()
            .find(|h| h.gpus.iter().any(|g| g.scrub.is_some()))
            .map(|h| h.gpus.clone())
    })
    .await;
    let scrubbed: Vec<(u32, u64, bool)> = gpus
        .iter()
        .filter_map(|g| g.scrub.map(|s| (g.index, s.done, s.last_ok)))
        .collect();
    assert_eq!(scrubbed, vec![(5, 1, true)], "{gpus:?}");
}
