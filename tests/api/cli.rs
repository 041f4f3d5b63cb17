//! The `gpuex` client subcommands as a user runs them: the real binary, in
//! its own process, against a real server with a real simulated agent, with
//! a config folder of its own (`GPUEX_CONFIG_DIR`), on both databases.

use crate::agent_process::Agent;
use crate::fleet::{self, create_node, eventually, h100_node, node_view, on_both_databases_fast};
use crate::helpers::TestApp;
use chrono::{Duration, DurationRound, Utc};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Stdio;
use tokio::io::AsyncWriteExt;
use uuid::Uuid;

pub(crate) const PASSWORD: &str = "correct horse battery";

/// What one run of `gpuex` left: its exit code, stdout and stderr.
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    stderr: String,
}

impl Run {
    #[track_caller]
    pub(crate) fn ok(&self) -> &Self {
        assert_eq!(
            self.code, 0,
            "stdout: {}\nstderr: {}",
            self.stdout, self.stderr
        );
        self
    }

    #[track_caller]
    pub(crate) fn json(&self) -> Value {
        self.ok();
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("{e}: {}", self.stdout))
    }

    #[track_caller]
    pub(crate) fn fails(&self, code: i32, stderr_has: &str) {
        assert_eq!(
            self.code, code,
            "stdout: {}\nstderr: {}",
            self.stdout, self.stderr
        );
        assert!(
            self.stderr.contains(stderr_has),
            "stderr lacks `{stderr_has}`: {}",
            self.stderr
        );
    }
}

