//! The hosts of the multi-host test, made of network namespaces on this
//! machine: one for a PostgreSQL of the test's own and one per replica, on
//! two bridges (switches) in the root namespace. The client net carries the
//! HTTP calls (the test's and the replicas' forwards to the leader); the
//! database net carries only PostgreSQL, so taking a replica's port on it
//! down cuts that replica off from the database and nothing else.
//!
//! The test process takes the `.1` address on both nets: it calls the
//! replicas and checks the database afterwards. IP forwarding stays off in
//! the root namespace and the replicas have no default route, so a replica
//! cut off from the database net cannot reach it through the root.
//!
//! Everything is named `gxn<pid>…` and removed when [`Topology`] is dropped,
//! panics included; what a killed earlier run left (its pid no longer
//! lives) is removed before building.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// What every name of this run starts with.
const PREFIX: &str = "gxn";

/// The port PostgreSQL and the replicas listen on: each namespace has its
/// own ports, so a fixed one never collides.
const PG_PORT: u16 = 5432;
const HTTP_PORT: u16 = 8080;

/// The replicas' namespaces' and addresses' last octet: r0 is `.10`.
const REPLICA_HOST: u8 = 10;
const DB_HOST: u8 = 2;

pub struct Topology {
    tag: String,
    /// The third octet of both nets (10.231.S.0/24 and 10.232.S.0/24).
    subnet: u8,
    namespaces: Vec<String>,
    postgres: Option<Child>,
    pgdata: PathBuf,
    _scratch: tempfile::TempDir,
}

/// Runs `args` (`ip …`, …), panicking with its stderr when it fails.
fn run(program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program} cannot run: {e}"));
    assert!(
        out.status.success(),
        "{program} {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr).trim()
    );
}

/// The same, where failing is expected and harmless (cleaning up).
fn try_run(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .stderr(Stdio::null())
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

/// A PostgreSQL program: on PATH, else in Debian's versioned folder.
pub fn postgres_program(name: &str) -> Result<PathBuf, String> {
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    let debian = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| {
            let mut v: Vec<PathBuf> = d.flatten().map(|e| e.path().join("bin")).collect();
            v.sort();
            v.reverse();
            v
        })
        .unwrap_or_default();
    on_path
        .into_iter()
        .chain(debian)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .ok_or_else(|| format!("{name} is neither on PATH nor in /usr/lib/postgresql/*/bin"))
}

