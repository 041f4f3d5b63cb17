//! HTTP benchmarks, each against a baseline run in the same process:
//! order placement (`POST /v1/orders` on SQLite: validation, the engine task,
//! the hold and the commit) and `GET /v1/prices`, against a bare axum handler
//! that parses and echoes the same JSON. 32 requests in flight throughout:
//! each one that finishes starts the next. Last, the floor under order
//! placement on this schema: the rows each order writes, written straight
//! to SQLite the way the market writes them, with no HTTP and no engine.
//!
//! `cargo bench --bench http -- --warm-up-time 1 --measurement-time 4`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use futures::StreamExt;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;

/// Requests kept in flight; `GPUEX_BENCH_IN_FLIGHT` overrides it.
fn in_flight() -> usize {
    std::env::var("GPUEX_BENCH_IN_FLIGHT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(32)
}
/// Nodes of 8 shared H100s: each holds 160 of the benchmark's orders, so
/// 500 nodes take 80,000, more than a run at today's rates places.
const NODES: usize = 500;

struct Bench {
    base: String,
    client: reqwest::Client,
    buyer: String,
    bare: String,
    database: String,
    _dir: tempfile::TempDir,
}

async fn post(client: &reqwest::Client, url: &str, token: Option<&str>, body: &Value) -> Value {
    let mut req = client.post(url).json(body);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    req.send()
        .await
        .expect("request")
        .json()
        .await
        .unwrap_or(Value::Null)
}

async fn setup() -> Bench {
    let dir = tempfile::tempdir().expect("temp dir");
    let database = format!("sqlite://{}/bench.db", dir.path().display());
    let mut settings = gpuex::config::Settings::with_database(database.clone());
    settings.admin_email = Some("admin@bench.test".into());
    settings.admin_password = Some("bench-password-1".into());
    // The bench measures the server, not its request limits.
    settings.rate_limit_rps = 1_000_000;
    settings.rate_limit_burst = 1_000_000;
    settings.rate_limit_address_rps = 1_000_000;
    settings.rate_limit_address_burst = 1_000_000;
    settings.register_per_hour = 1_000_000;
    settings.max_connections_per_address = 1_000_000;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(gpuex::serve(listener, settings, std::future::pending()));
    let bare_listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let bare = format!("http://{}/echo", bare_listener.local_addr().expect("addr"));
    let app = axum::Router::new().route(
        "/echo",
        axum::routing::post(|axum::Json(v): axum::Json<Value>| async move {
            (axum::http::StatusCode::CREATED, axum::Json(v))
        }),
    );
    tokio::spawn(async move { axum::serve(bare_listener, app).await });
    let client = reqwest::Client::new();
    for _ in 0..200 {
        if client
            .get(format!("{base}/readyz"))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success())
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let login = |email: &'static str, password: &'static str| {
        let client = client.clone();
        let base = base.clone();
        async move {
            let r = post(
                &client,
                &format!("{base}/v1/auth/login"),
                None,
                &json!({"email": email, "password": password}),
            )
            .await;
            r["access_token"].as_str().expect("token").to_owned()
        }
    };
    let admin = login("admin@bench.test", "bench-password-1").await;
    client
        .put(format!("{base}/v1/admin/regions/eu-west"))
        .bearer_auth(&admin)
        .json(&json!({"timezone": "UTC"}))
        .send()
        .await
        .expect("region");
    client
        .put(format!("{base}/v1/admin/prices"))
        .bearer_auth(&admin)
        .json(&json!([
            {"region": "eu-west", "gpu_model": "H100-SXM5-80GB", "unit": "tflops_h", "list_price": "0.002"},
            {"region": "eu-west", "gpu_model": "H100-SXM5-80GB", "unit": "vram_h", "list_price": "0.05"}
        ]))
        .send()
        .await
        .expect("prices");
    for (email, role) in [("p@bench.test", "provider"), ("b@bench.test", "buyer")] {
        post(
            &client,
            &format!("{base}/v1/auth/register"),
            None,
            &json!({"email": email, "password": "bench-password-1", "name": "b", "role": role}),
        )
        .await;
    }
    let provider = login("p@bench.test", "bench-password-1").await;
    let buyer = login("b@bench.test", "bench-password-1").await;
    let gpus: Vec<Value> = (0..8)
        .map(|i| json!({"index": i, "model": "H100-SXM5-80GB", "mode": "shared"}))
        .collect();
    for n in 0..NODES {
        post(&client, &format!("{base}/v1/nodes"), Some(&provider),
            &json!({"name": format!("n{n}"), "region": "eu-west", "gpus": gpus, "cpu_milli": 1_000_000, "memory_mib": 100_000_000})).await;
    }
    let me: Value = client
        .get(format!("{base}/v1/me"))
        .bearer_auth(&buyer)
        .send()
        .await
        .expect("me")
        .json()
        .await
        .expect("json");
    post(
        &client,
        &format!("{base}/v1/admin/credits"),
        Some(&admin),
        &json!({"user_id": me["id"], "amount": "100000000"}),
    )
    .await;
    Bench {
        base,
        client,
        buyer,
        bare,
        database,
        _dir: dir,
    }
}

fn order() -> Value {
    json!({"mode": "on_demand", "region": "eu-west", "resources": {"tflops": 2, "vram_gb": 4}})
}

/// Sends `n` requests, keeping `IN_FLIGHT` of them in flight (a new one
/// starts as soon as any finishes), and returns the elapsed time.
async fn run(n: u64, send: impl Fn() -> futures::future::BoxFuture<'static, ()>) -> Duration {
    let started = Instant::now();
    futures::stream::iter((0..n).map(|_| send()))
        .buffer_unordered(in_flight())
        .for_each(|()| async {})
        .await;
    started.elapsed()
}

fn http(c: &mut Criterion) {
    let rt = Runtime::new().expect("runtime");
    let bench = rt.block_on(setup());
    let mut group = c.benchmark_group("http");
    group.throughput(Throughput::Elements(1));
    group.bench_function("bare_axum_json_echo", |b| {
        b.to_async(&rt).iter_custom(|n| {
            let (client, url) = (bench.client.clone(), bench.bare.clone());
            run(n, move || {
                let (client, url) = (client.clone(), url.clone());
                Box::pin(async move {
                    let r = client.post(&url).json(&order()).send().await.expect("echo");
                    assert_eq!(r.status(), 201);
                })
            })
        })
    });
    group.bench_function("post_orders_sqlite", |b| {
        b.to_async(&rt).iter_custom(|n| {
            let (client, base, buyer) = (
                bench.client.clone(),
                bench.base.clone(),
                bench.buyer.clone(),
            );
            run(n, move || {
                let (client, base, buyer) = (client.clone(), base.clone(), buyer.clone());
                Box::pin(async move {
                    let r = client
                        .post(format!("{base}/v1/orders"))
                        .bearer_auth(&buyer)
                        .json(&order())
                        .send()
                        .await
                        .expect("order");
                    assert_eq!(r.status(), 201);
                })
            })
        })
    });
    // The middleware stack alone, then one public read from SQLite.
    for (name, path) in [
        ("get_healthz_full_stack", "/healthz"),
        ("get_prices_sqlite", "/v1/prices"),
    ] {
        group.bench_function(name, |b| {
            b.to_async(&rt).iter_custom(|n| {
                let (client, url) = (bench.client.clone(), format!("{}{path}", bench.base));
                run(n, move || {
                    let (client, url) = (client.clone(), url.clone());
                    Box::pin(async move {
                        let r = client.get(&url).send().await.expect("get");
                        assert_eq!(r.status(), 200);
                    })
                })
            })
        });
    }
    // The floor under order placement on this schema: each order's rows
    // (order, lease, fill, ledger entry, two postings, hold), the two
    // balances and the batch's market journal row, as multi-row INSERTs with binds in one compound statement
    // with its BEGIN and COMMIT, a batch a trip, as the market writes them,
    // with no HTTP and no engine. Copies of an order the server placed
    // above, under new ids.
    group.bench_function("order_rows_sqlite_floor", |b| {
        let (conn, template) = rt.block_on(order_rows_template(&bench.database));
        let (conn, template) = (
            std::sync::Arc::new(tokio::sync::Mutex::new(conn)),
            std::sync::Arc::new(template),
        );
        b.to_async(&rt).iter_custom(|n| {
            let (conn, template) = (conn.clone(), template.clone());
            async move {
                let mut conn = conn.lock().await;
                let started = Instant::now();
                let mut left = n;
                while left > 0 {
                    let batch = left.min(rows_batch());
                    template
                        .batch(batch)
                        .build()
                        .execute(&mut *conn)
                        .await
                        .expect("order rows");
                    left -= batch;
                }
                started.elapsed()
            }
        })
    });
    group.finish();
}

/// Orders per transaction in the floor benchmark: about what the market's
/// group commit gathers with 32 requests in flight.
fn rows_batch() -> u64 {
    std::env::var("GPUEX_BENCH_ROWS_BATCH")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12)
}