/// Runs `gpuex args…` against `server` with `config` as its config folder,
/// feeding `stdin` (then closing it).
pub(crate) async fn gpuex(server: &str, config: &Path, args: &[&str], stdin: &str) -> Run {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_gpuex"))
        .args(args)
        .env("GPUEX_SERVER", server)
        .env("GPUEX_CONFIG_DIR", config)
        .env_remove("GPUEX_TOKEN")
        .env_remove("GPUEX_EMAIL")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn gpuex");
    let mut input = child.stdin.take().expect("stdin");
    input
        .write_all(stdin.as_bytes())
        .await
        .expect("write stdin");
    drop(input);
    let out = tokio::time::timeout(std::time::Duration::from_secs(60), child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("gpuex {args:?} ran past 60 s"))
        .expect("gpuex output");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Registers `role` with a known password; returns (email, token, id).
async fn account(app: &TestApp, role: &str) -> (String, String, Uuid) {
    let email = format!("cli-{role}-{}@example.com", Uuid::new_v4().simple());
    let r = app
        .post(
            "/v1/auth/register",
            None,
            json!({"email": email, "password": PASSWORD, "name": "CLI", "role": role}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let id = r.body["id"].as_str().unwrap().parse().unwrap();
    let token = app.login(&email, PASSWORD).await;
    (email, token, id)
}

/// A market with a buyer (1,000 credited) and a provider, both with a
/// known password, and the real agent online on the provider's simulated
/// node in eu-west (it stops when this is dropped).
pub(crate) struct SimMarket {
    pub(crate) buyer_email: String,
    provider_email: String,
    provider: String,
    _agent: Agent,
    _spool: tempfile::TempDir,
}

impl SimMarket {
    pub(crate) async fn start(app: &TestApp) -> SimMarket {
        let market = fleet::market(app).await;
        let (buyer_email, _, buyer_id) = account(app, "buyer").await;
        assert!(app
            .credit(&market.admin, buyer_id, "1000")
            .await
            .status
            .is_success());
        let (provider_email, provider, _) = account(app, "provider").await;
        let node = create_node(app, &provider, json!({"name": "sim", "region": "eu-west"})).await;
        let spool = tempfile::tempdir().unwrap();
        let agent = Agent::start(app, &node.token, spool.path()).await;
        eventually(20, "the agent to register", || async {
            node_view(app, &provider, node.id).await["status"] == "online"
        })
        .await;
        SimMarket {
            buyer_email,
            provider_email,
            provider,
            _agent: agent,
            _spool: spool,
        }
    }
}

const WORKLOAD: &str =
    "echo cli-start; for i in 1 2 3 4; do echo tick $i; sleep 0.3; done; echo cli-done";

on_both_databases_fast! {
    async fn a_buyer_logs_in_quotes_orders_with_wait_follows_logs_resells_and_exports(app) {
        let sim = SimMarket::start(&app).await;
        let (buyer_email, provider_email, provider) = (sim.buyer_email.as_str(), sim.provider_email.as_str(), sim.provider.as_str());
        let config = tempfile::tempdir().unwrap();
        let cfg = config.path();
        let s = app.address.as_str();

        // Login: the password from stdin; an API key kept 0600.
        let r = gpuex(s, cfg, &["login", "--email", buyer_email, "--password-stdin"], &format!("{PASSWORD}\n")).await;
        r.ok();
        assert!(r.stdout.contains(buyer_email), "{}", r.stdout);
        let file = cfg.join("credentials.json");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "credentials are {mode:o}");
        }
        let kept: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        let key = kept["servers"][s]["api_key"].as_str().unwrap().to_owned();
        assert!(key.starts_with("gpx_"), "{kept}");
        assert_eq!(gpuex(s, cfg, &["whoami", "--output", "json"], "").await.json()["email"], buyer_email);

        // Quote, in a table and in JSON.
        let quote = ["quote", "--mode", "on_demand", "--region", "eu-west", "--tflops", "100", "--vram-gb", "16"];
        let table = gpuex(s, cfg, &quote, "").await;
        assert!(table.ok().stdout.contains("H100-SXM5-80GB"), "{}", table.stdout);
        let mut json_quote = quote.to_vec();
        json_quote.extend(["--output", "json"]);
        let q = gpuex(s, cfg, &json_quote, "").await.json();
        assert!(!q["options"].as_array().unwrap().is_empty(), "{q}");

        // Order with --wait: back when the lease runs on the agent's MIG slice.
        let placed = gpuex(s, cfg, &[
            "order", "--mode", "on_demand", "--region", "eu-west", "--tflops", "100", "--vram-gb", "16",
            "--command", WORKLOAD, "--env", "K=V", "--tag", "team=ml", "--wait", "--output", "json",
        ], "").await.json();
        assert_eq!(placed["order"]["state"], "filled", "{placed}");
        assert_eq!(placed["order"]["tags"]["team"], "ml", "{placed}");
        assert_eq!(placed["lease"]["state"], "running", "{placed}");
        assert!(placed["lease"]["device"].as_str().unwrap().starts_with("MIG-"), "{placed}");
        let lease = placed["lease"]["id"].as_str().unwrap().to_owned();

        // logs --follow prints the whole output and returns when the workload is done.
        let logs = gpuex(s, cfg, &["logs", &lease, "--follow"], "").await;
        logs.ok();
        assert!(logs.stdout.contains("cli-start") && logs.stdout.contains("tick 4") && logs.stdout.contains("cli-done"), "{}", logs.stdout);
        assert_eq!(logs.stdout.matches("cli-start").count(), 1, "printed twice: {}", logs.stdout);

        let orders = gpuex(s, cfg, &["orders", "--output", "json"], "").await.json();
        assert_eq!(orders.as_array().unwrap().len(), 1, "{orders}");
        let leases = gpuex(s, cfg, &["leases"], "").await;
        assert!(leases.ok().stdout.contains(&lease), "{}", leases.stdout);

        // A reservation on a whole GPU of a second node, its tail listed for resale.
        let whole = create_node(&app, provider, h100_node(1, "whole")).await;
        fleet::register(&app, &whole, &[("H100-SXM5-80GB", false)]).await;
        let start = (Utc::now() + Duration::hours(2)).duration_trunc(Duration::hours(1)).unwrap() + Duration::hours(1);
        let reserved = gpuex(s, cfg, &[
            "order", "--mode", "reserved", "--region", "eu-west", "--tflops", "100", "--vram-gb", "16",
            "--isolation", "whole", "--start-at", &start.to_rfc3339(), "--duration-s", "14400", "--output", "json",
        ], "").await.json();
        assert_eq!(reserved["state"], "filled", "{reserved}");
        let reserved_lease = reserved["lease_id"].as_str().unwrap().to_owned();
        let price: rust_decimal::Decimal = gpuex(s, cfg, &["leases", &reserved_lease, "--output", "json"], "").await
            .json()["price_per_hour"].as_str().unwrap().parse().unwrap();
        let ask = (price * rust_decimal::Decimal::new(8, 1)).round_dp(6).to_string();
        let from = (start + Duration::hours(2)).to_rfc3339();
        let listing = gpuex(s, cfg, &["resell", &reserved_lease, "--from", &from, "--ask-per-hour", &ask, "--output", "json"], "").await.json();
        assert_eq!(listing["state"], "open", "{listing}");
        // From the moment it is listed, the seller's lease says when it gives the slice up.
        let vacate = (start + Duration::hours(2)).format("%Y-%m-%dT%H:%M:%SZ").to_string();
        let shown = gpuex(s, cfg, &["leases", &reserved_lease], "").await.ok().stdout.clone();
        assert!(shown.lines().any(|l| l.contains("vacate_at") && l.contains(&vacate)), "{shown}");
        // The image a lease ran, by ID, has its row (empty without an image).
        assert!(shown.lines().any(|l| l.contains("image_id")), "{shown}");
        let shown = gpuex(s, cfg, &["leases", &reserved_lease, "--output", "json"], "").await.json();
        assert_eq!(shown["vacate_at"], vacate.as_str(), "{shown}");
        let mine = gpuex(s, cfg, &["listings", "--output", "json"], "").await.json();
        assert_eq!(mine[0]["id"], listing["id"], "{mine}");
        // Listed twice: refused with the server's detail, exit 5.
        gpuex(s, cfg, &["resell", &reserved_lease, "--from", &from, "--ask-per-hour", &ask], "").await.fails(5, "error: ");

        // Billing: grouped by tag, and the FOCUS export to a file.
        eventually(20, "the first usage line", || async {
            let r = gpuex(s, cfg, &["bill", "--group-by", "tag:team", "--output", "json"], "").await;
            r.code == 0 && r.stdout.contains("\"ml\"")
        }).await;
        let out = tempfile::tempdir().unwrap();
        let csv = out.path().join("focus.csv");
        let r = gpuex(s, cfg, &["export", "--format", "focus-csv", "-o", csv.to_str().unwrap()], "").await;
        r.ok();
        let text = std::fs::read_to_string(&csv).unwrap();
        assert!(text.starts_with("BilledCost,"), "{text}");
        assert!(text.lines().count() >= 2, "{text}");
        assert!(!out.path().join("focus.part").exists());

        // Events: the page shows the order's.
        let events = gpuex(s, cfg, &["events", "--output", "json"], "").await.json();
        assert!(events["items"].as_array().unwrap().iter().any(|e| e["type"] == "order.filled"), "{events}");

        // Release the reservation; a second release is a conflict.
        let released = gpuex(s, cfg, &["release", &reserved_lease, "--output", "json"], "").await.json();
        assert_eq!(released["id"], reserved_lease.as_str());
        gpuex(s, cfg, &["release", &lease], "").await.fails(5, "error: ");

        // The provider's side, in its own config folder.
        let pcfg = tempfile::tempdir().unwrap();
        gpuex(s, pcfg.path(), &["login", "--email", provider_email, "--password-stdin"], PASSWORD).await.ok();
        let nodes = gpuex(s, pcfg.path(), &["nodes", "--output", "json"], "").await.json();
        assert_eq!(nodes.as_array().unwrap().len(), 2, "{nodes}");
        gpuex(s, pcfg.path(), &["earnings"], "").await.ok();
        // …and a buyer is not let in there.
        gpuex(s, cfg, &["nodes"], "").await.fails(3, "error: this endpoint is for provider");

        // Logout revokes the key on the server and forgets it here.
        gpuex(s, cfg, &["logout"], "").await.ok();
        assert_eq!(app.get("/v1/me", Some(&key)).await.status, 401);
        gpuex(s, cfg, &["orders"], "").await.fails(3, "not logged in");
    }
}

on_both_databases_fast! {
    async fn every_error_path_has_its_exit_code_and_the_servers_detail(app) {
        let m = fleet::market(&app).await;
        let (email, _, id) = account(&app, "buyer").await;
        assert!(app.credit(&m.admin, id, "1000").await.status.is_success());
        let config = tempfile::tempdir().unwrap();
        let cfg = config.path();
        let s = app.address.as_str();

        // 3: no credential, a wrong password, an expired session.
        gpuex(s, cfg, &["orders"], "").await.fails(3, "not logged in");
        gpuex(s, cfg, &["login", "--email", &email, "--password-stdin"], "wrong password\n").await.fails(3, "error: ");
        assert!(!cfg.join("credentials.json").exists());
        // Not a terminal and no --password-stdin: a usage error, not a hang.
        gpuex(s, cfg, &["login", "--email", &email], "").await.fails(2, "--password-stdin");
        // 2: clap's usage errors.
        gpuex(s, cfg, &["quote", "--mode", "sometimes", "--tflops", "1", "--vram-gb", "1"], "").await.fails(2, "possible values");
        gpuex(s, cfg, &["order", "--mode", "spot", "--tflops", "1", "--vram-gb", "1", "--tag", "novalue"], "").await.fails(2, "KEY=VALUE");

        gpuex(s, cfg, &["login", "--session", "--email", &email, "--password-stdin"], PASSWORD).await.ok();
        let kept: Value = serde_json::from_slice(&std::fs::read(cfg.join("credentials.json")).unwrap()).unwrap();
        assert!(kept["servers"][s]["access_token"].is_string(), "{kept}");

        // 6: the field the server refused, with its message.
        gpuex(s, cfg, &["quote", "--mode", "on_demand", "--tflops", "0", "--vram-gb", "8"], "").await
            .fails(6, "resources.tflops: must be above 0");
        gpuex(s, cfg, &["bill", "--group-by", "colour"], "").await.fails(6, "group_by");
        gpuex(s, cfg, &["order", "--mode", "on_demand", "--tflops", "1", "--vram-gb", "4", "--artifact", "http://127.0.0.1/a.py"], "").await
            .fails(2, "URL,SHA256,PATH");
        gpuex(s, cfg, &["order", "--mode", "on_demand", "--tflops", "1", "--vram-gb", "4",
                        "--artifact", "http://127.0.0.1/a.py,abc,a.py"], "").await
            .fails(6, "artifacts[0].sha256");
        // 4: no such lease.
        gpuex(s, cfg, &["release", &Uuid::new_v4().to_string()], "").await.fails(4, "error: ");
        gpuex(s, cfg, &["logs", &Uuid::new_v4().to_string()], "").await.fails(4, "error: ");
        // 6 too: an order the market cannot fill now (no capacity anywhere: 422).
        gpuex(s, cfg, &["order", "--mode", "on_demand", "--region", "eu-west", "--tflops", "100", "--vram-gb", "16", "--wait"], "").await
            .fails(6, "no adequate capacity");
        // 8: --wait past its timeout (a reservation that starts in hours stays pending).
        let (provider, _) = app.user("provider").await;
        let whole = create_node(&app, &provider, h100_node(1, "whole")).await;
        fleet::register(&app, &whole, &[("H100-SXM5-80GB", false)]).await;
        let start = (Utc::now() + Duration::hours(3)).duration_trunc(Duration::hours(1)).unwrap();
        gpuex(s, cfg, &["order", "--mode", "reserved", "--region", "eu-west", "--tflops", "100", "--vram-gb", "16",
                        "--isolation", "whole", "--start-at", &start.to_rfc3339(), "--duration-s", "3600",
                        "--wait", "--wait-timeout", "1"], "").await
            .fails(8, "timed out");
        // 7: nothing listening there.
        let closed = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            format!("http://{}", l.local_addr().unwrap())
        };
        gpuex(&closed, cfg, &["login", "--email", &email, "--password-stdin"], PASSWORD).await.fails(7, "could not connect");
        // An expired session with no refresh token: exit 3 with a hint,
        // without asking the server.
        let mut stale = kept.clone();
        stale["servers"][s]["expires_at"] = json!("2000-01-01T00:00:00Z");
        stale["servers"][s].as_object_mut().unwrap().remove("refresh_token");
        std::fs::write(cfg.join("credentials.json"), serde_json::to_vec(&stale).unwrap()).unwrap();
        gpuex(s, cfg, &["orders"], "").await.fails(3, "expired");
        // GPUEX_TOKEN wins over the file: a bad one is refused by the server (401 → 3).
        let r = tokio::process::Command::new(env!("CARGO_BIN_EXE_gpuex"))
            .args(["orders"])
            .env("GPUEX_SERVER", s)
            .env("GPUEX_CONFIG_DIR", cfg)
            .env("GPUEX_TOKEN", "gpx_not-a-key")
            .output()
            .await
            .unwrap();
        assert_eq!(r.status.code(), Some(3), "{}", String::from_utf8_lossy(&r.stderr));
    }
}

