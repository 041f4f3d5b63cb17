//! The openb trace (Alibaba `cluster-trace-gpu-v2023`) parsed into typed nodes
//! and tasks.
//!
//! Parse, don't validate: a `Task` always holds one of three legal shapes
//! (CPU-only, a share of one GPU, whole GPUs), so the policies never check.

use std::path::Path;

use crate::catalog::{self, GpuModel};

use super::SimulateError;

/// Milli-GPU in one GPU.
pub const MILLI: u16 = 1000;
/// The most GPUs one node holds; the cluster state keeps a fixed array.
pub const MAX_GPUS: usize = 8;

/// A GPU model as the trace names it, and the catalog model behind it.
#[derive(Debug, Clone)]
pub struct GpuKind {
    /// The trace's name (`V100M16`, `G2`, ...).
    pub trace_name: String,
    /// The catalog model; `None` for the undisclosed G2/G3, which the
    /// simulator treats as generic GPUs with only the trace's figures.
    pub catalog: Option<&'static GpuModel>,
}

/// The trace's model names mapped onto the catalog (G2 and G3 are undisclosed).
fn catalog_model(trace_name: &str) -> Option<&'static GpuModel> {
    let name = match trace_name {
        "V100M16" => "V100-SXM2-16GB",
        "V100M32" => "V100-SXM2-32GB",
        "T4" => "T4-16GB",
        "P100" => "P100-SXM2-16GB",
        "A10" => "A10-24GB",
        _ => return None,
    };
    catalog::lookup(name)
}

/// One machine of the trace.
#[derive(Debug, Clone)]
pub struct Node {
    pub name: String,
    /// Index into `Trace::kinds`.
    pub kind: u8,
    pub gpus: u8,
    pub cpu_milli: u32,
    pub memory_mib: u64,
}

/// What a task asks of the GPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GpuAsk {
    /// No GPU at all.
    None,
    /// This many milli-GPU (1..=999) of one GPU.
    Share(u16),
    /// This many whole GPUs.
    Whole(u8),
}

impl GpuAsk {
    /// Milli-GPU per GPU, as FGD's `PodResource.MilliGpu`.
    pub fn milli_per_gpu(self) -> u16 {
        match self {
            GpuAsk::None => 0,
            GpuAsk::Share(m) => m,
            GpuAsk::Whole(_) => MILLI,
        }
    }

    /// Number of GPUs touched, as FGD's `PodResource.GpuNumber`.
    pub fn gpu_count(self) -> u8 {
        match self {
            GpuAsk::None => 0,
            GpuAsk::Share(_) => 1,
            GpuAsk::Whole(n) => n,
        }
    }

    /// Total milli-GPU requested.
    pub fn total_milli(self) -> u64 {
        u64::from(self.milli_per_gpu()) * u64::from(self.gpu_count())
    }
}

/// One task (pod) of the trace.
#[derive(Debug, Clone)]
pub struct Task {
    pub name: String,
    pub cpu_milli: u32,
    pub memory_mib: u64,
    pub gpu: GpuAsk,
    /// Bitmask over `Trace::kinds` of the models allowed; 0 means any.
    pub allowed: u32,
    /// The raw `gpu_spec`, kept because FGD's typical pods key on it.
    pub gpu_spec: String,
    /// Seconds from the trace start, when the trace has them.
    pub creation: Option<u64>,
    pub deletion: Option<u64>,
    /// `qos` is `BE` (best effort): timeline mode runs it as spot, which an
    /// on-demand task may preempt. LS, Burstable, Guaranteed and an absent
    /// `qos` are on-demand.
    pub spot: bool,
}

impl Task {
    /// Whether a node of this GPU kind may serve the task.
    pub fn accepts(&self, kind: u8) -> bool {
        self.allowed == 0 || self.allowed & (1 << kind) != 0
    }
}

/// Nodes and tasks of one trace, with the GPU kinds they mention.
#[derive(Debug, Clone)]
pub struct Trace {
    pub kinds: Vec<GpuKind>,
    pub nodes: Vec<Node>,
    pub tasks: Vec<Task>,
}

impl Trace {
    /// Reads the node and pod CSV files.
    pub fn load(nodes: &Path, pods: &Path) -> Result<Trace, SimulateError> {
        let read = |p: &Path| {
            std::fs::read_to_string(p).map_err(|e| SimulateError::Io(p.display().to_string(), e))
        };
        Trace::parse(&read(nodes)?, &read(pods)?)
    }