/// One SQLite value, as read, to bind again.
enum Cell {
    Null,
    Integer(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

/// A table's row to copy, and which of its columns take a new id.
struct RowCopy {
    table: &'static str,
    columns: Vec<String>,
    cells: Vec<Cell>,
    /// (column index, which new id: 0 order, 1 lease, 2 entry, 3 hold)
    ids: Vec<(usize, usize)>,
}

/// One placed order's rows, to copy under new ids.
struct OrderRows {
    rows: Vec<RowCopy>,
    accounts: Vec<String>,
    /// The order's command as the market journal stores it: each batch
    /// appends one journal row holding one of these per order.
    journal_step: String,
    /// The floor's next journal row.
    journal_seq: std::sync::atomic::AtomicI64,
}

impl OrderRows {
    /// One transaction that writes `count` copies: the market's shape.
    fn batch(&self, count: u64) -> sqlx::QueryBuilder<'_, sqlx::Sqlite> {
        let ids: Vec<[uuid::Uuid; 4]> = (0..count)
            .map(|_| std::array::from_fn(|_| uuid::Uuid::now_v7()))
            .collect();
        let mut sql = sqlx::QueryBuilder::new("BEGIN IMMEDIATE; ");
        for row in &self.rows {
            sql.push(format!(
                "INSERT INTO {} ({}) ",
                row.table,
                row.columns.join(", ")
            ));
            sql.push_values(&ids, |mut values, new| {
                for (i, cell) in row.cells.iter().enumerate() {
                    if let Some((_, which)) = row.ids.iter().find(|(c, _)| *c == i) {
                        values.push_bind(new[*which]);
                        continue;
                    }
                    match cell {
                        Cell::Null => values.push_bind(None::<&str>),
                        Cell::Integer(v) => values.push_bind(*v),
                        Cell::Real(v) => values.push_bind(*v),
                        Cell::Text(v) => values.push_bind(v.as_str()),
                        Cell::Blob(v) => values.push_bind(v.as_slice()),
                    };
                }
            });
            sql.push("; ");
        }
        // The market journal's row for the batch (ARCHITECTURE.md §20).
        let steps = vec![self.journal_step.as_str(); ids.len()].join(",");
        sql.push("INSERT INTO journal (seq, epoch, at_ms, version, commands, digest) VALUES (")
            .push_bind(
                self.journal_seq
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            )
            .push(", 0, 0, 1, ")
            .push_bind(format!("[{steps}]"))
            .push(", NULL); ");
        // The market writes each touched balance once per batch.
        for account in &self.accounts {
            sql.push("UPDATE accounts SET balance = balance WHERE code = ")
                .push_bind(account.as_str())
                .push("; ");
        }
        sql.push("COMMIT");
        sql
    }
}

/// Reads one row of `table` (`filter` binds `key`) as cells, every column
/// but `skip` (an autoincrement id).
async fn copy_of(
    conn: &mut sqlx::SqliteConnection,
    table: &'static str,
    filter: &str,
    key: Vec<u8>,
    skip: Option<&str>,
) -> Vec<(Vec<String>, Vec<Cell>)> {
    use sqlx::{Column, Row, TypeInfo, ValueRef};
    let rows = sqlx::query(&format!("SELECT * FROM {table} WHERE {filter}"))
        .bind(key)
        .fetch_all(&mut *conn)
        .await
        .expect("template row");
    rows.iter()
        .map(|row| {
            let mut names = Vec::new();
            let mut cells = Vec::new();
            for (i, column) in row.columns().iter().enumerate() {
                if Some(column.name()) == skip {
                    continue;
                }
                let raw = row.try_get_raw(i).expect("value");
                let cell = if raw.is_null() {
                    Cell::Null
                } else {
                    match raw.type_info().name() {
                        "INTEGER" => Cell::Integer(row.get(i)),
                        "REAL" => Cell::Real(row.get(i)),
                        "BLOB" => Cell::Blob(row.get(i)),
                        _ => Cell::Text(row.get(i)),
                    }
                };
                names.push(column.name().to_owned());
                cells.push(cell);
            }
            (names, cells)
        })
        .collect()
}

/// A table to copy from: its name, the filter on `$1`, the key, an
/// autoincrement column to leave out, and the columns that take new ids.
type Source = (
    &'static str,
    &'static str,
    uuid::Uuid,
    Option<&'static str>,
    &'static [(&'static str, usize)],
);

