//! Follow-the-sun (ARCHITECTURE.md §6): `region: any` prefers off-peak regions within
//! 5 % of the cheapest price, by each region's IANA zone at the engine's `now`;
//! a known region without capacity answers `no_capacity`.

use chrono::DateTime;
use rust_decimal::Decimal;
use rust_decimal_macros::dec;

use super::helpers::*;
use crate::placement::PartitionMode;
use crate::*;
use gpuex_wire::catalog::Unit;

fn at(s: &str) -> Ts {
    DateTime::parse_from_rfc3339(s).unwrap().timestamp()
}

/// `eu` (Europe/Berlin, list prices of [`prices`]) and a second region `other`
/// in `zone` whose TFLOPS price is `other_tflops_price`, one whole A100 each.
fn two_regions(zone: &str, other_tflops_price: Decimal, now: Ts) -> Engine {
    let mut e = engine_with(vec![node(1, "eu", &[(A100, PartitionMode::Whole)])]);
    run(
        &mut e,
        now,
        Command::SetRegion {
            name: "other".into(),
            timezone: zone.into(),
        },
    );
    run(&mut e, now, prices("other"));
    run(
        &mut e,
        now,
        Command::SetPrices(vec![ListPrice {
            region: "other".into(),
            gpu_model: A100.into(),
            unit: Unit::TflopsH,
            list_price: other_tflops_price,
        }]),
    );
    run(
        &mut e,
        now,
        Command::UpsertNode(node(2, "other", &[(A100, PartitionMode::Whole)])),
    );
    e
}

/// 0.0019 instead of 0.002 per TFLOPS-hour: a whole A100 (312 TFLOPS-hours
/// and 20 VRAM-hours an hour) lists at 1.5928 against 1.624, 1.9 % less.
const SLIGHTLY_CHEAPER: Decimal = dec!(0.0019);
/// 0.0017: 1.5304, 5.8 % less; eu is 6.1 % dearer, outside the band.
const CHEAPER_BEYOND_THE_BAND: Decimal = dec!(0.0017);

fn any_whole_a100() -> OrderSpec {
    spec(Mode::OnDemand, whole_a100())
}

fn explanation(e: &mut Engine, now: Ts, id: u128, s: OrderSpec) -> (Lease, String) {
    let ev = run(e, now, place(id, s));
    let lease = granted(&ev).pop().expect("a lease");
    let text = ev
        .iter()
        .find_map(|x| match x {
            Event::OrderFilled { report, .. } => Some(report.explanation.clone()),
            _ => None,
        })
        .expect("a fill report");
    (lease, text)
}

#[test]
fn within_five_percent_the_off_peak_region_wins_and_the_report_says_so() {
    // T0 is 22:13 UTC in November: 23:13 in Berlin (off-peak), 17:13 in New York.
    let mut e = two_regions("America/New_York", SLIGHTLY_CHEAPER, T0);
    let quote = e.quote(&any_whole_a100()).unwrap();
    assert_eq!(quote.region, "eu", "the quote makes the same choice");
    let (lease, text) = explanation(&mut e, T0, 1, any_whole_a100());
    assert_eq!(lease.region, "eu");
    assert!(lease.placement.why.offpeak);
    let cheaper = lease
        .placement
        .why
        .offpeak_over
        .expect("the slice passed over");
    let chosen = lease.placement.list_value.unwrap();
    assert!(cheaper < chosen && cheaper * dec!(1.05) >= chosen);
    assert_eq!(quote.placement.why.offpeak_over, Some(cheaper));
    assert!(
        text.contains("eu is off-peak (23:13 UTC+01:00 local)") && text.contains("follow-the-sun"),
        "{text}"
    );
    // Once eu is full, the cheaper region takes the next order, at peak or not.
    let (lease, text) = explanation(&mut e, T0, 2, any_whole_a100());
    assert_eq!(lease.region, "other");
    assert!(!lease.placement.why.offpeak);
    assert_eq!(lease.placement.why.offpeak_over, None);
    assert!(
        text.contains("other is at peak hours (17:13 UTC-05:00 local)"),
        "{text}"
    );
}

#[test]
fn beyond_five_percent_the_cheaper_region_wins_even_at_peak_hours() {
    let mut e = two_regions("America/New_York", CHEAPER_BEYOND_THE_BAND, T0);
    assert_eq!(e.quote(&any_whole_a100()).unwrap().region, "other");
    let (lease, text) = explanation(&mut e, T0, 1, any_whole_a100());
    assert_eq!(lease.region, "other");
    assert!(!lease.placement.why.offpeak);
    assert!(
        text.contains("no off-peak region had a slice within 5 %"),
        "{text}"
    );
}

#[test]
fn when_both_regions_are_off_peak_the_cheaper_one_wins() {
    // 03:13 UTC: 04:13 in Berlin, 22:13 in New York.
    let now = T0 + 5 * 3600;
    let mut e = two_regions("America/New_York", SLIGHTLY_CHEAPER, now);
    let (lease, _) = explanation(&mut e, now, 1, any_whole_a100());
    assert_eq!(lease.region, "other");
    assert!(lease.placement.why.offpeak);
    assert_eq!(lease.placement.why.offpeak_over, None);
}

#[test]
fn a_named_region_is_never_redirected_to_an_off_peak_one() {
    let mut e = two_regions("America/New_York", SLIGHTLY_CHEAPER, T0);
    let mut s = any_whole_a100();
    s.region = "other".into();
    let (lease, text) = explanation(&mut e, T0, 1, s);
    assert_eq!(lease.region, "other");
    assert!(
        text.ends_with("other is at peak hours (17:13 UTC-05:00 local)"),
        "{text}"
    );
}

