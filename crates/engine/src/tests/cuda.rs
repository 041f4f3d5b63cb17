//! `min_cuda`: an order lands only on a node whose driver supports that CUDA
//! version; a node that did not say is not chosen, and an order no node's
//! driver could ever run is refused as unsatisfiable, not left waiting.

use super::helpers::*;
use crate::placement::PartitionMode;
use crate::*;

fn a100_with_driver(n: u128, cuda: Option<&str>) -> NodeSpec {
    NodeSpec {
        cuda: cuda.and_then(|v| v.parse().ok()),
        ..node(n, "eu", &[(A100, PartitionMode::Whole)])
    }
}

fn needing(cuda: Option<&str>) -> OrderSpec {
    let mut res = whole_a100();
    res.min_cuda = cuda.and_then(|v| v.parse().ok());
    let mut s = spec(Mode::OnDemand, res);
    s.duration_s = Some(3600);
    s
}

#[test]
fn an_order_runs_only_where_the_driver_supports_its_cuda_version() {
    let mut e = engine_with(vec![
        a100_with_driver(1, Some("12.2")),
        a100_with_driver(2, None),
        a100_with_driver(3, Some("12.10")),
    ]);
    // 12.10 is above 12.4: versions compare as numbers.
    let lease = grant(&mut e, T0, place(1, needing(Some("12.4"))));
    assert_eq!(lease.node, node_id(3));
    // The only such node is taken: no capacity now, though some could hold it.
    let ev = run(&mut e, T0, place(2, needing(Some("12.4"))));
    assert_eq!(rejected(&ev), Some(RejectReason::NoCapacity));
    // No driver here runs CUDA 13: nothing ever could.
    let ev = run(&mut e, T0, place(3, needing(Some("13.0"))));
    assert_eq!(rejected(&ev), Some(RejectReason::UnsatisfiableResources));
    // 12.2 is enough for the node that says 12.2, not the one that said nothing.
    let lease = grant(&mut e, T0, place(4, needing(Some("12.2"))));
    assert_eq!(lease.node, node_id(1));
    let lease = grant(&mut e, T0, place(5, needing(None)));
    assert_eq!(lease.node, node_id(2));
}

#[test]
fn a_node_that_upgrades_its_driver_takes_the_orders_it_could_not() {
    let mut e = engine_with(vec![a100_with_driver(1, Some("12.2"))]);
    let mut waits = needing(Some("12.4"));
    waits.max_wait_s = Some(600);
    let ev = run(&mut e, T0, place(1, waits));
    assert!(granted(&ev).is_empty() && rejected(&ev).is_none(), "{ev:?}");
    let ev = run(
        &mut e,
        T0 + 60,
        Command::UpsertNode(a100_with_driver(1, Some("12.4"))),
    );
    let ev = if granted(&ev).is_empty() {
        run(&mut e, T0 + 60, Command::Tick)
    } else {
        ev
    };
    assert_eq!(granted(&ev).pop().map(|l| l.node), Some(node_id(1)));
}
