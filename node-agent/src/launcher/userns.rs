//! Containers in a user namespace (ARCHITECTURE.md §21): root inside a lease's
//! container is an unprivileged uid on the host, so nothing the image runs as
//! root, and no capability it could regain, is the host's root.
//!
//! The agent takes a range of 65,536 subordinate ids for itself, registered
//! in `/etc/subuid` and `/etc/subgid` under the name `gpuex-agent` (a fresh
//! host has none; an existing entry of that name that misses the pool is
//! reused). Every container maps its ids 0–65,535 onto that range, one
//! mapping for every lease, so podman maps an image's layers once, not per
//! lease. A lease's workload runs as the container uid of its pool uid's
//! place in the pool (the pool's first uid is 1), which on the host is a uid
//! of the agent's range that no other lease has: its folder belongs to that
//! uid.

use nix::fcntl::{Flock, FlockArg};
use std::io::Write;
use std::path::Path;

/// The name the agent's ranges are registered under.
pub const OWNER: &str = "gpuex-agent";
/// How many ids the agent takes.
pub const COUNT: u32 = 65_536;
/// The lowest id a range may start at (below: the host's own users).
const FIRST: u32 = 100_000;

/// A container's ids 0..65,536 on the host's `root`..`root + 65,536`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mapping {
    /// Root inside; the first of the agent's subordinate ids.
    pub root: u32,
    /// The uid pool's first uid, which is 1 inside.
    pub pool_first: u32,
}

impl Mapping {
    /// podman's `--uidmap` and `--gidmap` arguments.
    pub fn args(&self) -> Vec<String> {
        ["--uidmap", "--gidmap"]
            .iter()
            .flat_map(|flag| [flag.to_string(), format!("0:{}:{COUNT}", self.root)])
            .collect()
    }

    /// The container uid (or gid) a pool uid runs as.
    pub fn inside(&self, pool_id: u32) -> u32 {
        pool_id - self.pool_first + 1
    }

    /// The host uid (or gid) a pool uid's workload is, inside its container.
    pub fn on_host(&self, pool_id: u32) -> u32 {
        self.root + self.inside(pool_id)
    }
}

/// `name:start:count` lines.
fn entries(text: &str) -> Vec<(String, u32, u32)> {
    text.lines()
        .filter_map(|l| {
            let mut parts = l.trim().split(':');
            let name = parts.next()?.to_string();
            let start = parts.next()?.parse().ok()?;
            let count = parts.next()?.parse().ok()?;
            Some((name, start, count))
        })
        .collect()
}

