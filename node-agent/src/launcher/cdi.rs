//! A lease's GPUs as a CDI spec (the Container Device Interface, the format
//! podman reads and `nvidia-ctk cdi generate` writes). The agent writes one
//! spec per lease, naming one device, `gpuex.dev/lease=<lease id>`, whose
//! edits give the container exactly the lease's partition: the device nodes
//! of its GPUs or MIG instances (and the control nodes they need), the host
//! driver's user-space libraries mounted read-only (so one image runs on
//! any driver), and `CUDA_VISIBLE_DEVICES` naming its GPUs or instances by
//! UUID. The spec is removed when the lease ends.
//!
//! Podman 4 reads specs only from `/etc/cdi` and `/var/run/cdi`; the agent
//! writes to the second, which is cleared at boot like the containers.

use super::{gpu_device_nodes, LeaseGpu};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use uuid::Uuid;

/// Where podman looks for specs written at run time.
pub const SPEC_DIR: &str = "/var/run/cdi";
/// The CDI kind (`vendor/class`) of the agent's per-lease devices.
pub const KIND: &str = "gpuex.dev/lease";
/// The CDI version the specs follow (the one podman 4 reads).
pub const CDI_VERSION: &str = "0.5.0";

/// Folders the host driver's libraries are found in.
const LIBRARY_DIRS: [&str; 3] = ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"];
/// The driver's user-space libraries a CUDA program loads (names start so).
const DRIVER_LIBRARIES: [&str; 5] = [
    "libcuda.so",
    "libnvidia-ml.so",
    "libnvidia-ptxjitcompiler.so",
    "libnvidia-nvvm.so",
    "libcudadebugger.so",
];

/// The fully-qualified device name of `lease`'s GPUs, for `--device`.
pub fn device(lease: Uuid) -> String {
    format!("{KIND}={lease}")
}

/// Where `lease`'s spec goes in `dir`.
pub fn spec_path(dir: &Path, lease: Uuid) -> PathBuf {
    dir.join(format!("gpuex-lease-{lease}.json"))
}

/// The spec of `lease` holding `gpus`: its device nodes found under
/// `dev_root`, the driver libraries found in `library_dirs`.
pub fn spec(lease: Uuid, gpus: &[LeaseGpu], dev_root: &Path, library_dirs: &[PathBuf]) -> Value {
    let nodes: Vec<Value> = gpu_device_nodes(gpus, dev_root)
        .into_iter()
        // The same path inside: in a user namespace runc bind-mounts a
        // device from its path, not its hostPath (so stand-ins under a test's
        // root appear there, and the GPUs' own nodes at /dev).
        .map(|host| json!({"path": host, "hostPath": host}))
        .collect();
    let mounts: Vec<Value> = driver_libraries(library_dirs)
        .into_iter()
        .map(|lib| {
            json!({"hostPath": lib, "containerPath": lib,
                   "options": ["ro", "nosuid", "nodev", "bind"]})
        })
        .collect();
    let visible: Vec<&str> = gpus
        .iter()
        .map(|g| {
            g.mig
                .as_ref()
                .map_or(g.uuid.as_str(), |(uuid, _, _)| uuid.as_str())
        })
        .collect();
    json!({
        "cdiVersion": CDI_VERSION,
        "kind": KIND,
        "devices": [{
            "name": lease.to_string(),
            "containerEdits": {
                "env": [format!("CUDA_VISIBLE_DEVICES={}", visible.join(","))],
                "deviceNodes": nodes,
                "mounts": mounts,
            },
        }],
    })
}

/// Writes `lease`'s spec into `dir` (made if missing), whole or not at all:
/// podman may read the folder at any moment.
pub fn write(
    dir: &Path,
    lease: Uuid,
    gpus: &[LeaseGpu],
    dev_root: &Path,
) -> std::io::Result<PathBuf> {
    let dirs: Vec<PathBuf> = LIBRARY_DIRS.iter().map(PathBuf::from).collect();
    let body = spec(lease, gpus, dev_root, &dirs);
    std::fs::create_dir_all(dir)?;
    let path = spec_path(dir, lease);
    let partial = dir.join(format!(".gpuex-lease-{lease}.json.partial"));
    std::fs::write(&partial, body.to_string())?;
    std::fs::rename(&partial, &path)?;
    Ok(path)
}

/// Removes `lease`'s spec from `dir`, if there is one.
pub fn remove(dir: &Path, lease: Uuid) {
    let _ = std::fs::remove_file(spec_path(dir, lease));
}

