//! A resold hour run for real: the seller's agent stops, the buyer's workload
//! runs on the same slice, and the books show both.

use super::*;

/// [`fleet::fast`] on a clock the test moves hours on: the node watchdog
/// must not take that jump for silence (heartbeats still come every second).
fn hours_pass(settings: &mut gpuex::config::Settings) {
    fleet::fast(settings);
    settings.node_timeout_s = 86_400;
}

/// Sum of the amounts posted to `account` by ledger entries of `kind`.
async fn posted(app: &TestApp, account: &str, kind: &str) -> Decimal {
    let db = gpuex::db::Db::connect(&app.database_url).await.unwrap();
    let amounts: Vec<gpuex::db::Money> = gpuex::db::dispatch!(db, pool => {
        sqlx::query_scalar(
            "SELECT p.amount FROM postings p JOIN journal_entries e ON e.id = p.entry_id \
             WHERE p.account = $1 AND e.kind = $2",
        )
        .bind(account)
        .bind(kind)
        .fetch_all(pool)
        .await
    })
    .unwrap();
    db.close().await;
    amounts.into_iter().map(|m| m.0).sum()
}

/// Every row of `token`'s FOCUS JSON export.
async fn focus_rows(app: &TestApp, token: &str) -> Vec<serde_json::Value> {
    let whole = "from=2000-01-01T00:00:00Z&to=2100-01-01T00:00:00Z";
    let r = app
        .get(
            &format!("/v1/billing/export?format=focus-json&{whole}"),
            Some(token),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body.as_array().cloned().unwrap_or_default()
}

fn decimal_of(v: &serde_json::Value) -> Decimal {
    v.as_str()
        .unwrap_or_else(|| panic!("not a decimal: {v}"))
        .parse()
        .unwrap()
}

fn reserved(start: DateTime<Utc>, hours: i64, command: &str) -> serde_json::Value {
    json!({"mode": "reserved", "region": "eu-west", "start_at": start, "duration_s": hours * 3600,
           "resources": {"tflops": 100, "vram_gb": 16}, "command": command})
}

/// Moves the market's clock to `at` (and a little past, so it is due).
fn move_clock_to(app: &TestApp, at: DateTime<Utc>) {
    let ahead = (at - app.market_now()).num_seconds().max(0) + 5;
    app.advance_clock(std::time::Duration::from_secs(ahead.unsigned_abs()));
}

async fn logs(app: &TestApp, token: &str, lease: &str) -> String {
    let r = app
        .get(&format!("/v1/leases/{lease}/logs"), Some(token))
        .await;
    r.body["tail"].as_str().unwrap_or("").to_owned()
}

crate::helpers::on_both_databases_with! { hours_pass =>
    async fn a_resold_hour_runs_the_buyers_workload_on_the_sellers_slice_after_the_seller_stops(app) {
        let m = market(&app).await;
        let (seller, seller_id) = app.buyer_with(&m.admin, "1000").await;
        let (buyer, buyer_id) = app.buyer_with(&m.admin, "1000").await;
        let node = create_node(
            &app,
            &m.provider,
            json!({"name": "sim", "region": "eu-west"}),
        )
        .await;
        let spool = tempfile::tempdir().unwrap();
        let _agent = Agent::start_with(&app, &node.token, spool.path(), "30s").await;
        eventually(20, "the agent to register", || async {
            node_view(&app, &m.provider, node.id).await["status"] == "online"
        })
        .await;

        // The seller reserves four hours and lists the last two at 0.8 × its price.
        let start = (app.market_now() + Duration::hours(2))
            .duration_trunc(Duration::hours(1))
            .unwrap();
        let from = start + Duration::hours(2);
        let r = app
            .order(
                &seller,
                reserved(start, 4, "echo seller-ran; while true; do sleep 0.2; done"),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.body);
        let seller_lease = r.body["lease_id"].as_str().unwrap().to_owned();
        let seller_price = decimal_of(
            &app.get(&format!("/v1/leases/{seller_lease}"), Some(&seller))
                .await
                .body["price_per_hour"],
        );
        let ask = (seller_price * Decimal::new(8, 1)).round_dp(6);
        let r = app
            .post(
                "/v1/resale-listings",
                Some(&seller),
                json!({"lease_id": seller_lease, "from": from, "ask_per_hour": ask.to_string()}),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.body);
        let listing = r.body["id"].as_str().unwrap().to_owned();

        // The second buyer's quote shows the listing beside the primary price
        // it beats; its order for the first listed hour is filled from it.
        let order = reserved(
            from,
            1,
            "echo buyer-ran on $CUDA_VISIBLE_DEVICES; while true; do sleep 0.2; done",
        );
        let mut asked = order.clone();
        asked.as_object_mut().unwrap().remove("command");
        let q = app.post("/v1/quotes", Some(&buyer), asked).await;
        assert_eq!(q.status, 200, "{}", q.body);
        assert_eq!(q.body["slice"]["source"], "resale", "{}", q.body);
        assert!(
            decimal_of(&q.body["slice"]["primary_price_per_hour"]) > ask,
            "{}",
            q.body
        );
        let r = app.order(&buyer, order).await;
        assert_eq!(r.status, 201, "{}", r.body);
        assert_eq!(r.body["state"], "filled", "{}", r.body);
        let bought = r.body["lease_id"].as_str().unwrap().to_owned();
        let view = app
            .get(&format!("/v1/leases/{bought}"), Some(&buyer))
            .await
            .body;
        let price = decimal_of(&view["price_per_hour"]);
        // Unit prices are scaled to the ask and kept to 8 places, so the
        // slice's price is the ask to a few millionths, never above it.
        assert!(
            price <= ask && (ask - price) / ask < Decimal::new(1, 5),
            "{price} vs {ask}"
        );
        let fills = app
            .get(
                &format!("/v1/orders/{}/fills", r.body["id"].as_str().unwrap()),
                Some(&buyer),
            )
            .await;
        assert_eq!(
            fills.body[0]["report"]["listing_id"],
            listing.as_str(),
            "{}",
            fills.body
        );

        // The seller's window begins: its workload runs on the node.
        move_clock_to(&app, start);
        eventually(20, "the seller's lease to run", || async {
            lease(&app, &seller, seller_lease.parse().unwrap()).await["state"] == "running"
        })
        .await;
        eventually(15, "the seller's workload's output", || async {
            logs(&app, &seller, &seller_lease)
                .await
                .contains("seller-ran")
        })
        .await;
        let seller_view = lease(&app, &seller, seller_lease.parse().unwrap()).await;
        let device = seller_view["device"].as_str().unwrap().to_owned();

        // `from`: the seller's lease ends (listed), and the buyer's workload
        // runs on the same slice once the seller's has stopped.
        move_clock_to(&app, from);
        eventually(20, "the seller's lease to end at `from`", || async {
            lease(&app, &seller, seller_lease.parse().unwrap()).await["state"] == "ended"
        })
        .await;
        let ended = lease(&app, &seller, seller_lease.parse().unwrap()).await;
        assert_eq!(ended["end_reason"], "listed", "{ended}");
        eventually(20, "the buyer's lease to run", || async {
            lease(&app, &buyer, bought.parse().unwrap()).await["state"] == "running"
        })
        .await;
        let running = lease(&app, &buyer, bought.parse().unwrap()).await;
        assert_eq!(running["node_id"], seller_view["node_id"], "{running}");
        // The same MIG placement; the instance is made anew for its new tenant.
        assert_eq!(
            running["placement"], seller_view["placement"],
            "the same slice: {running}"
        );
        assert_ne!(running["device"], device.as_str(), "{running}");
        let device = running["device"].as_str().unwrap().to_owned();
        eventually(15, "the buyer's workload's output", || async {
            logs(&app, &buyer, &bought)
                .await
                .contains(&format!("buyer-ran on {device}"))
        })
        .await;
        eventually(15, "the buyer to be charged", || async {
            posted(&app, &format!("holds:{buyer_id}"), "capture").await < Decimal::ZERO
        })
        .await;

        // Money: each of the buyer's charges paid the seller less the 5 % fee,
        // in the same balanced entry; the seller still owes its whole window.
        let charged = -posted(&app, &format!("holds:{buyer_id}"), "capture").await;
        let seller_wallet = posted(&app, &format!("wallet:{seller_id}"), "capture").await;
        let fee = posted(&app, "platform:revenue", "capture").await;
        assert!(seller_wallet > Decimal::ZERO, "the seller was paid");
        let expected = charged * Decimal::new(95, 2);
        // The fee is rounded to the cent's millionth on each charge.
        assert!(
            (seller_wallet - expected).abs() <= Decimal::new(1, 5),
            "{seller_wallet} vs {expected}"
        );
        assert!(
            fee > charged - seller_wallet - Decimal::new(1, 5),
            "fee {fee}"
        );
        let db = gpuex::db::Db::connect(&app.database_url).await.unwrap();
        let postings: Vec<(Uuid, gpuex::db::Money)> = gpuex::db::dispatch!(db, pool => {
            sqlx::query_as("SELECT entry_id, amount FROM postings").fetch_all(pool).await
        })
        .unwrap();
        db.close().await;
        let mut per_entry = std::collections::HashMap::<Uuid, Decimal>::new();
        for (entry, amount) in postings {
            *per_entry.entry(entry).or_default() += amount.0;
        }
        assert!(per_entry.values().all(|sum| sum.is_zero()), "{per_entry:?}");
        let seller_charged = decimal_of(&ended["usage"]["charged"]);
        let window = (seller_price * Decimal::from(4)).round_dp(6);
        assert!(
            (seller_charged - window).abs() <= Decimal::new(1, 5),
            "the whole window is owed: {seller_charged} vs {window}"
        );

        // Both parties' FOCUS exports carry it: the buyer's rows of the bought
        // lease say `resale`, and the seller's proceeds are Credit rows for
        // exactly what its wallet got.
        let buyer_rows = focus_rows(&app, &buyer).await;
        let resold: Vec<_> = buyer_rows.iter().filter(|r| r["ResourceId"] == bought.as_str()).collect();
        assert!(!resold.is_empty(), "{buyer_rows:?}");
        assert!(resold.iter().all(|r| r["x_Source"] == "resale" && r["x_ListingId"] == listing.as_str()), "{resold:?}");
        let seller_rows = focus_rows(&app, &seller).await;
        let credited: Decimal = seller_rows
            .iter()
            .filter(|r| r["x_Source"] == "resale" && r["ChargeCategory"] == "Credit")
            .map(|r| r["BilledCost"].to_string().parse::<Decimal>().unwrap())
            .sum();
        assert_eq!(-credited, seller_wallet, "{seller_rows:?}");
    }
}
