//! A network namespace of its own for each networked lease (ARCHITECTURE.md §21
//! "Network"), for the `sandbox` and `container` launchers.
//!
//! For a lease whose order asks `network: true` the agent makes the named
//! namespace `gpuex-<first 12 hex of the lease id>` (`/run/netns/…`), loads
//! the lease's egress ruleset into it ([`super::egress`]) before any link is
//! up, and makes a veth pair: `gpxv<index>` on the host, `eth0` in the
//! namespace, with the `index`-th /30 of `--lease-net-pool` (host side
//! `.1`, lease `.2`, default route via the host side; loopback up). The
//! host forwards IPv4 and masquerades the veths' traffic (its table is
//! loaded at the first networked lease after the agent starts).
//!
//! What this agent made is marked in `<spool>/netns/<lease>` before it is
//! made, so an agent restarted after a `kill -9` removes exactly its own
//! leftovers (other agents on the same host keep theirs). Every program
//! runs with [`super::HELPER_PATH`] as its whole environment.

use super::egress::{self, EgressPolicy, VETH_PREFIX};
use ipnet::Ipv4Net;
use std::collections::BTreeMap;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use uuid::Uuid;

/// The prefix of the lease namespaces' names.
pub const NETNS_PREFIX: &str = "gpuex-";
/// Where `ip netns` keeps the named namespaces.
pub const NETNS_DIR: &str = "/run/netns";
/// The lease's end of the veth pair, inside its namespace.
pub const LEASE_IF: &str = "eth0";

/// The namespace name of `lease`.
pub fn name(lease: Uuid) -> String {
    format!("{NETNS_PREFIX}{}", &lease.simple().to_string()[..12])
}

/// The namespace file of `lease`, which the exec helper and podman join.
pub fn path(lease: Uuid) -> PathBuf {
    Path::new(NETNS_DIR).join(name(lease))
}

/// The `index`-th /30 of `pool`: (host side, lease side).
pub fn subnet(pool: Ipv4Net, index: u32) -> Option<(Ipv4Addr, Ipv4Addr)> {
    let count = 1u64 << (30 - pool.prefix_len().min(30));
    if u64::from(index) >= count {
        return None;
    }
    let base = u32::from(pool.network()).checked_add(index.checked_mul(4)?)?;
    Some((Ipv4Addr::from(base + 1), Ipv4Addr::from(base + 2)))
}

/// The lowest index of `pool` that `taken` does not hold.
pub fn free_index(pool: Ipv4Net, taken: impl Fn(u32) -> bool) -> Option<u32> {
    (0u32..)
        .map_while(|i| subnet(pool, i).map(|_| i))
        .find(|&i| !taken(i))
}

