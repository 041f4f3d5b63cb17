//! The simulated backend keeps MIG placements as legal as real hardware does.

use super::fleet::FleetError;
use super::*;

const H100_MIG: &str = r#"
hostname = "sim"
[host]
cpu_milli = 32000
memory_mib = 262144
[[gpus]]
model = "H100-SXM5-80GB"
count = 2
mig = true
[[gpus]]
model = "L40S-48GB"
[nvlink]
pairs = [[0, 1]]
"#;

fn backend() -> SimulatedBackend {
    SimulatedBackend::new(Fleet::parse(H100_MIG).unwrap(), "sim".into())
}

#[test]
fn a_legal_placement_gets_a_mig_uuid() {
    let mut b = backend();
    let slice = b.create_mig(0, "3g.40gb", 4).unwrap();
    assert!(slice.uuid.starts_with("MIG-"));
    assert!(Uuid::parse_str(&slice.uuid[4..]).is_ok());
}

#[test]
fn a_start_the_profile_does_not_allow_is_rejected() {
    let mut b = backend();
    assert!(matches!(
        b.create_mig(0, "3g.40gb", 2),
        Err(BackendError::IllegalPlacement { start: 2, .. })
    ));
    assert!(matches!(
        b.create_mig(0, "1g.20gb", 1),
        Err(BackendError::IllegalPlacement { .. })
    ));
}

#[test]
fn overlapping_placements_are_rejected_until_the_first_is_destroyed() {
    let mut b = backend();
    let big = b.create_mig(0, "4g.40gb", 0).unwrap();
    assert!(matches!(
        b.create_mig(0, "2g.20gb", 2),
        Err(BackendError::Overlap { .. })
    ));
    b.create_mig(0, "3g.40gb", 4).unwrap();
    b.destroy_mig(0, &big).unwrap();
    b.create_mig(0, "2g.20gb", 2).unwrap();
}

#[test]
fn seven_1g_instances_fill_the_compute_slices() {
    let mut b = backend();
    for start in 0..7 {
        b.create_mig(0, "1g.10gb", start).unwrap();
    }
    let inv = b.inventory().unwrap();
    assert_eq!(inv.gpus[0].mig_instances.len(), 7);
}

#[test]
fn mig_is_refused_on_gpus_that_cannot_or_are_not_in_mig_mode() {
    let mut b = backend();
    assert_eq!(
        b.create_mig(2, "1g.10gb", 0),
        Err(BackendError::NotMigCapable(2))
    );
    assert!(matches!(
        b.create_mig(0, "1g.5gb", 0),
        Err(BackendError::UnknownProfile { .. })
    ));
    assert_eq!(
        b.create_mig(9, "1g.10gb", 0),
        Err(BackendError::NoSuchGpu(9))
    );
    let fleet = Fleet::parse(&H100_MIG.replace("mig = true", "mig = false")).unwrap();
    let mut off = SimulatedBackend::new(fleet, "sim".into());
    assert_eq!(
        off.create_mig(0, "1g.10gb", 0),
        Err(BackendError::MigDisabled(0))
    );
}

#[test]
fn destroying_an_unknown_instance_is_an_error() {
    let mut b = backend();
    let ghost = MigSlice {
        uuid: "MIG-nope".into(),
        gpu_instance_id: None,
        compute_instance_id: None,
    };
    assert!(matches!(
        b.destroy_mig(0, &ghost),
        Err(BackendError::NoSuchInstance { .. })
    ));
}

#[test]
fn inventory_names_catalog_models_nvlink_peers_and_stable_uuids() {
    let inv = backend().inventory().unwrap();
    assert_eq!(inv.gpus.len(), 3);
    assert_eq!(inv.gpus[0].model.as_deref(), Some("H100-SXM5-80GB"));
    assert_eq!(inv.gpus[0].nvlink_peers, vec![1]);
    assert_eq!(inv.gpus[2].nvlink_peers, Vec::<u32>::new());
    assert_eq!(inv.gpus[0].mig_mode, Some(MigMode::Enabled));
    assert_eq!(inv.gpus[2].mig_mode, None);
    assert_eq!(
        inv.gpus[0].uuid,
        backend().inventory().unwrap().gpus[0].uuid
    );
    assert_ne!(inv.gpus[0].uuid, inv.gpus[1].uuid);
}

