//! Node tokens die with their node (ARCHITECTURE.md §19 "Tokens"): `DELETE
//! /v1/nodes/{id}` and `PUT /v1/admin/users/{id}/role` revoke them in the same
//! transaction, and the node's leases end as a lost node's do.

use crate::fleet::{
    self, beat, create_node, h100_node, lease, market, node_view, order, place, provisioned,
    register, report, Node,
};
use crate::helpers::{on_both_databases, TestApp};
use reqwest::{Method, StatusCode};
use rust_decimal::Decimal;
use serde_json::json;
use uuid::Uuid;

const H100_MIG: (&str, bool) = ("H100-SXM5-80GB", true);

async fn delete(app: &TestApp, token: &str, path: &str) -> crate::helpers::Reply {
    app.request(Method::DELETE, path, Some(token), None).await
}

/// What the node's agent gets for a heartbeat now.
async fn heartbeat_status(app: &TestApp, node: &Node) -> StatusCode {
    app.post(
        "/v1/agent/heartbeat",
        Some(&node.token),
        fleet::heartbeat(node.id, &[]),
    )
    .await
    .status
}

async fn user_id(app: &TestApp, token: &str) -> Uuid {
    app.get("/v1/me", Some(token)).await.body["id"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

on_both_databases! {
    async fn a_deleted_nodes_token_gets_401_on_the_next_heartbeat_and_the_node_leaves_every_view(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        register(&app, &node, &[H100_MIG]).await;
        beat(&app, &node, &[]).await;

        let r = delete(&app, &m.provider, &format!("/v1/nodes/{}", node.id)).await;
        assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
        let r = app.post("/v1/agent/heartbeat", Some(&node.token), fleet::heartbeat(node.id, &[])).await;
        r.assert_code(401, "unauthorized");
        app.get(&format!("/v1/nodes/{}", node.id), Some(&m.provider)).await.assert_code(404, "not_found");
        assert_eq!(app.get("/v1/nodes", Some(&m.provider)).await.body, json!([]));
        assert_eq!(app.get("/v1/nodes", Some(&m.admin)).await.body, json!([]));
        // Its capacity is gone from the market: nothing to place on.
        let r = app.post("/v1/orders", Some(&m.buyer), order("on_demand")).await;
        assert_ne!(r.body["state"], "filled", "{}", r.body);
        // A repeat (its answer lost) answers the same.
        let r = delete(&app, &m.provider, &format!("/v1/nodes/{}", node.id)).await;
        assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
        let audit = app.get("/v1/admin/audit?action=delete_node", Some(&m.admin)).await;
        let items = audit.body["items"].as_array().unwrap();
        assert_eq!(items.len(), 1, "{}", audit.body);
        assert_eq!(items[0]["target"], format!("node:{}", node.id));
    }

    async fn a_node_with_live_leases_is_refused_unless_forced_and_then_its_leases_end_as_on_node_loss(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        register(&app, &node, &[H100_MIG]).await;
        let lease_id = place(&app, &m.buyer, order("on_demand")).await;
        report(&app, &node, lease_id, provisioned("MIG-abc")).await;
        beat(&app, &node, &[(lease_id, "running")]).await;

        let path = format!("/v1/nodes/{}", node.id);
        delete(&app, &m.provider, &path).await.assert_code(409, "node_has_leases");
        // Refused means nothing changed: the agent still reports.
        assert_eq!(heartbeat_status(&app, &node).await, StatusCode::OK);
        assert_eq!(lease(&app, &m.buyer, lease_id).await["state"], "running");

        let last_beat: chrono::DateTime<chrono::Utc> = node_view(&app, &m.provider, node.id).await
            ["last_heartbeat_at"].as_str().unwrap().parse().unwrap();
        let r = delete(&app, &m.provider, &format!("{path}?force=true")).await;
        assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
        assert_eq!(heartbeat_status(&app, &node).await, StatusCode::UNAUTHORIZED);
        let ended = lease(&app, &m.buyer, lease_id).await;
        assert_eq!(ended["state"], "ended", "{ended}");
        assert_eq!(ended["end_reason"], "node_lost", "{ended}");
        // Charged up to the node's last heartbeat and not a second more, and
        // the rest of the buyer's hold released.
        let billed_until: chrono::DateTime<chrono::Utc> =
            ended["usage"]["billed_until"].as_str().unwrap().parse().unwrap();
        assert_eq!(billed_until.timestamp(), last_beat.timestamp(), "{ended}");
        let wallet = app.get("/v1/wallet", Some(&m.buyer)).await.body;
        let held: Decimal = wallet["held"].as_str().unwrap().parse().unwrap();
        assert_eq!(held, Decimal::ZERO, "{wallet}");
    }

    async fn only_the_nodes_provider_or_an_admin_deletes_it_and_bad_input_is_named(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        let path = format!("/v1/nodes/{}", node.id);
        let (other, _) = app.user("provider").await;
        delete(&app, &other, &path).await.assert_code(404, "not_found");
        delete(&app, &m.buyer, &path).await.assert_code(403, "forbidden");
        delete(&app, &node.token, &path).await.assert_code(403, "forbidden");
        delete(&app, &m.provider, "/v1/nodes/not-a-uuid").await.assert_code(404, "not_found");
        delete(&app, &m.provider, &format!("{path}?force=maybe")).await.assert_problem(422, Some("query.force"));
        delete(&app, &m.provider, &format!("/v1/nodes/{}", Uuid::now_v7())).await.assert_code(404, "not_found");
        // Still there after all of that.
        assert_eq!(heartbeat_status(&app, &node).await, StatusCode::CONFLICT);
        let r = delete(&app, &m.admin, &path).await;
        assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
        assert_eq!(heartbeat_status(&app, &node).await, StatusCode::UNAUTHORIZED);
    }

    async fn a_provider_made_a_buyer_loses_every_node_token_and_its_leases_end_as_on_node_loss(app) {
        let m = market(&app).await;
        let busy = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        let idle = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        register(&app, &busy, &[H100_MIG]).await;
        register(&app, &idle, &[H100_MIG]).await;
        let lease_id = place(&app, &m.buyer, order("on_demand")).await;
        let leased = lease(&app, &m.buyer, lease_id).await;
        let (busy, idle) = if leased["node_id"] == busy.id.to_string() { (busy, idle) } else { (idle, busy) };
        report(&app, &busy, lease_id, provisioned("MIG-abc")).await;
        beat(&app, &busy, &[(lease_id, "running")]).await;
        beat(&app, &idle, &[]).await;
        let provider_id = user_id(&app, &m.provider).await;

        let path = format!("/v1/admin/users/{provider_id}/role");
        let changed = app.put(&path, Some(&m.admin), json!({"role": "buyer"})).await;
        assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
        assert_eq!(changed.body["role"], "buyer");
        // The attack: the demoted provider's agents keep working. They do not.
        assert_eq!(heartbeat_status(&app, &busy).await, StatusCode::UNAUTHORIZED);
        assert_eq!(heartbeat_status(&app, &idle).await, StatusCode::UNAUTHORIZED);
        let r = app.post("/v1/agent/register", Some(&idle.token), fleet::registration(&[H100_MIG])).await;
        r.assert_code(401, "unauthorized");
        // Nor does the account's session as a provider.
        app.get("/v1/nodes", Some(&m.provider)).await.assert_code(401, "unauthorized");
        let ended = lease(&app, &m.buyer, lease_id).await;
        assert_eq!((&ended["state"], &ended["end_reason"]), (&json!("ended"), &json!("node_lost")), "{ended}");
        for node in [&busy, &idle] {
            assert_eq!(node_view(&app, &m.admin, node.id).await["status"], "lost");
        }
        // A repeat changes nothing and answers the same.
        let again = app.put(&path, Some(&m.admin), json!({"role": "buyer"})).await;
        assert_eq!((again.status, &again.body), (StatusCode::OK, &changed.body));
        let audit = app.get("/v1/admin/audit?action=set_role", Some(&m.admin)).await;
        let items = audit.body["items"].as_array().unwrap();
        assert_eq!(items.len(), 1, "{}", audit.body);
        assert_eq!(items[0]["details"]["from"], "provider");
        assert_eq!(items[0]["details"]["to"], "buyer");
    }

    async fn a_provider_made_an_admin_keeps_its_nodes(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        register(&app, &node, &[H100_MIG]).await;
        let provider_id = user_id(&app, &m.provider).await;
        let r = app.put(&format!("/v1/admin/users/{provider_id}/role"), Some(&m.admin), json!({"role": "admin"})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        assert_eq!(heartbeat_status(&app, &node).await, StatusCode::OK);
    }

    async fn role_changes_are_for_admins_and_name_each_bad_field(app) {
        let m = market(&app).await;
        let buyer_id = user_id(&app, &m.buyer).await;
        let admin_id = user_id(&app, &m.admin).await;
        let path = format!("/v1/admin/users/{buyer_id}/role");
        app.put(&path, Some(&m.provider), json!({"role": "admin"})).await.assert_code(403, "forbidden");
        app.put(&path, None, json!({"role": "admin"})).await.assert_code(401, "unauthorized");
        app.put(&path, Some(&m.admin), json!({"role": "agent"})).await.assert_problem(422, Some("role"));
        app.put(&path, Some(&m.admin), json!({"role": "root"})).await.assert_problem(422, Some("role"));
        app.put(&path, Some(&m.admin), json!({})).await.assert_problem(422, Some("role"));
        app.put(&path, Some(&m.admin), json!({"role": "buyer", "x": 1})).await.assert_problem(422, None);
        app.put("/v1/admin/users/nope/role", Some(&m.admin), json!({"role": "buyer"}))
            .await
            .assert_code(404, "not_found");
        app.put(&format!("/v1/admin/users/{}/role", Uuid::now_v7()), Some(&m.admin), json!({"role": "buyer"}))
            .await
            .assert_code(404, "not_found");
        app.put(&format!("/v1/admin/users/{admin_id}/role"), Some(&m.admin), json!({"role": "buyer"}))
            .await
            .assert_code(409, "own_role");
        // The buyer's role stood through all of that.
        assert_eq!(app.get("/v1/me", Some(&m.buyer)).await.body["role"], "buyer");
        let r = app.put(&path, Some(&m.admin), json!({"role": "provider"})).await;
        assert_eq!((r.status, &r.body["role"]), (StatusCode::OK, &json!("provider")), "{}", r.body);
    }
}
