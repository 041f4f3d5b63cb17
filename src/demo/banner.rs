//! What the demo prints once everything runs: where to look and how to log in.

use super::{ADMIN, BUYER, PROVIDER};
use std::net::SocketAddr;
use std::path::Path;

/// The addresses, logins and commands to try.
pub(super) fn print_banner(
    addr: SocketAddr,
    data: &Path,
    leases: &[String],
    metrics_token: &str,
    launcher: &str,
) {
    println!();
    println!("gpuex demo is running at http://{addr}");
    println!("  dashboard: http://{addr}/   (sign in with a login below)");
    println!("  API docs:  http://{addr}/docs");
    println!("  metrics:   curl -H 'authorization: Bearer {metrics_token}' http://{addr}/metrics");
    println!();
    println!("  dashboard logins:");
    println!("  admin     {} / {}", ADMIN.0, ADMIN.1);
    println!("  provider  {} / {}", PROVIDER.0, PROVIDER.1);
    println!("  buyer     {} / {}", BUYER.0, BUYER.1);
    println!();
    for line in leases {
        println!("  {line}");
    }
    println!();
    println!(
        "  log in:  curl -s http://{addr}/v1/auth/login -H 'content-type: application/json' \\"
    );
    println!(
        "             -d '{{\"email\":\"{}\",\"password\":\"{}\"}}'",
        BUYER.0, BUYER.1
    );
    println!(
        "  then:    GET /v1/leases, GET /v1/leases/{{id}}/logs (Authorization: Bearer <token>)"
    );
    println!(
        "  live:    curl -N http://{addr}/v1/events/stream -H 'authorization: Bearer <token>'"
    );
    println!("  agents run workloads with {launcher}");
    println!(
        "  outputs: gpuex outputs LEASE [--get loss.csv] (or the lease's page in the dashboard)"
    );
    println!("  agents log to {}/demo-agent-N.log", data.display());
    println!();
    println!("Ctrl-C stops the agents and the server.");
}
