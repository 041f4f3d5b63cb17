//! A lost node's leases (DESIGN §7): re-placed where there is room, else
//! their orders wait again (`OrderRequeued`, `max_wait_s` from the loss)
//! and expire when it runs out. Never `filled` with nothing running.

use super::helpers::*;
use crate::engine::placement::PartitionMode;
use crate::engine::*;

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