    /// Parses the two CSV texts.
    pub fn parse(nodes_csv: &str, pods_csv: &str) -> Result<Trace, SimulateError> {
        let mut kinds: Vec<GpuKind> = Vec::new();
        let kind_of = |name: &str, kinds: &mut Vec<GpuKind>| -> Result<u8, SimulateError> {
            if let Some(i) = kinds.iter().position(|k| k.trace_name == name) {
                return Ok(i as u8);
            }
            if kinds.len() == 32 {
                return Err(SimulateError::Trace("more than 32 GPU models".into()));
            }
            kinds.push(GpuKind {
                trace_name: name.to_string(),
                catalog: catalog_model(name),
            });
            Ok((kinds.len() - 1) as u8)
        };

        let mut nodes = Vec::new();
        let mut rdr = csv::Reader::from_reader(nodes_csv.as_bytes());
        let headers = rdr.headers().map_err(csv_err)?.clone();
        let col = |h: &str| column(&headers, h, "nodes");
        let (sn, cpu, mem, gpu, model) = (
            col("sn")?,
            col("cpu_milli")?,
            col("memory_mib")?,
            col("gpu")?,
            col("model")?,
        );
        for (line, rec) in rdr.records().enumerate() {
            let rec = rec.map_err(csv_err)?;
            let at = || format!("nodes line {}", line + 2);
            let gpus: u8 = num(&rec[gpu], &at)?;
            if usize::from(gpus) > MAX_GPUS {
                return Err(SimulateError::Trace(format!("{}: more than 8 GPUs", at())));
            }
            let kind = kind_of(&rec[model], &mut kinds)?;
            nodes.push(Node {
                name: rec[sn].to_string(),
                kind,
                gpus,
                cpu_milli: num(&rec[cpu], &at)?,
                memory_mib: num(&rec[mem], &at)?,
            });
        }

        let mut tasks = Vec::new();
        let mut rdr = csv::Reader::from_reader(pods_csv.as_bytes());
        let headers = rdr.headers().map_err(csv_err)?.clone();
        let col = |h: &str| column(&headers, h, "pods");
        let opt = |h: &str| headers.iter().position(|x| x == h);
        let (name, cpu, mem, ngpu, milli) = (
            col("name")?,
            col("cpu_milli")?,
            col("memory_mib")?,
            col("num_gpu")?,
            col("gpu_milli")?,
        );
        let (spec, created, deleted, qos) = (
            opt("gpu_spec"),
            opt("creation_time"),
            opt("deletion_time"),
            opt("qos"),
        );
        for (line, rec) in rdr.records().enumerate() {
            let rec = rec.map_err(csv_err)?;
            let at = || format!("pods line {}", line + 2);
            let num_gpu: u8 = num(&rec[ngpu], &at)?;
            let gpu_milli: u16 = num(&rec[milli], &at)?;
            let gpu = match (num_gpu, gpu_milli) {
                (0, _) => GpuAsk::None,
                (1, m) if (1..MILLI).contains(&m) => GpuAsk::Share(m),
                (n, MILLI) if usize::from(n) <= MAX_GPUS => GpuAsk::Whole(n),
                (n, m) => {
                    return Err(SimulateError::Trace(format!(
                        "{}: num_gpu={n} with gpu_milli={m} is neither a share nor whole GPUs",
                        at()
                    )))
                }
            };
            let gpu_spec = spec.map(|i| rec[i].trim().to_string()).unwrap_or_default();
            let mut allowed = 0u32;
            for model in gpu_spec.split('|').filter(|m| !m.is_empty()) {
                allowed |= 1 << kind_of(model, &mut kinds)?;
            }
            let time = |i: Option<usize>| -> Result<Option<u64>, SimulateError> {
                match i.map(|i| rec[i].trim()) {
                    None | Some("") => Ok(None),
                    Some(s) => Ok(Some(num(s, &at)?)),
                }
            };
            tasks.push(Task {
                name: rec[name].to_string(),
                cpu_milli: num(&rec[cpu], &at)?,
                memory_mib: num(&rec[mem], &at)?,
                gpu,
                allowed,
                gpu_spec,
                creation: time(created)?,
                deletion: time(deleted)?,
                spot: qos.is_some_and(|i| rec[i].trim() == "BE"),
            });
        }
        if nodes.is_empty() || tasks.is_empty() {
            return Err(SimulateError::Trace(
                "the trace has no nodes or no tasks".into(),
            ));
        }
        Ok(Trace {
            kinds,
            nodes,
            tasks,
        })
    }

    /// Total milli-GPU of the cluster.
    pub fn capacity_milli(&self) -> u64 {
        self.nodes
            .iter()
            .map(|n| u64::from(n.gpus) * u64::from(MILLI))
            .sum()
    }