crate::helpers::on_both_databases! {
    async fn gpuex_tco_prices_a_load_from_flags_and_gpuex_profile_reads_the_history(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let (email, _, _) = account(&app, "buyer").await;
        let config = tempfile::tempdir().unwrap();
        let cfg = config.path();
        let s = app.address.as_str();
        gpuex(s, cfg, &["login", "--email", &email, "--password-stdin"], PASSWORD).await.ok();
        // The load of capacity::tco_prices_a_given_profile_in_the_cheapest_mix_as_worked_out_by_hand.
        let load = [
            "tco", "--node-price-per-hour", "20", "--gpu-model", "H100-SXM5-80GB", "--region", "eu-west",
            "--peak-tflops", "4000", "--mean-tflops", "2000", "--baseline-tflops", "1500",
            "--peak-vram", "80", "--mean-vram", "40", "--baseline-vram", "30", "--spot-share", "0.25",
        ];
        let mut as_json = load.to_vec();
        as_json.extend(["--output", "json"]);
        let t = gpuex(s, cfg, &as_json, "").await.json();
        assert_eq!(t["gpuex"]["total"], "159779.115000");
        assert_eq!(t["whole_node"]["total"], "525600.000000");
        assert_eq!(t["assumptions"]["profile_source"], "body");
        let table = gpuex(s, cfg, &load, "").await;
        table.ok();
        for shown in ["whole nodes (1 × 8 GPUs)", "159779.115000", "saving 365820.885000 USD", "reserved", "default_discount"] {
            assert!(table.stdout.contains(shown), "`{shown}` missing from:\n{}", table.stdout);
        }
        // The server's field and message, exit 6.
        gpuex(s, cfg, &["tco", "--node-price-per-hour", "0", "--peak-tflops", "1", "--mean-tflops", "1",
                        "--peak-vram", "1", "--mean-vram", "1"], "").await
            .fails(6, "node_price_per_hour");
        gpuex(s, cfg, &["tco", "--node-price-per-hour", "20"], "").await.fails(6, "profile");
        gpuex(s, cfg, &["tco", "--node-price-per-hour", "20", "--months", "many"], "").await.fails(2, "--months");
        // An empty history reads as one row of zeros.
        let p = gpuex(s, cfg, &["profile", "--from", "2026-01-31T00:00:00Z", "--to", "2026-01-31T04:00:00Z"], "").await;
        p.ok();
        assert!(p.stdout.contains("14400 s elapsed") && p.stdout.contains("all"), "{}", p.stdout);
        gpuex(s, cfg, &["profile", "--from", "2026-01-31T04:00:00Z", "--to", "2026-01-31T00:00:00Z"], "").await
            .fails(6, "query.to");
    }
}

