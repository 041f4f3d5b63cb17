//! Heartbeats answered from memory (issue 38): the node token and the
//! node's standing come from the node cache, kept in step by every writer;
//! the beat itself is written behind, with every other node's, and shows in
//! the node's views before it is written.

use crate::fleet::{self, beat, create_node, eventually, h100_node, market, node_view, register};
use crate::helpers::{on_both_databases, TestApp};
use crate::scale_out::{leader, replicas_on_a_fresh_database};
use reqwest::{Method, StatusCode};

const H100_MIG: (&str, bool) = ("H100-SXM5-80GB", true);

/// Rows whose beat is written: the test's only node's, once written.
const WRITTEN: &str =
    "SELECT COUNT(*) FROM nodes WHERE last_heartbeat_at IS NOT NULL AND metrics_json LIKE '%GPU_UTIL%'";

on_both_databases! {
    async fn a_beat_shows_in_the_nodes_views_at_once_and_reaches_its_row_with_the_next_flush(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        register(&app, &node, &[H100_MIG]).await;
        assert_eq!(fleet::scalar(&app, WRITTEN).await, 0);
        beat(&app, &node, &[]).await;
        // Before any flush: the views overlay the beat kept in memory.
        let seen = node_view(&app, &m.provider, node.id).await;
        let at = seen["last_heartbeat_at"].as_str().expect("a beat time").to_owned();
        let gpus = seen["gpus"].to_string();
        assert!(gpus.contains("GPU_UTIL"), "the beat's metrics: {seen}");
        let listed = app.get("/v1/nodes", Some(&m.provider)).await.body;
        assert_eq!(listed[0]["last_heartbeat_at"], at.as_str(), "{listed}");
        // The flusher writes it (once a second).
        eventually(10, "the beat to reach the node's row", || async {
            fleet::scalar(&app, WRITTEN).await == 1
        })
        .await;
        // Written, the views say the same.
        let written = node_view(&app, &m.provider, node.id).await;
        assert_eq!(written["last_heartbeat_at"], at.as_str(), "{written}");
        assert_eq!(written["gpus"].to_string(), gpus);
    }

    async fn the_beats_kept_in_memory_are_written_when_the_server_stops(app) {
        let mut app = app;
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        register(&app, &node, &[H100_MIG]).await;
        beat(&app, &node, &[]).await;
        app.halt().await;
        assert_eq!(fleet::scalar(&app, WRITTEN).await, 1, "the last beat was written on shutdown");
    }

    async fn a_node_answered_from_memory_is_answered_anew_after_each_change_to_it(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        // Not registered yet: refused, and now remembered as such.
        for _ in 0..2 {
            app.post("/v1/agent/heartbeat", Some(&node.token), fleet::heartbeat(node.id, &[]))
                .await
                .assert_code(409, "register_again");
        }
        // A registration is a change: the next beat is taken.
        register(&app, &node, &[H100_MIG]).await;
        beat(&app, &node, &[]).await;
        beat(&app, &node, &[]).await;
        // So is a deletion: the token is refused on the very next beat,
        // however often it was answered from memory before.
        let r = app
            .request(Method::DELETE, &format!("/v1/nodes/{}", node.id), Some(&m.provider), None)
            .await;
        assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
        app.post("/v1/agent/heartbeat", Some(&node.token), fleet::heartbeat(node.id, &[]))
            .await
            .assert_code(401, "unauthorized");
    }
}

/// Two replicas on one PostgreSQL: a node beats on the leader, which
/// answers its token from memory; its provider deletes it on the follower.
/// The follower's notification reaches the leader, which refuses the token
/// from then on; a beat on the follower is written straight to the row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_deleted_on_a_follower_is_refused_by_the_leader_that_cached_its_token() {
    let Some((client, database_url, replicas)) = replicas_on_a_fresh_database(2).await else {
        return;
    };
    let first = leader(&client, &replicas, 10).await;
    let leading = TestApp::external(&replicas[first].address, &database_url);
    let following = TestApp::external(&replicas[1 - first].address, &database_url);
    let m = market(&following).await;
    let node = following
        .node_of(&m.provider, "eu-west", &[("H100-SXM5-80GB", "mig")])
        .await;
    let node = fleet::Node {
        id: node.id,
        token: node.token,
    };
    register(&leading, &node, &[H100_MIG]).await;
    beat(&leading, &node, &[]).await;
    beat(&leading, &node, &[]).await;
    // The follower writes its beats itself: the row has it at once.
    beat(&following, &node, &[]).await;
    assert_eq!(fleet::scalar(&following, WRITTEN).await, 1);

    let r = following
        .request(
            Method::DELETE,
            &format!("/v1/nodes/{}", node.id),
            Some(&m.provider),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    // Within PostgreSQL's notification delay (milliseconds; the forwarded
    // node loss the deletion waited for took longer).
    eventually(
        5,
        "the leader to refuse the deleted node's token",
        || async {
            leading
                .post(
                    "/v1/agent/heartbeat",
                    Some(&node.token),
                    fleet::heartbeat(node.id, &[]),
                )
                .await
                .status
                == StatusCode::UNAUTHORIZED
        },
    )
    .await;
    following
        .post(
            "/v1/agent/heartbeat",
            Some(&node.token),
            fleet::heartbeat(node.id, &[]),
        )
        .await
        .assert_code(401, "unauthorized");
}
