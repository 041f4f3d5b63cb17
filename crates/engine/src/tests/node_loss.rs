//! A lost node's leases (ARCHITECTURE.md §7): re-placed where there is room, else
//! their orders wait again (`OrderRequeued`, `max_wait_s` from the loss)
//! and expire when it runs out. Never `filled` with nothing running.

use super::helpers::*;
use crate::placement::PartitionMode;
use crate::*;

fn requeued(ev: &[Event], order: uuid::Uuid) -> Option<Ts> {
    ev.iter().find_map(|x| match x {
        Event::OrderRequeued { order_id, at } if *order_id == order => Some(*at),
        _ => None,
    })
}

fn expired(ev: &[Event], order: uuid::Uuid) -> Option<Ts> {
    ev.iter().find_map(|x| match x {
        Event::OrderExpired { order_id, at } if *order_id == order => Some(*at),
        _ => None,
    })
}

fn waiting_on_demand(max_wait_s: Option<i64>) -> OrderSpec {
    let mut s = spec(Mode::OnDemand, whole_a100());
    s.duration_s = Some(3600);
    s.max_wait_s = max_wait_s;
    s
}

#[test]
fn a_lost_lease_with_no_room_elsewhere_waits_max_wait_from_the_loss_then_expires() {
    let mut e = engine_with(vec![node(1, "eu", &[(A100, PartitionMode::Whole)])]);
    let lease = grant(&mut e, T0, place(1, waiting_on_demand(Some(600))));
    // Lost long after the order was placed: the wait counts from the loss.
    let lost_at = T0 + 1000;
    let ev = run(&mut e, lost_at, Command::NodeLost { node: lease.node });
    assert_eq!(ended(&ev), vec![(lease.id, EndReason::NodeLost, lost_at)]);
    assert!(granted(&ev).is_empty());
    assert_eq!(requeued(&ev, lease.order_id), Some(lost_at));
    assert_eq!(expired(&ev, lease.order_id), None);
    let open = e
        .open_orders()
        .find(|o| o.id == lease.order_id)
        .expect("waiting");
    assert_eq!(open.deadline, Some(lost_at + 600));
    let ev = run(&mut e, lost_at + 599, Command::Tick);
    assert_eq!(expired(&ev, lease.order_id), None);
    let ev = run(&mut e, lost_at + 600, Command::Tick);
    assert_eq!(expired(&ev, lease.order_id), Some(lost_at + 600));
    assert!(e.open_orders().all(|o| o.id != lease.order_id));
}

#[test]
fn a_requeued_order_is_filled_for_the_rest_of_its_window_when_a_node_comes() {
    let mut e = engine_with(vec![node(1, "eu", &[(A100, PartitionMode::Whole)])]);
    let lease = grant(&mut e, T0, place(1, waiting_on_demand(Some(600))));
    run(&mut e, T0 + 100, Command::NodeLost { node: lease.node });
    let ev = run(
        &mut e,
        T0 + 200,
        Command::UpsertNode(node(2, "eu", &[(A100, PartitionMode::Whole)])),
    );
    let ev = if granted(&ev).is_empty() {
        run(&mut e, T0 + 200, Command::Tick)
    } else {
        ev
    };
    let again = granted(&ev).pop().expect("filled on the new node");
    // The next fill's id follows the lost lease's; it runs for what was
    // left of the order's duration when the node was lost.
    assert_eq!(again.id, lease_id(lease.order_id, 1));
    assert_eq!(again.ends_at, Some(T0 + 200 + 3500));
    assert!(e.open_orders().all(|o| o.id != lease.order_id));
}

#[test]
fn a_lost_lease_whose_order_may_not_wait_expires_at_once() {
    let mut e = engine_with(vec![node(1, "eu", &[(A100, PartitionMode::Whole)])]);
    let lease = grant(&mut e, T0, place(1, waiting_on_demand(None)));
    let ev = run(&mut e, T0 + 10, Command::NodeLost { node: lease.node });
    assert_eq!(requeued(&ev, lease.order_id), Some(T0 + 10));
    assert_eq!(expired(&ev, lease.order_id), Some(T0 + 10));
    assert!(e.open_orders().all(|o| o.id != lease.order_id));
}

#[test]
fn a_requeued_order_survives_a_restore() {
    let mut e = engine_with(vec![node(1, "eu", &[(A100, PartitionMode::Whole)])]);
    let lease = grant(&mut e, T0, place(1, waiting_on_demand(Some(600))));
    run(&mut e, T0 + 100, Command::NodeLost { node: lease.node });
    let mut back = Engine::restore(EngineConfig::default(), e.snapshot()).expect("restores");
    let ev = run(&mut back, T0 + 700, Command::Tick);
    assert_eq!(expired(&ev, lease.order_id), Some(T0 + 700));
}

/// One whole A100 in `zone`.
fn zoned(n: u128, zone: &str) -> NodeSpec {
    let mut spec = node(n, "eu", &[(A100, PartitionMode::Whole)]);
    spec.zone = Some(zone.to_owned());
    spec
}

fn pinned(n: u128) -> OrderSpec {
    let mut s = waiting_on_demand(Some(600));
    s.node = Some(node_id(n));
    s
}

#[test]
fn a_lost_lease_goes_to_another_zone_first_and_to_its_own_when_no_other_has_room() {
    // Node 2 shares the lost node's zone, node 3 is elsewhere. Without
    // zones the lease would go to node 2 (the placement's first choice).
    let mut e = engine_with(vec![zoned(1, "a"), zoned(2, "a"), zoned(3, "b")]);
    let lease = grant(&mut e, T0, place(1, pinned(1)));
    let ev = run(&mut e, T0 + 10, Command::NodeLost { node: node_id(1) });
    let again = granted(&ev).pop().expect("re-placed");
    assert_eq!(again.node, node_id(3), "another zone first");
    assert_eq!(again.id, lease_id(lease.order_id, 1));
    // The zone's other node was only benched for the round: it takes work again.
    let next = grant(&mut e, T0 + 20, place(2, waiting_on_demand(Some(600))));
    assert_eq!(next.node, node_id(2));

    // With zone b full, the next loss in zone a falls back to zone a.
    let mut e = engine_with(vec![zoned(1, "a"), zoned(2, "a"), zoned(3, "b")]);
    grant(&mut e, T0, place(1, pinned(1)));
    grant(&mut e, T0, place(2, pinned(3)));
    let ev = run(&mut e, T0 + 10, Command::NodeLost { node: node_id(1) });
    assert_eq!(granted(&ev).pop().expect("re-placed").node, node_id(2));
}

#[test]
fn another_zone_first_takes_free_room_only_and_never_preempts_for_it() {
    let mut e = engine_with(vec![zoned(1, "a"), zoned(2, "a"), zoned(3, "b")]);
    grant(&mut e, T0, place(1, pinned(1)));
    // Zone b's only GPU runs spot work, which an on-demand lease could preempt.
    let mut spot = spec(Mode::Spot, whole_a100());
    spot.node = Some(node_id(3));
    spot.max_price = Some(rust_decimal_macros::dec!(100));
    run(&mut e, T0, place(2, spot));
    run(&mut e, T0 + 10, Command::Tick);
    assert_eq!(
        e.leases().filter(|l| l.node == node_id(3)).count(),
        1,
        "spot runs on node 3"
    );
    let ev = run(&mut e, T0 + 20, Command::NodeLost { node: node_id(1) });
    assert_eq!(granted(&ev).pop().expect("re-placed").node, node_id(2));
    assert!(ended(&ev)
        .iter()
        .all(|(_, reason, _)| *reason == EndReason::NodeLost));
}