crate::helpers::on_both_databases! {
    async fn gpuex_import_streams_a_history_that_profile_and_tco_then_read(app) {
        let admin = app.admin().await;
        app.seed_prices(&admin).await;
        let (email, _, _) = account(&app, "buyer").await;
        let config = tempfile::tempdir().unwrap();
        let cfg = config.path();
        let s = app.address.as_str();
        gpuex(s, cfg, &["login", "--email", &email, "--password-stdin"], PASSWORD).await.ok();
        let sacct = concat!(env!("CARGO_MANIFEST_DIR"), "/data/imports/sacct.txt");
        let i = gpuex(s, cfg, &["import", sacct, "--format", "slurm", "--output", "json"], "").await.json();
        assert_eq!((i["rows"].as_u64(), i["rejected_count"].as_u64()), (Some(3), Some(2)), "{i}");
        let id = i["id"].as_str().unwrap().to_owned();
        let table = gpuex(s, cfg, &["import", sacct, "--format", "slurm"], "").await;
        table.ok();
        for shown in ["rows", "still running (End is Unknown)", "H100-SXM5-80GB (1 rows)"] {
            assert!(table.stdout.contains(shown), "`{shown}` missing from:\n{}", table.stdout);
        }
        let listed = gpuex(s, cfg, &["imports", "--output", "json"], "").await.json();
        assert_eq!(listed["imports"].as_array().unwrap().len(), 2);
        let shown = gpuex(s, cfg, &["imports", "show", &id], "").await;
        shown.ok();
        assert!(shown.stdout.contains("5569") && shown.stdout.contains("account=risk") && shown.stdout.contains("█"), "{}", shown.stdout);
        let p = gpuex(s, cfg, &["profile", "--import", &id, "--output", "json"], "").await.json();
        assert_eq!(p["total"]["tflops_units"]["peak"], "5569");
        let t = gpuex(s, cfg, &["tco", "--node-price-per-hour", "20", "--import", &id, "--output", "json"], "").await.json();
        assert_eq!((t["assumptions"]["profile_source"].as_str(), t["assumptions"]["import_id"].as_str()), (Some("import"), Some(id.as_str())));
        gpuex(s, cfg, &["imports", "delete", &id], "").await.ok();
        gpuex(s, cfg, &["imports", "show", &id], "").await.fails(4, "no import");
        gpuex(s, cfg, &["import", sacct, "--format", "xml"], "").await.fails(2, "--format");
        gpuex(s, cfg, &["import", "/nonexistent/history.csv", "--format", "csv"], "").await.fails(1, "cannot read");
        gpuex(s, cfg, &["import", sacct, "--format", "k8s"], "").await.fails(6, "body");
    }
}

