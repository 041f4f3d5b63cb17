//! Random charge, credit and release sequences against the ledger's invariants.

use super::*;

mod ledger_ties_out {
    //! Random sequences of leases (every mode), funds running out, releases
    //! and credits: postings sum to zero, no wallet goes negative, and the
    //! export's BilledCost sums exactly to the ledger's charges.
    use super::*;
    use gpuex::billing::ledger;
    use gpuex::billing::lines::Credit;
    use gpuex::engine::Mode;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Step {
        Lease {
            mode: usize,
            start_min: i64,
            minutes: i64,
            units: u32,
        },
        Credit {
            cents: u32,
        },
        TopUp {
            dollars: u32,
        },
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            4 => (0usize..4, 0i64..3000, 1i64..400, 1u32..500)
                .prop_map(|(mode, start_min, minutes, units)| Step::Lease { mode, start_min, minutes, units }),
            1 => (1u32..500).prop_map(|cents| Step::Credit { cents }),
            1 => (1u32..50).prop_map(|dollars| Step::TopUp { dollars }),
        ]
    }

    async fn run(steps: Vec<Step>, wallet: u32) {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::connect(&format!("sqlite://{}/p.db", dir.path().display()))
            .await
            .unwrap();
        db.migrate().await.unwrap();
        let buyer = scenario::user(&db, "b@p.test", gpuex::auth::Role::Buyer)
            .await
            .unwrap();
        let provider = scenario::user(&db, "p@p.test", gpuex::auth::Role::Provider)
            .await
            .unwrap();
        if wallet > 0 {
            scenario::fund(&db, buyer, Decimal::from(wallet))
                .await
                .unwrap();
        }
        for s in steps {
            match s {
                Step::Lease {
                    mode,
                    start_min,
                    minutes,
                    units,
                } => {
                    let mut spec = scenario::LeaseSpec::on_demand(
                        JAN_31 + start_min * 60 + 7,
                        JAN_31 + (start_min + minutes) * 60,
                    );
                    spec.mode = [Mode::OnDemand, Mode::Reserved, Mode::Spot, Mode::Pooled][mode];
                    spec.multiplier = [
                        Decimal::new(18, 1),
                        Decimal::new(85, 2),
                        Decimal::new(55, 2),
                        Decimal::ONE,
                    ][mode];
                    spec.tflops_units = Decimal::from(units);
                    let line_of_business = ["ads", "search"][mode % 2];
                    spec.tags = json!({ "business_line": line_of_business });
                    if spec.mode == Mode::Reserved {
                        // Released halfway: the rest is owed, unused.
                        spec.ended_at = Some((spec.from + spec.to) / 2);
                        spec.now = spec.ended_at;
                    }
                    let (_, outcome) = scenario::lease(&db, buyer, provider, &spec).await.unwrap();
                    assert!(outcome.billed_until <= spec.to);
                }
                Step::Credit { cents } => {
                    let credit = Credit {
                        buyer,
                        lease: None,
                        amount: Decimal::new(i64::from(cents), 2),
                        reason: "adjustment".into(),
                        period_start: JAN_31,
                        period_end: JAN_31 + 60,
                        tags_json: "{}".into(),
                    };
                    scenario::credit(&db, &credit, JAN_31).await.unwrap();
                }
                Step::TopUp { dollars } => scenario::fund(&db, buyer, Decimal::from(dollars))
                    .await
                    .unwrap(),
            }
            assert_eq!(ledger::trial_balance(&db).await.unwrap(), Decimal::ZERO);
            let b = ledger::balances(&db, buyer).await.unwrap();
            assert!(
                b.available >= Decimal::ZERO && b.held >= Decimal::ZERO,
                "{b:?}"
            );
        }
        let mut out = Vec::new();
        export::write_all(
            db.clone(),
            Scope::Buyer(buyer),
            0,
            i64::MAX / 4,
            Format::FocusCsv,
            "USD".into(),
            &mut out,
        )
        .await
        .unwrap();
        let rows = parse_csv(std::str::from_utf8(&out).unwrap());
        let billed: Decimal = rows.iter().map(|r| dec(r, "BilledCost").unwrap()).sum();
        let ledger_total = lines::ledger_total(&db, buyer, 0, i64::MAX / 4)
            .await
            .unwrap();
        assert_eq!(billed, ledger_total);
        // The ledger's own view: what left the buyer's holds for charges less credits.
        let held_out: Vec<gpuex::db::Money> = gpuex::db::dispatch!(db, pool => {
            sqlx::query_scalar(
                "SELECT p.amount FROM postings p JOIN journal_entries e ON e.id = p.entry_id \
                 WHERE (p.account = $1 AND e.kind = 'capture') OR (p.account = $2 AND e.kind = 'billing_credit')",
            )
            .bind(gpuex::billing::Account::Holds(buyer))
            .bind(gpuex::billing::Account::Wallet(buyer))
            .fetch_all(pool)
            .await
            .unwrap()
        });
        let ledger_charges: Decimal = -held_out.into_iter().map(|m| m.0).sum::<Decimal>();
        assert_eq!(billed, ledger_charges);
        db.close().await;
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]
        #[test]
        fn postings_balance_no_wallet_goes_negative_and_exports_equal_the_ledger(
            steps in proptest::collection::vec(step(), 1..12),
            wallet in 0u32..40,
        ) {
            tokio::runtime::Runtime::new().unwrap().block_on(run(steps, wallet));
        }
    }
}
