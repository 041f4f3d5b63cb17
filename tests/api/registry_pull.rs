//! Images pulled from a registry the provider allows (DESIGN §21): Debian's
//! `docker-registry`, started here on 127.0.0.1, holds an image the host
//! does not; the agent pulls it, runs it by its ID and the lease records
//! that ID.

use crate::agent_process::Agent;
use crate::fleet::{self, create_node, eventually, lease, market, node_view, place};
use crate::helpers::{Backend, TestApp};
use serde_json::json;
use std::process::{Command, Stdio};

/// The registry, stopped when dropped.
struct Registry(std::process::Child);

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

fn run(cmd: &mut Command) -> Result<String, String> {
    let out = cmd.output().map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_image_is_pulled_from_an_allowed_registry_and_run_by_its_id() {
    let scratch = tempfile::tempdir().unwrap();
    let Some(podman) =
        crate::require::require("podman", crate::require::podman_image(scratch.path()))
    else {
        return;
    };
    let Some(()) = crate::require::require(
        "docker-registry",
        crate::require::program("docker-registry"),
    ) else {
        return;
    };
    let port = free_port();
    let address = format!("127.0.0.1:{port}");
    let config = scratch.path().join("registry.yml");
    std::fs::write(
        &config,
        format!(
            "version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: {address}\n",
            scratch.path().join("blobs").display()
        ),
    )
    .unwrap();
    let child = Command::new("docker-registry")
        .arg("serve")
        .arg(&config)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start docker-registry");
    let _registry = Registry(child);
    eventually(20, "the registry to listen", || async {
        tokio::net::TcpStream::connect(&address).await.is_ok()
    })
    .await;
    // The image is only in the registry: pushed there, never tagged here.
    let remote = format!("{address}/gpuex/busybox:{port}");
    run(Command::new("podman")
        .args(["push", "--tls-verify=false", &podman.image])
        .arg(format!("docker://{remote}")))
    .expect("podman push");
    let _ = run(Command::new("podman").args(["rmi", "--force", &remote]));
    // Plain HTTP on loopback: podman is told so by the provider's own
    // registries.conf, which the agent hands on.
    let registries = scratch.path().join("registries.conf");
    std::fs::write(
        &registries,
        format!("[[registry]]\nlocation = \"{address}\"\ninsecure = true\n"),
    )
    .unwrap();

    let app = TestApp::spawn_with(Backend::Sqlite, fleet::fast).await;
    let m = market(&app).await;
    let node = create_node(
        &app,
        &m.provider,
        json!({"name": "sim", "region": "eu-west"}),
    )
    .await;
    let spool = tempfile::tempdir().unwrap();
    let pool = crate::uid_pool::fresh_uid_pool();
    let hostname = format!("registry-{port}");
    let args = [
        "--launcher",
        "container",
        "--uid-pool",
        &pool,
        "--hostname",
        &hostname,
        "--allow-registry",
        &address,
    ];
    let env = [("CONTAINERS_REGISTRIES_CONF", registries.to_str().unwrap())];
    let _agent = Agent::start_args_env(&app, &node.token, spool.path(), &args, &env).await;
    eventually(20, "the agent to register", || async {
        node_view(&app, &m.provider, node.id).await["status"] == "online"
    })
    .await;
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
