//! The wire shapes the server side relies on.

use super::*;

#[test]
fn an_output_name_is_one_percent_encoded_segment() {
    assert_eq!(path_segment("result.txt"), "result.txt");
    assert_eq!(path_segment("a b/c%.bin"), "a%20b%2Fc%25.bin");
    assert_eq!(path_segment("é"), "%C3%A9");
}
use chrono::{TimeZone, Utc};
use rust_decimal_macros::dec;
use serde_json::json;
use uuid::Uuid;

fn lease() -> Uuid {
    Uuid::from_u128(0x1111)
}

#[test]
fn a_start_assignment_is_a_flat_object_tagged_by_action() {
    let assignment = Assignment {
        lease_id: lease(),
        action: AssignmentAction::Start {
            placement: AgentPlacement {
                gpus: vec![0],
                partition: Partition::Mig {
                    profile: "1g.10gb".into(),
                    start: 2,
                },
            },
            command: Some("echo hi".into()),
            env: [("A".to_string(), "1".to_string())].into(),
            end_at: None,
            held: None,
            artifacts: Vec::new(),
            image: None,
            network: false,
            limits: None,
            checkpoint: None,
            registry_auth: None,
        },
    };
    let value = serde_json::to_value(&assignment).unwrap();
    assert_eq!(
        value,
        json!({
            "lease_id": lease(),
            "action": "start",
            "placement": {"gpus": [0], "partition": {"kind": "mig", "profile": "1g.10gb", "start": 2}},
            "command": "echo hi",
            "env": {"A": "1"}
        })
    );
    assert_eq!(
        serde_json::from_value::<Assignment>(value).unwrap(),
        assignment
    );
}

#[test]
fn a_preempt_assignment_carries_its_deadline() {
    let at = Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap();
    let parsed: Assignment = serde_json::from_value(json!({
        "lease_id": lease(), "action": "preempt", "preempt_at": "2026-01-02T03:04:05Z"
    }))
    .unwrap();
    assert_eq!(parsed.action, AssignmentAction::Preempt { preempt_at: at });
}

#[test]
fn a_shared_partition_names_its_milli_and_memory() {
    let p: Partition =
        serde_json::from_value(json!({"kind": "shared", "milli": 250, "memory_mb": 8000})).unwrap();
    assert_eq!(
        p,
        Partition::Shared {
            milli: 250,
            memory_mb: 8000
        }
    );
}

#[test]
fn status_reports_are_tagged_by_status() {
    let at = Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap();
    let ended = StatusReport {
        at,
        status: AssignmentStatus::Ended {
            exit_code: Some(3),
            signal: None,
            reason: EndReason::Exited,
        },
    };
    assert_eq!(
        serde_json::to_value(&ended).unwrap(),
        json!({"at": "2026-01-02T03:04:05Z", "status": "ended", "exit_code": 3, "reason": "exited"})
    );
    let provisioned: StatusReport = serde_json::from_value(
        json!({"at": "2026-01-02T03:04:05Z", "status": "provisioned", "device": "MIG-abc"}),
    )
    .unwrap();
    assert_eq!(
        provisioned.status,
        AssignmentStatus::Provisioned {
            device: "MIG-abc".into(),
            image_id: None,
        }
    );
}

#[test]
fn gpu_fields_use_dcgm_names_and_leave_unsupported_ones_out() {
    let fields = GpuFields {
        gpu_util: Some(42.0),
        fb_used: Some(1024.0),
        ..GpuFields::default()
    };
    assert_eq!(
        serde_json::to_value(&fields).unwrap(),
        json!({"DCGM_FI_DEV_GPU_UTIL": 42.0, "DCGM_FI_DEV_FB_USED": 1024.0})
    );
    assert_eq!(fields.present(), 2);
}

#[test]
fn there_are_at_least_twenty_distinct_dcgm_fields() {
    let mut names: Vec<_> = GpuFields::ALL.iter().map(|f| f.name).collect();
    names.sort();
    names.dedup();
    assert!(names.len() >= 20, "{}", names.len());
    assert!(names.iter().all(|n| n.starts_with("DCGM_FI_")));
}

#[test]
fn usage_quantities_travel_as_decimal_strings() {
    let batch = UsageBatch {
        agent_id: Uuid::nil(),
        seq: 7,
        records: vec![UsageRecord {
            lease_id: lease(),
            interval_start: Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap(),
            interval_end: Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 10).unwrap(),
            tflops_s: dec!(1412.860),
            vram_gb_s: dec!(100),
            mean_utilization: Some(dec!(0.5)),
            peak_memory_mb: Some(9_500),
        }],
    };
    let value = serde_json::to_value(&batch).unwrap();
    assert_eq!(value["records"][0]["tflops_s"], json!("1412.860"));
    assert_eq!(value["records"][0]["peak_memory_mb"], json!(9_500));
    assert_eq!(serde_json::from_value::<UsageBatch>(value).unwrap(), batch);
}

#[test]
fn a_usage_record_without_a_peak_parses_as_old_agents_send_it() {
    let record: UsageRecord = serde_json::from_value(json!({
        "lease_id": lease(),
        "interval_start": "2026-01-01T00:00:00Z",
        "interval_end": "2026-01-01T00:00:10Z",
        "tflops_s": "1",
        "vram_gb_s": "1",
    }))
    .unwrap();
    assert_eq!(record.peak_memory_mb, None);
    let value = serde_json::to_value(&record).unwrap();
    assert!(value.get("peak_memory_mb").is_none(), "{value}");
}

#[test]
fn paths_fill_in_the_lease_id() {
    assert_eq!(
        paths::assignment_status(lease()),
        paths::ASSIGNMENT_STATUS.replace("{lease_id}", &lease().to_string())
    );
    assert_eq!(
        paths::assignment_logs(lease()),
        paths::ASSIGNMENT_LOGS.replace("{lease_id}", &lease().to_string())
    );
}

#[test]
fn every_example_in_the_protocol_readme_parses_into_its_type() {
    let text = include_str!("README.md");
    let mut checked = 0;
    let mut rest = text;
    while let Some(at) = rest.find("<!-- ") {
        let after = &rest[at + 5..];
        let name = &after[..after.find(" -->").unwrap()];
        let block = &after[after.find("```json\n").unwrap() + 8..];
        let json = &block[..block.find("```").unwrap()];
        let result = match name {
            "RegisterRequest" => serde_json::from_str::<RegisterRequest>(json).map(|_| ()),
            "RegisterResponse" => serde_json::from_str::<RegisterResponse>(json).map(|_| ()),
            "HeartbeatRequest" => serde_json::from_str::<HeartbeatRequest>(json).map(|_| ()),
            "HeartbeatResponse" => serde_json::from_str::<HeartbeatResponse>(json).map(|_| ()),
            "StatusReport" => serde_json::from_str::<StatusReport>(json).map(|_| ()),
            "LogsUpload" => serde_json::from_str::<LogsUpload>(json).map(|_| ()),
            "UsageBatch" => serde_json::from_str::<UsageBatch>(json).map(|_| ()),
            "UsageAck" => serde_json::from_str::<UsageAck>(json).map(|_| ()),
            other => panic!("unknown example type {other}"),
        };
        result.unwrap_or_else(|e| panic!("{name}: {e}\n{json}"));
        checked += 1;
        rest = &block[block.find("```").unwrap() + 3..];
    }
    assert_eq!(checked, 12);
}

#[test]
fn the_readme_states_how_many_dcgm_fields_there_are() {
    let claim = format!("The {} known names", GpuFields::ALL.len());
    assert!(include_str!("README.md").contains(&claim), "{claim}");
}
