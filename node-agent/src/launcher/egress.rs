//! The egress policy of a networked lease (ARCHITECTURE.md §21 "Network"): nftables
//! rulesets rendered as text and applied with `nft -f -`.
//!
//! - In each lease's own network namespace, table `inet gpuex_lease`: an
//!   `output` chain with policy drop that lets out established and related
//!   traffic, the namespace's own loopback and IPv4 to public addresses only.
//!   Never reachable, whatever `--egress-allow` says: the host (the veth's
//!   host side, the whole lease pool, every address the host has), the
//!   server's addresses. Then the provider's `--egress-deny`, then DNS to
//!   the host's public resolvers, then the provider's `--egress-allow`, then
//!   the default denied ranges ([`DEFAULT_DENY`]); what is left is public.
//!   IPv6 is dropped whole. An `input` chain (policy drop) lets in only
//!   replies and loopback. The workload has no `CAP_NET_ADMIN` in that
//!   namespace (a user namespace of the pool user, or all capabilities
//!   dropped), so it cannot change them.
//! - On the host, table `inet gpuex_agent` (the agent's only one; loaded
//!   whole in one transaction at the first networked lease after each start,
//!   never touching another table): the lease
//!   veths' traffic is masqueraded out of the host, may not reach the host
//!   itself (input) nor another lease (forward).

use ipnet::{IpNet, Ipv4Net};
use std::net::{IpAddr, Ipv4Addr};

/// The ranges a lease may not reach unless the provider allows them:
/// "this network", RFC 1918, CGNAT, loopback, link-local (the metadata
/// address 169.254.169.254 among them), multicast and the reserved block
/// (with broadcast).
pub const DEFAULT_DENY: [&str; 9] = [
    "0.0.0.0/8",
    "10.0.0.0/8",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "224.0.0.0/4",
    "240.0.0.0/4",
];

/// The agent's table on the host.
pub const HOST_TABLE: &str = "gpuex_agent";
/// The table in each lease's namespace.
pub const LEASE_TABLE: &str = "gpuex_lease";
/// Host-side veth names: this prefix and the /30's index in the pool.
pub const VETH_PREFIX: &str = "gpxv";

/// `--egress-deny` / `--egress-allow` items: a CIDR or a bare address
/// (`/32`, `/128`), host bits cleared.
pub fn parse_cidr(s: &str) -> Result<IpNet, String> {
    let s = s.trim();
    s.parse::<IpNet>()
        .or_else(|_| s.parse::<IpAddr>().map(IpNet::from))
        .map(|n| n.trunc())
        .map_err(|_| format!("`{s}` is not a CIDR (like 203.0.113.0/24) nor an address"))
}

/// `--lease-net-pool`: an IPv4 block of at least one /30, written as its
/// network address.
pub fn parse_pool(s: &str) -> Result<Ipv4Net, String> {
    let net: Ipv4Net = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not an IPv4 CIDR (like 10.251.0.0/16)"))?;
    if net.prefix_len() > 30 {
        return Err(format!("`{s}` is smaller than one /30"));
    }
    if net.trunc() != net {
        return Err(format!("`{s}` has host bits set: write {}", net.trunc()));
    }
    Ok(net)
}

/// What a networked lease may reach, beyond the defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EgressPolicy {
    /// The provider's `--egress-deny`.
    pub deny: Vec<IpNet>,
    /// The provider's `--egress-allow`.
    pub allow: Vec<IpNet>,
    /// Never reachable: the server's addresses.
    pub server: Vec<IpAddr>,
    /// The host's resolvers; only public ones (or allowed ones) are reachable.
    pub resolvers: Vec<IpAddr>,
}

/// Whether `addr` is in the default denied ranges.
pub fn default_denied(addr: Ipv4Addr) -> bool {
    DEFAULT_DENY
        .iter()
        .filter_map(|c| c.parse::<Ipv4Net>().ok())
        .any(|n| n.contains(&addr))
}

fn v4_nets(nets: &[IpNet]) -> Vec<Ipv4Net> {
    nets.iter()
        .filter_map(|n| match n {
            IpNet::V4(n) => Some(n.trunc()),
            IpNet::V6(_) => None,
        })
        .collect()
}

