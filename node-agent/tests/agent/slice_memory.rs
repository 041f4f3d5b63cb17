//! On the simulated backend the host's memory stands in for a slice's GPU
//! memory (issue 40 §2): the workload's address space is limited to the
//! slice's memory, so one that allocates more fails as it would on a GPU,
//! and its usage records carry the most memory it held.

use super::*;
use crate::require::{bubblewrap, require as available};

/// `python3` mapping 2 GiB of memory it never touches (which costs no RAM).
const MAP_2_GIB: &str = "python3 -c 'import mmap; mmap.mmap(-1, 2 << 30)'";

fn shared(memory_mb: u64) -> Partition {
    Partition::Shared {
        milli: 250,
        memory_mb,
    }
}

fn exit_code(report: StatusReport) -> Option<i32> {
    match report.status {
        AssignmentStatus::Ended { exit_code, .. } => exit_code,
        other => panic!("not ended: {other:?}"),
    }
}

/// A 1 GB slice cannot map 2 GiB; a 4 GB one can, under `launcher`.
async fn a_slice_bounds_what_its_workload_maps(launcher: &str) {
    let server = FakeServer::start().await;
    let spool = temp_dir(&format!("slice-memory-{launcher}"));
    let _agent = spawn_agent(&server, &spool, &["--launcher", launcher]);
    wait_for(&server, 20, "registration", |s| {
        s.registrations.first().cloned()
    })
    .await;
    let small = Uuid::new_v4();
    let large = Uuid::new_v4();
    server.with(|s| {
        s.queued.push(start(small, shared(1000), 4, MAP_2_GIB));
        s.queued.push(start(large, shared(4000), 5, MAP_2_GIB));
    });
    let small_end = wait_for(&server, 20, "the 1 GB slice's end", |s| ended(s, small)).await;
    let large_end = wait_for(&server, 20, "the 4 GB slice's end", |s| ended(s, large)).await;
    let logs = |lease| server.with(|s| s.logs.get(&lease).map(|l| l.tail.clone()));
    let small_code = exit_code(small_end);
    assert!(
        small_code.is_some_and(|c| c != 0),
        "{small_code:?}: {:?}",
        logs(small)
    );
    assert!(
        logs(small).is_some_and(|t| t.contains("MemoryError") || t.contains("Cannot allocate")),
        "{:?}",
        logs(small)
    );
    assert_eq!(exit_code(large_end), Some(0), "{:?}", logs(large));
}

#[tokio::test]
async fn a_process_workload_cannot_map_more_than_its_simulated_slices_memory() {
    if available("root", require::root()).is_none() {
        return;
    }
    a_slice_bounds_what_its_workload_maps("process").await;
}

#[tokio::test]
async fn a_sandboxed_workload_cannot_map_more_than_its_simulated_slices_memory() {
    if available("root", require::root()).is_none()
        || available("bubblewrap", bubblewrap()).is_none()
    {
        return;
    }
    a_slice_bounds_what_its_workload_maps("sandbox").await;
}

/// The most `peak_memory_mb` of `lease`'s applied records.
fn peak_of(s: &State, lease: Uuid) -> Option<u64> {
    s.applied
        .values()
        .flat_map(|b| &b.records)
        .filter(|r| r.lease_id == lease)
        .filter_map(|r| r.peak_memory_mb)
        .max()
}

#[tokio::test]
async fn usage_records_carry_the_most_memory_the_workload_held() {
    if available("root", require::root()).is_none() {
        return;
    }
    let server = FakeServer::start().await;
    let spool = temp_dir("peak-memory");
    let _agent = spawn_agent(&server, &spool, &[]);
    wait_for(&server, 20, "registration", |s| {
        s.registrations.first().cloned()
    })
    .await;
    // 300 MB touched and held for 3 s: one lease in a memory cgroup (read
    // from its peak), one without (its process group's resident memory).
    let hold = "python3 -c 'import time; b = bytearray(300_000_000); time.sleep(3)'";
    let in_cgroup = Uuid::new_v4();
    let bare = Uuid::new_v4();
    let mut limited = start(in_cgroup, shared(4000), 4, hold);
    if let AssignmentAction::Start { limits, .. } = &mut limited.action {
        *limits = Some(HostLimits {
            cpu_milli: 1000,
            memory_mib: 2048,
        });
    }
    server.with(|s| {
        s.queued.push(limited);
        s.queued.push(start(bare, shared(4000), 5, hold));
    });
    for lease in [in_cgroup, bare] {
        let report = wait_for(&server, 20, "the end", |s| ended(s, lease)).await;
        assert_eq!(exit_code(report), Some(0));
        let peak = wait_for(&server, 10, "a record with the peak", |s| {
            peak_of(s, lease).filter(|p| *p >= 300)
        })
        .await;
        // Python and its bytes, never more than the 4 GB slice.
        assert!(peak < 1000, "{peak} MB");
    }
}
