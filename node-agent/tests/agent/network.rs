//! Lease networks (ARCHITECTURE.md §21 "Network"), with the real agent as root, its
//! `sandbox` launcher (bubblewrap) and, where this host has podman, its
//! `container` launcher (podman), in one test, which owns the "public" host:
//! - a lease whose order asks `network: true` reaches a "public" host and
//!   nothing else: not the host (the veth's host side, the host's other
//!   addresses, 127.0.0.1), not the server's port, not a 10.0.0.0/8 address
//!   nor a link-local one that are routed to that same "public" host (so
//!   only the lease's egress rules stop them), nor 169.254.169.254;
//! - a lease without `network` has no route at all;
//! - the provider's `--egress-allow` opens a private address and its
//!   `--egress-deny` closes a public one;
//! - a lease's namespace, veth and mark go when it ends, when its agent
//!   stops (SIGTERM), and a restarted agent removes those a `kill -9`ed one
//!   left.
//!
//! The "public" host is a network namespace of the test's own at
//! 198.51.100.2 (TEST-NET-2, RFC 5737: documentation addresses no real
//! host uses, outside every range the policy denies, so it stands for the
//! internet), on a veth whose host side is 198.51.100.1/30. It also holds
//! 10.250.99.2 and 169.254.77.1, routed from the host through it: the test
//! first reaches all three itself, so when a lease cannot, its rules are why.
//!
//! Needs root, iproute2, nftables, bubblewrap and busybox (the probes are
//! `busybox nc`); under CI (`GPUEX_CI=1`) their absence fails the test.

use super::*;
use crate::require::{bubblewrap, podman_image, require as available, root};
use std::io::{Read, Write};
use std::net::TcpStream;

const PUBLIC_NS: &str = "gxtest-public";
const PUBLIC_VETH: &str = "gxtpub0";
const PUBLIC_HOST_SIDE: &str = "198.51.100.1";
const PUBLIC: &str = "198.51.100.2";
/// Forbidden addresses, routed to the "public" host all the same.
const PRIVATE: &str = "10.250.99.2";
const LINK_LOCAL: &str = "169.254.77.1";
const BUSYBOX: &str = "/bin/busybox";

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn tool(name: &str, args: &[&str]) -> Result<(), String> {
    Command::new(name)
        .args(args)
        .output()
        .map_err(|e| format!("{name}: {e}"))
        .and_then(|o| {
            o.status
                .success()
                .then_some(())
                .ok_or_else(|| String::from_utf8_lossy(&o.stderr).into_owned())
        })
}

/// What the test needs here. Under CI (`GPUEX_CI=1`, set by `.ci/run`, which
/// installs all of it) a missing piece fails the test; elsewhere `None`
/// after saying why.
fn host_can_give_leases_networks() -> Option<()> {
    available("root (network namespaces, nftables)", root())?;
    available(
        "iproute2 with network namespaces",
        tool("ip", &["netns", "list"]),
    )?;
    available("nftables (nft)", tool("nft", &["--version"]))?;
    available("bubblewrap", bubblewrap())?;
    available(
        "busybox (the probes' nc)",
        Path::new(BUSYBOX)
            .exists()
            .then_some(())
            .ok_or_else(|| format!("no {BUSYBOX}")),
    )
}

/// A TCP server answering `hello` to every connection, in the network
/// namespace `ns` (the host's when `None`), on all its addresses; its port.
fn serve_hello(ns: Option<&str>) -> u16 {
    let (tx, rx) = std::sync::mpsc::channel();
    let ns = ns.map(|n| format!("/run/netns/{n}"));
    std::thread::spawn(move || {
        if let Some(ns) = ns {
            let file = std::fs::File::open(ns).unwrap();
            nix::sched::setns(&file, nix::sched::CloneFlags::CLONE_NEWNET).unwrap();
        }
        let listener = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
        tx.send(listener.local_addr().unwrap().port()).unwrap();
        for conn in listener.incoming().flatten() {
            let mut conn = conn;
            let _ = conn.write_all(b"hello\n");
        }
    });
    rx.recv().unwrap()
}

/// Whether the test itself (on the host) gets `hello` from `addr:port`.
fn hello_from(addr: &str, port: u16) -> bool {
    let Ok(mut c) = TcpStream::connect_timeout(
        &format!("{addr}:{port}").parse().unwrap(),
        Duration::from_secs(2),
    ) else {
        return false;
    };
    let mut s = String::new();
    let _ = c.set_read_timeout(Some(Duration::from_secs(2)));
    let _ = c.read_to_string(&mut s);
    s.starts_with("hello")
}

