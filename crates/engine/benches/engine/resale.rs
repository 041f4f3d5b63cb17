//! A buyer's Place with 1,000 open resale listings against the same engine
//! without them.

use super::*;
use gpuex_engine::resale;

/// The listings' lease windows start here (a whole hour, past the lead time).
const LISTED_LEASES_START: Ts = (T0 / 3600 + 2) * 3600;
/// The measurement runs once every listing has begun (sellers keep a day).
const RESALE_NOW: Ts = LISTED_LEASES_START + 25 * 3600;
const LISTINGS: usize = 1000;

/// A measured order of the resale benchmark: on-demand open-ended (never
/// eligible), on-demand with a duration (takes a begun listing), reserved
/// (takes a listing whose window holds its own), a third each.
fn resale_order(rng: &mut Rng, kind: usize) -> OrderSpec {
    let mut s = order(rng);
    match kind {
        0 => {}
        1 => s.duration_s = Some(3600 * (1 + rng.below(24) as i64)),
        _ => {
            s.mode = Mode::Reserved;
            let first_hour = RESALE_NOW.div_euclid(3600) * 3600 + 2 * 3600;
            s.start_at = Some(first_hour + 3600 * rng.below(72) as i64);
            s.duration_s = Some(3600 * (1 + rng.below(24) as i64));
        }
    }
    s
}

/// Two engines identical but for `LISTINGS` open listings: the fleet at 80 %
/// of GPU compute with `LISTINGS` reserved leases among it, whose sellers
/// list all but the first day of each window in one of them. Both are at
/// `RESALE_NOW`, when every listing has begun.
fn resale_engines(rng: &mut Rng, next_id: &mut u128) -> (Engine, Engine) {
    let mut e = fleet_engine();
    let mut sellers = Vec::new();
    while sellers.len() < LISTINGS {
        *next_id += 1;
        let mut spec = order(rng);
        spec.mode = Mode::Reserved;
        spec.start_at = Some(LISTED_LEASES_START);
        spec.duration_s = Some(86_400 * (2 + rng.below(12) as i64));
        let seller = Uuid::from_u128(0x2000_0000 + sellers.len() as u128);
        let cmd = Command::Place(PlaceOrder {
            order_id: Uuid::from_u128(*next_id),
            buyer: seller,
            funds_available: Decimal::from(1_000_000_000),
            spec,
        });
        for x in e.apply(T0, cmd).unwrap() {
            if let Event::LeaseGranted { lease, .. } = x {
                sellers.push((seller, lease.id, lease.price_per_hour));
            }
        }
    }
    let reserved: f64 = e
        .leases()
        .map(|l| f64::from(l.placement.held_milli()))
        .sum();
    fill_from(&mut e, rng, 0.80, next_id, reserved);
    let mut listed = e.clone();
    for (i, (seller, lease_id, price)) in sellers.into_iter().enumerate() {
        // Asks from 60 % to 100 % of the cap (0.9 × the seller's price).
        let share = Decimal::new(60 + rng.below(41) as i64, 2);
        let ask = (price * resale::MAX_ASK_SHARE * share)
            .round_dp_with_strategy(6, rust_decimal::RoundingStrategy::ToZero);
        let cmd = Command::ListResale(ListResale {
            listing_id: Uuid::from_u128(0x7000_0000 + i as u128),
            lease_id,
            seller,
            from: LISTED_LEASES_START + 86_400,
            ask_per_hour: ask,
        });
        listed.apply(T0, cmd).unwrap();
    }
    e.apply(RESALE_NOW, Command::Tick).unwrap();
    listed.apply(RESALE_NOW, Command::Tick).unwrap();
    assert_eq!(listed.listings().count(), LISTINGS);
    (listed, e)
}

/// Places `spec` and times it; then releases what it got. Returns whether
/// it bought from a listing.
fn timed_place(e: &mut Engine, id: u128, spec: OrderSpec) -> (Duration, bool) {
    let t = Instant::now();
    let ev = e.apply(RESALE_NOW, place_cmd(id, spec)).unwrap();
    let took = t.elapsed();
    let mut resold = false;
    for x in ev {
        if let Event::LeaseGranted { lease, .. } = x {
            resold |= lease.resale.is_some();
            e.apply(RESALE_NOW, Command::Release { lease_id: lease.id })
                .unwrap();
        }
    }
    (took, resold)
}

