//! Kubernetes: `kubectl get pods -A -o json`. Pods are read one at a time
//! from `items`, so a large list never sits in memory whole; a pod that does
//! not parse is refused alone. A pod's GPUs are its containers'
//! `nvidia.com/gpu` limits (or requests); it ran from its containers' first
//! start to their last finish; its model is its node selector's
//! `nvidia.com/gpu.product` label; its tag is its namespace.

use super::collect::{gpus_milli, Collector, FileError, RawJob};
use chrono::{DateTime, Utc};
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::fmt;
use std::io::Read;

const GPU_RESOURCE: &str = "nvidia.com/gpu";
const PRODUCT_LABEL: &str = "nvidia.com/gpu.product";

#[derive(Deserialize)]
struct Pod {
    #[serde(default)]
    metadata: Metadata,
    #[serde(default)]
    spec: Spec,
    #[serde(default)]
    status: Status,
}

#[derive(Deserialize, Default)]
struct Metadata {
    name: Option<String>,
    namespace: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Spec {
    #[serde(default)]
    containers: Vec<Container>,
    #[serde(default)]
    node_selector: BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct Container {
    #[serde(default)]
    resources: Resources,
}

#[derive(Deserialize, Default)]
struct Resources {
    #[serde(default)]
    limits: BTreeMap<String, Quantity>,
    #[serde(default)]
    requests: BTreeMap<String, Quantity>,
}

/// A resource quantity: Kubernetes writes strings, hand-made files numbers.
#[derive(Deserialize)]
#[serde(untagged)]
enum Quantity {
    Text(String),
    Number(serde_json::Number),
}

impl Quantity {
    fn text(&self) -> String {
        match self {
            Quantity::Text(t) => t.clone(),
            Quantity::Number(n) => n.to_string(),
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Status {
    start_time: Option<DateTime<Utc>>,
    #[serde(default)]
    container_statuses: Vec<ContainerStatus>,
}

#[derive(Deserialize)]
struct ContainerStatus {
    #[serde(default)]
    state: State,
}

#[derive(Deserialize, Default)]
struct State {
    terminated: Option<Terminated>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Terminated {
    started_at: Option<DateTime<Utc>>,
    finished_at: Option<DateTime<Utc>>,
}

/// The pod's GPUs (thousandths), start and end, or why it is not a job:
/// `Ok(None)` held no GPU or never started.
fn job(pod: &Pod) -> Result<Option<(u32, i64, i64)>, String> {
    let mut gpus = 0u32;
    for container in &pod.spec.containers {
        let r = &container.resources;
        if let Some(q) = r.limits.get(GPU_RESOURCE).or(r.requests.get(GPU_RESOURCE)) {
            gpus = gpus.saturating_add(gpus_milli(&q.text())?);
        }
    }
    if gpus == 0 {
        return Ok(None);
    }
    let statuses = &pod.status.container_statuses;
    if statuses.is_empty() {
        return match pod.status.start_time {
            None => Ok(None),
            Some(_) => Err("still running (no container has finished)".to_owned()),
        };
    }
    let mut start: Option<i64> = None;
    let mut end: Option<i64> = None;
    for s in statuses {
        let Some(t) = &s.state.terminated else {
            return Err("still running (a container has not finished)".to_owned());
        };
        let (Some(a), Some(b)) = (t.started_at, t.finished_at) else {
            return Err("a finished container has no startedAt or finishedAt".to_owned());
        };
        start = Some(start.map_or(a.timestamp(), |s| s.min(a.timestamp())));
        end = Some(end.map_or(b.timestamp(), |e| e.max(b.timestamp())));
    }
    Ok(start.zip(end).map(|(s, e)| (gpus, s, e)))
}

fn take(raw: &RawValue, index: u64, sink: &mut Collector) -> Result<(), FileError> {
    let pod: Pod = match serde_json::from_str(raw.get()) {
        Ok(pod) => pod,
        Err(e) => {
            sink.reject(index, format!("not a pod: {e}"));
            return Ok(());
        }
    };
    let name = pod.metadata.name.as_deref().unwrap_or("(unnamed)");
    match job(&pod) {
        Err(reason) => sink.reject(index, format!("pod {name}: {reason}")),
        Ok(None) => sink.skip(),
        Ok(Some((gpus_milli, start, end))) => sink.job(
            index,
            RawJob {
                start,
                end,
                gpus_milli,
                model: pod
                    .spec
                    .node_selector
                    .get(PRODUCT_LABEL)
                    .map(String::as_str),
                tag: pod
                    .metadata
                    .namespace
                    .as_ref()
                    .map(|ns| format!("namespace={ns}")),
            },
        )?,
    }
    Ok(())
}

/// Visits the top-level object, handing each of `items` to the collector.
struct List<'a> {
    sink: &'a mut Collector,
    failed: Option<FileError>,
    saw_items: bool,
}

impl<'de> Visitor<'de> for &mut List<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of pods (`kubectl get pods -o json`)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "items" {
                self.saw_items = true;
                map.next_value_seed(Items(self))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

struct Items<'l, 'a>(&'l mut List<'a>);

impl<'de> DeserializeSeed<'de> for Items<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Items<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of pods")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0u64;
        while let Some(raw) = seq.next_element::<Box<RawValue>>()? {
            index += 1;
            if let Err(e) = take(&raw, index, self.0.sink) {
                self.0.failed = Some(e);
                return Err(serde::de::Error::custom("stopped"));
            }
        }
        Ok(())
    }
}

pub fn read(reader: impl Read, sink: &mut Collector, limit: usize) -> Result<(), FileError> {
    let mut list = List {
        sink,
        failed: None,
        saw_items: false,
    };
    let mut de = serde_json::Deserializer::from_reader(reader);
    let parsed = de.deserialize_map(&mut list);
    if let Some(e) = list.failed.take() {
        return Err(e);
    }
    if let Err(e) = parsed {
        return Err(if e.is_io() {
            FileError::from_io(std::io::Error::from(e), limit)
        } else {
            FileError::Malformed(format!("not a pod list: {e}"))
        });
    }
    de.end()
        .map_err(|e| FileError::Malformed(format!("not a pod list: {e}")))?;
    if !list.saw_items {
        return Err(FileError::Malformed(
            "not a pod list: no `items` (use kubectl get pods -o json)".to_owned(),
        ));
    }
    Ok(())
}
