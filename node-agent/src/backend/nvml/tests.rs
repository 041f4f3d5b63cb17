//! The NVML backend against a fake driver, including "not supported" answers.

use super::fake::{FakeGpu, FakeNvml};
use super::*;

fn backend(gpus: Vec<FakeGpu>) -> NvmlBackend<FakeNvml> {
    NvmlBackend::with_api(FakeNvml::new(gpus), "node-1".into())
}

#[test]
fn inventory_maps_driver_names_to_catalog_models() {
    let mut b = backend(vec![FakeGpu::h100(0)]);
    let inv = b.inventory().unwrap();
    let gpu = &inv.gpus[0];
    assert_eq!(gpu.model.as_deref(), Some("H100-SXM5-80GB"));
    assert_eq!(gpu.product_name, "NVIDIA H100 80GB HBM3");
    assert_eq!(gpu.memory_mib, 81_559);
    assert!(gpu.mig_capable);
    assert_eq!(gpu.mig_mode, Some(MigMode::Disabled));
    assert_eq!(gpu.driver_version, "550.54.15");
    assert_eq!(gpu.cuda_version, "12.4");
    assert_eq!(inv.hostname, "node-1");
}

#[test]
fn catalog_mapping_tells_memory_sizes_and_variants_apart() {
    assert_eq!(
        catalog_model_for("NVIDIA H200", 143_771),
        Some("H200-SXM-141GB")
    );
    assert_eq!(
        catalog_model_for("NVIDIA A100-SXM4-40GB", 40_960),
        Some("A100-SXM4-40GB")
    );
    assert_eq!(
        catalog_model_for("NVIDIA A100-SXM4-80GB", 81_920),
        Some("A100-SXM4-80GB")
    );
    assert_eq!(
        catalog_model_for("Tesla V100-SXM2-32GB", 32_768),
        Some("V100-SXM2-32GB")
    );
    assert_eq!(catalog_model_for("NVIDIA L40S", 46_068), Some("L40S-48GB"));
    assert_eq!(catalog_model_for("NVIDIA H100 PCIe", 81_559), None);
    assert_eq!(catalog_model_for("NVIDIA GeForce RTX 4090", 24_564), None);
}

#[test]
fn nvlink_peers_are_found_by_the_remote_bus_id() {
    let mut a = FakeGpu::h100(0);
    let mut b = FakeGpu::h100(1);
    // NVML writes the remote domain with four digits here.
    a.nvlinks = Some(vec!["0000:19:00.0".into(), "0000:19:00.0".into()]);
    b.nvlinks = Some(vec!["00000000:18:00.0".into()]);
    let mut c = FakeGpu::h100(2);
    c.nvlinks = None;
    let inv = backend(vec![a, b, c]).inventory().unwrap();
    assert_eq!(inv.gpus[0].nvlink_peers, vec![1]);
    assert_eq!(inv.gpus[1].nvlink_peers, vec![0]);
    assert_eq!(inv.gpus[2].nvlink_peers, Vec::<u32>::new());
}

#[test]
fn a_gpu_without_mig_support_is_not_mig_capable() {
    let mut gpu = FakeGpu::h100(0);
    gpu.name = "NVIDIA L40S".into();
    gpu.mig = None;
    let mut b = backend(vec![gpu]);
    let inv = b.inventory().unwrap();
    assert!(!inv.gpus[0].mig_capable);
    assert_eq!(inv.gpus[0].mig_mode, None);
    assert_eq!(
        b.create_mig(0, "1g.10gb", 0),
        Err(BackendError::NotMigCapable(0))
    );
}

#[test]
fn a_full_sample_has_at_least_twenty_dcgm_fields() {
    let mut b = backend(vec![FakeGpu::h100(0)]);
    let sample = b.sample();
    let f = &sample[0].fields;
    assert!(f.present() >= 20, "{}", f.present());
    assert_eq!(f.gpu_util, Some(37.0));
    assert_eq!(f.power_usage, Some(123.456));
    assert_eq!(f.fb_total, Some(81_559.0));
    assert_eq!(f.nvlink_bandwidth, Some(4000.0));
    assert_eq!(f.fan_speed, None, "the fake answers NotSupported for fans");
    assert_eq!(sample[0].processes[0].pid, 4242);
    assert_eq!(sample[0].processes[0].used_memory_mib, Some(1024.0));
    assert_eq!(sample[0].processes[0].sm_util, Some(63.0));
}

#[test]
fn not_supported_answers_leave_fields_absent_instead_of_failing() {
    let mut gpu = FakeGpu::h100(0);
    gpu.full_telemetry = false;
    let mut b = backend(vec![gpu]);
    let sample = b.sample();
    let f = &sample[0].fields;
    assert_eq!(f.power_usage, None);
    assert_eq!(f.memory_temp, None);
    assert_eq!(f.ecc_dbe_volatile, None);
    assert_eq!(f.nvlink_bandwidth, None);
    assert_eq!(f.compute_processes, None);
    assert_eq!(f.gpu_util, Some(37.0), "supported fields are still there");
    let json = serde_json::to_value(f).unwrap();
    assert!(json.get("DCGM_FI_DEV_POWER_USAGE").is_none());
}

#[test]
fn a_missing_library_means_no_gpus_not_a_panic() {
    let mut b = NvmlBackend::with_api(FakeNvml::missing(), "node".into());
    assert!(b.inventory().unwrap().gpus.is_empty());
    assert!(b.sample().is_empty());
    assert_eq!(
        b.create_mig(0, "1g.10gb", 0),
        Err(BackendError::NoSuchGpu(0))
    );
}

#[test]
fn mig_creation_checks_the_catalog_placement_then_finds_the_new_uuid() {
    let mut gpu = FakeGpu::h100(0);
    gpu.mig = Some((true, true));
    let mut b = backend(vec![gpu]);
    assert!(matches!(
        b.create_mig(0, "3g.40gb", 2),
        Err(BackendError::IllegalPlacement { .. })
    ));
    assert!(
        b.api.created.is_empty(),
        "an illegal placement never reaches the driver"
    );
    let slice = b.create_mig(0, "3g.40gb", 4).unwrap();
    assert!(slice.uuid.starts_with("MIG-"));
    assert_eq!(b.api.created, vec![(0, "3g.40gb".to_string(), 4)]);
    b.destroy_mig(0, &slice).unwrap();
    assert_eq!(b.api.destroyed, vec![(0, 1, 0)]);
}

#[test]
fn mig_creation_is_refused_when_mig_mode_is_off() {
    let mut b = backend(vec![FakeGpu::h100(0)]);
    assert_eq!(
        b.create_mig(0, "1g.10gb", 0),
        Err(BackendError::MigDisabled(0))
    );
}

#[test]
fn nvidia_smi_output_yields_the_instance_ids() {
    let out = "Successfully created GPU instance ID  5 on GPU  0 using profile MIG 1g.10gb (ID 19)\n\
               Successfully created compute instance ID  0 on GPU  0 GPU instance ID  5 using profile MIG 1g.10gb (ID  0)";
    assert_eq!(real::number_after(out, "GPU instance ID"), Some(5));
    assert_eq!(real::number_after(out, "compute instance ID"), Some(0));
}