/// The credentials file as `gpuex` left it, and its mode.
fn kept_credentials(cfg: &Path) -> (Value, u32) {
    use std::os::unix::fs::PermissionsExt;
    let path = cfg.join("credentials.json");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    (
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap(),
        mode,
    )
}

crate::helpers::on_both_databases! {
    async fn a_session_login_refreshes_itself_when_its_access_token_expires_and_logout_ends_it(app) {
        let (email, _, _) = account(&app, "buyer").await;
        let config = tempfile::tempdir().unwrap();
        let cfg = config.path();
        let s = app.address.as_str();
        gpuex(s, cfg, &["login", "--session", "--email", &email, "--password-stdin"], PASSWORD).await.ok();
        let (first, mode) = kept_credentials(cfg);
        assert_eq!(mode, 0o600);
        let first_refresh = first["servers"][s]["refresh_token"].as_str().unwrap().to_owned();
        assert!(first_refresh.starts_with("gpr_"), "{first}");
        assert!(first["servers"][s].get("api_key").is_none(), "{first}");

        // The access token has expired: the next command refreshes it
        // transparently and keeps the new pair, still 0600.
        let mut stale = first.clone();
        stale["servers"][s]["expires_at"] = json!("2000-01-01T00:00:00Z");
        std::fs::write(cfg.join("credentials.json"), serde_json::to_vec(&stale).unwrap()).unwrap();
        let me = gpuex(s, cfg, &["whoami", "--output", "json"], "").await.json();
        assert_eq!(me["email"], email);
        let (second, mode) = kept_credentials(cfg);
        assert_eq!(mode, 0o600);
        let second_refresh = second["servers"][s]["refresh_token"].as_str().unwrap().to_owned();
        assert_ne!(second_refresh, first_refresh);
        assert_ne!(second["servers"][s]["access_token"], first["servers"][s]["access_token"]);
        // No refresh while the new token is good.
        gpuex(s, cfg, &["whoami"], "").await.ok();
        assert_eq!(kept_credentials(cfg).0, second);

        // Logout ends the session on the server, not only in the file.
        let access = second["servers"][s]["access_token"].as_str().unwrap();
        gpuex(s, cfg, &["logout"], "").await.ok();
        assert!(kept_credentials(cfg).0["servers"].get(s).is_none());
        app.get("/v1/me", Some(access)).await.assert_code(401, "unauthorized");
        let r = app.post("/v1/auth/refresh", None, json!({"refresh_token": second_refresh})).await;
        r.assert_code(401, "unauthorized");

        // A refresh token that no longer works: exit 3, and the dead
        // session is dropped from the file.
        std::fs::write(cfg.join("credentials.json"), serde_json::to_vec(&stale).unwrap()).unwrap();
        gpuex(s, cfg, &["whoami"], "").await.fails(3, "expired");
        let (dropped, mode) = kept_credentials(cfg);
        assert_eq!(mode, 0o600);
        assert!(dropped["servers"][s].get("refresh_token").is_none(), "{dropped}");
    }

    async fn a_provider_deletes_a_node_and_an_admin_sets_a_role_from_the_cli(app) {
        fleet::market(&app).await;
        let (email, provider, provider_id) = account(&app, "provider").await;
        let node = create_node(&app, &provider, h100_node(1, "mig")).await;
        let config = tempfile::tempdir().unwrap();
        let cfg = config.path();
        let s = app.address.as_str();
        gpuex(s, cfg, &["login", "--email", &email, "--password-stdin"], PASSWORD).await.ok();
        let id = node.id.to_string();
        let listed = gpuex(s, cfg, &["nodes", "--output", "json"], "").await.json();
        assert_eq!(listed[0]["id"], id);
        gpuex(s, cfg, &["nodes", "delete", "not-a-uuid"], "").await.fails(4, "no such node");
        let deleted = gpuex(s, cfg, &["nodes", "delete", &id, "--output", "json"], "").await.json();
        assert_eq!(deleted, json!({"id": id, "deleted": true}));
        assert_eq!(gpuex(s, cfg, &["nodes", "--output", "json"], "").await.json(), json!([]));
        let r = app.post("/v1/agent/register", Some(&node.token), fleet::registration(&[("H100-SXM5-80GB", true)])).await;
        r.assert_code(401, "unauthorized");

        // The provider is no admin; the admin makes it a buyer.
        let user = provider_id.to_string();
        gpuex(s, cfg, &["admin", "set-role", &user, "buyer"], "").await.fails(3, "admin");
        let admin_cfg = tempfile::tempdir().unwrap();
        let acfg = admin_cfg.path();
        gpuex(s, acfg, &["login", "--email", crate::helpers::ADMIN_EMAIL, "--password-stdin"], crate::helpers::ADMIN_PASSWORD)
            .await
            .ok();
        gpuex(s, acfg, &["admin", "set-role", &user, "agent"], "").await.fails(6, "role");
        let account = gpuex(s, acfg, &["admin", "set-role", &user, "buyer", "--output", "json"], "").await.json();
        assert_eq!((&account["id"], &account["role"]), (&json!(user), &json!("buyer")));
        // The provider's key was bound to its old role.
        gpuex(s, cfg, &["nodes"], "").await.fails(3, "error: ");
    }
}

