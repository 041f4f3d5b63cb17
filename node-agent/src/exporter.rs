//! The agent's own `/metrics`, in the text format dcgm-exporter writes, so
//! existing Grafana dashboards for DCGM work on gpuex nodes unchanged.

use bytes::Bytes;
use gpuex_wire::protocol::{FieldKind, GpuFields, GpuInventory, GpuMetrics, MigInstanceMetrics};
use http_body_util::Full;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::fmt::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::net::TcpListener;

/// The latest sample and what the labels need.
#[derive(Debug, Default, Clone)]
pub struct Snapshot {
    pub hostname: String,
    pub gpus: Vec<GpuInventory>,
    pub metrics: Vec<GpuMetrics>,
    /// GPU memory scrubs between tenants, per GPU index.
    pub scrubs: std::collections::BTreeMap<u32, u64>,
}

/// Shared between the agent loop (writer) and the HTTP server (reader).
pub type SharedSnapshot = Arc<Mutex<Snapshot>>;

/// Render `snapshot` as dcgm-exporter does: `# HELP`, `# TYPE`, then one line
/// per GPU labelled `gpu`, `UUID`, `device`, `modelName`, `Hostname` (and
/// `pci_bus_id` where known). Absent fields are left out.
pub fn render(snapshot: &Snapshot) -> String {
    let mut out = String::new();
    for (i, field) in GpuFields::ALL.iter().enumerate() {
        let mut lines: Vec<String> = snapshot
            .metrics
            .iter()
            .filter_map(|m| {
                let value = m.fields.values()[i].1?;
                Some(format!(
                    "{}{} {}",
                    field.name,
                    labels(snapshot, m, None),
                    number(value)
                ))
            })
            .collect();
        // MIG instances are series of the same family, told apart by GPU_I_* labels.
        let per_instance: Option<fn(&MigInstanceMetrics) -> Option<f64>> = match field.name {
            "DCGM_FI_DEV_FB_USED" => Some(|mi| mi.fb_used_mib),
            "DCGM_FI_DEV_FB_FREE" => Some(|mi| mi.fb_free_mib),
            _ => None,
        };
        if let Some(value_of) = per_instance {
            lines.extend(mig_lines(snapshot, field.name, value_of));
        }
        family(&mut out, field.name, field.kind, field.help, &lines);
    }
    let engine = mig_lines(snapshot, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", |mi| {
        mi.gr_engine_active
    });
    family(
        &mut out,
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
        FieldKind::Gauge,
        "Ratio of time the graphics engine is active.",
        &engine,
    );
    let scrubs: Vec<String> = snapshot
        .scrubs
        .iter()
        .map(|(gpu, n)| format!("gpuex_agent_gpu_scrubs_total{{gpu=\"{gpu}\"}} {n}"))
        .collect();
    family(
        &mut out,
        "gpuex_agent_gpu_scrubs_total",
        FieldKind::Counter,
        "Times the agent cleared a GPU's memory between tenants.",
        &scrubs,
    );
    out
}

fn family(out: &mut String, name: &str, kind: FieldKind, help: &str, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    let kind = match kind {
        FieldKind::Gauge => "gauge",
        FieldKind::Counter => "counter",
    };
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
    for line in lines {
        out.push_str(line);
        out.push('\n');
    }
}

fn mig_lines(
    snapshot: &Snapshot,
    name: &str,
    value_of: fn(&MigInstanceMetrics) -> Option<f64>,
) -> Vec<String> {
    snapshot
        .metrics
        .iter()
        .flat_map(|m| {
            m.mig_instances.iter().filter_map(move |mi| {
                let value = value_of(mi)?;
                Some(format!(
                    "{name}{} {}",
                    labels(snapshot, m, Some(mi)),
                    number(value)
                ))
            })
        })
        .collect()
}

