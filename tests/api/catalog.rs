use crate::helpers::on_both_databases;
use serde_json::json;

on_both_databases! {
    async fn the_catalog_lists_every_model_with_units_and_mig_profiles(app) {
        let r = app.get("/v1/catalog/gpus", None).await;
        assert_eq!(r.status, 200);
        let models = r.body.as_array().unwrap();
        let names: Vec<&str> = models.iter().map(|m| m["name"].as_str().unwrap()).collect();
        for expected in ["V100-SXM2-32GB", "A100-SXM4-40GB", "A100-SXM4-80GB", "H100-SXM5-80GB",
                         "H200-SXM-141GB", "L40S-48GB", "T4-16GB", "P100-SXM2-16GB", "A10-24GB",
                         "V100-SXM2-16GB", "B200-SXM-180GB"] {
            assert!(names.contains(&expected), "missing {expected}");
        }
        let h100 = models.iter().find(|m| m["name"] == "H100-SXM5-80GB").unwrap();
        assert_eq!(h100["peak_tflops"]["fp8"], "1979");
        assert_eq!(h100["vram_units"], "20");
        let p = h100["mig_profiles"].as_array().unwrap().iter().find(|p| p["name"] == "1g.10gb").unwrap();
        assert_eq!(p["tflops_units"], "141.286");
        assert_eq!(p["vram_units"], "2.5");
        assert_eq!(p["starts"], json!([0, 1, 2, 3, 4, 5, 6]));
        let v100 = models.iter().find(|m| m["name"] == "V100-SXM2-32GB").unwrap();
        assert!(v100["peak_tflops"].get("fp8").is_none());
        assert_eq!(v100["mig_capable"], false);
    }

    async fn an_admin_creates_and_updates_regions(app) {
        let admin = app.admin().await;
        let r = app.put("/v1/admin/regions/eu-west", Some(&admin), json!({"timezone": "Europe/Amsterdam"})).await;
        assert_eq!(r.status, 201, "{}", r.body);
        let r = app.put("/v1/admin/regions/eu-west", Some(&admin), json!({"timezone": "Europe/Paris"})).await;
        assert_eq!(r.status, 200);
        let list = app.get("/v1/regions", None).await;
        assert_eq!(list.body.as_array().unwrap().len(), 1);
        assert_eq!(list.body[0]["timezone"], "Europe/Paris");
    }

    async fn bad_regions_name_the_field(app) {
        let admin = app.admin().await;
        app.put("/v1/admin/regions/eu-west", Some(&admin), json!({"timezone": "Mars/Olympus"}))
            .await.assert_problem(422, Some("timezone"));
        app.put("/v1/admin/regions/EU_West", Some(&admin), json!({"timezone": "UTC"}))
            .await.assert_problem(422, Some("path.name"));
        app.put("/v1/admin/regions/any", Some(&admin), json!({"timezone": "UTC"}))
            .await.assert_problem(422, Some("path.name"));
        app.put("/v1/admin/regions/eu", Some(&admin), json!({}))
            .await.assert_problem(422, Some("timezone"));
        assert_eq!(app.get("/v1/regions", None).await.body, json!([]));
    }
}
