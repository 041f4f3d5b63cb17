//! Images pulled from a registry the provider allows (ARCHITECTURE.md §21): Debian's
//! `docker-registry`, started here on 127.0.0.1, holds an image the host
//! does not; the agent pulls it, runs it by its ID and the lease records
//! that ID.

use crate::agent_process::Agent;
use crate::fleet::{self, create_node, eventually, lease, market, node_view, place};
use crate::helpers::{Backend, TestApp};
use serde_json::json;
use std::process::{Command, Stdio};

/// The registry, stopped when dropped.
pub(crate) struct Registry(std::process::Child);

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

pub(crate) fn run(cmd: &mut Command) -> Result<String, String> {
    let out = cmd.output().map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
    }
}

/// Debian's registry on a free loopback port, its blobs under `scratch`;
/// with `users`, only they may push or pull (htpasswd, bcrypt as the
/// registry requires).
pub(crate) async fn start_registry(
    scratch: &std::path::Path,
    users: Option<(&str, &str)>,
) -> (Registry, String) {
    let address = format!("127.0.0.1:{}", free_port());
    let mut config = format!(
        "version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: {address}\n",
        scratch.join("blobs").display()
    );
    if let Some((user, password)) = users {
        let hash = bcrypt::hash_with_result(password, 4)
            .unwrap()
            .format_for_version(bcrypt::Version::TwoY);
        let htpasswd = scratch.join("htpasswd");
        std::fs::write(&htpasswd, format!("{user}:{hash}\n")).unwrap();
        config.push_str(&format!(
            "auth:\n  htpasswd:\n    realm: gpuex-test\n    path: {}\n",
            htpasswd.display()
        ));
    }
    let file = scratch.join("registry.yml");
    std::fs::write(&file, config).unwrap();
    let child = Command::new("docker-registry")
        .arg("serve")
        .arg(&file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start docker-registry");
    let registry = Registry(child);
    eventually(20, "the registry to listen", || async {
        tokio::net::TcpStream::connect(&address).await.is_ok()
    })
    .await;
    (registry, address)
}

/// podman with a test image, and Debian's registry (under CI a missing one
/// fails the test; locally it skips, saying why).
pub(crate) fn registry_tools(scratch: &std::path::Path) -> Option<crate::require::PodmanImage> {
    let podman = crate::require::require("podman", crate::require::podman_image(scratch))?;
    crate::require::require(
        "docker-registry",
        crate::require::program("docker-registry"),
    )?;
    Some(podman)
}

/// Pushes `image` to `remote` (with `creds`, `user:password`) and drops the
/// local copy of `remote`: the image is then only in the registry.
pub(crate) fn push_only(image: &str, remote: &str, creds: Option<&str>) {
    let mut push = Command::new("podman");
    push.args(["push", "--tls-verify=false"]);
    if let Some(creds) = creds {
        push.args(["--creds", creds]);
    }
    run(push.arg(image).arg(format!("docker://{remote}"))).expect("podman push");
    let _ = run(Command::new("podman").args(["rmi", "--force", remote]));
}

/// A registered agent with the container launcher that allows only the
/// registry at `address`, reached over plain HTTP.
pub(crate) async fn container_agent(
    app: &TestApp,
    m: &fleet::Market,
    address: &str,
    registries: &std::path::Path,
    spool: &std::path::Path,
    extra: &[&str],
) -> Agent {
    let node = create_node(
        app,
        &m.provider,
        json!({"name": "sim", "region": "eu-west"}),
    )
    .await;
    let pool = crate::uid_pool::fresh_uid_pool();
    let hostname = format!("registry-{}", address.rsplit(':').next().unwrap_or("0"));
    let mut args = vec![
        "--launcher",
        "container",
        "--uid-pool",
        &pool,
        "--hostname",
        &hostname,
        "--allow-registry",
        address,
    ];
    args.extend_from_slice(extra);
    let env = [("CONTAINERS_REGISTRIES_CONF", registries.to_str().unwrap())];
    let agent = Agent::start_args_env(app, &node.token, spool, &args, &env).await;
    eventually(20, "the agent to register", || async {
        node_view(app, &m.provider, node.id).await["status"] == "online"
    })
    .await;
    agent
}

/// A registries.conf that lets podman use plain HTTP to `address`: the
/// provider's own, which the agent hands on.
pub(crate) fn insecure_registries(scratch: &std::path::Path, address: &str) -> std::path::PathBuf {
    let registries = scratch.join("registries.conf");
    std::fs::write(
        &registries,
        format!("[[registry]]\nlocation = \"{address}\"\ninsecure = true\n"),
    )
    .unwrap();
    registries
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_image_is_pulled_from_an_allowed_registry_and_run_by_its_id() {
    let scratch = tempfile::tempdir().unwrap();
    let Some(podman) = registry_tools(scratch.path()) else {
        return;
    };
    let (_registry, address) = start_registry(scratch.path(), None).await;
    let port = address.rsplit(':').next().unwrap().to_owned();
    // The image is only in the registry: pushed there, never tagged here.
    let remote = format!("{address}/gpuex/busybox:{port}");
    push_only(&podman.image, &remote, None);
    let registries = insecure_registries(scratch.path(), &address);

    let app = TestApp::spawn_with(Backend::Sqlite, fleet::fast).await;
    let m = market(&app).await;
    let spool = tempfile::tempdir().unwrap();
    let _agent = container_agent(&app, &m, &address, &registries, spool.path(), &[]).await;
    let mut body = fleet::order("on_demand");
    body["resources"]["isolation"] = json!("whole");
    body["image"] = json!(remote);
    body["command"] = json!("echo pulled-and-ran; sleep 1");
    let id = place(&app, &m.buyer, body).await;
    eventually(90, "the pulled image's output", || async {
        let view = lease(&app, &m.buyer, id).await;
        let tail = app
            .get(&format!("/v1/leases/{id}/logs"), Some(&m.buyer))
            .await
            .body["tail"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        assert!(
            tail.contains("pulled-and-ran")
                || !["failed", "ended"].contains(&view["state"].as_str().unwrap_or("")),
            "the lease ended without its output: {view}\nlogs: {tail}"
        );
        tail.contains("pulled-and-ran")
    })
    .await;
    let pulled =
        run(Command::new("podman").args(["image", "inspect", "--format", "{{.Id}}", &remote]))
            .expect("the image was pulled onto the host");
    assert_eq!(
        lease(&app, &m.buyer, id).await["image_id"],
        json!(format!("sha256:{pulled}"))
    );
    let _ = run(Command::new("podman").args(["rmi", "--force", &remote]));
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_order_without_an_image_runs_in_the_providers_default_image() {
    let scratch = tempfile::tempdir().unwrap();
    let Some(podman) =
        crate::require::require("podman", crate::require::podman_image(scratch.path()))
    else {
        return;
    };
    let app = TestApp::spawn_with(Backend::Sqlite, fleet::fast).await;
    let m = market(&app).await;
    let spool = tempfile::tempdir().unwrap();
    let registries = insecure_registries(scratch.path(), "127.0.0.1:1");
    let extra = ["--default-image", podman.image.as_str()];
    let _agent = container_agent(&app, &m, "localhost", &registries, spool.path(), &extra).await;
    let mut body = fleet::order("on_demand");
    body["resources"]["isolation"] = json!("whole");
    body["command"] = json!("echo in-the-default-image; cat /proc/1/comm; sleep 1");
    let id = place(&app, &m.buyer, body).await;
    eventually(60, "the workload's output", || async {
        let tail = app
            .get(&format!("/v1/leases/{id}/logs"), Some(&m.buyer))
            .await
            .body["tail"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        tail.contains("in-the-default-image")
    })
    .await;
    let local = run(Command::new("podman").args([
        "image",
        "inspect",
        "--format",
        "{{.Id}}",
        &podman.image,
    ]))
    .unwrap();
    assert_eq!(
        lease(&app, &m.buyer, id).await["image_id"],
        json!(format!("sha256:{local}"))
    );
    app.stop().await;
}