/// The driver libraries in `dirs` (each name once, the first folder's).
fn driver_libraries(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut here: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| DRIVER_LIBRARIES.iter().any(|lib| n.starts_with(lib)))
            })
            .collect();
        here.sort();
        for path in here {
            if !found.iter().any(|f| f.file_name() == path.file_name()) {
                found.push(path);
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(index: u32, mig: bool) -> LeaseGpu {
        LeaseGpu {
            index,
            uuid: format!("GPU-{index}"),
            mig: mig.then(|| (format!("MIG-{index}"), Some(1), Some(0))),
        }
    }

    /// CDI's rules for a spec (the schema's required fields and the name
    /// grammar of `pkg/parser`): `vendor/class` kind, device names of
    /// letters, digits and `_.:-` starting with a letter or digit, absolute
    /// device and mount paths.
    fn assert_valid(spec: &Value) {
        assert_eq!(spec["cdiVersion"], CDI_VERSION);
        let kind = spec["kind"].as_str().expect("kind");
        let (vendor, class) = kind.split_once('/').expect("vendor/class");
        assert!(vendor
            .split('.')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')));
        assert!(
            !class.is_empty()
                && class
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c))
        );
        let devices = spec["devices"].as_array().expect("devices");
        assert!(!devices.is_empty());
        for d in devices {
            let name = d["name"].as_str().expect("name");
            assert!(name.starts_with(|c: char| c.is_ascii_alphanumeric()));
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_.:-".contains(c)),
                "{name}"
            );
            let edits = &d["containerEdits"];
            assert!(edits.is_object(), "a device has edits");
            for n in edits["deviceNodes"].as_array().expect("deviceNodes") {
                assert!(
                    n["path"].as_str().is_some_and(|p| p.starts_with('/')),
                    "{n}"
                );
            }
            for m in edits["mounts"].as_array().expect("mounts") {
                assert!(
                    m["hostPath"].as_str().is_some_and(|p| p.starts_with('/')),
                    "{m}"
                );
                assert!(
                    m["containerPath"]
                        .as_str()
                        .is_some_and(|p| p.starts_with('/')),
                    "{m}"
                );
            }
        }
    }

    #[test]
    fn a_lease_gets_its_own_gpus_nodes_and_the_driver_libraries_only() {
        let dev = tempfile::tempdir().expect("dev root");
        for node in ["nvidiactl", "nvidia-uvm", "nvidia0", "nvidia1", "nvidia2"] {
            std::fs::write(dev.path().join(node), b"").expect("a stand-in node");
        }
        let libs = tempfile::tempdir().expect("library dir");
        for lib in [
            "libcuda.so.550.54",
            "libnvidia-ml.so.1",
            "libc.so.6",
            "libcudart.so.12",
        ] {
            std::fs::write(libs.path().join(lib), b"").expect("a stand-in library");
        }
        let lease = Uuid::from_u128(7);
        let spec = spec(
            lease,
            &[gpu(0, false), gpu(2, false)],
            dev.path(),
            &[libs.path().into()],
        );
        assert_valid(&spec);
        let edits = &spec["devices"][0]["containerEdits"];
        let inside: Vec<&str> = edits["deviceNodes"]
            .as_array()
            .expect("nodes")
            .iter()
            .filter_map(|n| n["path"].as_str())
            .collect();
        let want: Vec<String> = ["nvidiactl", "nvidia-uvm", "nvidia0", "nvidia2"]
            .iter()
            .map(|n| dev.path().join(n).display().to_string())
            .collect();
        assert_eq!(inside, want);
        let mounted: Vec<String> = edits["mounts"]
            .as_array()
            .expect("mounts")
            .iter()
            .filter_map(|m| {
                Some(
                    Path::new(m["containerPath"].as_str()?)
                        .file_name()?
                        .to_str()?
                        .to_owned(),
                )
            })
            .collect();
        assert_eq!(mounted, ["libcuda.so.550.54", "libnvidia-ml.so.1"]);
        assert_eq!(edits["env"][0], "CUDA_VISIBLE_DEVICES=GPU-0,GPU-2");
        assert_eq!(device(lease), format!("gpuex.dev/lease={lease}"));
    }

    #[test]
    fn a_mig_lease_sees_its_instance_and_a_simulated_one_an_environment_alone() {
        let empty = tempfile::tempdir().expect("dev root");
        let spec = spec(Uuid::from_u128(8), &[gpu(1, true)], empty.path(), &[]);
        assert_valid(&spec);
        let edits = &spec["devices"][0]["containerEdits"];
        assert_eq!(edits["env"][0], "CUDA_VISIBLE_DEVICES=MIG-1");
        assert_eq!(edits["deviceNodes"], json!([]));
        assert_eq!(edits["mounts"], json!([]));
    }

    #[test]
    fn a_spec_is_written_whole_and_removed_with_its_lease() {
        let dir = tempfile::tempdir().expect("spec dir");
        let lease = Uuid::from_u128(9);
        let path = write(dir.path(), lease, &[gpu(0, false)], Path::new("/dev")).expect("written");
        let read: Value =
            serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("JSON");
        assert_valid(&read);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("dir")
            .filter_map(Result::ok)
            .collect();
        assert_eq!(names.len(), 1, "no partial file left");
        remove(dir.path(), lease);
        assert!(!path.exists());
    }
}
