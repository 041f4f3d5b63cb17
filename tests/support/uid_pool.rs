//! Uid pools for the agents that tests start, unique across every test
//! process running at once (both test crates include this file).
//!
//! An agent runs each workload as a uid of its pool, and one cleaning up
//! after a crash kills every process of its uids: two agents sharing a uid
//! kill each other's workloads. Pools picked at random or by hash collided
//! now and then with a few dozen agents side by side; a pool derived from
//! the test process's pid (unique among live processes) and a counter within
//! it cannot.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Pools one test process may take.
const POOLS_PER_PROCESS: u32 = 16;
/// Uids per pool.
const POOL_SIZE: u32 = 100;
/// Above the system's users and the agent's default pool.
const FIRST_UID: u32 = 1_000_000;

struct Pools {
    next: u32,
    by_spool: BTreeMap<PathBuf, String>,
}

static POOLS: Mutex<Pools> = Mutex::new(Pools {
    next: 0,
    by_spool: BTreeMap::new(),
});

fn take(pools: &mut Pools) -> String {
    assert!(
        pools.next < POOLS_PER_PROCESS,
        "a test process takes at most {POOLS_PER_PROCESS} uid pools"
    );
    let slot = std::process::id() * POOLS_PER_PROCESS + pools.next;
    pools.next += 1;
    let base = FIRST_UID + slot * POOL_SIZE;
    format!("{base}-{}", base + POOL_SIZE - 1)
}

/// A pool no other agent of any running test has (`--uid-pool`).
pub fn fresh_uid_pool() -> String {
    take(&mut POOLS.lock().unwrap_or_else(|p| p.into_inner()))
}

/// The pool of the agent on `spool`: the same for its restarts in this test,
/// no other agent's.
pub fn uid_pool_of(spool: &Path) -> String {
    let mut pools = POOLS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(pool) = pools.by_spool.get(spool) {
        return pool.clone();
    }
    let pool = take(&mut pools);
    pools.by_spool.insert(spool.to_path_buf(), pool.clone());
    pool
}
