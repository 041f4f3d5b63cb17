//! `gpuex admin node ID …`: an admin marks a node simulated (so its agent may
//! run the simulated backend) or ends a review (`PUT /v1/admin/nodes/{id}`);
//! `gpuex admin replicas` lists the replicas (`GET /v1/admin/replicas`).

use super::{kv_table, show, show_list, text, usage, Ctx, Result};
use clap::Args;
use reqwest::Method;
use serde_json::{Map, Value};

/// What to set on the node; at least one flag.
#[derive(Debug, Clone, Args)]
pub struct AdminNodeArgs {
    /// The node's id.
    pub id: String,
    /// Allow the node's agent the simulated backend (demo, tests, load tests).
    #[arg(long, conflicts_with = "not_simulated")]
    pub simulated: bool,
    /// Take that allowance back.
    #[arg(long)]
    pub not_simulated: bool,
    /// End the node's review: it takes new placements again.
    #[arg(long)]
    pub accept_review: bool,
}

pub async fn node(ctx: &Ctx, args: &AdminNodeArgs) -> Result<()> {
    let mut body = Map::new();
    if args.simulated || args.not_simulated {
        body.insert("simulated".into(), Value::Bool(args.simulated));
    }
    if args.accept_review {
        body.insert("review".into(), Value::String("accept".into()));
    }
    if body.is_empty() {
        return Err(usage(
            "say what to set: --simulated, --not-simulated or --accept-review",
        ));
    }
    let path = format!("/v1/admin/nodes/{}", args.id);
    let node = ctx
        .api
        .send(
            ctx.api
                .request(Method::PUT, &path)
                .json(&Value::Object(body)),
        )
        .await?;
    show(ctx, &node, |n| {
        kv_table(&[
            ("id", text(&n["id"])),
            ("name", text(&n["name"])),
            ("status", text(&n["status"])),
            ("cordoned", text(&n["cordoned"])),
            ("simulated", text(&n["simulated"])),
            ("under_review", text(&n["under_review"])),
            ("review_reason", text(&n["review_reason"])),
        ])
    });
    Ok(())
}

pub async fn replicas(ctx: &Ctx) -> Result<()> {
    let list = ctx.api.get("/v1/admin/replicas", &[]).await?;
    let items = list.as_array().cloned().unwrap_or_default();
    show_list(
        ctx,
        &items,
        &[
            "url",
            "role",
            "epoch",
            "applied_seq",
            "lag_ms",
            "seen_at",
            "silent",
            "answering",
        ],
    );
    Ok(())
}
