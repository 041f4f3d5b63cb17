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

/// The page with its per-answer style nonce taken out.
fn without_nonce(page: &str) -> String {
    regex::Regex::new("[0-9a-f]{32}")
        .unwrap()
        .replace_all(page, "NONCE")
        .into_owned()
}

/// The headers ARCHITECTURE.md §19 asks of every dashboard answer.
#[track_caller]
fn assert_security_headers(response: &reqwest::Response, what: &str) {
    let headers = response.headers();
    assert_eq!(headers["x-content-type-options"], "nosniff", "{what}");
    assert_eq!(headers["referrer-policy"], "no-referrer", "{what}");
    assert_eq!(headers["x-frame-options"], "DENY", "{what}");
    let csp = headers["content-security-policy"].to_str().unwrap();
    let directives: Vec<&str> = csp.split(';').map(str::trim).collect();
    assert!(
        directives.contains(&"frame-ancestors 'none'"),
        "{what}: {csp}"
    );
    assert!(directives.contains(&"script-src 'self'"), "{what}: {csp}");
    assert!(directives.contains(&"default-src 'self'"), "{what}: {csp}");
    assert!(!csp.contains("unsafe-eval"), "{what}: {csp}");
}

on_both_databases! {
    async fn every_dashboard_and_docs_answer_carries_the_security_headers(app) {
        // The page: styles from self, and inline <style> only with this
        // answer's nonce, which the page names for the UI library.
        let page = fetch(&app, "/leases").await;
        assert_eq!(page.status(), 200);
        assert_security_headers(&page, "index.html");
        let csp = page.headers()["content-security-policy"].to_str().unwrap().to_owned();
        assert!(!csp.contains("unsafe-inline"), "{csp}");
        let html = page.text().await.unwrap();
        let nonce = regex::Regex::new("style-src 'self' 'nonce-([0-9a-f]{32})'")
            .unwrap()
            .captures(&csp)
            .unwrap_or_else(|| panic!("a style nonce in {csp}"))[1]
            .to_owned();
        assert!(
            html.contains(&format!("<meta property=\"csp-nonce\" nonce=\"{nonce}\"")),
            "{html}"
        );
        assert!(!html.contains("GPUEX_CSP_NONCE"), "{html}");
        let again = fetch(&app, "/").await;
        let again = again.headers()["content-security-policy"].to_str().unwrap().to_owned();
        assert_ne!(again, csp, "each page gets a nonce of its own");

        // Its assets, and the API's 404 among dashboard paths.
        let script = html
            .split('"')
            .find(|s| s.starts_with("/assets/") && s.ends_with(".js"))
            .expect("index.html names its script")
            .to_owned();
        let asset = fetch(&app, &script).await;
        assert_eq!(asset.status(), 200);
        assert_security_headers(&asset, &script);
        let gone = fetch(&app, "/assets/gone-0000.js").await;
        assert_eq!(gone.status(), 404);
        assert_security_headers(&gone, "a missing asset");

        // The Swagger UI and its files.
        for path in ["/docs/", "/docs/swagger-ui.css", "/docs/swagger-initializer.js"] {
            let docs = fetch(&app, path).await;
            assert_eq!(docs.status(), 200, "{path}");
            assert_security_headers(&docs, path);
            let csp = docs.headers()["content-security-policy"].to_str().unwrap().to_owned();
            assert!(csp.contains("img-src 'self' data:"), "{path}: {csp}");
        }

        // API answers allow nothing at all.
        let api = fetch(&app, "/v1/catalog/gpus").await;
        assert_eq!(api.headers()["x-content-type-options"], "nosniff");
        assert_eq!(api.headers()["x-frame-options"], "DENY");
        let csp = api.headers()["content-security-policy"].to_str().unwrap();
        assert!(csp.starts_with("default-src 'none'"), "{csp}");
    }

    async fn the_dashboard_is_served_at_the_root_and_its_routes(app) {
        let root = fetch(&app, "/").await;
        assert_eq!(root.status(), 200);
        assert!(root.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
        assert_eq!(root.headers()["cache-control"], "no-cache");
        let index = without_nonce(&root.text().await.unwrap());
        assert!(index.contains("<div id=\"root\">"), "{index}");

        // A client-side route gets the same page, for the app to route.
        for route in ["/leases", "/leases/0192b6a0-0000-7000-8000-000000000000", "/market"] {
            let page = fetch(&app, route).await;
            assert_eq!(page.status(), 200, "{route}");
            assert_eq!(without_nonce(&page.text().await.unwrap()), index, "{route}");
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