on_both_databases_fast! {
    async fn an_admin_marks_a_node_simulated_and_accepts_its_review_from_the_cli(app) {
        let m = fleet::market(&app).await;
        // Created straight through the API: not marked simulated.
        let r = app.post("/v1/nodes", Some(&m.provider), h100_node(2, "mig")).await;
        let node = fleet::Node {
            id: r.body["id"].as_str().unwrap().parse().unwrap(),
            token: r.body["token"].as_str().unwrap().to_owned(),
        };
        let id = node.id.to_string();
        let admin_cfg = tempfile::tempdir().unwrap();
        let (s, acfg) = (app.address.as_str(), admin_cfg.path());
        gpuex(s, acfg, &["login", "--email", crate::helpers::ADMIN_EMAIL, "--password-stdin"], crate::helpers::ADMIN_PASSWORD)
            .await
            .ok();
        gpuex(s, acfg, &["admin", "node", &id], "").await.fails(2, "--simulated");
        gpuex(s, acfg, &["admin", "node", "not-a-uuid", "--simulated"], "").await.fails(4, "no such node");
        let marked = gpuex(s, acfg, &["admin", "node", &id, "--simulated", "--output", "json"], "").await.json();
        assert_eq!((&marked["simulated"], &marked["under_review"]), (&json!(true), &json!(false)), "{marked}");
        // Its agent registers two GPUs, then comes back with one: under review.
        fleet::register(&app, &node, &[("H100-SXM5-80GB", true), ("H100-SXM5-80GB", true)]).await;
        fleet::register(&app, &node, &[("H100-SXM5-80GB", true)]).await;
        let listed = gpuex(s, acfg, &["nodes", "--output", "json"], "").await.json();
        assert_eq!(listed[0]["under_review"], true, "{listed}");
        let accepted = gpuex(s, acfg, &["admin", "node", &id, "--accept-review", "--output", "json"], "").await.json();
        assert_eq!((&accepted["under_review"], &accepted["cordoned"]), (&json!(false), &json!(false)), "{accepted}");
        let table = gpuex(s, acfg, &["admin", "node", &id, "--not-simulated"], "").await;
        table.ok();
        assert!(table.stdout.contains("simulated") && table.stdout.contains("false"), "{}", table.stdout);
    }
}