/// Kills every process left in namespace `ns` (SIGKILL), so that deleting
/// it frees its interfaces at once.
fn kill_inside(ns: &str) {
    for pid in try_run("ip", &["netns", "pids", ns]).split_whitespace() {
        if let Ok(pid) = pid.parse::<i32>() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// The pid in a name of ours (`gxn<pid>…`), if it is one.
fn owner(name: &str) -> Option<u32> {
    let digits: String = name
        .strip_prefix(PREFIX)?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// Removes the namespaces and interfaces of earlier runs whose process
/// is gone.
fn remove_leftovers() {
    let dead =
        |name: &str| owner(name).is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists());
    for line in try_run("ip", &["netns", "list"]).lines() {
        let ns = line.split_whitespace().next().unwrap_or("");
        if dead(ns) {
            kill_inside(ns);
            try_run("ip", &["netns", "del", ns]);
        }
    }
    for name in link_names() {
        if dead(&name) {
            try_run("ip", &["link", "del", &name]);
        }
    }
}

/// The names of the root namespace's interfaces.
fn link_names() -> Vec<String> {
    try_run("ip", &["-o", "link", "show"])
        .lines()
        // "7: gxn123c: <…" or "8: gxn123r0c@if2: <…"
        .filter_map(|line| line.split(": ").nth(1))
        .map(|name| name.split('@').next().unwrap_or(name).to_owned())
        .collect()
}

impl Topology {
    /// The nets, the database's namespace with PostgreSQL running in it and
    /// a database `gpuex`, and `replicas` empty namespaces.
    pub async fn build(replicas: usize) -> Topology {
        remove_leftovers();
        let pid = std::process::id();
        let scratch = tempfile::Builder::new()
            .prefix("gpuex-netns-")
            .tempdir()
            .expect("a scratch folder");
        let mut topology = Topology {
            tag: format!("{PREFIX}{pid}"),
            // Per run, so an address of another run never shadows ours.
            subnet: (pid % 200) as u8 + 20,
            namespaces: Vec::new(),
            postgres: None,
            pgdata: scratch.path().join("data"),
            _scratch: scratch,
        };
        for (bridge, net) in [("c", 231), ("d", 232)] {
            let name = format!("{}{bridge}", topology.tag);
            run("ip", &["link", "add", &name, "type", "bridge"]);
            let address = format!("10.{net}.{}.1/24", topology.subnet);
            run("ip", &["addr", "add", &address, "dev", &name]);
            run("ip", &["link", "set", &name, "up"]);
        }
        topology.host("db", DB_HOST, false);
        for i in 0..replicas {
            topology.host(&format!("r{i}"), REPLICA_HOST + i as u8, true);
        }
        topology.start_postgres().await;
        topology
    }

    /// A namespace `<tag>-<name>` with loopback up, a port on the database
    /// net (`dnet`) and, for a replica, one on the client net (`cnet`).
    fn host(&mut self, name: &str, last_octet: u8, client: bool) {
        let ns = format!("{}-{name}", self.tag);
        run("ip", &["netns", "add", &ns]);
        self.namespaces.push(ns.clone());
        run("ip", &["-n", &ns, "link", "set", "lo", "up"]);
        let mut nets = vec![("d", "dnet", 232)];
        if client {
            nets.push(("c", "cnet", 231));
        }
        for (bridge, inside, net) in nets {
            // The root's end is the switch port: `<tag><name><net>`.
            let port = format!("{}{name}{bridge}", self.tag);
            run(
                "ip",
                &[
                    "link", "add", &port, "type", "veth", "peer", "name", inside, "netns", &ns,
                ],
            );
            let master = format!("{}{bridge}", self.tag);
            run("ip", &["link", "set", &port, "master", &master, "up"]);
            let address = format!("10.{net}.{}.{last_octet}/24", self.subnet);
            run("ip", &["-n", &ns, "addr", "add", &address, "dev", inside]);
            run("ip", &["-n", &ns, "link", "set", inside, "up"]);
        }
    }

    /// The namespace of replica `i`.
    pub fn replica_ns(&self, i: usize) -> String {
        format!("{}-r{i}", self.tag)
    }

    /// Where replica `i` listens, on the client net.
    pub fn replica_listen(&self, i: usize) -> String {
        format!(
            "10.231.{}.{}:{HTTP_PORT}",
            self.subnet,
            REPLICA_HOST + i as u8
        )
    }

    /// Replica `i`'s address on the database net, as PostgreSQL sees it.
    pub fn replica_database_address(&self, i: usize) -> String {
        format!("10.232.{}.{}", self.subnet, REPLICA_HOST + i as u8)
    }

    /// The test's database, on the database net.
    pub fn database_url(&self) -> String {
        format!(
            "postgres://postgres@10.232.{}.{DB_HOST}:{PG_PORT}/gpuex",
            self.subnet
        )
    }

    /// Takes replica `i`'s port on the database net down (`up` false) or
    /// up again: the switch's end, as when a cable or a switch port fails.
    /// The replica's interface loses its carrier but keeps its address and
    /// route: what it sends is dropped, and once ARP gives up on the
    /// database's address (about 3 s) its sends fail with "No route to
    /// host". PostgreSQL hears nothing: it learns only from its own timers.
    pub fn database_link(&self, i: usize, up: bool) {
        let port = format!("{}r{i}d", self.tag);
        run(
            "ip",
            &["link", "set", &port, if up { "up" } else { "down" }],
        );
    }

    /// initdb as `postgres` in the scratch folder, then PostgreSQL in the
    /// database's namespace, listening on its address there only.
    async fn start_postgres(&mut self) {
        let user = nix::unistd::User::from_name("postgres")
            .ok()
            .flatten()
            .expect("a `postgres` system user (PostgreSQL refuses to run as root)");
        let scratch = self.pgdata.parent().expect("the scratch folder").to_owned();
        std::os::unix::fs::chown(&scratch, Some(user.uid.as_raw()), Some(user.gid.as_raw()))
            .expect("give the scratch folder to postgres");
        let as_postgres = [
            "--reuid=postgres",
            "--regid=postgres",
            "--init-groups",
            "--",
        ];
        let initdb = postgres_program("initdb").expect("initdb");
        let data = self.pgdata.to_str().expect("a UTF-8 path");
        let mut args: Vec<&str> = as_postgres.to_vec();
        args.extend([
            initdb.to_str().expect("a UTF-8 path"),
            "-D",
            data,
            "-U",
            "postgres",
            "-A",
            "trust",
            "--no-sync",
            "--no-locale",
            "-E",
            "UTF8",
        ]);
        let out = Command::new("setpriv")
            .args(&args)
            .output()
            .expect("initdb runs");
        assert!(
            out.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Only the nets of this test exist in the namespace: trust is safe.
        let hba = self.pgdata.join("pg_hba.conf");
        let mut rules = std::fs::read_to_string(&hba).expect("pg_hba.conf");
        rules.push_str(&format!("host all all 10.232.{}.0/24 trust\n", self.subnet));
        std::fs::write(&hba, rules).expect("pg_hba.conf");
        let postgres = postgres_program("postgres").expect("postgres");
        let listen = format!("listen_addresses=10.232.{}.{DB_HOST}", self.subnet);
        let sockets = format!("unix_socket_directories={}", scratch.display());
        let port = format!("port={PG_PORT}");
        let log = std::fs::File::create(scratch.join("postgres.log")).expect("a log file");
        let ns = format!("{}-db", self.tag);
        // `ip netns exec` and setpriv exec, so the child is postgres itself.
        let child = Command::new("ip")
            .args(["netns", "exec", &ns, "setpriv"])
            .args(as_postgres)
            .arg(&postgres)
            .args(["-D", data])
            .args(["-c", &listen, "-c", &sockets, "-c", &port])
            // Three replicas' pools, elections and listeners, the cut
            // leader's sessions PostgreSQL has not dropped yet, the test's.
            .args(["-c", "max_connections=300"])
            // Durability is not under test; speed on a small machine is.
            .args(["-c", "fsync=off", "-c", "synchronous_commit=off"])
            .args(["-c", "full_page_writes=off"])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn postgres");
        self.postgres = Some(child);
        self.create_database().await;
    }

    /// Waits for PostgreSQL to answer over the database net; creates `gpuex`.
    async fn create_database(&mut self) {
        use sqlx::Connection;
        let admin = format!(
            "postgres://postgres@10.232.{}.{DB_HOST}:{PG_PORT}/postgres",
            self.subnet
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut conn = loop {
            match sqlx::PgConnection::connect(&admin).await {
                Ok(conn) => break conn,
                Err(e) => {
                    if let Some(status) = self.postgres.as_mut().and_then(|c| c.try_wait().ok()?) {
                        panic!("postgres exited ({status}): {}", self.postgres_log());
                    }
                    assert!(
                        Instant::now() < deadline,
                        "PostgreSQL did not answer: {e}\n{}",
                        self.postgres_log()
                    );
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        };
        sqlx::query("CREATE DATABASE gpuex")
            .execute(&mut conn)
            .await
            .expect("create database");
        let _ = conn.close().await;
    }

    /// The end of PostgreSQL's log, for a failure's story.
    fn postgres_log(&self) -> String {
        let log = self
            .pgdata
            .parent()
            .map(|s| std::fs::read_to_string(s.join("postgres.log")).unwrap_or_default())
            .unwrap_or_default();
        let start = log.len().saturating_sub(4000);
        String::from_utf8_lossy(&log.as_bytes()[start..]).into_owned()
    }
}

impl Topology {
    /// This run's interfaces in the root namespace: bridges and ports.
    fn links(&self) -> Vec<String> {
        link_names()
            .into_iter()
            // By pid, not by prefix: gxn12 is not gxn123's.
            .filter(|name| owner(name) == Some(std::process::id()))
            .collect()
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("PostgreSQL's log ends:\n{}", self.postgres_log());
        }
        // A cut link heals first, so PostgreSQL and the replicas part
        // cleanly instead of retrying into a dead link.
        for name in self.links() {
            try_run("ip", &["link", "set", &name, "up"]);
        }
        // Fast shutdown (SIGINT): PostgreSQL ends its sessions and exits.
        if let Some(mut postgres) = self.postgres.take() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(postgres.id() as i32),
                nix::sys::signal::Signal::SIGINT,
            );
            let deadline = Instant::now() + Duration::from_secs(5);
            while postgres.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = postgres.kill();
            let _ = postgres.wait();
        }
        // Whatever still runs inside (a replica whose handle outlives this)
        // would keep a namespace alive too.
        for ns in &self.namespaces {
            kill_inside(ns);
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline
            && self
                .namespaces
                .iter()
                .any(|ns| !try_run("ip", &["netns", "pids", ns]).trim().is_empty())
        {
            std::thread::sleep(Duration::from_millis(50));
        }
        for ns in &self.namespaces {
            try_run("ip", &["netns", "del", ns]);
        }
        // A namespace outlives its name while a socket of a killed process
        // still retries in it, its interfaces with it: removing our end of
        // each pair (and the bridges) takes them away at once.
        for name in self.links() {
            try_run("ip", &["link", "del", &name]);
        }
    }
}
