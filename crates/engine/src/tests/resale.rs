//! Resale listings (ARCHITECTURE.md §6): listing a reserved tail, taking it, what is
//! left of it, cancelling, expiry, and restore.

use rust_decimal::Decimal;
use rust_decimal_macros::dec;
use uuid::Uuid;

use super::helpers::*;
use crate::placement::PartitionMode;
use crate::*;

const HOUR: Ts = 3600;
/// The first whole hour at least an hour after T0: reserved windows start here.
const START: Ts = (T0 / HOUR + 2) * HOUR;
const SELLER: u128 = 7;
const BUYER: u128 = 8;

fn one_gpu() -> Engine {
    engine_with(vec![node(1, "eu", &[(A100, PartitionMode::Whole)])])
}

fn reserved(start: Ts, hours: Ts) -> OrderSpec {
    let mut s = spec(Mode::Reserved, whole_a100());
    s.start_at = Some(start);
    s.duration_s = Some(hours * HOUR);
    s
}

fn place_by(buyer: u128, id: u128, spec: OrderSpec) -> Command {
    Command::Place(PlaceOrder {
        order_id: order_id(id),
        buyer: Uuid::from_u128(buyer),
        funds_available: dec!(1000000),
        spec,
    })
}

fn list(listing: u128, lease: &Lease, from: Ts, ask: Decimal) -> Command {
    Command::ListResale(ListResale {
        listing_id: Uuid::from_u128(listing),
        lease_id: lease.id,
        seller: Uuid::from_u128(SELLER),
        from,
        ask_per_hour: ask,
    })
}

fn refusal(e: &mut Engine, now: Ts, cmd: Command) -> Option<ListingRefusal> {
    match e.apply(now, cmd) {
        Err(EngineError::Listing(r)) => Some(r),
        _ => None,
    }
}

/// A seller's 4-hour reservation with its last 2 hours listed at 0.8 × its price.
fn listed() -> (Engine, Lease, Decimal) {
    let mut e = one_gpu();
    let seller = grant(&mut e, T0, place_by(SELLER, 1, reserved(START, 4)));
    let ask = seller.price_per_hour * dec!(0.8);
    run(&mut e, T0, list(100, &seller, START + 2 * HOUR, ask));
    (e, seller, ask)
}

#[test]
fn a_listed_tail_ends_the_sellers_lease_at_from_and_holds_the_slice() {
    let (mut e, seller, _) = listed();
    assert_eq!(
        e.lease(seller.id).unwrap().booked_until(),
        Some(START + 2 * HOUR)
    );
    assert_eq!(e.listings().count(), 1);
    // Primary capacity cannot sell the listed hours.
    let ev = run(
        &mut e,
        T0,
        place_by(BUYER, 2, reserved(START + 3 * HOUR, 1)),
    );
    let lease = granted(&ev).pop().expect("filled from the listing");
    assert!(lease.resale.is_some(), "only the listing holds those hours");
    let ev = run(&mut e, START + 2 * HOUR, Command::Tick);
    assert!(ended(&ev).contains(&(seller.id, EndReason::Listed, START + 2 * HOUR)));
}