fn v4_addrs(addrs: &[IpAddr]) -> Vec<Ipv4Addr> {
    addrs
        .iter()
        .filter_map(|a| match a {
            IpAddr::V4(a) => Some(*a),
            IpAddr::V6(a) => a.to_ipv4_mapped(),
        })
        .collect()
}

/// A named interval set of IPv4 ranges (elements only when there are some).
fn set(name: &str, items: &[String]) -> String {
    let mut s =
        format!("\tset {name} {{\n\t\ttype ipv4_addr\n\t\tflags interval\n\t\tauto-merge\n");
    if !items.is_empty() {
        s.push_str(&format!("\t\telements = {{ {} }}\n", items.join(", ")));
    }
    s.push_str("\t}\n");
    s
}

/// `table … {}` then `delete table …`: the table is replaced whole in one
/// transaction, whether it was there or not.
fn replace_table(name: &str) -> String {
    format!("table inet {name} {{\n}}\ndelete table inet {name}\n")
}

impl EgressPolicy {
    /// The public resolvers a lease may ask (port 53): the host's that are
    /// not in a denied range, or are in an allowed one.
    pub fn reachable_resolvers(&self) -> Vec<Ipv4Addr> {
        let allow = v4_nets(&self.allow);
        let deny = v4_nets(&self.deny);
        v4_addrs(&self.resolvers)
            .into_iter()
            .filter(|r| !deny.iter().any(|n| n.contains(r)))
            .filter(|r| !default_denied(*r) || allow.iter().any(|n| n.contains(r)))
            .collect()
    }

    /// The ruleset of a lease's namespace whose veth's host side is
    /// `host_side`, in `pool`, on a host with `host_addrs`.
    pub fn lease_ruleset(
        &self,
        host_side: Ipv4Addr,
        pool: Ipv4Net,
        host_addrs: &[IpAddr],
    ) -> String {
        let mut never: Vec<String> = vec![host_side.to_string(), pool.to_string()];
        never.extend(v4_addrs(&self.server).iter().map(|a| a.to_string()));
        never.extend(v4_addrs(host_addrs).iter().map(|a| a.to_string()));
        let show =
            |nets: Vec<Ipv4Net>| -> Vec<String> { nets.iter().map(|n| n.to_string()).collect() };
        let dns: Vec<String> = self
            .reachable_resolvers()
            .iter()
            .map(|a| a.to_string())
            .collect();
        let mut s = replace_table(LEASE_TABLE);
        s.push_str(&format!("table inet {LEASE_TABLE} {{\n"));
        s.push_str(&set("never", &never));
        s.push_str(&set("deny", &show(v4_nets(&self.deny))));
        s.push_str(&set("dns", &dns));
        s.push_str(&set("allow", &show(v4_nets(&self.allow))));
        s.push_str(&set(
            "private",
            &DEFAULT_DENY
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>(),
        ));
        s.push_str(
            "\tchain output {\n\
             \t\ttype filter hook output priority filter; policy drop;\n\
             \t\tct state established,related accept\n\
             \t\toifname \"lo\" accept\n\
             \t\tmeta nfproto != ipv4 drop\n\
             \t\tip daddr @never drop\n\
             \t\tip daddr @deny drop\n\
             \t\tip daddr @dns udp dport 53 accept\n\
             \t\tip daddr @dns tcp dport 53 accept\n\
             \t\tip daddr @allow accept\n\
             \t\tip daddr @private drop\n\
             \t\tmeta nfproto ipv4 accept\n\
             \t}\n\
             \tchain input {\n\
             \t\ttype filter hook input priority filter; policy drop;\n\
             \t\tct state established,related accept\n\
             \t\tiifname \"lo\" accept\n\
             \t}\n\
             }\n",
        );
        s
    }
}