on_both_databases_fast! {
    async fn an_admin_lists_the_replicas_and_a_buyer_may_not(app) {
        let (admin_cfg, buyer_cfg) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let s = app.address.as_str();
        gpuex(s, admin_cfg.path(), &["login", "--email", crate::helpers::ADMIN_EMAIL, "--password-stdin"], crate::helpers::ADMIN_PASSWORD)
            .await
            .ok();
        let listed = gpuex(s, admin_cfg.path(), &["admin", "replicas", "--output", "json"], "").await.json();
        let list = listed.as_array().expect("a list");
        assert_eq!(list.len(), 1, "one process serves: {listed}");
        assert_eq!((&list[0]["role"], &list[0]["answering"], &list[0]["silent"]), (&json!("leader"), &json!(true), &json!(false)), "{listed}");
        let table = gpuex(s, admin_cfg.path(), &["admin", "replicas"], "").await;
        table.ok();
        assert!(table.stdout.contains("leader") && table.stdout.contains("applied_seq"), "{}", table.stdout);
        let (email, _, _) = account(&app, "buyer").await;
        gpuex(s, buyer_cfg.path(), &["login", "--email", &email, "--password-stdin"], PASSWORD).await.ok();
        gpuex(s, buyer_cfg.path(), &["admin", "replicas"], "").await.fails(3, "admin");
    }
}