/// A connection set up as the server's writer, and the last order the
/// server placed.
async fn order_rows_template(database: &str) -> (sqlx::SqliteConnection, OrderRows) {
    use sqlx::ConnectOptions;
    use std::str::FromStr;
    let mut conn = sqlx::sqlite::SqliteConnectOptions::from_str(database)
        .expect("url")
        .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal)
        .synchronous(sqlx::sqlite::SqliteSynchronous::Normal)
        .busy_timeout(Duration::from_secs(10))
        .pragma("cache_size", "-65536")
        .pragma("wal_autocheckpoint", "0")
        .connect()
        .await
        .expect("connect");
    let (order, lease, hold): (uuid::Uuid, uuid::Uuid, uuid::Uuid) = sqlx::query_as(
        "SELECT o.id, l.id, l.hold_id FROM orders o JOIN leases l ON l.order_id = o.id \
         WHERE l.hold_id IS NOT NULL ORDER BY o.created_at DESC LIMIT 1",
    )
    .fetch_one(&mut conn)
    .await
    .expect("a placed order");
    let entry: uuid::Uuid =
        sqlx::query_scalar("SELECT id FROM journal_entries WHERE reference = $1")
            .bind(format!("hold:{hold}"))
            .fetch_one(&mut conn)
            .await
            .expect("its hold's journal entry");
    let sources: [Source; 6] = [
        (
            "orders",
            "id = $1",
            order,
            None,
            &[("id", 0), ("lease_id", 1)],
        ),
        (
            "leases",
            "id = $1",
            lease,
            None,
            &[("id", 1), ("order_id", 0), ("hold_id", 3)],
        ),
        (
            "fills",
            "order_id = $1",
            order,
            None,
            &[("order_id", 0), ("lease_id", 1)],
        ),
        ("journal_entries", "id = $1", entry, None, &[("id", 2)]),
        (
            "postings",
            "entry_id = $1",
            entry,
            Some("id"),
            &[("entry_id", 2)],
        ),
        ("holds", "id = $1", hold, None, &[("id", 3)]),
    ];
    let mut rows = Vec::new();
    let mut accounts = Vec::new();
    for (table, filter, key, skip, new_ids) in sources {
        for (columns, cells) in
            copy_of(&mut conn, table, filter, key.as_bytes().to_vec(), skip).await
        {
            if table == "postings" {
                let at = columns
                    .iter()
                    .position(|c| c == "account")
                    .expect("account");
                if let Cell::Text(account) = &cells[at] {
                    accounts.push(account.clone());
                }
            }
            let ids = new_ids
                .iter()
                .map(|(name, which)| {
                    (
                        columns.iter().position(|c| c == name).expect("id column"),
                        *which,
                    )
                })
                .collect();
            rows.push(RowCopy {
                table,
                columns,
                cells,
                ids,
            });
        }
    }
    let journal_step = journal_step_of(&mut conn, order).await;
    // Past the server's rows and the floor's earlier samples alike.
    let last: Option<i64> = sqlx::query_scalar("SELECT MAX(seq) FROM journal")
        .fetch_one(&mut conn)
        .await
        .expect("the journal's last row");
    let journal_seq = last.unwrap_or(0).max(FLOOR_JOURNAL_SEQ) + 1;
    (
        conn,
        OrderRows {
            rows,
            accounts,
            journal_step,
            journal_seq: std::sync::atomic::AtomicI64::new(journal_seq),
        },
    )
}

/// Where the floor's journal rows start: far past any the server writes
/// while the floor runs.
const FLOOR_JOURNAL_SEQ: i64 = 1_000_000_000;

/// The journal's step that placed `order`, as stored.
async fn journal_step_of(conn: &mut sqlx::SqliteConnection, order: uuid::Uuid) -> String {
    let commands: String =
        sqlx::query_scalar("SELECT commands FROM journal WHERE commands LIKE $1")
            .bind(format!("%{order}%"))
            .fetch_one(&mut *conn)
            .await
            .expect("the journal row that placed the order");
    let steps: Vec<Value> = serde_json::from_str(&commands).expect("journal commands");
    steps
        .iter()
        .map(Value::to_string)
        .find(|step| step.contains(&order.to_string()))
        .expect("the order's step")
}

criterion_group!(benches, http);
criterion_main!(benches);