#[test]
fn a_reserved_order_inside_a_listing_takes_it_at_the_ask_and_the_rest_stays_listed() {
    let (mut e, seller, ask) = listed();
    let ev = run(
        &mut e,
        T0,
        place_by(BUYER, 2, reserved(START + 2 * HOUR, 1)),
    );
    let lease = granted(&ev).pop().expect("a lease");
    assert_eq!(lease.node, seller.node);
    assert_eq!(lease.placement.gpus, seller.placement.gpus);
    assert!(lease.price_per_hour <= ask && ask - lease.price_per_hour < dec!(0.000001));
    let source = lease.resale.as_ref().expect("bought on resale");
    assert_eq!(source.seller, Uuid::from_u128(SELLER));
    assert_eq!(
        source.primary_price_per_hour, None,
        "the only GPU is listed"
    );
    let report = ev
        .iter()
        .find_map(|e| match e {
            Event::OrderFilled { report, .. } => Some(report.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(report.listing_id, Some(Uuid::from_u128(100)));
    assert!(ev
        .iter()
        .any(|e| matches!(e, Event::ListingSold { from, until, .. }
        if *from == START + 2 * HOUR && *until == START + 3 * HOUR)));
    // The last hour is listed again, as what remains of the first listing.
    let rest: Vec<&Listing> = e.listings().collect();
    assert_eq!(rest.len(), 1);
    assert_eq!(
        (rest[0].from, rest[0].until),
        (START + 3 * HOUR, START + 4 * HOUR)
    );
    assert_eq!(rest[0].parent, Some(Uuid::from_u128(100)));
}

#[test]
fn a_listing_is_cheaper_than_primary_capacity_of_the_same_slice() {
    let mut e = engine_with(vec![node(
        1,
        "eu",
        &[(A100, PartitionMode::Whole), (A100, PartitionMode::Whole)],
    )]);
    let seller = grant(&mut e, T0, place_by(SELLER, 1, reserved(START, 4)));
    run(
        &mut e,
        T0,
        list(
            100,
            &seller,
            START + 2 * HOUR,
            seller.price_per_hour * dec!(0.9),
        ),
    );
    // The quote shows the source before the buyer commits.
    let quote = e.quote(&reserved(START + 2 * HOUR, 2)).unwrap();
    assert_eq!(quote.source, events::Source::Resale);
    assert_eq!(quote.listing_id, Some(Uuid::from_u128(100)));
    assert_eq!(quote.primary_price_per_hour, Some(seller.price_per_hour));
    assert!(quote.price_per_hour < seller.price_per_hour);
    let ev = run(
        &mut e,
        T0,
        place_by(BUYER, 2, reserved(START + 2 * HOUR, 2)),
    );
    let lease = granted(&ev).pop().unwrap();
    let source = lease
        .resale
        .expect("the listing is cheaper than the idle GPU");
    assert_eq!(source.primary_price_per_hour, Some(seller.price_per_hour));
    assert_eq!(e.listings().count(), 0, "sold whole");
}

#[test]
fn the_cheapest_listing_that_covers_the_order_is_taken_and_equal_asks_go_by_id() {
    let gpus = [(A100, PartitionMode::Whole); 4];
    let mut e = engine_with(vec![node(1, "eu", &gpus)]);
    let sellers: Vec<Lease> = (1..=4)
        .map(|n| grant(&mut e, T0, place_by(SELLER, n, reserved(START, 6))))
        .collect();
    let p = sellers[0].price_per_hour;
    // The cheapest ends before the order does; two equal asks follow it.
    run(
        &mut e,
        T0,
        list(400, &sellers[0], START + 4 * HOUR, p * dec!(0.4)),
    );
    run(
        &mut e,
        T0,
        list(300, &sellers[1], START + 2 * HOUR, p * dec!(0.6)),
    );
    run(
        &mut e,
        T0,
        list(200, &sellers[2], START + 2 * HOUR, p * dec!(0.6)),
    );
    run(
        &mut e,
        T0,
        list(100, &sellers[3], START + 2 * HOUR, p * dec!(0.7)),
    );
    let order = reserved(START + 3 * HOUR, 2);
    let quote = e.quote(&order).unwrap();
    assert_eq!(quote.listing_id, Some(Uuid::from_u128(200)));
    let lease = granted(&run(&mut e, T0, place_by(BUYER, 9, order)))
        .pop()
        .unwrap();
    let source = lease.resale.expect("bought on resale");
    assert_eq!(source.listing_id, Uuid::from_u128(200));
    assert_eq!(source.primary_price_per_hour, None, "every GPU is listed");
    // What is left of 200 either side is listed again; the others are untouched.
    let open: Vec<(Uuid, Ts, Ts)> = e.listings().map(|l| (l.id, l.from, l.until)).collect();
    assert_eq!(open.len(), 5);
    for id in [100, 300, 400] {
        assert!(open.iter().any(|l| l.0 == Uuid::from_u128(id)));
    }
    assert_eq!(e.validate(), Ok(()));
}

#[test]
fn an_on_demand_order_with_a_duration_takes_a_listing_once_it_has_begun() {
    let (mut e, _, _) = listed();
    let mut od = spec(Mode::OnDemand, whole_a100());
    od.duration_s = Some(HOUR);
    // Before `from`, the listed hours are not yet free to run on.
    assert_eq!(
        rejected(&run(&mut e, START + HOUR, place_by(BUYER, 2, od.clone()))),
        Some(RejectReason::NoCapacity)
    );
    let ev = run(&mut e, START + 2 * HOUR + 60, place_by(BUYER, 3, od));
    let lease = granted(&ev).pop().expect("filled from the listing");
    assert!(lease.resale.is_some());
    assert_eq!(lease.state, LeaseState::Provisioning);
    // Less than an hour would remain after it: withdrawn, not listed.
    assert_eq!(e.listings().count(), 0);
}

#[test]
fn listing_refusals_name_the_rule() {
    let mut e = one_gpu();
    let seller = grant(&mut e, T0, place_by(SELLER, 1, reserved(START, 4)));
    let price = seller.price_per_hour;
    let at = START + 2 * HOUR;
    assert_eq!(
        refusal(&mut e, T0, list(100, &seller, at, price * dec!(0.91))),
        Some(ListingRefusal::AskTooHigh {
            cap: price * dec!(0.9)
        })
    );
    assert_eq!(
        refusal(&mut e, T0, list(100, &seller, at + 1, price / dec!(2))),
        Some(ListingRefusal::OutsideWindow)
    );
    assert_eq!(
        refusal(
            &mut e,
            T0,
            list(100, &seller, START + 4 * HOUR, price / dec!(2))
        ),
        Some(ListingRefusal::OutsideWindow)
    );
    assert_eq!(
        refusal(
            &mut e.clone(),
            at - 60,
            list(100, &seller, at, price / dec!(2))
        ),
        Some(ListingRefusal::TooSoon { notice_s: 120 })
    );
    let not_mine = Command::ListResale(ListResale {
        listing_id: Uuid::from_u128(100),
        lease_id: seller.id,
        seller: Uuid::from_u128(BUYER),
        from: at,
        ask_per_hour: price / dec!(2),
    });
    assert_eq!(
        refusal(&mut e, T0, not_mine),
        Some(ListingRefusal::NotHolder)
    );
    run(&mut e, T0, list(100, &seller, at, price / dec!(2)));
    assert_eq!(
        refusal(&mut e, T0, list(101, &seller, at + HOUR, price / dec!(2))),
        Some(ListingRefusal::AlreadyListed)
    );
    // The buyer of a listed part cannot list it again.
    let bought = grant(&mut e, T0, place_by(BUYER, 2, reserved(at, 2)));
    let relist = Command::ListResale(ListResale {
        listing_id: Uuid::from_u128(102),
        lease_id: bought.id,
        seller: Uuid::from_u128(BUYER),
        from: at + HOUR,
        ask_per_hour: dec!(0.01),
    });
    assert_eq!(refusal(&mut e, T0, relist), Some(ListingRefusal::Resold));
    e.validate().unwrap();
}

#[test]
fn an_on_demand_lease_cannot_be_listed() {
    let mut e = one_gpu();
    let od = grant(
        &mut e,
        T0,
        place_by(SELLER, 1, spec(Mode::OnDemand, whole_a100())),
    );
    assert_eq!(
        refusal(&mut e, T0, list(100, &od, START, dec!(1))),
        Some(ListingRefusal::NotReserved)
    );
}

#[test]
fn cancelling_in_time_gives_the_seller_its_window_back_and_too_late_is_refused() {
    let (mut e, seller, _) = listed();
    let cancel = |seller_id: u128| Command::CancelListing {
        listing_id: Uuid::from_u128(100),
        seller: Uuid::from_u128(seller_id),
    };
    assert_eq!(
        refusal(&mut e, T0, cancel(BUYER)),
        Some(ListingRefusal::UnknownListing)
    );
    let late = START + 2 * HOUR - 60;
    let mut too_late = e.clone();
    assert_eq!(
        refusal(&mut too_late, late, cancel(SELLER)),
        Some(ListingRefusal::TooLateToCancel { notice_s: 120 })
    );
    let ev = run(&mut e, T0, cancel(SELLER));
    assert!(ev.iter().any(|e| matches!(
        e,
        Event::ListingClosed {
            end: ListingEnd::Cancelled,
            ..
        }
    )));
    let lease = e.lease(seller.id).unwrap();
    assert_eq!(lease.vacate_at, None);
    assert_eq!(lease.booked_until(), Some(START + 4 * HOUR));
    assert_eq!(e.listings().count(), 0);
}

#[test]
fn an_unsold_listing_expires_at_its_end_and_its_slice_returns_to_the_market() {
    let (mut e, _, _) = listed();
    let ev = run(&mut e, START + 4 * HOUR, Command::Tick);
    assert!(ev.iter().any(
        |e| matches!(e, Event::ListingClosed { end: ListingEnd::Expired, at, .. }
        if *at == START + 4 * HOUR)
    ));
    assert_eq!(e.listings().count(), 0);
    grant(
        &mut e,
        START + 4 * HOUR,
        place(9, spec(Mode::OnDemand, whole_a100())),
    );
}

#[test]
fn a_lost_node_withdraws_its_listings() {
    let (mut e, _, _) = listed();
    let ev = run(&mut e, T0, Command::NodeLost { node: node_id(1) });
    assert!(ev.iter().any(|e| matches!(
        e,
        Event::ListingClosed {
            end: ListingEnd::Withdrawn,
            ..
        }
    )));
    assert_eq!(e.listings().count(), 0);
}

#[test]
fn an_engine_restored_with_open_listings_carries_on_the_same() {
    let (e, _, _) = listed();
    let mut restored = Engine::restore(EngineConfig::default(), e.snapshot()).unwrap();
    let mut original = e;
    assert_eq!(restored.snapshot(), original.snapshot());
    let order = place_by(BUYER, 2, reserved(START + 2 * HOUR, 1));
    assert_eq!(
        restored.apply(T0 + 10, order.clone()).unwrap(),
        original.apply(T0 + 10, order).unwrap()
    );
}

#[test]
fn a_lease_bought_on_resale_converts_inside_the_sellers_window_at_the_ask_and_never_past_it() {
    let mut e = one_gpu();
    let seller = grant(&mut e, T0, place_by(SELLER, 1, reserved(START, 6)));
    let ask = seller.price_per_hour * dec!(0.8);
    run(&mut e, T0, list(100, &seller, START + HOUR, ask));
    let window_end = START + 6 * HOUR;
    // Bought up to a minute before the window ends: that minute is too short
    // to stay listed, so nothing books the slice after the buyer's lease.
    let now = START + HOUR + 60;
    let mut od = spec(Mode::OnDemand, whole_a100());
    od.duration_s = Some(window_end - 60 - now);
    let bought = grant(&mut e, now, place_by(BUYER, 2, od));
    assert_eq!(
        bought.resale.as_ref().and_then(|r| r.window_until),
        Some(window_end)
    );
    provisioned(&mut e, now + 1, bought.id);
    let convert = |from, until| Command::Convert {
        lease_id: bought.id,
        to: ConvertTo::Reserved { from, until },
        funds_available: dec!(1000000),
    };
    // Past the seller's window: the provider was never paid for that time.
    match e.apply(now + 2, convert(START + 3 * HOUR, window_end + HOUR)) {
        Err(EngineError::Conversion(r)) => assert_eq!(r, ConversionRefused::ResaleWindow),
        other => panic!("not refused: {other:?}"),
    }
    assert_eq!(e.lease(bought.id).unwrap().ends_at, bought.ends_at);
    // Up to its end: allowed, and the lease keeps paying the ask.
    run(&mut e, now + 2, convert(START + 3 * HOUR, window_end));
    let converted = e.lease(bought.id).unwrap().clone();
    assert_eq!(converted.ends_at, Some(window_end));
    assert_eq!(
        converted.conversions[0].price_per_hour_after,
        bought.price_per_hour
    );
    run(&mut e, START + 3 * HOUR, Command::Tick);
    let reserved = e.lease(bought.id).unwrap();
    assert_eq!(reserved.mode, Mode::Reserved);
    assert_eq!(reserved.price_per_hour, bought.price_per_hour);
    assert_eq!(reserved.unit_prices, bought.unit_prices);
    assert!(reserved.resale.is_some());
}