#[test]
fn metrics_rise_with_the_work_assigned() {
    let mut b = backend();
    let idle = b.sample();
    assert!(
        idle[2].fields.present() >= 20,
        "{}",
        idle[2].fields.present()
    );
    assert_eq!(idle[2].fields.gpu_util, Some(0.0));
    b.set_load(&[SliceLoad {
        lease_id: Uuid::nil(),
        pid: Some(77),
        gpu: 2,
        mig_uuid: None,
        compute_share: 0.5,
        memory_mib: 10_000.0,
        busy: true,
    }]);
    let busy = b.sample();
    let util = busy[2].fields.gpu_util.unwrap();
    assert!((40.0..=55.0).contains(&util), "{util}");
    assert!(busy[2].fields.fb_used.unwrap() > idle[2].fields.fb_used.unwrap() + 8000.0);
    assert!(busy[2].fields.power_usage.unwrap() > idle[2].fields.power_usage.unwrap());
    assert_eq!(busy[2].fields.fan_speed, None, "SXM boards report no fan");
    assert_eq!(busy[2].processes[0].pid, 77);
    assert_eq!(busy[2].processes[0].lease_id, Some(Uuid::nil()));
}

#[test]
fn fleets_with_unknown_models_or_bad_links_are_refused() {
    assert!(matches!(
        Fleet::parse(&H100_MIG.replace("L40S-48GB", "GTX-1080")),
        Err(FleetError::UnknownModel(_))
    ));
    assert!(matches!(
        Fleet::parse(&H100_MIG.replace("[[0, 1]]", "[[0, 7]]")),
        Err(FleetError::BadNvlink(0, 7))
    ));
    assert!(matches!(
        Fleet::parse(&H100_MIG.replace("model = \"H100-SXM5-80GB\"", "model = \"V100-SXM2-32GB\"")),
        Err(FleetError::NotMigCapable(_))
    ));
}

#[test]
fn the_shipped_fleets_parse() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fleets");
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        Fleet::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        seen += 1;
    }
    assert!(seen >= 3);
}

#[test]
fn random_create_and_destroy_sequences_never_overlap_or_break_placement_rules() {
    let mut b = backend();
    let profiles = [
        "1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb",
    ];
    let layout = gpuex_wire::catalog::lookup("H100-SXM5-80GB")
        .unwrap()
        .mig
        .unwrap();
    let mut live: Vec<(MigSlice, &str, u8)> = Vec::new();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for _ in 0..3000 {
        if next() % 3 == 0 && !live.is_empty() {
            let i = (next() % live.len() as u64) as usize;
            let (slice, _, _) = live.swap_remove(i);
            b.destroy_mig(0, &slice).unwrap();
            continue;
        }
        let profile = profiles[(next() % 6) as usize];
        let start = (next() % 8) as u8;
        // The naive reference: legal start, and no memory slice taken twice.
        let p = layout.profile(profile).unwrap();
        let taken = live.iter().fold(0u8, |m, (_, name, s)| {
            m | layout.profile(name).unwrap().slice_mask(*s)
        });
        let compute: u8 = live
            .iter()
            .map(|(_, name, _)| layout.profile(name).unwrap().compute_slices)
            .sum();
        let fits = p.starts.contains(&start)
            && taken & p.slice_mask(start) == 0
            && compute + p.compute_slices <= 7;
        match b.create_mig(0, profile, start) {
            Ok(slice) => {
                assert!(fits, "{profile}@{start} accepted over {taken:08b}");
                live.push((slice, profile, start));
            }
            Err(e) => assert!(!fits, "{profile}@{start} refused over {taken:08b}: {e}"),
        }
    }
}
