use super::*;

/// Runs `pods` (a pod CSV) with seed 1 on one node of `gpus` T4s.
fn simulate(
    gpus: u32,
    pods: &str,
    policy: PolicyName,
    load: f64,
    foresight: Foresight,
) -> Result<TimelineRun, SimulateError> {
    let nodes = format!("sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,{gpus},T4\n");
    let trace = Trace::parse(&nodes, pods).unwrap();
    run(&trace, &mut Shared::new(&trace), policy, 1, load, foresight)
}

#[test]
fn load_compresses_arrivals_until_demand_meets_capacity_times_load() {
    // Two 1-GPU tasks of 100 s arriving 1000 s apart on one GPU: demand
    // 200 GPU·s over 1000 s is 20 %; at load 1.0 the window shrinks to
    // 200 s, so the second task arrives at 200 and runs at once.
    let pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,creation_time,deletion_time\n\
        a,1,1,1,1000,,0,100\nb,1,1,1,1000,,1000,1100\n";
    let r = simulate(1, pods, PolicyName::BestFit, 1.0, Foresight::default()).unwrap();
    assert_eq!(r.wait_max_s, 0.0);
    // Over [0, 200]: busy 0..100 only (b starts at the horizon).
    assert!((r.mean_utilization - 50.0).abs() < 1e-9);
}

#[test]
fn a_task_waits_for_a_departure_then_runs_its_full_duration() {
    let pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,creation_time,deletion_time\n\
        a,1000,1,1,1000,,0,100\nb,1000,1,1,1000,,10,60\nc,1000,1,1,500,,300,400\n";
    let r = simulate(1, pods, PolicyName::BestFit, 0.0, Foresight::default()).unwrap();
    // b waits 90 s and then runs 50 s (100..150); c runs 300..400.
    assert_eq!(r.wait_max_s, 90.0);
    assert_eq!(r.wait_p50_s, 0.0);
    assert_eq!(r.completed_ratio, 100.0);
    // GPU-seconds: 100 (a) + 50 (b) + 50 (c) over 400 s of one GPU.
    assert!((r.mean_utilization - 100.0 * 200.0 / 400.0).abs() < 1e-9);
}

const QOS_PODS: &str =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,creation_time,deletion_time\n";

#[test]
fn an_on_demand_task_preempts_spot_which_starts_over_later() {
    let pods = format!("{QOS_PODS}a,1,1,1,1000,,BE,0,1000\nb,1,1,1,1000,,LS,10,110\n");
    let r = simulate(1, &pods, PolicyName::BestFit, 0.0, Foresight::default()).unwrap();
    assert_eq!(r.preemptions, 1);
    // b starts at once; a waits 10..110 and runs again from scratch,
    // past the horizon (1000): only b completes.
    assert_eq!(r.wait_max_s, 100.0);
    assert_eq!(r.wait_p50_s, 0.0);
    assert_eq!(r.completed_ratio, 50.0);
    // The GPU is never idle, but a's first 10 s were thrown away.
    assert!((r.mean_allocation - 100.0).abs() < 1e-9);
    assert!((r.mean_utilization - 99.0).abs() < 1e-9);
    assert_eq!(r.mean_whole_free, 0.0);
}

#[test]
fn spot_never_preempts_and_waits_instead() {
    let pods = format!(
        "{QOS_PODS}a,1,1,1,1000,,LS,0,100\nb,1,1,1,1000,,BE,10,60\nc,1,1,1,1000,,LS,300,400\n"
    );
    let r = simulate(1, &pods, PolicyName::Gpuex, 0.0, Foresight::default()).unwrap();
    assert_eq!(r.preemptions, 0);
    assert_eq!(r.wait_max_s, 90.0);
    // b runs 100..150 and c 300..400: the GPU is wholly free 150 of 400 s.
    assert!((r.mean_whole_free - 150.0 / 400.0).abs() < 1e-9);
}

#[test]
fn the_forecast_holds_back_from_spot_what_on_demand_keeps_asking_for() {
    // On-demand asks one GPU at the start of every minute for an hour
    // (30 s each); at 3601 a spot task asks for the second GPU.
    let mut pods = QOS_PODS.to_owned();
    for m in 0..=60 {
        pods.push_str(&format!(
            "od{m},1,1,1,1000,,LS,{},{}\n",
            m * 60,
            m * 60 + 30
        ));
    }
    pods.push_str("spot,1,1,1,1000,,BE,3601,3701\n");
    let plain = simulate(2, &pods, PolicyName::Gpuex, 0.0, Foresight::default()).unwrap();
    assert_eq!((plain.wait_max_s, plain.never_started), (0.0, 0));
    let forecast = Foresight {
        forecast: true,
        prediction: false,
    };
    let held = simulate(2, &pods, PolicyName::Gpuex, 0.0, forecast).unwrap();
    // Two notice minutes of one GPU each are expected: the idle GPU stays idle.
    assert_eq!(held.never_started, 1);
    assert_eq!(held.preemptions, 0);
}

#[test]
fn a_trace_without_times_is_refused() {
    let pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1,1,1,1000\n";
    assert!(simulate(1, pods, PolicyName::Random, 0.0, Foresight::default()).is_err());
}