/// The "public" host and the routes to it; removed (with the agent's host
/// table and the forwarding setting as they were) when dropped.
struct PublicHost {
    forwarding: String,
}

impl PublicHost {
    fn new() -> PublicHost {
        let forwarding =
            std::fs::read_to_string("/proc/sys/net/ipv4/ip_forward").unwrap_or_else(|_| "0".into());
        // What a failed run may have left.
        remove_public();
        ip(&["netns", "add", PUBLIC_NS]).unwrap();
        let host = PublicHost { forwarding };
        ip(&[
            "link",
            "add",
            PUBLIC_VETH,
            "type",
            "veth",
            "peer",
            "name",
            "eth0",
            "netns",
            PUBLIC_NS,
        ])
        .unwrap();
        let steps: [&[&str]; 9] = [
            &[
                "addr",
                "add",
                &format!("{PUBLIC_HOST_SIDE}/30"),
                "dev",
                PUBLIC_VETH,
            ],
            &["link", "set", PUBLIC_VETH, "up"],
            &[
                "-n",
                PUBLIC_NS,
                "addr",
                "add",
                &format!("{PUBLIC}/30"),
                "dev",
                "eth0",
            ],
            &["-n", PUBLIC_NS, "link", "set", "eth0", "up"],
            &["-n", PUBLIC_NS, "link", "set", "lo", "up"],
            &[
                "-n",
                PUBLIC_NS,
                "addr",
                "add",
                &format!("{PRIVATE}/32"),
                "dev",
                "lo",
            ],
            &[
                "-n",
                PUBLIC_NS,
                "addr",
                "add",
                &format!("{LINK_LOCAL}/32"),
                "dev",
                "lo",
            ],
            &["route", "add", &format!("{PRIVATE}/32"), "via", PUBLIC],
            &["route", "add", &format!("{LINK_LOCAL}/32"), "via", PUBLIC],
        ];
        for step in steps {
            ip(step).unwrap();
        }
        host
    }
}

fn remove_public() {
    let _ = ip(&["route", "del", &format!("{PRIVATE}/32")]);
    let _ = ip(&["route", "del", &format!("{LINK_LOCAL}/32")]);
    let _ = ip(&["link", "del", PUBLIC_VETH]);
    let _ = ip(&["netns", "del", PUBLIC_NS]);
}

impl Drop for PublicHost {
    fn drop(&mut self) {
        remove_public();
        // The agent's table on the host (no agent of this test runs now).
        let _ = tool("nft", &["delete", "table", "inet", "gpuex_agent"]);
        let _ = std::fs::write("/proc/sys/net/ipv4/ip_forward", self.forwarding.trim());
    }
}

/// The lease's command: its routes, then one line per probe, `probe NAME
/// open` when `hello` (or any answer) came back, else `closed`.
fn probes(public_port: u16, host_port: u16, server_port: u16) -> String {
    let bb = BUSYBOX;
    format!(
        "probe() {{ out=$(printf 'GET / HTTP/1.0\\r\\n\\r\\n' | {bb} timeout 4 {bb} nc -w 2 \"$2\" \"$3\" 2>/dev/null); \
           if [ -n \"$out\" ]; then echo \"probe $1 open\"; else echo \"probe $1 closed\"; fi; }}\n\
         echo \"routes: $({bb} ip route 2>&1 | {bb} tr '\\n' ';')\"\n\
         gw=$({bb} ip route 2>/dev/null | {bb} awk '/^default/ {{print $3}}')\n\
         probe public {PUBLIC} {public_port}\n\
         probe private {PRIVATE} {public_port}\n\
         probe link_local {LINK_LOCAL} {public_port}\n\
         probe metadata 169.254.169.254 80\n\
         probe host_side \"$gw\" {host_port}\n\
         probe host_loopback 127.0.0.1 {host_port}\n\
         probe host_other {PUBLIC_HOST_SIDE} {host_port}\n\
         probe server 127.0.0.1 {server_port}\n\
         probe server_via_host \"$gw\" {server_port}\n\
         echo probes done\n"
    )
}

/// The probes' results from a lease's final logs.
fn results(tail: &str) -> BTreeMap<String, bool> {
    tail.lines()
        .filter_map(|l| l.strip_prefix("probe "))
        .filter_map(|l| l.split_once(' '))
        .map(|(name, r)| (name.to_string(), r == "open"))
        .collect()
}

