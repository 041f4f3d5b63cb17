//! GPUs by CDI through a real container (ARCHITECTURE.md §21): the agent's spec for
//! the lease names its GPU's device nodes, and podman gives the container
//! exactly those. Character devices made with `mknod` stand in for the
//! GPUs' (`--dev-root`), so no GPU is needed to see which nodes arrive.

use crate::agent_process::Agent;
use crate::fleet::{self, create_node, eventually, lease, market, node_view, place};
use crate::helpers::{Backend, TestApp};
use serde_json::json;
use uuid::Uuid;

async fn tail(app: &TestApp, buyer: &str, lease: Uuid) -> String {
    let r = app
        .get(&format!("/v1/leases/{lease}/logs"), Some(buyer))
        .await;
    r.body["tail"].as_str().unwrap_or("").to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_container_sees_exactly_its_leases_device_nodes() {
    let scratch = tempfile::tempdir().unwrap();
    let Some(podman) =
        crate::require::require("podman", crate::require::podman_image(scratch.path()))
    else {
        return;
    };
    // /dev/null's numbers: harmless stand-ins under the GPUs' names.
    let dev = tempfile::tempdir().unwrap();
    let mut names = vec!["nvidiactl".to_string(), "nvidia-uvm".to_string()];
    names.extend((0..8).map(|i| format!("nvidia{i}")));
    for name in &names {
        let made = std::process::Command::new("mknod")
            .arg(dev.path().join(name))
            .args(["c", "1", "3"])
            .status()
            .expect("mknod");
        assert!(made.success(), "mknod {name}");
    }
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
    let hostname = format!("devices-{}", Uuid::new_v4().simple());
    let dev_root = dev.path().to_string_lossy().into_owned();
    let args = [
        "--launcher",
        "container",
        "--uid-pool",
        &pool,
        "--hostname",
        &hostname,
        "--dev-root",
        &dev_root,
    ];
    let _agent = Agent::start_args(&app, &node.token, spool.path(), &args).await;
    eventually(20, "the agent to register", || async {
        node_view(&app, &m.provider, node.id).await["status"] == "online"
    })
    .await;
    let mut body = fleet::order("on_demand");
    body["resources"]["isolation"] = json!("whole");
    body["image"] = json!(podman.image);
    // The stand-ins appear at their own path (see `cdi`): only the lease's.
    body["command"] = json!(format!("echo devices:; ls {dev_root}; echo done; sleep 1"));
    let id = place(&app, &m.buyer, body).await;
    eventually(60, "the container's listing", || async {
        let view = lease(&app, &m.buyer, id).await;
        let out = tail(&app, &m.buyer, id).await;
        assert!(
            out.contains("done")
                || !["failed", "ended"].contains(&view["state"].as_str().unwrap_or("")),
            "the container ended without its output: {view}\nlogs: {out}"
        );
        out.contains("done")
    })
    .await;
    let gpu = lease(&app, &m.buyer, id).await["placement"]["gpus"][0]["index"]
        .as_u64()
        .expect("the lease's GPU");
    let out = tail(&app, &m.buyer, id).await;
    let listing = out.split("devices:").nth(1).unwrap_or_default();
    let mut seen: Vec<&str> = listing
        .lines()
        .map(str::trim)
        .filter(|n| n.starts_with("nvidia"))
        .collect();
    seen.sort_unstable();
    let mut want = vec![
        "nvidia-uvm".to_string(),
        format!("nvidia{gpu}"),
        "nvidiactl".to_string(),
    ];
    want.sort_unstable();
    assert_eq!(seen, want, "{out}");
    app.stop().await;
}
