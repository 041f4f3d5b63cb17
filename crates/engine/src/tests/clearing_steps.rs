//! A spot clearing of more bids than one step tries goes on over several
//! ticks, with orders applied between its steps (ARCHITECTURE.md "What a
//! spot clearing remembers").

use rust_decimal::Decimal;
use rust_decimal_macros::dec;

use super::helpers::*;
use crate::placement::PartitionMode;
use crate::*;

/// Three whole A100s; clearings try two bids a step.
fn three_gpus_two_bids_a_step() -> Engine {
    let cfg = EngineConfig {
        clearing_step_bids: 2,
        ..EngineConfig::default()
    };
    let whole = [(A100, PartitionMode::Whole)];
    engine_configured(
        cfg,
        vec![
            node(1, "eu", &whole),
            node(2, "eu", &whole),
            node(3, "eu", &whole),
        ],
    )
}

fn bid(max_price: Decimal) -> OrderSpec {
    let mut s = spec(Mode::Spot, whole_a100());
    s.max_price = Some(max_price);
    s
}

fn cleared(ev: &[Event]) -> bool {
    ev.iter().any(|x| matches!(x, Event::AuctionCleared { .. }))
}

/// Four bids on three GPUs, highest first: 1.10, 1.05, 1.00, 0.95 per
/// hour (indexes 0.677, 0.647, 0.616, 0.585 of the 1.624 list value).
fn four_bids(e: &mut Engine) {
    for (n, price) in [
        (1, dec!(1.10)),
        (2, dec!(1.05)),
        (3, dec!(1.00)),
        (4, dec!(0.95)),
    ] {
        run(e, T0, place(n, bid(price)));
    }
}

#[test]
fn a_clearing_of_more_bids_than_a_step_goes_on_over_ticks_and_prices_every_winner_at_its_end() {
    let mut e = three_gpus_two_bids_a_step();
    four_bids(&mut e);
    // The first step tries the two highest bids and grants them at once.
    let first = run(&mut e, T0 + 10, Command::Tick);
    let won: Vec<_> = granted(&first).iter().map(|l| l.order_id).collect();
    assert_eq!(won, vec![order_id(1), order_id(2)]);
    assert!(!cleared(&first), "the clearing is not over");
    assert!(e.clearing_under_way());
    // An order between the steps takes the third GPU.
    let on_demand = run(
        &mut e,
        T0 + 10,
        place(9, spec(Mode::OnDemand, whole_a100())),
    );
    assert_eq!(granted(&on_demand).len(), 1);
    // The last step: both remaining bids find no room and set the index;
    // with none to displace, the next tick closes the clearing.
    let last = run(&mut e, T0 + 10, Command::Tick);
    assert!(granted(&last).is_empty());
    assert!(!cleared(&last), "displacements and the close come after");
    let close = run(&mut e, T0 + 10, Command::Tick);
    assert!(cleared(&close));
    assert!(!e.clearing_under_way());
    let index = e.clearing_index(A100, "eu").expect("cleared");
    assert_eq!(index, dec!(0.615764), "the highest losing index");
    // Every winner pays min(own index, clearing index), the first step's too.
    for n in [1, 2] {
        let lease = e
            .leases()
            .find(|l| l.order_id == order_id(n))
            .expect("a winner's lease");
        assert_eq!(lease.rule.multiplier(), index);
    }
}

#[test]
fn a_bid_cancelled_between_steps_is_not_tried() {
    let mut e = three_gpus_two_bids_a_step();
    four_bids(&mut e);
    run(&mut e, T0 + 10, Command::Tick);
    run(
        &mut e,
        T0 + 10,
        Command::Cancel {
            order_id: order_id(3),
        },
    );
    let last = run(&mut e, T0 + 10, Command::Tick);
    let won: Vec<_> = granted(&last).iter().map(|l| l.order_id).collect();
    assert_eq!(won, vec![order_id(4)], "the cancelled bid took nothing");
    run(&mut e, T0 + 10, Command::Tick);
    assert!(!e.clearing_under_way());
    // No bid lost for lack of room: the index is the floor.
    assert_eq!(e.clearing_index(A100, "eu"), Some(dec!(0.5)));
}

#[test]
fn an_engine_restored_between_steps_finishes_the_clearing_as_the_original() {
    let mut e = three_gpus_two_bids_a_step();
    four_bids(&mut e);
    run(&mut e, T0 + 10, Command::Tick);
    let snapshot = e.snapshot();
    assert!(
        snapshot.clearing_run.is_some(),
        "the snapshot keeps the run"
    );
    let mut restored =
        Engine::restore(*e.config(), snapshot).expect("restores with its clearing under way");
    let rest = [
        (T0 + 10, place(9, spec(Mode::OnDemand, whole_a100()))),
        (T0 + 10, Command::Tick),
        (T0 + 11, Command::Tick),
        (T0 + 12, Command::Tick),
    ];
    for (now, cmd) in rest {
        assert_eq!(restored.apply(now, cmd.clone()), e.apply(now, cmd));
    }
    assert!(!e.clearing_under_way());
    assert_eq!(restored.snapshot(), e.snapshot());
}

#[test]
fn a_higher_bid_that_found_no_room_displaces_a_lower_spot_lease_in_a_tick_of_its_own() {
    let mut e = three_gpus_two_bids_a_step();
    // Three low bids win the three GPUs in one clearing of two steps.
    for (n, price) in [(1, dec!(0.90)), (2, dec!(0.88)), (3, dec!(0.86))] {
        run(&mut e, T0, place(n, bid(price)));
    }
    let mut now = T0 + 10;
    let mut won = granted(&run(&mut e, now, Command::Tick)).len();
    while e.clearing_under_way() {
        won += granted(&run(&mut e, now, Command::Tick)).len();
    }
    assert_eq!(won, 3);
    // Then a higher bid and two lower ones find no room: after the
    // clearing's two steps of bids the higher one displaces the lowest
    // lease, in a tick of its own.
    run(&mut e, now, place(4, bid(dec!(1.20))));
    run(&mut e, now, place(5, bid(dec!(0.82))));
    run(&mut e, now, place(6, bid(dec!(0.82))));
    now += 10;
    let mut ticks = Vec::new();
    loop {
        ticks.push(run(&mut e, now, Command::Tick));
        if !e.clearing_under_way() {
            break;
        }
    }
    let displaced = ticks
        .iter()
        .position(|ev| ev.iter().any(|x| matches!(x, Event::PreemptNotice { .. })))
        .expect("a lower lease is given notice");
    assert_eq!(displaced, 2, "after the two steps of bids");
    let pending = granted(&ticks[displaced])
        .pop()
        .expect("the higher bid's lease");
    assert_eq!(pending.order_id, order_id(4));
    assert_eq!(pending.state, LeaseState::Pending);
}
