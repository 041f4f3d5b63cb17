//! An order's `env` reaches its workload only (ARCHITECTURE.md §19): names that make
//! the loader, libc, a shell or an interpreter run code (`LD_PRELOAD`,
//! `BASH_ENV`, `NODE_OPTIONS`, …) are refused at the door with a 422 naming
//! `env.NAME`, and nothing is held or placed for the refused order.

use crate::fleet::{self, create_node, h100_node, market, register};
use crate::helpers::on_both_databases;
use reqwest::StatusCode;
use serde_json::json;

on_both_databases! {
    async fn loader_and_runtime_hooks_in_an_orders_env_get_a_422_naming_the_variable(app) {
        let m = market(&app).await;
        let node = create_node(&app, &m.provider, h100_node(1, "mig")).await;
        register(&app, &node, &[("H100-SXM5-80GB", true)]).await;
        for name in [
            "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "GCONV_PATH",
            "GLIBC_TUNABLES", "MALLOC_CHECK_", "NLSPATH", "HOSTALIASES", "LOCALDOMAIN",
            "RES_OPTIONS", "IFS", "BASH_ENV", "ENV", "PROMPT_COMMAND", "PYTHONSTARTUP",
            "PERL5OPT", "NODE_OPTIONS",
        ] {
            let mut body = fleet::order("on_demand");
            body["env"] = json!({ name: "/tmp/buyer.so", "FINE": "yes" });
            let r = app.post("/v1/orders", Some(&m.buyer), body).await;
            r.assert_problem(422, Some(&format!("env.{name}")));
            let problem = r.body.to_string();
            assert!(!problem.contains("env.FINE"), "{name}: {problem}");
        }
        for (name, value) in [("1BAD", "x"), ("A-B", "x"), ("OK", "nul\u{0}inside")] {
            let mut body = fleet::order("on_demand");
            body["env"] = json!({ name: value });
            app.post("/v1/orders", Some(&m.buyer), body)
                .await
                .assert_problem(422, Some(&format!("env.{name}")));
        }
        // Nothing was held for any of them; an ordinary environment is taken.
        let wallet = app.get("/v1/wallet", Some(&m.buyer)).await;
        assert_eq!(wallet.body["held"], "0", "{}", wallet.body);
        let mut body = fleet::order("on_demand");
        body["env"] = json!({"HF_TOKEN": "secret", "PYTHONPATH": "/work/lib", "_x1": ""});
        let r = app.post("/v1/orders", Some(&m.buyer), body).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    }
}
