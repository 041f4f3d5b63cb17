//! The web dashboard is served by the server itself: `/`, its client-side
//! routes, its hashed assets, and the API's 404s left as they were.

use crate::helpers::{on_both_databases, TestApp};

async fn fetch(app: &TestApp, path: &str) -> reqwest::Response {
    app.client
        .get(format!("{}{path}", app.address))
        .send()
        .await
        .unwrap()
}

on_both_databases! {
    async fn the_dashboard_is_served_at_the_root_and_its_routes(app) {
        let root = fetch(&app, "/").await;
        assert_eq!(root.status(), 200);
        assert!(root.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
        assert_eq!(root.headers()["cache-control"], "no-cache");
        let index = root.text().await.unwrap();
        assert!(index.contains("<div id=\"root\">"), "{index}");

        // A client-side route gets the same page, for the app to route.
        for route in ["/leases", "/leases/0192b6a0-0000-7000-8000-000000000000", "/market"] {
            let page = fetch(&app, route).await;
            assert_eq!(page.status(), 200, "{route}");
            assert_eq!(page.text().await.unwrap(), index, "{route}");
        }

        // The hashed script the page names is cached for good.
        let script = index
            .split('"')
            .find(|s| s.starts_with("/assets/") && s.ends_with(".js"))
            .expect("index.html names its script");
        let asset = fetch(&app, script).await;
        assert_eq!(asset.status(), 200);
        assert_eq!(asset.headers()["cache-control"], "public, max-age=31536000, immutable");
        assert!(asset.headers()["content-type"].to_str().unwrap().starts_with("text/javascript"));
        // Sent as the build's own gzip where the client takes it (a client
        // that does not unpack it, to see the encoding).
        let raw = reqwest::Client::builder().no_gzip().build().unwrap();
        let gzipped = raw
            .get(format!("{}{script}", app.address))
            .header("accept-encoding", "gzip")
            .send()
            .await
            .unwrap();
        assert_eq!(gzipped.headers()["content-encoding"], "gzip");
        assert_eq!(gzipped.headers()["vary"], "accept-encoding");
        let plain = raw
            .get(format!("{}{script}", app.address))
            .header("accept-encoding", "identity")
            .send()
            .await
            .unwrap();
        assert!(plain.headers().get("content-encoding").is_none());
        assert!(plain.text().await.unwrap().len() > gzipped.bytes().await.unwrap().len());
        // A stale page asking for an old build gets a 404, not HTML as script.
        fetch(&app, "/assets/gone-0000.js").await.error_for_status().unwrap_err();
    }

    async fn unknown_api_paths_stay_problem_json_404s(app) {
        app.get("/v1/nope", None).await.assert_code(404, "not_found");
        let docs = fetch(&app, "/docs/nope").await;
        assert_eq!(docs.status(), 404);
        let posted = app
            .client
            .post(format!("{}/leases", app.address))
            .send()
            .await
            .unwrap();
        assert_eq!(posted.status(), 404);
        assert_eq!(posted.headers()["content-type"], "application/problem+json");
    }
}