/// dcgm-exporter's labels; a MIG instance adds `GPU_I_PROFILE`, `GPU_I_ID`
/// and its `MIG_UUID`.
fn labels(snapshot: &Snapshot, m: &GpuMetrics, mig: Option<&MigInstanceMetrics>) -> String {
    let inv = snapshot.gpus.iter().find(|g| g.index == m.index);
    let model = inv.map_or("", |g| g.product_name.as_str());
    let mut s = format!(
        "{{gpu=\"{}\",UUID=\"{}\",device=\"nvidia{}\",modelName=\"{}\",Hostname=\"{}\"",
        m.index,
        escape(&m.uuid),
        m.index,
        escape(model),
        escape(&snapshot.hostname)
    );
    if let Some(bus) = inv.and_then(|g| g.pci_bus_id.as_deref()) {
        let _ = write!(s, ",pci_bus_id=\"{}\"", escape(bus));
    }
    if let Some(mi) = mig {
        let _ = write!(
            s,
            ",GPU_I_PROFILE=\"{}\",GPU_I_ID=\"{}\",MIG_UUID=\"{}\"",
            escape(mi.profile.as_deref().unwrap_or("")),
            mi.gpu_instance_id
                .map(|g| g.to_string())
                .unwrap_or_default(),
            escape(&mi.uuid)
        );
    }
    s.push('}');
    s
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Integers without a fraction, as dcgm-exporter prints them.
fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// Serve `GET /metrics` on `addr` until the process ends.
pub async fn serve(addr: SocketAddr, snapshot: SharedSnapshot) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let snapshot = snapshot.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req: Request<hyper::body::Incoming>| {
                    let snapshot = snapshot.clone();
                    async move {
                        let response = if req.uri().path() == "/metrics" {
                            let text = snapshot.lock().map(|s| render(&s)).unwrap_or_default();
                            Response::builder()
                                .header("content-type", "text/plain; version=0.0.4")
                                .body(Full::new(Bytes::from(text)))
                        } else {
                            Response::builder()
                                .status(StatusCode::NOT_FOUND)
                                .body(Full::new(Bytes::from_static(b"not found\n")))
                        };
                        response
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok(local)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::simulated::{Fleet, SimulatedBackend};
    use crate::backend::GpuBackend;

    fn snapshot() -> Snapshot {
        let fleet = Fleet::parse(
            "[host]\ncpu_milli = 1000\nmemory_mib = 1024\n[[gpus]]\nmodel = \"H100-SXM5-80GB\"\nmig = true\n",
        )
        .unwrap();
        let mut b = SimulatedBackend::new(fleet, "node-a".into());
        b.create_mig(0, "1g.10gb", 0).unwrap();
        Snapshot {
            hostname: "node-a".into(),
            gpus: b.inventory().unwrap().gpus,
            metrics: b.sample(),
            scrubs: [(0, 2)].into(),
        }
    }

    #[test]
    fn metrics_render_as_dcgm_exporter_text() {
        let text = render(&snapshot());
        assert!(text.contains("# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n"));
        assert!(
            text.contains("gpuex_agent_gpu_scrubs_total{gpu=\"0\"} 2\n"),
            "{text}"
        );
        assert!(text.contains("# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"));
        assert!(text.contains("# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"));
        let line = text
            .lines()
            .find(|l| l.starts_with("DCGM_FI_DEV_FB_TOTAL{"))
            .unwrap();
        assert!(
            line.starts_with("DCGM_FI_DEV_FB_TOTAL{gpu=\"0\",UUID=\"GPU-"),
            "{line}"
        );
        assert!(line.contains(",device=\"nvidia0\",modelName=\"NVIDIA H100-SXM5-80GB (simulated)\",Hostname=\"node-a\""));
        assert!(line.ends_with("} 76294"), "{line}");
    }

    #[test]
    fn each_family_has_exactly_one_help_and_type_and_its_lines_follow_them() {
        let text = render(&snapshot());
        let mut seen = std::collections::HashSet::new();
        let mut current = String::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                current = rest.split(' ').next().unwrap().to_string();
                assert!(seen.insert(current.clone()), "{current} declared twice");
            } else if !line.starts_with('#') {
                assert!(
                    line.starts_with(&format!("{current}{{")),
                    "{line} outside {current}"
                );
            }
        }
        assert!(seen.contains("DCGM_FI_PROF_GR_ENGINE_ACTIVE"));
    }

    #[test]
    fn every_sample_line_is_name_labels_value() {
        for line in render(&snapshot()).lines().filter(|l| !l.starts_with('#')) {
            let (head, value) = line.rsplit_once(' ').unwrap();
            assert!(value.parse::<f64>().is_ok(), "{line}");
            assert!(
                (head.starts_with("DCGM_FI_") || head.starts_with("gpuex_agent_"))
                    && head.ends_with('}'),
                "{line}"
            );
        }
    }

    #[test]
    fn absent_fields_are_left_out_entirely() {
        let text = render(&snapshot());
        assert!(
            !text.contains("DCGM_FI_DEV_FAN_SPEED"),
            "simulated SXM GPUs have no fan"
        );
    }

    #[tokio::test]
    async fn the_metrics_endpoint_serves_the_latest_snapshot() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let shared = Arc::new(Mutex::new(snapshot()));
        let addr = serve("127.0.0.1:0".parse().unwrap(), shared).await.unwrap();
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
        assert!(response.contains("content-type: text/plain; version=0.0.4"));
        assert!(response.contains("DCGM_FI_DEV_GPU_TEMP{gpu=\"0\""));
    }

    #[test]
    fn mig_instances_are_series_of_the_same_family_with_gpu_i_labels() {
        let text = render(&snapshot());
        let line = text
            .lines()
            .find(|l| l.starts_with("DCGM_FI_DEV_FB_USED{") && l.contains("GPU_I_ID"))
            .unwrap();
        assert!(
            line.contains("GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"1\",MIG_UUID=\"MIG-"),
            "{line}"
        );
    }
}
