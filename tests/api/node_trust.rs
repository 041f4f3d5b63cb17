//! Which agents the live market accepts (issue 34 item 12, ARCHITECTURE.md §7): the
//! simulated backend only on a node an admin marked simulated, and a
//! re-inventory that changes a node's models or GPU count goes under review
//! (cordoned, shown to its provider) until an admin accepts it.

use crate::fleet::{self, create_node, h100_node, market, node_view, order, place, register};
use crate::helpers::on_both_databases;
use reqwest::StatusCode;
use serde_json::json;

const H100_MIG: (&str, bool) = ("H100-SXM5-80GB", true);

on_both_databases! {
    async fn the_simulated_backend_is_refused_unless_an_admin_marked_the_node_simulated(app) {
        let m = market(&app).await;
        // Created straight through the API: nobody marked it simulated.
        let r = app.post("/v1/nodes", Some(&m.provider), h100_node(1, "mig")).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        assert_eq!(r.body["simulated"], false, "{}", r.body);
        let id = r.body["id"].as_str().unwrap().to_owned();
        let token = r.body["token"].as_str().unwrap().to_owned();
        let refused = app.post("/v1/agent/register", Some(&token), fleet::registration(&[H100_MIG])).await;
        refused.assert_code(403, "simulated_backend_refused");
        assert!(refused.body["detail"].as_str().unwrap().contains("not marked simulated"), "{}", refused.body);
        let view = node_view(&app, &m.provider, id.parse().unwrap()).await;
        assert_eq!(view["status"], "declared", "the refused inventory was not taken: {view}");

        // Only an admin marks a node, and says what to set.
        let path = format!("/v1/admin/nodes/{id}");
        app.put(&path, Some(&m.provider), json!({"simulated": true})).await.assert_code(403, "forbidden");
        app.put(&path, Some(&m.admin), json!({})).await.assert_problem(422, Some("simulated"));
        let r = app.put(&path, Some(&m.admin), json!({"simulated": true, "colour": 1})).await;
        assert!(r.status.is_client_error(), "{}", r.body);
        app.put("/v1/admin/nodes/not-a-uuid", Some(&m.admin), json!({"simulated": true}))
            .await
            .assert_code(404, "not_found");
        app.put(&format!("/v1/admin/nodes/{}", uuid::Uuid::nil()), Some(&m.admin), json!({"simulated": true}))
            .await
            .assert_code(404, "not_found");
        let marked = app.put(&path, Some(&m.admin), json!({"simulated": true})).await;
        assert_eq!(marked.status, StatusCode::OK, "{}", marked.body);
        assert_eq!(marked.body["simulated"], true);

        let r = app.post("/v1/agent/register", Some(&token), fleet::registration(&[H100_MIG])).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        assert_eq!(node_view(&app, &m.provider, id.parse().unwrap()).await["status"], "online");
        place(&app, &m.buyer, order("on_demand")).await;

        // Real hardware needs no mark.
        let r = app.post("/v1/nodes", Some(&m.provider), h100_node(1, "mig")).await;
        let mut nvml = fleet::registration(&[H100_MIG]);
        nvml["backend"] = json!("nvml");
        let token = r.body["token"].as_str().unwrap();
        let r = app.post("/v1/agent/register", Some(token), nvml).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    }

    async fn a_re_inventory_that_changes_the_gpu_count_or_models_puts_the_node_under_review(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(2, "mig")).await;
        // The first registration replaces the declared inventory; the same
        // inventory again changes nothing.
        register(&app, &node, &[H100_MIG, H100_MIG]).await;
        register(&app, &node, &[H100_MIG, H100_MIG]).await;
        let view = node_view(&app, &m.provider, node.id).await;
        assert_eq!((view["under_review"].clone(), view["cordoned"].clone()), (json!(false), json!(false)), "{view}");
        assert_eq!(view["review_reason"], json!(null));

        // One GPU fewer: under review, cordoned, and the provider sees why.
        register(&app, &node, &[H100_MIG]).await;
        let view = node_view(&app, &m.provider, node.id).await;
        assert_eq!(view["under_review"], true, "{view}");
        assert_eq!(view["cordoned"], true, "{view}");
        assert_eq!(
            view["review_reason"],
            "re-inventory changed the GPU count from 2 to 1 (H100-SXM5-80GB, H100-SXM5-80GB → H100-SXM5-80GB)"
        );
        let listed = app.get("/v1/nodes", Some(&m.provider)).await;
        assert_eq!(listed.body[0]["under_review"], true, "{}", listed.body);
        app.post("/v1/orders", Some(&m.buyer), order("on_demand")).await.assert_code(422, "node_cordoned");
        // Registering the same new inventory again keeps the review.
        register(&app, &node, &[H100_MIG]).await;
        assert_eq!(node_view(&app, &m.provider, node.id).await["under_review"], true);
        // The provider cannot lift it; an admin can.
        let cordon = format!("/v1/nodes/{}/cordon", node.id);
        app.post(&cordon, Some(&m.provider), json!({"cordoned": false}))
            .await
            .assert_code(409, "node_under_review");
        let path = format!("/v1/admin/nodes/{}", node.id);
        app.put(&path, Some(&m.provider), json!({"review": "accept"})).await.assert_code(403, "forbidden");
        let accepted = app.put(&path, Some(&m.admin), json!({"review": "accept"})).await;
        assert_eq!(accepted.status, StatusCode::OK, "{}", accepted.body);
        assert_eq!(accepted.body["under_review"], false, "{}", accepted.body);
        assert_eq!(accepted.body["cordoned"], false, "{}", accepted.body);
        assert_eq!(accepted.body["review_reason"], json!(null));
        place(&app, &m.buyer, order("on_demand")).await;

        // Same count, another model: under review again.
        register(&app, &node, &[("A100-SXM4-80GB", true)]).await;
        let view = node_view(&app, &m.provider, node.id).await;
        assert_eq!(view["under_review"], true, "{view}");
        assert_eq!(
            view["review_reason"],
            "re-inventory changed the GPU models from H100-SXM5-80GB to A100-SXM4-80GB"
        );
    }
}
