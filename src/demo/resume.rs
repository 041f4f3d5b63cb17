//! The resume scene: a while after the demo starts, the machine running the
//! training job is lost (its agent is killed outright). The server declares
//! the node lost, places the order again, and the new lease starts from the
//! job's last checkpoint: the epochs go on instead of starting over. Then
//! the machine comes back.

use super::agents::Fleet;
use super::http::Client;
use anyhow::{bail, Context};
use serde_json::Value;
use std::time::{Duration, Instant};

/// The last epoch a training log shows.
fn last_epoch(tail: &str) -> Option<u64> {
    tail.lines()
        .rev()
        .find_map(|l| l.strip_prefix("epoch ")?.split('/').next()?.parse().ok())
}

/// The epoch a resumed training log says it went on from.
fn resumed_from(tail: &str) -> Option<u64> {
    tail.lines()
        .find_map(|l| l.strip_prefix("resuming from epoch ")?.trim().parse().ok())
}

async fn get(client: &Client, token: &str, path: &str) -> anyhow::Result<Value> {
    client.ok("GET", path, Some(token), None).await
}

/// Plays the scene for the training `order` and says what happened.
/// `node_ids` are the demo's nodes in their [`super::NODES`] order.
pub async fn play(
    client: &Client,
    buyer: &str,
    provider: &str,
    order: &str,
    node_ids: &[String],
    fleet: &mut Fleet,
) -> anyhow::Result<Vec<String>> {
    let first = get(client, buyer, &format!("/v1/orders/{order}")).await?;
    let lease_id = first["lease_id"]
        .as_str()
        .context("the training order has no lease")?;
    let lease = get(client, buyer, &format!("/v1/leases/{lease_id}")).await?;
    let node = lease["node_id"].as_str().unwrap_or("");
    let n = node_ids
        .iter()
        .position(|id| id == node)
        .context("the training lease is on no demo node")?;
    let logs = get(client, buyer, &format!("/v1/leases/{lease_id}/logs")).await?;
    let at = last_epoch(logs["tail"].as_str().unwrap_or("")).unwrap_or(0);
    let lost = super::NODES[n].0;
    let mut lines = vec![format!(
        "resume scene: node {lost} is stopped (its agent killed); its training log last showed epoch {at} …"
    )];
    println!("  {}", lines[0]);
    fleet.kill(n).await;
    let deadline = Instant::now() + Duration::from_secs(180);
    let (next, from) = loop {
        if Instant::now() > deadline {
            fleet.start(n)?;
            bail!("the training order was not resumed within 3 minutes");
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        let order = get(client, buyer, &format!("/v1/orders/{order}")).await?;
        let Some(next) = order["lease_id"].as_str().filter(|l| *l != lease_id) else {
            continue;
        };
        let logs = get(client, buyer, &format!("/v1/leases/{next}/logs")).await?;
        if let Some(from) = resumed_from(logs["tail"].as_str().unwrap_or("")) {
            break (next.to_owned(), from);
        }
    };
    let lease = get(client, buyer, &format!("/v1/leases/{next}")).await?;
    let on = node_ids
        .iter()
        .position(|id| lease["node_id"].as_str() == Some(id.as_str()))
        .map_or("another node", |i| super::NODES[i].0);
    lines.push(format!(
        "resume scene: node {lost} was declared lost; training resumed on {on} from epoch {from} \
         (lease {next}; GET /v1/orders/{order} lists both attempts)"
    ));
    fleet.start(n)?;
    // Back means registered again: its agent has cleaned up after the
    // killed one (containers, lease disks) and serves again.
    super::wait_online(client, provider, super::NODES.len()).await?;
    lines.push(format!("resume scene: node {lost} is back"));
    for line in &lines[1..] {
        println!("  {line}");
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scene_reads_the_epochs_from_the_training_log() {
        let tail =
            "resuming from epoch 17\nepoch 18/100000 loss=0.055\nepoch 19/100000 loss=0.052\n";
        assert_eq!(resumed_from(tail), Some(17));
        assert_eq!(last_epoch(tail), Some(19));
        assert_eq!(last_epoch("starting from epoch 0 on GPU-1\n"), None);
    }
}
