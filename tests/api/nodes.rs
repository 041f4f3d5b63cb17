//! `/v1/nodes`: creation and its token, validation, isolation between
//! providers, cordons.

use crate::fleet::{self, create_node, h100_node, market, node_view, order, place};
use crate::helpers::on_both_databases;
use reqwest::StatusCode;
use serde_json::json;

on_both_databases! {
    async fn a_provider_creates_a_node_and_sees_its_token_only_once(app) {
        let m = market(&app).await;
        let r = app.post("/v1/nodes", Some(&m.provider), h100_node(2, "mig")).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        let token = r.body["token"].as_str().unwrap();
        assert!(token.starts_with("gpn_") && token.len() > 30, "{token}");
        assert_eq!(r.body["status"], "declared");
        assert_eq!(r.body["gpu_count"], 2);
        let id = r.body["id"].as_str().unwrap();

        let list = app.get("/v1/nodes", Some(&m.provider)).await;
        assert_eq!(list.status, StatusCode::OK);
        let nodes = list.body.as_array().unwrap();
        assert_eq!(nodes.len(), 1);
        assert_eq!(nodes[0]["id"], id);
        assert!(nodes[0].get("token").is_none(), "the token is never shown again");

        let node = node_view(&app, &m.provider, id.parse().unwrap()).await;
        assert_eq!(node["region"], "eu-west");
        assert_eq!(node["gpus"][1]["model"], "H100-SXM5-80GB");
        assert_eq!(node["gpus"][1]["mode"], "mig");
        assert_eq!(node["gpus"][0]["slices"], json!([]));
        assert_eq!(node["cpu_milli"], 64000);
    }

    async fn node_creation_names_each_bad_field(app) {
        let m = market(&app).await;
        let r = app.post("/v1/nodes", Some(&m.provider), json!({"name": "x", "region": "mars"})).await;
        r.assert_problem(422, Some("region"));
        let r = app.post("/v1/nodes", Some(&m.provider), json!({"region": "eu-west"})).await;
        r.assert_problem(422, Some("name"));
        let r = app.post("/v1/nodes", Some(&m.provider), json!({"name": " ", "region": "eu-west"})).await;
        r.assert_problem(422, Some("name"));
        let r = app
            .post("/v1/nodes", Some(&m.provider), json!({"name": "x", "region": "eu-west",
                "gpus": [{"model": "H100-SXM5-80GB"}, {"model": "RTX-9999"}]}))
            .await;
        r.assert_problem(422, Some("gpus[1].model"));
        let r = app
            .post("/v1/nodes", Some(&m.provider), json!({"name": "x", "region": "eu-west",
                "gpus": [{"model": "L40S-48GB", "mode": "mig"}]}))
            .await;
        r.assert_problem(422, Some("gpus[0].mode"));
        let r = app
            .post("/v1/nodes", Some(&m.provider), json!({"name": "x", "region": "eu-west",
                "gpus": [{"model": "L40S-48GB", "mode": "sliced"}]}))
            .await;
        r.assert_problem(422, Some("gpus[0].mode"));
        let r = app
            .post("/v1/nodes", Some(&m.provider), json!({"name": "x", "region": "eu-west",
                "gpus": [{"model": "A100-SXM4-80GB", "nvlink": [0, 3]}]}))
            .await;
        r.assert_problem(422, Some("gpus[0].nvlink"));
        let r = app
            .post("/v1/nodes", Some(&m.provider), json!({"name": "x", "region": "eu-west",
                "gpus": [{"model": "A100-SXM4-80GB", "memory_mib": 0}], "cpu_milli": 0}))
            .await;
        r.assert_problem(422, Some("gpus[0].memory_mib"));
        r.assert_problem(422, Some("cpu_milli"));
        let r = app.post("/v1/nodes", Some(&m.provider), json!({"name": "x", "region": "eu-west", "colour": 1})).await;
        r.assert_problem(422, None);
    }

    async fn only_providers_and_admins_manage_nodes(app) {
        let m = market(&app).await;
        app.post("/v1/nodes", Some(&m.buyer), h100_node(1, "whole")).await.assert_code(403, "forbidden");
        app.get("/v1/nodes", Some(&m.buyer)).await.assert_code(403, "forbidden");
        app.get("/v1/nodes", None).await.assert_code(401, "unauthorized");
        let r = app.post("/v1/nodes", Some(&m.admin), h100_node(1, "whole")).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    }

    async fn another_providers_node_is_not_found(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "whole")).await;
        let (other, _) = app.user("provider").await;
        app.get(&format!("/v1/nodes/{}", node.id), Some(&other)).await.assert_code(404, "not_found");
        app.post(&format!("/v1/nodes/{}/cordon", node.id), Some(&other), json!({"cordoned": true}))
            .await
            .assert_code(404, "not_found");
        let list = app.get("/v1/nodes", Some(&other)).await;
        assert_eq!(list.body, json!([]));
        let all = app.get("/v1/nodes", Some(&m.admin)).await;
        assert_eq!(all.body.as_array().unwrap().len(), 1);
        node_view(&app, &m.admin, node.id).await;
        app.get("/v1/nodes/not-a-uuid", Some(&m.provider)).await.assert_code(404, "not_found");
    }

    async fn a_cordoned_node_takes_no_new_leases_until_uncordoned(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "whole")).await;
        let cordon = format!("/v1/nodes/{}/cordon", node.id);
        let r = app.post(&cordon, Some(&m.provider), json!({"cordoned": true})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        assert_eq!(r.body["cordoned"], true);
        let r = app.post("/v1/orders", Some(&m.buyer), order("on_demand")).await;
        r.assert_code(422, "node_cordoned");
        app.post(&cordon, Some(&m.provider), json!({"cordoned": "yes"}))
            .await
            .assert_problem(422, Some("cordoned"));
        let r = app.post(&cordon, Some(&m.provider), json!({"cordoned": false})).await;
        assert_eq!(r.body["cordoned"], false);
        place(&app, &m.buyer, order("on_demand")).await;
        let audited = fleet::scalar(&app, "SELECT COUNT(*) FROM audit_log WHERE action IN ('cordon_node', 'uncordon_node')").await;
        assert_eq!(audited, 2);
    }
}