    /// Keeps an evenly spaced `share` (0–1] of the nodes, in their order, so
    /// the mix of node shapes stays the trace's: the same tasks then load a
    /// smaller cluster.
    pub fn thin_nodes(&mut self, share: f64) {
        if !(share > 0.0 && share < 1.0) {
            return;
        }
        let mut i = 0usize;
        self.nodes.retain(|_| {
            let keep = ((i + 1) as f64 * share).floor() > (i as f64 * share).floor();
            i += 1;
            keep
        });
    }
}

fn csv_err(e: csv::Error) -> SimulateError {
    SimulateError::Trace(e.to_string())
}

fn column(headers: &csv::StringRecord, name: &str, file: &str) -> Result<usize, SimulateError> {
    headers
        .iter()
        .position(|h| h == name)
        .ok_or_else(|| SimulateError::Trace(format!("{file} CSV has no `{name}` column")))
}

fn num<T: std::str::FromStr>(s: &str, at: &dyn Fn() -> String) -> Result<T, SimulateError> {
    s.trim()
        .parse()
        .map_err(|_| SimulateError::Trace(format!("{}: `{s}` is not a number", at())))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NODES: &str = "sn,cpu_milli,memory_mib,gpu,model\n\
        n0,64000,262144,2,P100\nn1,96000,393216,8,G2\nn2,32000,131072,4,V100M16\n";
    const PODS: &str = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n\
        p0,12000,16384,1,1000,,LS,Running,0,100,0\n\
        p1,6000,12288,1,460,A10|V100M32,LS,Running,5,50,5\n\
        p2,8000,30517,0,0,,BE,Running,7,9,7\n\
        p3,8000,30517,8,1000,,BE,Running,,,\n";

    #[test]
    fn thinning_keeps_an_evenly_spaced_share_of_the_nodes() {
        let mut nodes = String::from("sn,cpu_milli,memory_mib,gpu,model\n");
        for i in 0..8 {
            nodes.push_str(&format!("n{i},1000,1000,1,T4\n"));
        }
        let pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,1,500\n";
        let mut t = Trace::parse(&nodes, pods).unwrap();
        t.thin_nodes(0.25);
        let names: Vec<&str> = t.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["n3", "n7"]);
        t.thin_nodes(1.0);
        assert_eq!(t.nodes.len(), 2);
    }

    #[test]
    fn parses_nodes_and_maps_models_onto_the_catalog() {
        let t = Trace::parse(NODES, PODS).unwrap();
        assert_eq!(t.nodes.len(), 3);
        assert_eq!(t.capacity_milli(), 14_000);
        let kind = |n: usize| &t.kinds[usize::from(t.nodes[n].kind)];
        assert_eq!(kind(0).catalog.unwrap().name, "P100-SXM2-16GB");
        assert!(kind(1).catalog.is_none(), "G2 is a generic GPU");
        assert_eq!(kind(2).catalog.unwrap().name, "V100-SXM2-16GB");
    }

    #[test]
    fn parses_the_three_task_shapes_and_the_gpu_spec() {
        let t = Trace::parse(NODES, PODS).unwrap();
        let g: Vec<_> = t.tasks.iter().map(|t| t.gpu).collect();
        assert_eq!(
            g,
            [
                GpuAsk::Whole(1),
                GpuAsk::Share(460),
                GpuAsk::None,
                GpuAsk::Whole(8)
            ]
        );
        let p1 = &t.tasks[1];
        assert!(!p1.accepts(t.nodes[0].kind), "P100 is not in A10|V100M32");
        let a10 = t.kinds.iter().position(|k| k.trace_name == "A10").unwrap() as u8;
        assert!(p1.accepts(a10));
        assert!(
            t.tasks[0].accepts(t.nodes[0].kind),
            "no spec takes any model"
        );
        assert_eq!((p1.creation, p1.deletion), (Some(5), Some(50)));
        assert_eq!(t.tasks[3].creation, None);
        assert_eq!(GpuAsk::Whole(8).total_milli(), 8000);
    }

    #[test]
    fn rejects_a_fractional_multi_gpu_task() {
        let pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,2,500\n";
        assert!(matches!(
            Trace::parse(NODES, pods),
            Err(SimulateError::Trace(_))
        ));
    }

    #[test]
    fn reads_the_multigpu_variant_without_times_or_spec() {
        let pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,1,2,1000\n";
        let t = Trace::parse(NODES, pods).unwrap();
        assert_eq!(t.tasks[0].gpu, GpuAsk::Whole(2));
        assert_eq!(t.tasks[0].allowed, 0);
    }
}
