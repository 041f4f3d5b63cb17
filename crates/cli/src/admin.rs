//! `gpuex admin node ID …`: an admin marks a node simulated (so its agent may
//! run the simulated backend) or ends a review (`PUT /v1/admin/nodes/{id}`);
//! `gpuex admin replicas` lists the replicas (`GET /v1/admin/replicas`).

use super::render::cell;
use super::{kv_table, show, show_list, usage, Ctx, Result};
use clap::Args;
use gpuex_api::cluster::ReplicaView;
use gpuex_api::nodes::NodeSummary;
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
    show(ctx, &node, |n: &NodeSummary| {
        kv_table(&[
            ("id", cell(&n.id)),
            ("name", n.name.clone()),
            ("status", cell(&n.status)),
            ("cordoned", cell(&n.cordoned)),
            ("simulated", cell(&n.simulated)),
            ("under_review", cell(&n.under_review)),
            ("review_reason", cell(&n.review_reason)),
        ])
    })
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
        |r: &ReplicaView| {
            vec![
                r.url.clone(),
                r.role.clone(),
                cell(&r.epoch),
                cell(&r.applied_seq),
                cell(&r.lag_ms),
                cell(&r.seen_at),
                cell(&r.silent),
                cell(&r.answering),
            ]
        },
    )
}