/// Issue 17: what a buyer's Place costs with 1,000 open listings, against the
/// same engine without them, the same orders alternating between the two.
pub(super) fn bench_resale(_c: &mut Criterion) {
    if std::env::var_os("GPUEX_BENCH_SCALE_ONLY").is_some() {
        return;
    }
    let mut rng = Rng(0x51ed_270b_2769_4a1f);
    let mut next_id = 0x1_0000_0000u128;
    let (listed, plain) = resale_engines(&mut rng, &mut next_id);
    let held: u64 = plain
        .leases()
        .map(|l| u64::from(l.placement.held_milli()))
        .sum();
    let t = Instant::now();
    let (mut with, mut without) = (listed.clone(), plain.clone());
    let reset = t.elapsed();
    println!(
        "resale: 10000 GPUs, {} leases, {:.1} % of GPU compute held, {} open listings in one engine, none in the other; a reset (two clones) takes {reset:?}",
        plain.leases().count(),
        held as f64 / 100_000.0,
        with.listings().count(),
    );
    // Placement alone on the two views: listings are bookings like the
    // reserved leases they replace, so both views are the same.
    let policy = listed.config().policy;
    let mut placed: [Vec<Duration>; 2] = Default::default();
    for i in 0..3000 {
        let r = request_of(&listed, &order(&mut rng));
        for k in [i % 2, 1 - i % 2] {
            let e = [&listed, &plain][k];
            let t = Instant::now();
            let p = placement::place(e.view(), &r, e.demand_mix(), &policy);
            placed[k].push(t.elapsed());
            std::hint::black_box(p);
        }
    }
    let [w, n] = placed.map(percentiles);
    println!(
        "placement::place alone: with {LISTINGS} listings p50 {:?}, p99 {:?}; without p50 {:?}, p99 {:?}",
        w.0, w.1, n.0, n.1
    );

    // Sales use listings up (an on-demand sale leaves only the listing's
    // later part, which has not begun), so both engines go back to where
    // they started every `batch` rounds (`GPUEX_BENCH_RESALE_BATCH`, 60),
    // and the first fifth of each batch is not timed: a fresh copy starts
    // with cold caches.
    const ROUNDS: usize = 3000;
    let batch: usize = std::env::var("GPUEX_BENCH_RESALE_BATCH")
        .ok()
        .and_then(|b| b.parse().ok())
        .filter(|b| *b > 0)
        .unwrap_or(60);
    let warm_up = batch / 5;
    let mut samples: [[Vec<Duration>; 3]; 2] = Default::default();
    let mut resold = [0usize; 3];
    let mut fewest_listings = LISTINGS;
    let mut i = 0;
    while samples[0].iter().map(Vec::len).sum::<usize>() < ROUNDS {
        if i % batch == 0 {
            with.clone_from(&listed);
            without.clone_from(&plain);
        }
        let kind = i % 3;
        let spec = resale_order(&mut rng, kind);
        next_id += 1;
        // Alternate which engine goes first, so neither always runs on the
        // other's warm cache.
        let (a, b) = if i % 2 == 0 {
            let a = timed_place(&mut with, next_id, spec.clone());
            (a, timed_place(&mut without, next_id, spec))
        } else {
            let b = timed_place(&mut without, next_id, spec.clone());
            (timed_place(&mut with, next_id, spec), b)
        };
        if i % batch >= warm_up {
            samples[0][kind].push(a.0);
            samples[1][kind].push(b.0);
            resold[kind] += usize::from(a.1);
        }
        fewest_listings = fewest_listings.min(with.listings().count());
        i += 1;
    }
    println!("resale: never fewer than {fewest_listings} listings open");
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    let kinds = [
        "on-demand, open-ended",
        "on-demand with duration_s",
        "reserved",
    ];
    let mut all: [Vec<Duration>; 2] = Default::default();
    for k in 0..3 {
        let (w50, w99, wmax) = percentiles(samples[0][k].clone());
        let (n50, n99, nmax) = percentiles(samples[1][k].clone());
        println!(
            "Engine::apply(Place), {}: with {LISTINGS} listings p50 {:.1} µs, p90 {:.1} µs, p99 {:.1} µs, max {:.1} µs; without p50 {:.1} µs, p90 {:.1} µs, p99 {:.1} µs, max {:.1} µs; p99 ratio {:.2} ({} of {} bought from a listing)",
            kinds[k],
            micros(w50),
            micros(percentile(&mut samples[0][k], 0.9)),
            micros(w99),
            micros(wmax),
            micros(n50),
            micros(percentile(&mut samples[1][k], 0.9)),
            micros(n99),
            micros(nmax),
            micros(w99) / micros(n99),
            resold[k],
            samples[0][k].len(),
        );
        all[0].extend_from_slice(&samples[0][k]);
        all[1].extend_from_slice(&samples[1][k]);
    }
    let (w50, w99, _) = percentiles(all[0].clone());
    let (n50, n99, _) = percentiles(all[1].clone());
    println!(
        "Engine::apply(Place), the mix of {ROUNDS}: with {LISTINGS} listings p50 {:.1} µs, p99 {:.1} µs; without p50 {:.1} µs, p99 {:.1} µs; ratio p50 {:.2}, p99 {:.2} (target p99 ≤ 1.2)",
        micros(w50),
        micros(w99),
        micros(n50),
        micros(n99),
        micros(w50) / micros(n50),
        micros(w99) / micros(n99),
    );
}