/// The host's table: masquerade the lease veths' traffic out of the host,
/// and keep it from the host itself and from other leases. Matches the
/// veths by name, so it is the same for every agent on the host.
pub fn host_ruleset() -> String {
    let veth = format!("\"{VETH_PREFIX}*\"");
    let mut s = replace_table(HOST_TABLE);
    s.push_str(&format!(
        "table inet {HOST_TABLE} {{\n\
         \tchain input {{\n\
         \t\ttype filter hook input priority filter; policy accept;\n\
         \t\tiifname {veth} ct state established,related accept\n\
         \t\tiifname {veth} drop\n\
         \t}}\n\
         \tchain forward {{\n\
         \t\ttype filter hook forward priority filter; policy accept;\n\
         \t\tiifname {veth} oifname {veth} drop\n\
         \t}}\n\
         \tchain postrouting {{\n\
         \t\ttype nat hook postrouting priority srcnat; policy accept;\n\
         \t\tiifname {veth} oifname != {veth} masquerade\n\
         \t}}\n\
         }}\n"
    ));
    s
}

/// The nameservers of `/etc/resolv.conf` (its text).
pub fn resolvers(resolv_conf: &str) -> Vec<IpAddr> {
    resolv_conf
        .lines()
        .filter_map(|l| l.trim().strip_prefix("nameserver"))
        .filter_map(|a| a.trim().split('%').next()?.parse().ok())
        .collect()
}