/// The agent's range in `subuid` and `subgid` (the same in both), taken
/// when there is none: the lowest free one from 100,000 on that overlaps no
/// other entry and not `avoid` (the pool's uids). Serialized with other
/// agents on the host by a lock on `subuid`.
pub fn allocate(subuid: &Path, subgid: &Path, avoid: (u32, u32)) -> Result<Mapping, String> {
    if avoid.1 - avoid.0 >= COUNT - 1 {
        return Err(format!(
            "the uid pool {}-{} is larger than the {} ids a container's user namespace maps",
            avoid.0,
            avoid.1,
            COUNT - 1
        ));
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(subuid)
        .map_err(|e| format!("cannot open {}: {e}", subuid.display()))?;
    let mut locked = Flock::lock(file, FlockArg::LockExclusive)
        .map_err(|(_, e)| format!("cannot lock {}: {e}", subuid.display()))?;
    let read = |p: &Path| match std::fs::read_to_string(p) {
        Ok(t) => Ok(entries(&t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(format!("cannot read {}: {e}", p.display())),
    };
    let (uids, gids) = (read(subuid)?, read(subgid)?);
    // An earlier range of the agent's that both files hold and that misses
    // this pool (another agent on the host may have another pool).
    let misses_pool = |s: u32| u64::from(s) + u64::from(COUNT) <= u64::from(avoid.0) || s > avoid.1;
    let reusable = uids.iter().find(|(n, s, c)| {
        n == OWNER
            && *c >= COUNT
            && misses_pool(*s)
            && gids
                .iter()
                .any(|(gn, gs, gc)| gn == OWNER && gs == s && *gc >= COUNT)
    });
    if let Some((_, start, _)) = reusable {
        return Ok(Mapping {
            root: *start,
            pool_first: avoid.0,
        });
    }
    let taken: Vec<(u64, u64)> = uids
        .iter()
        .chain(&gids)
        .map(|(_, s, c)| (u64::from(*s), u64::from(*s) + u64::from(*c)))
        .chain([(u64::from(avoid.0), u64::from(avoid.1) + 1)])
        .collect();
    let overlaps = |start: u64| {
        let end = start + u64::from(COUNT);
        taken.iter().any(|(s, e)| start < *e && *s < end)
    };
    let mut start = u64::from(FIRST.max(avoid.1.saturating_add(1)));
    while overlaps(start) {
        start += u64::from(COUNT);
    }
    let start = u32::try_from(start)
        .ok()
        .filter(|s| s.checked_add(COUNT).is_some())
        .ok_or("no free range of subordinate ids is left")?;
    let line = format!("{OWNER}:{start}:{COUNT}\n");
    locked
        .write_all(line.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", subuid.display()))?;
    let mut gid_file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(subgid)
        .map_err(|e| format!("cannot open {}: {e}", subgid.display()))?;
    gid_file
        .write_all(line.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", subgid.display()))?;
    Ok(Mapping {
        root: start,
        pool_first: avoid.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_host_gets_a_range_above_the_pool_and_keeps_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (u, g) = (dir.path().join("subuid"), dir.path().join("subgid"));
        let m = allocate(&u, &g, (61_000, 61_999)).expect("allocated");
        assert_eq!(
            m,
            Mapping {
                root: 100_000,
                pool_first: 61_000
            }
        );
        assert_eq!(
            std::fs::read_to_string(&u).expect("subuid"),
            "gpuex-agent:100000:65536\n"
        );
        assert_eq!(
            std::fs::read_to_string(&g).expect("subgid"),
            "gpuex-agent:100000:65536\n"
        );
        assert_eq!(
            allocate(&u, &g, (61_000, 61_999)).expect("again"),
            m,
            "reused"
        );
        assert_eq!(
            m.args(),
            ["--uidmap", "0:100000:65536", "--gidmap", "0:100000:65536"]
        );
        // The pool's first uid is 1 inside, 100001 on the host.
        assert_eq!((m.inside(61_000), m.on_host(61_000)), (1, 100_001));
        assert_eq!((m.inside(61_999), m.on_host(61_999)), (1_000, 101_000));
        // Another agent's pool over the range gets a range of its own.
        let other = allocate(&u, &g, (90_000, 120_000)).expect("another");
        assert_eq!(other.root, 185_537, "past the pool and the first range");
    }

    #[test]
    fn a_pool_larger_than_a_namespace_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (u, g) = (dir.path().join("subuid"), dir.path().join("subgid"));
        assert!(allocate(&u, &g, (1_000, 70_000)).is_err());
    }

    #[test]
    fn a_range_never_overlaps_another_users_or_the_pool() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (u, g) = (dir.path().join("subuid"), dir.path().join("subgid"));
        std::fs::write(&u, "alice:100000:65536\nbob:165536:65536\n").expect("subuid");
        std::fs::write(&g, "carol:231072:10\n").expect("subgid");
        let m = allocate(&u, &g, (300_000, 300_100)).expect("allocated");
        // 100000.. and 165536.. are users', 231072.. holds carol's, and the
        // pool's ids rule out everything to 300100.
        assert_eq!(m.root, 300_101);
        assert!(std::fs::read_to_string(&u)
            .expect("subuid")
            .ends_with("gpuex-agent:300101:65536\n"));
    }
}
