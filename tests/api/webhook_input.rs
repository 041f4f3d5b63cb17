//! What `POST /v1/webhooks` refuses: private addresses (unless the server
//! allows them), URLs that are not http(s) or too long, unknown event
//! types, too many webhooks; and who may have webhooks at all.

use crate::helpers::{on_both_databases, on_both_databases_with};
use gpuex::config::Settings;
use serde_json::json;

/// As in production: webhooks reach public addresses only.
fn public_only(settings: &mut Settings) {
    settings.webhook_allow_private = false;
}

on_both_databases_with! { public_only =>
    async fn loopback_private_and_metadata_addresses_are_refused_as_url(app) {
        let (buyer, _) = app.user("buyer").await;
        for url in [
            "http://127.0.0.1:8080/hook",
            "http://localhost/hook",
            "http://10.1.2.3/hook",
            "http://169.254.169.254/latest/meta-data/",
            "http://[::1]:9000/hook",
            "http://[::ffff:192.168.0.1]/hook",
            "https://100.64.0.1/hook",
        ] {
            let r = app.post("/v1/webhooks", Some(&buyer), json!({"url": url})).await;
            r.assert_problem(422, Some("url"));
        }
        // A public address is taken: nothing is sent until an event comes.
        let r = app.post("/v1/webhooks", Some(&buyer), json!({"url": "https://93.184.216.34/hook"})).await;
        assert_eq!(r.status, 201, "{}", r.body);
        // An order's URL is checked the same way, before the market sees it.
        assert_eq!(app.post("/v1/webhooks/secret", Some(&buyer), json!({})).await.status, 201);
        let order = json!({"mode": "on_demand", "region": "eu-west", "duration_s": 3600,
                           "resources": {"tflops": 100, "vram_gb": 8},
                           "webhook_url": "http://192.168.1.10/hook"});
        app.order(&buyer, order).await.assert_problem(422, Some("webhook_url"));
        let orders = app.get("/v1/orders", Some(&buyer)).await;
        assert!(!orders.body.to_string().contains("192.168.1.10"), "{}", orders.body);
    }
}

on_both_databases_with! { public_only =>
    async fn ipv6_spellings_of_loopback_private_and_metadata_addresses_are_refused_as_url(app) {
        let (buyer, _) = app.user("buyer").await;
        for url in [
            // The examples: 6to4 and IPv4-translated spellings of 127.0.0.1.
            "http://[2002:7f00:1::]/",
            "http://[::ffff:0:7f00:1]/",
            // IPv4-compatible, NAT64 and 6to4 spellings of private and metadata addresses.
            "http://[::127.0.0.1]/hook",
            "http://[64:ff9b::a9fe:a9fe]/latest/meta-data/",
            "http://[2002:c0a8:101::1]:8080/hook",
            // Teredo and local-use NAT64, refused whatever they carry.
            "http://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/hook",
            "http://[64:ff9b:1::808:808]/hook",
        ] {
            let r = app.post("/v1/webhooks", Some(&buyer), json!({"url": url})).await;
            r.assert_problem(422, Some("url"));
            assert_eq!(
                r.body["errors"][0]["message"], "resolves to a loopback, private or reserved address",
                "{url}: {}", r.body
            );
        }
        // A name that resolves to loopback is refused without saying to what.
        let r = app.post("/v1/webhooks", Some(&buyer), json!({"url": "http://localhost:9000/hook"})).await;
        r.assert_problem(422, Some("url"));
        assert!(!r.body.to_string().contains("127.0.0.1") && !r.body.to_string().contains("::1"), "{}", r.body);
        // A 6to4 address that carries a public IPv4 address is public.
        let r = app.post("/v1/webhooks", Some(&buyer), json!({"url": "https://[2002:5db8:d822::1]/hook"})).await;
        assert_eq!(r.status, 201, "{}", r.body);
        assert_eq!(app.post("/v1/webhooks/secret", Some(&buyer), json!({})).await.status, 201);
        let order = json!({"mode": "on_demand", "region": "eu-west", "duration_s": 3600,
                           "resources": {"tflops": 100, "vram_gb": 8},
                           "webhook_url": "http://[::ffff:0:7f00:1]/hook"});
        app.order(&buyer, order).await.assert_problem(422, Some("webhook_url"));
    }
}

on_both_databases! {
    async fn a_webhook_with_a_bad_url_or_unknown_events_is_refused_naming_the_field(app) {
        let (buyer, _) = app.user("buyer").await;
        let long = format!("http://example.com/{}", "a".repeat(2048));
        for url in ["not a url", "ftp://example.com/hook", "http://", "javascript:alert(1)", long.as_str()] {
            let r = app.post("/v1/webhooks", Some(&buyer), json!({"url": url})).await;
            r.assert_problem(422, Some("url"));
        }
        let r = app.post("/v1/webhooks", Some(&buyer),
            json!({"url": "http://127.0.0.1:1/hook", "events": ["order.filled", "order.nope"]})).await;
        r.assert_problem(422, Some("events[1]"));
        let r = app.post("/v1/webhooks", Some(&buyer), json!({"url": "http://127.0.0.1:1/hook", "events": []})).await;
        r.assert_problem(422, Some("events"));
        let r = app.post("/v1/webhooks", Some(&buyer), json!({"events": ["order.filled"]})).await;
        assert!(r.status.is_client_error(), "{}", r.body);
        assert_eq!(r.content_type, "application/problem+json");
        assert!(r.body.to_string().contains("url"), "{}", r.body);
        let r = app.post("/v1/webhooks", Some(&buyer),
            json!({"url": "http://127.0.0.1:1/hook", "events": ["lease.ended", "lease.ended"]})).await;
        assert_eq!(r.status, 201, "{}", r.body);
        assert_eq!(r.body["events"], json!(["lease.ended"]));
        assert!(app.get("/v1/webhooks", Some(&buyer)).await.body[0].get("secret").is_none());
    }

    async fn an_account_has_at_most_twenty_webhooks(app) {
        let (provider, _) = app.user("provider").await;
        for i in 0..20 {
            let r = app.post("/v1/webhooks", Some(&provider), json!({"url": format!("http://127.0.0.1:1/{i}")})).await;
            assert_eq!(r.status, 201, "{}", r.body);
        }
        let r = app.post("/v1/webhooks", Some(&provider), json!({"url": "http://127.0.0.1:1/21"})).await;
        r.assert_code(409, "too_many_webhooks");
        assert_eq!(app.get("/v1/webhooks", Some(&provider)).await.body.as_array().unwrap().len(), 20);
        // Another account has its own twenty.
        let (other, _) = app.user("buyer").await;
        let r = app.post("/v1/webhooks", Some(&other), json!({"url": "http://127.0.0.1:1/x"})).await;
        assert_eq!(r.status, 201, "{}", r.body);
    }

    async fn node_tokens_have_no_webhooks(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let node = app.node("eu-west", &[("H100-SXM5-80GB", "shared")]).await;
        let r = app.post("/v1/webhooks", Some(&node.token), json!({"url": "http://127.0.0.1:1/x"})).await;
        r.assert_problem(403, None);
        app.get("/v1/webhooks", Some(&node.token)).await.assert_problem(403, None);
        app.post("/v1/webhooks/secret", Some(&node.token), json!({})).await.assert_problem(403, None);
    }
}