on_both_databases_fast! {
    async fn gpuex_orders_units_together_and_waits_until_every_lease_runs(app) {
        let sim = SimMarket::start(&app).await;
        let email = &sim.buyer_email;
        let config = tempfile::tempdir().unwrap();
        let (s, cfg) = (app.address.as_str(), config.path());
        gpuex(s, cfg, &["login", "--email", email, "--password-stdin"], PASSWORD).await.ok();
        let slice = ["--mode", "on_demand", "--region", "eu-west", "--tflops", "100", "--vram-gb", "16"];
        let args = |head: &[&'static str], tail: &[&'static str]| [head, &slice[..], tail].concat();
        let q = gpuex(s, cfg, &args(&["quote"], &["--count", "2", "--output", "json"]), "").await.json();
        assert_eq!(q["units"]["placeable_now"], 2, "{q}");
        let text = gpuex(s, cfg, &args(&["quote"], &["--count", "2"]), "").await;
        assert!(text.ok().stdout.contains("2 of 2 units fit now"), "{}", text.stdout);
        let placed = gpuex(s, cfg, &args(&["order"], &[
            "--count", "2", "--time-in-force", "fok", "--command", WORKLOAD, "--wait", "--output", "json",
        ]), "").await.json();
        assert_eq!(placed["order"]["lease_ids"].as_array().unwrap().len(), 2, "{placed}");
        let leases = placed["leases"].as_array().unwrap();
        assert_eq!(leases.len(), 2, "{placed}");
        assert!(leases.iter().all(|l| l["state"] == "running"), "{placed}");
        assert_eq!(placed["lease"], leases[0]);
        // The table names every lease of the order.
        let order_id = placed["order"]["id"].as_str().unwrap();
        let shown = gpuex(s, cfg, &["orders", order_id], "").await;
        assert!(shown.ok().stdout.contains("leases"), "{}", shown.stdout);
        gpuex(s, cfg, &args(&["order"], &["--count", "65"]), "").await.fails(6, "count");
        gpuex(s, cfg, &args(&["order"], &["--time-in-force", "gtc", "--max-wait-s", "5"]), "").await.fails(2, "--max-wait-s");
        gpuex(s, cfg, &args(&["order"], &["--time-in-force", "later"]), "").await.fails(2, "--time-in-force");
    }
}