fn lease_start(
    lease: Uuid,
    gpu: u32,
    command: &str,
    network: bool,
    image: Option<&str>,
) -> Assignment {
    let mut a = start(lease, Partition::Whole, gpu, command);
    if let AssignmentAction::Start {
        network: n,
        image: i,
        ..
    } = &mut a.action
    {
        *n = network;
        *i = image.map(str::to_string);
    }
    a
}

/// The mark of `lease`'s network in `spool`: its namespace and veth names.
fn mark(spool: &Path, lease: Uuid) -> Option<(String, String)> {
    let bytes = std::fs::read(spool.join("netns").join(lease.to_string())).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    Some((
        v.get("netns")?.as_str()?.to_string(),
        v.get("veth")?.as_str()?.to_string(),
    ))
}

fn netns_exists(name: &str) -> bool {
    Path::new("/run/netns").join(name).exists()
}

fn link_exists(name: &str) -> bool {
    Path::new("/sys/class/net").join(name).exists()
}

/// Run the probes in a lease (on a whole GPU: 4 to 7 of the fleet) (networked or not) and return their results,
/// after checking that its namespace and veth existed while it ran and are
/// gone once it ended.
async fn probe_lease(
    server: &FakeServer,
    spool: &Path,
    gpu: u32,
    command: &str,
    network: bool,
    image: Option<&str>,
) -> (BTreeMap<String, bool>, String) {
    let lease = Uuid::new_v4();
    let command = format!("{command}sleep 1\n");
    server.with(|s| {
        s.queued
            .push(lease_start(lease, gpu, &command, network, image))
    });
    let failed = |s: &State| s.status_of(lease, |st| matches!(st, AssignmentStatus::Failed { .. }));
    let made = wait_for(server, 60, "provisioned", |s| {
        if let Some(f) = failed(s) {
            panic!("the lease failed: {f:?}");
        }
        provisioned(s, lease).map(|_| mark(spool, lease))
    })
    .await;
    if network {
        let (ns, veth) = made.expect("a networked lease has a mark");
        assert!(netns_exists(&ns) && link_exists(&veth), "{ns}, {veth}");
        let end = wait_for(server, 90, "ended", |s| ended(s, lease)).await;
        assert!(
            matches!(
                end.status,
                AssignmentStatus::Ended {
                    exit_code: Some(0),
                    ..
                }
            ),
            "{end:?}"
        );
        // Gone with the lease, and its mark with them.
        assert!(!netns_exists(&ns), "{ns} outlived its lease");
        assert!(!link_exists(&veth), "{veth} outlived its lease");
        assert!(mark(spool, lease).is_none());
    } else {
        assert!(
            made.is_none(),
            "a lease without network has no namespace of the agent's"
        );
        wait_for(server, 90, "ended", |s| ended(s, lease)).await;
    }
    let logs = wait_for(server, 10, "the final logs", |s| {
        s.logs.get(&lease).filter(|l| l.complete).cloned()
    })
    .await;
    eprintln!("lease {lease} (network: {network}):\n{}", logs.tail);
    assert!(logs.tail.contains("probes done"), "{}", logs.tail);
    (results(&logs.tail), logs.tail)
}

fn assert_public_only(results: &BTreeMap<String, bool>, tail: &str) {
    assert_eq!(results.get("public"), Some(&true), "{tail}");
    for forbidden in [
        "private",
        "link_local",
        "metadata",
        "host_side",
        "host_loopback",
        "host_other",
        "server",
        "server_via_host",
    ] {
        assert_eq!(results.get(forbidden), Some(&false), "{forbidden}: {tail}");
    }
    assert!(tail.contains("default via 10.251."), "{tail}");
}

