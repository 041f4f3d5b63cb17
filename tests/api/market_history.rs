//! Market history and the public market stream (issue 24, items 4 and 5):
//! clearings rolled into 1m/1h/1d buckets, `GET /v1/market/history`, and
//! `GET /v1/market/stream`'s clearing, book and price events.

use crate::fleet::on_both_databases_fast;
use crate::helpers::TestApp;
use rust_decimal::Decimal;
use serde_json::{json, Value};
use std::time::Duration;

const H100: &str = "H100-SXM5-80GB";

fn dec(v: &Value) -> Decimal {
    v.as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("a decimal string, got {v}"))
}

/// A spot bid for a whole H100 in eu-west at `max_price` per hour.
fn whole_h100_bid(max_price: &str) -> Value {
    json!({"mode": "spot", "region": "eu-west", "max_price": max_price,
           "resources": {"tflops": 989, "vram_gb": 80, "isolation": "whole"}})
}

async fn history(app: &TestApp, interval: &str) -> Vec<Value> {
    let from = (chrono::Utc::now() - chrono::Duration::hours(2)).to_rfc3339();
    let path = format!(
        "/v1/market/history?gpu_model={H100}&region=eu-west&interval={interval}&from={}",
        urlencode(&from)
    );
    let r = app.get(&path, None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body.as_array().cloned().expect("a list")
}

fn urlencode(s: &str) -> String {
    s.replace('+', "%2B").replace(':', "%3A")
}

/// Every figure of every row within its own range.
fn assert_consistent(rows: &[Value]) {
    for row in rows {
        for o in [row, &row["prices"]["tflops_h"], &row["prices"]["vram_h"]] {
            let (open, high, low, close) = (
                dec(&o["open"]),
                dec(&o["high"]),
                dec(&o["low"]),
                dec(&o["close"]),
            );
            assert!(low <= open && open <= high, "{row}");
            assert!(low <= close && close <= high, "{row}");
        }
    }
}

/// The whole span's figures, as the rows of one interval give them:
/// first open, highest high, lowest low, last close, total volume.
fn summary(rows: &[Value]) -> (Decimal, Decimal, Decimal, Decimal, Decimal, Decimal) {
    let all = |f: &'static str| rows.iter().map(move |r| dec(&r[f]));
    let volume = |f: &str| rows.iter().map(|r| dec(&r["volume"][f])).sum::<Decimal>();
    (
        dec(&rows[0]["open"]),
        all("high").max().expect("rows"),
        all("low").min().expect("rows"),
        dec(&rows[rows.len() - 1]["close"]),
        volume("tflops"),
        volume("vram"),
    )
}

on_both_databases_fast! {
    async fn history_rows_appear_after_auctions_with_consistent_figures_that_every_interval_agrees_on(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        app.node("eu-west", &[(H100, "whole")]).await;
        let (buyer, _) = app.buyer_with(&admin, "100").await;
        // The first bid takes the only GPU at the floor; the second, which
        // loses for lack of capacity, then sets the clearing index.
        let winner = app.order(&buyer, whole_h100_bid("3")).await;
        assert_eq!(winner.status, 201, "{}", winner.body);
        let order = format!("/v1/orders/{}", winner.body["id"].as_str().expect("id"));
        let mut lease = Value::Null;
        for _ in 0..100 {
            let o = app.get(&order, Some(&buyer)).await.body;
            if o["state"] == "filled" {
                lease = app.get(&format!("/v1/leases/{}", o["lease_id"].as_str().expect("lease")), Some(&buyer)).await.body;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(lease.is_object(), "the bid was filled");
        let loser = app.order(&buyer, whole_h100_bid("1.85")).await;
        assert_eq!(loser.status, 201, "{}", loser.body);
        let mut minutes = Vec::new();
        for _ in 0..100 {
            minutes = history(&app, "1m").await;
            if !minutes.is_empty() && summary(&minutes).1 > Decimal::new(5, 1) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(!minutes.is_empty(), "history after auctions");
        // The index and prices move no more now: every interval reads the same span.
        let (hours, days) = (history(&app, "1h").await, history(&app, "1d").await);
        let minutes = history(&app, "1m").await;
        for rows in [&minutes, &hours, &days] {
            assert_consistent(rows);
        }
        let s = summary(&minutes);
        assert_eq!(s, summary(&hours), "1m {minutes:?} 1h {hours:?}");
        assert_eq!(s, summary(&days), "1m {minutes:?} 1d {days:?}");
        let (open, high, low, close, tflops, vram) = s;
        assert_eq!(low, Decimal::new(5, 1), "the winner cleared at the floor");
        assert_eq!(open, low);
        assert!(high > low && close == high, "the losing bid raised the index: {minutes:?}");
        assert_eq!(tflops, dec(&lease["units"]["tflops_h"]), "the volume is the units won");
        assert_eq!(vram, dec(&lease["units"]["vram_h"]));
        // Unit prices follow the index: list × index.
        let last = &minutes[minutes.len() - 1];
        assert_eq!(dec(&last["prices"]["vram_h"]["close"]), Decimal::new(5, 2) * close);
        assert!(minutes.windows(2).all(|w| w[0]["start"].as_str() < w[1]["start"].as_str()), "oldest first");
        // After a restart the task reads its buckets back instead of starting
        // them afresh: a higher losing bid moves the high, the rest stays.
        let mut app = app;
        app.halt().await;
        app.resume().await;
        let higher = app.order(&buyer, whole_h100_bid("2.1")).await;
        assert_eq!(higher.status, 201, "{}", higher.body);
        let mut days = Vec::new();
        for _ in 0..100 {
            days = history(&app, "1d").await;
            if summary(&days).1 > high {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let (_, _, low_after, _, tflops_after, _) = summary(&days);
        assert!(summary(&days).1 > high, "the higher bid cleared: {days:?}");
        assert_eq!((low_after, tflops_after), (low, tflops), "kept across the restart: {days:?}");
        let r = app.get("/v1/market/history?gpu_model=H100-SXM5-80GB&region=mars", None).await;
        assert_eq!(r.status, 200);
        assert_eq!(r.body, json!([]), "an unknown market has no history");
    }

    async fn history_queries_that_are_incomplete_or_too_wide_are_refused_naming_the_field(app) {
        let at = |path: &str| format!("/v1/market/history?{path}");
        for (query, field) in [
            ("region=eu-west", "query.gpu_model"),
            ("gpu_model=H100-SXM5-80GB", "query.region"),
            ("gpu_model=&region=eu-west", "query.gpu_model"),
            ("gpu_model=H100-SXM5-80GB&region=eu-west&interval=5m", "query.interval"),
            ("gpu_model=H100-SXM5-80GB&region=eu-west&from=yesterday", "query.from"),
            ("gpu_model=H100-SXM5-80GB&region=eu-west&from=2026-12-02T00:00:00Z&to=2026-12-01T00:00:00Z", "query.from"),
            ("gpu_model=H100-SXM5-80GB&region=eu-west&interval=1m&from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z", "query.from"),
        ] {
            app.get(&at(query), None).await.assert_problem(422, Some(field));
        }
        let r = app.get(&at("gpu_model=H100-SXM5-80GB&region=eu-west&interval=1d&from=2024-01-01T00:00:00Z&to=2026-01-01T00:00:00Z"), None).await;
        assert_eq!(r.status, 200, "731 days fit: {}", r.body);
        app.get("/v1/market/stream?gpu_model=", None).await.assert_problem(422, Some("query.gpu_model"));
    }

    async fn the_market_stream_tells_clearings_book_changes_and_prices_and_a_filter_narrows_it(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        app.node("eu-west", &[(H100, "whole")]).await;
        let mut all = Sse::open(&app, "/v1/market/stream").await;
        let mut us_east = Sse::open(&app, "/v1/market/stream?region=us-east").await;
        let clearing = all.next_of("clearing").await;
        assert_eq!((clearing["gpu_model"].as_str(), clearing["region"].as_str()), (Some(H100), Some("eu-west")));
        assert!(dec(&clearing["clearing_index"]) >= Decimal::new(5, 1), "{clearing}");
        assert!(clearing["unit_prices"]["tflops_h"].is_string() && clearing["volume"]["vram"].is_string(), "{clearing}");
        assert!(clearing["at"].is_string(), "{clearing}");
        let (buyer, _) = app.buyer_with(&admin, "100").await;
        // Naming the model, the bid is in that market's book.
        let mut bid = whole_h100_bid("1.7");
        bid["resources"]["gpu_model"] = json!(H100);
        let r = app.order(&buyer, bid).await;
        assert_eq!(r.status, 201, "{}", r.body);
        for seen in 0.. {
            let book = all.next_of("book").await;
            if book["gpu_model"] == H100 && book["region"] == "eu-west" && book["bids"].as_array().is_some_and(|b| !b.is_empty()) {
                assert!(book["gpus"] == 1 && book["bids"][0]["price_index"].is_string(), "{book}");
                break;
            }
            assert!(seen < 20, "no book event for the bid's market: {book}");
        }
        let r = app.put("/v1/admin/prices", Some(&admin), json!([
            {"region": "us-east", "gpu_model": "L40S-48GB", "unit": "vram_h", "list_price": "0.035"}
        ])).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let price = all.next_of("price").await;
        assert_eq!((price["gpu_model"].as_str(), price["region"].as_str()), (Some("L40S-48GB"), Some("us-east")));
        assert_eq!(price["unit"], "vram_h");
        assert_eq!(price["list"], "0.035", "{price}");
        // The filtered stream heard nothing of eu-west's clearings and book before it.
        let (kind, data) = us_east.next().await;
        assert_eq!(kind, "price", "{data}");
        assert_eq!(data["region"], "us-east");
        // Shutting down ends open streams rather than waiting for their clients.
        let mut app = app;
        app.halt().await;
    }
}

/// A Server-Sent Events client over the test server's socket.
struct Sse {
    response: reqwest::Response,
    buffer: String,
}

impl Sse {
    async fn open(app: &TestApp, path: &str) -> Sse {
        // A client of its own: the harness's times out whole bodies.
        let response = reqwest::Client::new()
            .get(format!("{}{path}", app.address))
            .send()
            .await
            .expect("the stream answers");
        assert_eq!(response.status(), 200);
        let content_type = response.headers()["content-type"]
            .to_str()
            .unwrap_or_default()
            .to_owned();
        assert_eq!(content_type, "text/event-stream");
        Sse {
            response,
            buffer: String::new(),
        }
    }

    /// The next event: its name and data. A hang guard, not a speed check.
    async fn next(&mut self) -> (String, Value) {
        tokio::time::timeout(Duration::from_secs(60), self.read())
            .await
            .expect("an event within a minute")
    }

    /// The next event named `kind`, skipping others. A hang guard, not a speed check.
    async fn next_of(&mut self, kind: &str) -> Value {
        let wanted = async {
            loop {
                let (name, data) = self.read().await;
                if name == kind {
                    return data;
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(60), wanted)
            .await
            .unwrap_or_else(|_| panic!("a `{kind}` event within a minute"))
    }

    async fn read(&mut self) -> (String, Value) {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let (mut name, mut data) = (String::from("message"), String::new());
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        name = v.trim().to_owned();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.trim_start());
                    }
                }
                // Keep-alive comments carry no data.
                if data.is_empty() {
                    continue;
                }
                return (name, serde_json::from_str(&data).expect("JSON data"));
            }
            let chunk = self
                .response
                .chunk()
                .await
                .expect("the stream")
                .expect("still open");
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}