/// The addresses the server URL's host resolves to (none when it cannot be
/// parsed or resolved: the server is then protected only by the default
/// ranges).
pub fn server_addrs(url: &str) -> Vec<IpAddr> {
    use std::net::ToSocketAddrs;
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, p) = v6.split_once(']').unwrap_or((v6, ""));
        (
            h.to_string(),
            p.strip_prefix(':').and_then(|p| p.parse().ok()),
        )
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), p.parse().ok()),
            None => (authority.to_string(), None),
        }
    };
    let port: u16 = port.unwrap_or(80);
    if let Ok(ip) = host.parse::<IpAddr>() {
        return vec![ip];
    }
    (host.as_str(), port)
        .to_socket_addrs()
        .map(|addrs| addrs.map(|a| a.ip()).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cidrs_and_pools_are_checked() {
        assert_eq!(parse_cidr("10.1.2.3/8"), Ok("10.0.0.0/8".parse().unwrap()));
        assert_eq!(
            parse_cidr(" 203.0.113.7 "),
            Ok("203.0.113.7/32".parse().unwrap())
        );
        assert_eq!(parse_cidr("fd00::/8"), Ok("fd00::/8".parse().unwrap()));
        assert!(parse_cidr("10.0.0.0/33").is_err());
        assert!(parse_cidr("example.com").is_err());
        assert!(parse_cidr("").is_err());
        assert_eq!(
            parse_pool("10.251.0.0/16"),
            Ok("10.251.0.0/16".parse().unwrap())
        );
        assert!(parse_pool("10.251.0.0/31").is_err());
        assert!(parse_pool("10.251.0.1/16").is_err());
        assert!(parse_pool("fd00::/64").is_err());
    }

    #[test]
    fn the_lease_ruleset_drops_by_default_and_denies_before_it_allows() {
        let policy = EgressPolicy {
            deny: vec![parse_cidr("203.0.113.0/24").unwrap()],
            allow: vec![
                parse_cidr("10.9.0.0/16").unwrap(),
                parse_cidr("fd00::/8").unwrap(),
            ],
            server: vec!["192.0.2.10".parse().unwrap()],
            resolvers: vec![
                "8.8.8.8".parse().unwrap(),
                "127.0.0.53".parse().unwrap(),
                "10.9.0.53".parse().unwrap(),
                "192.168.1.1".parse().unwrap(),
            ],
        };
        let rules = policy.lease_ruleset(
            "10.251.0.1".parse().unwrap(),
            "10.251.0.0/16".parse().unwrap(),
            &["198.51.100.1".parse().unwrap()],
        );
        // Replaced whole, in one transaction.
        assert!(rules.starts_with("table inet gpuex_lease {\n}\ndelete table inet gpuex_lease\n"));
        assert!(rules.contains("type filter hook output priority filter; policy drop;"));
        assert!(rules.contains("type filter hook input priority filter; policy drop;"));
        assert!(
            rules.contains("elements = { 10.251.0.1, 10.251.0.0/16, 192.0.2.10, 198.51.100.1 }")
        );
        assert!(rules.contains("elements = { 203.0.113.0/24 }"));
        // IPv6 entries do nothing: IPv6 is dropped whole.
        assert!(rules.contains("elements = { 10.9.0.0/16 }"));
        assert!(rules.contains("meta nfproto != ipv4 drop"));
        // The public resolver and the allowed private one; never loopback's
        // nor another private one.
        assert!(rules.contains("elements = { 8.8.8.8, 10.9.0.53 }"));
        for range in DEFAULT_DENY {
            assert!(rules.contains(range), "{range} is not denied");
        }
        // The order: what is never reachable, the provider's denials, DNS,
        // the provider's exceptions, the default denials, then public.
        let at = |needle: &str| rules.find(needle).unwrap_or_else(|| panic!("{needle}"));
        let order = [
            "ct state established,related accept",
            "ip daddr @never drop",
            "ip daddr @deny drop",
            "ip daddr @dns udp dport 53 accept",
            "ip daddr @allow accept",
            "ip daddr @private drop",
            "meta nfproto ipv4 accept",
        ];
        for pair in order.windows(2) {
            assert!(at(pair[0]) < at(pair[1]), "{} before {}", pair[0], pair[1]);
        }
    }

    #[test]
    fn an_empty_policy_still_renders_valid_sets() {
        let rules = EgressPolicy::default().lease_ruleset(
            "10.251.0.5".parse().unwrap(),
            "10.251.0.0/16".parse().unwrap(),
            &[],
        );
        assert!(rules.contains(
            "\tset deny {\n\t\ttype ipv4_addr\n\t\tflags interval\n\t\tauto-merge\n\t}\n"
        ));
        assert!(!rules.contains("elements = {  }"));
    }

    #[test]
    fn the_host_table_masquerades_the_veths_and_keeps_them_off_the_host() {
        let rules = host_ruleset();
        assert!(rules.starts_with("table inet gpuex_agent {\n}\ndelete table inet gpuex_agent\n"));
        assert!(rules.contains("iifname \"gpxv*\" oifname != \"gpxv*\" masquerade"));
        assert!(rules.contains("iifname \"gpxv*\" drop"));
        assert!(rules.contains("iifname \"gpxv*\" oifname \"gpxv*\" drop"));
    }

    #[test]
    fn resolvers_and_the_server_are_read() {
        let conf = "# comment\nnameserver 1.1.1.1\nnameserver fe80::1%eth0\nsearch x\n nameserver 127.0.0.53\n";
        assert_eq!(
            resolvers(conf),
            vec![
                "1.1.1.1".parse::<IpAddr>().unwrap(),
                "fe80::1".parse().unwrap(),
                "127.0.0.53".parse().unwrap()
            ]
        );
        assert_eq!(
            server_addrs("http://127.0.0.1:8080/"),
            vec!["127.0.0.1".parse::<IpAddr>().unwrap()]
        );
        assert_eq!(
            server_addrs("http://[::1]:8080"),
            vec!["::1".parse::<IpAddr>().unwrap()]
        );
        assert_eq!(
            server_addrs("http://192.0.2.1"),
            vec!["192.0.2.1".parse::<IpAddr>().unwrap()]
        );
    }

    /// The rendered rulesets are what nft accepts (checked, not applied),
    /// where this host has nft and root.
    #[test]
    fn nft_accepts_the_rulesets() {
        if !nix::unistd::geteuid().is_root() || super::super::find_program("nft").is_none() {
            eprintln!("SKIPPED: needs root and nft");
            return;
        }
        let policy = EgressPolicy {
            deny: vec![parse_cidr("203.0.113.0/24").unwrap()],
            allow: vec![parse_cidr("10.0.0.0/16").unwrap()],
            server: vec!["127.0.0.1".parse().unwrap()],
            resolvers: vec!["1.1.1.1".parse().unwrap()],
        };
        let lease = policy.lease_ruleset(
            "10.251.0.1".parse().unwrap(),
            "10.251.0.0/16".parse().unwrap(),
            &["10.251.0.1".parse().unwrap(), "127.0.0.1".parse().unwrap()],
        );
        for rules in [lease, host_ruleset()] {
            super::super::netns::run("nft", &["--check", "-f", "-"], Some(&rules))
                .unwrap_or_else(|e| panic!("{e}\n{rules}"));
        }
    }
}