#[tokio::test]
async fn a_networked_lease_reaches_public_hosts_only_and_its_network_goes_with_it() {
    if host_can_give_leases_networks().is_none() {
        return;
    }
    let public = PublicHost::new();
    let public_port = serve_hello(Some(PUBLIC_NS));
    let host_port = serve_hello(None);
    // The test itself reaches every one of them: a lease that does not is
    // stopped by its rules, not by routing.
    for addr in [PUBLIC, PRIVATE, LINK_LOCAL] {
        assert!(
            hello_from(addr, public_port),
            "the test cannot reach {addr}"
        );
    }
    assert!(hello_from("127.0.0.1", host_port));
    assert!(hello_from(PUBLIC_HOST_SIDE, host_port));

    let server = FakeServer::start().await;
    let server_port: u16 = server
        .url()
        .rsplit(':')
        .next()
        .and_then(|p| p.trim_end_matches('/').parse().ok())
        .unwrap();
    let command = probes(public_port, host_port, server_port);
    let spool = temp_dir("network");
    let agent = spawn_agent(&server, &spool, &["--launcher", "sandbox"]);
    wait_for(&server, 30, "registration", |s| {
        s.registrations.first().cloned()
    })
    .await;

    // Networked: public only.
    let (open, tail) = probe_lease(&server, &spool, 4, &command, true, None).await;
    assert_public_only(&open, &tail);

    // Without network: no route at all, nothing reachable.
    let (open, tail) = probe_lease(&server, &spool, 5, &command, false, None).await;
    assert!(
        tail.contains("routes: \n") || tail.contains("routes: ;") || !tail.contains(" via "),
        "{tail}"
    );
    assert!(open.values().all(|o| !o), "{tail}");

    // A killed agent's lease network is removed by the next one on its spool.
    let lease = Uuid::new_v4();
    server.with(|s| {
        s.queued
            .push(lease_start(lease, 6, "sleep 600", true, None))
    });
    let (ns, veth) = wait_for(&server, 60, "provisioned", |s| {
        provisioned(s, lease).and_then(|_| mark(&spool, lease))
    })
    .await;
    assert!(netns_exists(&ns) && link_exists(&veth));
    drop(agent); // SIGKILL
    assert!(netns_exists(&ns), "a killed agent removes nothing");
    let _agent = spawn_agent(&server, &spool, &["--launcher", "sandbox"]);
    wait_for(&server, 30, "registration again", |s| {
        (s.registrations.len() >= 2).then_some(())
    })
    .await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while (netns_exists(&ns) || link_exists(&veth)) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(!netns_exists(&ns), "{ns} outlived its agent's restart");
    assert!(!link_exists(&veth), "{veth} outlived its agent's restart");
    assert!(mark(&spool, lease).is_none());
    drop(_agent);

    // The provider's flags: an exception to the private ranges, and one
    // more denied range (the "public" host itself).
    let spool = temp_dir("network-flags");
    let allow = format!("{PRIVATE}/32");
    let deny = format!("{PUBLIC}/32,192.0.2.0/24");
    let flags = [
        "--launcher",
        "sandbox",
        "--egress-allow",
        &allow,
        "--egress-deny",
        &deny,
    ];
    let _agent = spawn_agent(&server, &spool, &flags);
    wait_for(&server, 30, "registration", |s| {
        (s.registrations.len() >= 3).then_some(())
    })
    .await;
    let (open, tail) = probe_lease(&server, &spool, 4, &command, true, None).await;
    assert_eq!(open.get("private"), Some(&true), "{tail}");
    assert_eq!(open.get("public"), Some(&false), "{tail}");
    for still in [
        "link_local",
        "metadata",
        "host_side",
        "host_other",
        "server",
    ] {
        assert_eq!(open.get(still), Some(&false), "{still}: {tail}");
    }

    // An agent stopped with SIGTERM removes its running leases' networks.
    let mut agent = _agent;
    let lease = Uuid::new_v4();
    server.with(|s| {
        s.queued
            .push(lease_start(lease, 5, "sleep 600", true, None))
    });
    let (ns, veth) = wait_for(&server, 60, "provisioned", |s| {
        provisioned(s, lease).and_then(|_| mark(&spool, lease))
    })
    .await;
    assert!(netns_exists(&ns) && link_exists(&veth));
    let pid = nix::unistd::Pid::from_raw(agent.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while agent.child.try_wait().unwrap().is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "the agent did not stop"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!netns_exists(&ns), "{ns} outlived a stopped agent");
    assert!(!link_exists(&veth), "{veth} outlived a stopped agent");
    assert!(mark(&spool, lease).is_none());
    drop(agent);

    // The container launcher (podman joins the lease's namespace), where
    // this host has podman; in the same test, which owns the "public" host.
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gpuex-agent-tests");
    std::fs::create_dir_all(&scratch).unwrap();
    if let Some(podman) = available("podman", podman_image(&scratch)) {
        let spool = temp_dir("network-container");
        let hostname = format!("net-{}", Uuid::new_v4().simple());
        let _agent = spawn_agent(
            &server,
            &spool,
            &["--launcher", "container", "--hostname", &hostname],
        );
        wait_for(&server, 30, "registration", |s| {
            (s.registrations.len() >= 4).then_some(())
        })
        .await;
        let (open, tail) =
            probe_lease(&server, &spool, 4, &command, true, Some(&podman.image)).await;
        assert_public_only(&open, &tail);
    }
    drop(public);
}