#[test]
fn off_peak_hours_follow_berlin_across_daylight_saving_time() {
    // The same UTC time of day on either side of the last Sunday of March
    // (2026-03-29): 20:30 UTC is 21:30 CET (peak) the day before, 22:30 CEST
    // (off-peak) the day after. New York is 16:30 both days.
    let before = at("2026-03-28T20:30:00Z");
    let mut e = two_regions("America/New_York", SLIGHTLY_CHEAPER, before);
    assert_eq!(
        explanation(&mut e, before, 1, any_whole_a100()).0.region,
        "other"
    );
    let after = at("2026-03-29T20:30:00Z");
    let mut e = two_regions("America/New_York", SLIGHTLY_CHEAPER, after);
    let (lease, text) = explanation(&mut e, after, 1, any_whole_a100());
    assert_eq!(lease.region, "eu");
    assert!(text.contains("22:30 UTC+02:00"), "{text}");
    // And back on the last Sunday of October (2026-10-25): 06:30 UTC is
    // 08:30 CEST (peak) the day before, 07:30 CET (off-peak) that morning.
    // Tokyo is 15:30 both days.
    let before = at("2026-10-24T06:30:00Z");
    let mut e = two_regions("Asia/Tokyo", SLIGHTLY_CHEAPER, before);
    assert_eq!(
        explanation(&mut e, before, 1, any_whole_a100()).0.region,
        "other"
    );
    let after = at("2026-10-25T06:30:00Z");
    let mut e = two_regions("Asia/Tokyo", SLIGHTLY_CHEAPER, after);
    let (lease, text) = explanation(&mut e, after, 1, any_whole_a100());
    assert_eq!(lease.region, "eu");
    assert!(text.contains("07:30 UTC+01:00"), "{text}");
}

#[test]
fn a_running_engine_sees_off_peak_begin_without_a_new_region_command() {
    // 21:59 CET is peak; a minute later Berlin is off-peak.
    let now = at("2026-01-15T20:59:00Z");
    let mut e = two_regions("America/New_York", SLIGHTLY_CHEAPER, now);
    assert_eq!(e.quote(&any_whole_a100()).unwrap().region, "other");
    run(&mut e, now + 60, Command::Tick);
    assert_eq!(e.quote(&any_whole_a100()).unwrap().region, "eu");
    let (lease, _) = explanation(&mut e, now + 61, 1, any_whole_a100());
    assert_eq!(lease.region, "eu");
}

#[test]
fn a_restored_engine_keeps_the_zones_and_makes_the_same_choice() {
    let now = at("2026-03-29T20:30:00Z");
    let e = two_regions("America/New_York", SLIGHTLY_CHEAPER, now);
    let snap = e.snapshot();
    let zones: Vec<(&str, &str)> = snap
        .regions
        .iter()
        .map(|r| (r.name.as_str(), r.timezone.as_str()))
        .collect();
    assert_eq!(
        zones,
        [("eu", "Europe/Berlin"), ("other", "America/New_York")]
    );
    let mut restored = Engine::restore(EngineConfig::default(), snap).unwrap();
    let mut original = e;
    let a = explanation(&mut original, now + 5, 1, any_whole_a100());
    let b = explanation(&mut restored, now + 5, 1, any_whole_a100());
    assert_eq!(a, b);
    assert_eq!(a.0.region, "eu");
}

#[test]
fn a_known_region_without_nodes_answers_no_capacity() {
    let mut e = two_regions("America/New_York", SLIGHTLY_CHEAPER, T0);
    run(
        &mut e,
        T0,
        Command::SetRegion {
            name: "ap".into(),
            timezone: "Asia/Tokyo".into(),
        },
    );
    run(&mut e, T0, prices("ap"));
    for (id, mode) in [(1, Mode::OnDemand), (2, Mode::Pooled), (3, Mode::Spot)] {
        let mut s = spec(mode, whole_a100());
        s.region = "ap".into();
        s.max_price = Some(dec!(10));
        if mode == Mode::Pooled {
            s.resources = resources(dec!(100), 20);
        }
        assert_eq!(
            rejected(&run(&mut e, T0, place(id, s))),
            Some(RejectReason::NoCapacity),
            "{mode:?}"
        );
    }
    let mut s = spec(Mode::Reserved, whole_a100());
    s.region = "ap".into();
    s.start_at = Some(T0 + 7200);
    s.duration_s = Some(3600);
    assert_eq!(e.quote(&s), Err(RejectReason::NoCapacity));
    assert_eq!(
        rejected(&run(&mut e, T0, place(4, s))),
        Some(RejectReason::NoCapacity)
    );
}

#[test]
fn a_region_lacking_a_model_others_have_answers_no_capacity_and_nowhere_stays_unsatisfiable() {
    let mut e = two_regions("America/New_York", SLIGHTLY_CHEAPER, T0);
    run(
        &mut e,
        T0,
        Command::UpsertNode(node(3, "eu", &[(H100, PartitionMode::Whole)])),
    );
    let mut h100 = spec(Mode::OnDemand, resources(dec!(100), 40));
    h100.resources.gpu_model = Some(H100.into());
    h100.region = "other".into();
    assert_eq!(
        rejected(&run(&mut e, T0, place(1, h100.clone()))),
        Some(RejectReason::NoCapacity)
    );
    // Eight H100s on one node: no node of any region has them.
    h100.resources.gpus = Some(8);
    h100.resources.isolation = Isolation::Whole;
    for (id, region) in [(2, Some("eu")), (3, Some("other")), (4, None)] {
        let mut s = h100.clone();
        s.region = region.map(str::to_owned).into();
        assert_eq!(
            rejected(&run(&mut e, T0, place(id, s))),
            Some(RejectReason::UnsatisfiableResources),
            "{region:?}"
        );
    }
}