/// `program args…` with [`super::HELPER_PATH`] as its environment and
/// `stdin` fed to it; its stderr in the error.
pub fn run(program: &str, args: &[&str], stdin: Option<&str>) -> Result<String, String> {
    let mut child = Command::new(program)
        .args(args)
        .env_clear()
        .env("PATH", super::HELPER_PATH)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(text.as_bytes())
            .map_err(|e| format!("cannot write to {program}: {e}"))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("{program} failed: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "`{program} {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// The host's IPv4 addresses (`ip -j -4 addr`), which a lease may not reach.
pub fn host_addrs() -> Vec<IpAddr> {
    let Ok(out) = run("ip", &["-j", "-4", "addr", "show"], None) else {
        return Vec::new();
    };
    let links: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap_or_default();
    links
        .iter()
        .filter_map(|l| l.get("addr_info")?.as_array())
        .flatten()
        .filter_map(|a| a.get("local")?.as_str()?.parse().ok())
        .collect()
}

/// What this agent made for one lease (its mark file).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Mark {
    netns: String,
    veth: String,
}

/// The lease networks of one agent.
pub struct LeaseNetworks {
    pool: Ipv4Net,
    policy: EgressPolicy,
    /// `<spool>/netns`: one mark file per lease network.
    marks: PathBuf,
    /// Why networked leases cannot run here (no nft, no ip, not set up).
    unavailable: Option<String>,
    /// The running leases' /30 indexes, and whether the host is ready.
    held: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    indexes: BTreeMap<Uuid, u32>,
    host_ready: bool,
}

impl LeaseNetworks {
    /// Lease networks that refuse every lease with `why` (the `process`
    /// launcher's, or where the host cannot have them).
    pub fn unavailable(why: &str) -> LeaseNetworks {
        LeaseNetworks {
            pool: Ipv4Net::default(),
            policy: EgressPolicy::default(),
            marks: PathBuf::new(),
            unavailable: Some(why.to_string()),
            held: Mutex::default(),
        }
    }

    /// Remove what a killed agent on this spool left, and check the tools.
    /// Where that fails (no nft or ip), networked leases are refused and
    /// everything else runs. The host itself (its table, forwarding) is
    /// readied at the first networked lease: a node that never runs one
    /// keeps its settings.
    pub fn start(pool: Ipv4Net, policy: EgressPolicy, spool: &Path) -> LeaseNetworks {
        let mut nets = LeaseNetworks {
            pool,
            policy,
            marks: spool.join("netns"),
            unavailable: None,
            held: Mutex::default(),
        };
        if let Err(why) = nets.prepare() {
            tracing::warn!("networked leases are refused on this node: {why}");
            nets.unavailable = Some(
                "this node cannot give a lease a network (its provider lacks nftables or iproute2)"
                    .to_string(),
            );
        } else {
            let private: Vec<_> = nets
                .policy
                .resolvers
                .iter()
                .filter(|r| match r {
                    IpAddr::V4(a) => !nets.policy.reachable_resolvers().contains(a),
                    IpAddr::V6(_) => true,
                })
                .collect();
            if !private.is_empty() {
                tracing::warn!(
                    ?private,
                    "the host's resolvers are private or IPv6: leases cannot reach them \
                     (use public resolvers, or list them with --egress-allow)"
                );
            }
            tracing::info!(pool = %nets.pool, "networked leases get a namespace of their own");
        }
        nets
    }

    fn prepare(&self) -> Result<(), String> {
        for tool in ["nft", "ip"] {
            if super::find_program(tool).is_none()
                && !Path::new("/usr/sbin").join(tool).is_file()
                && !Path::new("/sbin").join(tool).is_file()
            {
                return Err(format!("{tool} is not installed"));
            }
        }
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(&self.marks)
            .and_then(|()| {
                std::fs::set_permissions(&self.marks, std::fs::Permissions::from_mode(0o700))
            })
            .map_err(|e| format!("cannot make {}: {e}", self.marks.display()))?;
        self.sweep();
        Ok(())
    }

    /// Load the host table (replacing the one there, in one transaction)
    /// and turn IPv4 forwarding on.
    fn ready_host() -> Result<(), String> {
        run("nft", &["-f", "-"], Some(&egress::host_ruleset()))?;
        std::fs::write("/proc/sys/net/ipv4/ip_forward", "1")
            .map_err(|e| format!("cannot turn IPv4 forwarding on: {e}"))
    }

    /// Remove every lease network a previous agent process on this spool
    /// left (its mark files).
    fn sweep(&self) {
        let Ok(entries) = std::fs::read_dir(&self.marks) else {
            return;
        };
        for entry in entries.flatten() {
            let file = entry.path();
            let mark = std::fs::read(&file)
                .ok()
                .and_then(|b| serde_json::from_slice::<Mark>(&b).ok());
            if let Some(mark) = mark {
                tracing::warn!(netns = %mark.netns, veth = %mark.veth,
                    "removing a lease network a previous agent process left");
                destroy(&mark);
            }
            if let Err(e) = std::fs::remove_file(&file) {
                tracing::warn!(file = %file.display(), "cannot remove a lease network's mark: {e}");
            }
        }
    }

    fn mark_file(&self, lease: Uuid) -> PathBuf {
        self.marks.join(lease.to_string())
    }

    /// Make `lease`'s namespace, ruleset and veth; its namespace file. The
    /// error is for the buyer: the details (the provider's addresses) go
    /// to the agent's log only.
    pub fn create(&self, lease: Uuid) -> Result<PathBuf, String> {
        if let Some(why) = &self.unavailable {
            return Err(why.clone());
        }
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if held.indexes.contains_key(&lease) {
            return Ok(path(lease));
        }
        if !held.host_ready {
            LeaseNetworks::ready_host().map_err(|e| {
                tracing::warn!(lease_id = %lease, "cannot ready the host for lease networks: {e}");
                "cannot set up the lease's network on this node".to_string()
            })?;
            held.host_ready = true;
        }
        let index = free_index(self.pool, |i| {
            held.indexes.values().any(|&h| h == i)
                || Path::new("/sys/class/net")
                    .join(format!("{VETH_PREFIX}{i}"))
                    .exists()
        })
        .ok_or("every lease network of this node is in use".to_string())?;
        let mark = Mark {
            netns: name(lease),
            veth: format!("{VETH_PREFIX}{index}"),
        };
        let made = serde_json::to_vec(&mark)
            .map_err(|e| e.to_string())
            .and_then(|bytes| {
                crate::spool::write_atomic(&self.marks, &self.mark_file(lease), &bytes)
                    .map_err(|e| format!("cannot write the lease network's mark: {e}"))
            })
            .and_then(|()| self.build(&mark, index));
        match made {
            Ok(()) => {
                held.indexes.insert(lease, index);
                Ok(path(lease))
            }
            Err(e) => {
                tracing::warn!(lease_id = %lease, "cannot set up the lease's network: {e}");
                destroy(&mark);
                let _ = std::fs::remove_file(self.mark_file(lease));
                Err("cannot set up the lease's network namespace on this node".to_string())
            }
        }
    }

    fn build(&self, mark: &Mark, index: u32) -> Result<(), String> {
        let (host, leaseside) = subnet(self.pool, index).ok_or("no such /30".to_string())?;
        let (ns, veth) = (mark.netns.as_str(), mark.veth.as_str());
        run("ip", &["netns", "add", ns], None)?;
        // The rules are in place before any link is up.
        let rules = self.policy.lease_ruleset(host, self.pool, &host_addrs());
        run("ip", &["netns", "exec", ns, "nft", "-f", "-"], Some(&rules))?;
        run(
            "ip",
            &[
                "link", "add", veth, "type", "veth", "peer", "name", LEASE_IF, "netns", ns,
            ],
            None,
        )?;
        let host_cidr = format!("{host}/30");
        let lease_cidr = format!("{leaseside}/30");
        let host_s = host.to_string();
        for args in [
            vec!["addr", "add", host_cidr.as_str(), "dev", veth],
            vec!["link", "set", veth, "up"],
            vec!["-n", ns, "link", "set", "lo", "up"],
            vec![
                "-n",
                ns,
                "addr",
                "add",
                lease_cidr.as_str(),
                "dev",
                LEASE_IF,
            ],
            vec!["-n", ns, "link", "set", LEASE_IF, "up"],
            vec!["-n", ns, "route", "add", "default", "via", host_s.as_str()],
        ] {
            run("ip", &args, None)?;
        }
        Ok(())
    }

    /// The lease is over (its processes ended): its veth, namespace and
    /// mark go, and its /30 is free again. Nothing when it had none.
    pub fn remove(&self, lease: Uuid) {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        held.indexes.remove(&lease);
        let file = self.mark_file(lease);
        let Some(mark) = std::fs::read(&file)
            .ok()
            .and_then(|b| serde_json::from_slice::<Mark>(&b).ok())
        else {
            return;
        };
        destroy(&mark);
        if let Err(e) = std::fs::remove_file(&file) {
            tracing::warn!(file = %file.display(), "cannot remove a lease network's mark: {e}");
        }
    }
}

/// Delete a lease's veth (both ends) and namespace, whichever exist. The
/// veth goes by name only when the lease's namespace holds its other end:
/// a mark whose `ip link add` failed (another agent took that name first)
/// must not take another's veth with it. (Deleting the namespace alone
/// deletes the pair too, once no process is left in it.)
fn destroy(mark: &Mark) {
    let ns_exists = Path::new(NETNS_DIR).join(&mark.netns).exists();
    let ours = ns_exists && run("ip", &["-n", &mark.netns, "link", "show", LEASE_IF], None).is_ok();
    if ours && Path::new("/sys/class/net").join(&mark.veth).exists() {
        if let Err(e) = run("ip", &["link", "del", &mark.veth], None) {
            tracing::warn!("{e}");
        }
    }
    if ns_exists {
        if let Err(e) = run("ip", &["netns", "del", &mark.netns], None) {
            tracing::warn!("{e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fit_the_kernels_limits() {
        let lease: Uuid = "0123456789ab4def8123456789abcdef".parse().unwrap();
        assert_eq!(name(lease), "gpuex-0123456789ab");
        assert_eq!(path(lease), Path::new("/run/netns/gpuex-0123456789ab"));
        // An interface name has at most 15 bytes: a /16 has 16,384 /30s.
        assert!(format!("{VETH_PREFIX}{}", 16_383).len() <= 15);
    }

    #[test]
    fn each_lease_gets_a_30_of_the_pool() {
        let pool: Ipv4Net = "10.251.0.0/16".parse().unwrap();
        assert_eq!(
            subnet(pool, 0),
            Some(("10.251.0.1".parse().unwrap(), "10.251.0.2".parse().unwrap()))
        );
        assert_eq!(
            subnet(pool, 1),
            Some(("10.251.0.5".parse().unwrap(), "10.251.0.6".parse().unwrap()))
        );
        assert_eq!(
            subnet(pool, 16_383),
            Some((
                "10.251.255.253".parse().unwrap(),
                "10.251.255.254".parse().unwrap()
            ))
        );
        assert_eq!(subnet(pool, 16_384), None);
        let one: Ipv4Net = "192.0.2.8/30".parse().unwrap();
        assert_eq!(
            subnet(one, 0),
            Some(("192.0.2.9".parse().unwrap(), "192.0.2.10".parse().unwrap()))
        );
        assert_eq!(subnet(one, 1), None);
    }

    #[test]
    fn the_lowest_free_30_is_taken_and_a_full_pool_has_none() {
        let pool: Ipv4Net = "10.251.0.0/28".parse().unwrap();
        assert_eq!(free_index(pool, |_| false), Some(0));
        assert_eq!(free_index(pool, |i| i == 0 || i == 2), Some(1));
        assert_eq!(free_index(pool, |i| i < 3), Some(3));
        assert_eq!(free_index(pool, |_| true), None);
    }

    #[test]
    fn an_unavailable_node_refuses_networked_leases() {
        let nets = LeaseNetworks::unavailable("no network here");
        assert_eq!(
            nets.create(Uuid::new_v4()),
            Err("no network here".to_string())
        );
        nets.remove(Uuid::new_v4());
    }
}
