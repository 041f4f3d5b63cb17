//! The order's image under the provider's policy: it comes only from a
//! registry the provider allows (`--allow-registry`), and it runs by the ID
//! it resolves to when the lease starts, which the lease records, so what
//! ran is known even if the tag moves afterwards.
//!
//! A private image (ARCHITECTURE.md §21): the buyer's credentials reach podman in an
//! auth file of its own (0600, in a 0700 folder of the agent's state, never
//! on a command line), removed when the pull ends. An image pulled with
//! credentials is remembered as private; a later lease that names it
//! without credentials the registry accepts must pull it again itself, so
//! no buyer runs another's private image from this host's cache.

use super::ContainerRuntime;
use gpuex_wire::protocol::RegistryAuth;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use uuid::Uuid;

/// The registry an image reference names, as docker and podman read it: the
/// first path component when it looks like a host (a dot or a port, or
/// `localhost`), else Docker Hub.
pub fn registry_of(image: &str) -> String {
    match image.split_once('/') {
        Some((first, _)) if first.contains(['.', ':']) || first == "localhost" => {
            first.to_ascii_lowercase()
        }
        _ => "docker.io".to_string(),
    }
}

/// Whether `image` may run here: any registry when the provider listed
/// none, else only those listed.
pub fn check_allowed(image: &str, allowed: &[String]) -> Result<(), String> {
    let registry = registry_of(image);
    if allowed.is_empty() || allowed.iter().any(|a| a.eq_ignore_ascii_case(&registry)) {
        Ok(())
    } else {
        Err(format!(
            "images from {registry} are not allowed on this node (it allows {})",
            allowed.join(", ")
        ))
    }
}

/// The IDs of images this host pulled with a buyer's credentials, kept in
/// the agent's state so a restart remembers them.
#[derive(Debug)]
pub struct PrivateImages {
    path: PathBuf,
    ids: Mutex<BTreeSet<String>>,
}

impl PrivateImages {
    /// Those recorded at `path` (none when it does not exist yet).
    pub fn load(path: PathBuf) -> Result<PrivateImages, String> {
        let ids = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| format!("{} is not a list of image IDs: {e}", path.display()))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeSet::new(),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        Ok(PrivateImages {
            path,
            ids: Mutex::new(ids),
        })
    }

    fn contains(&self, id: &str) -> bool {
        self.ids.lock().is_ok_and(|ids| ids.contains(id))
    }

    /// Records `id`, written through (temporary file, then rename) before
    /// the lease that pulled it starts.
    fn insert(&self, id: String) -> Result<(), String> {
        let mut ids = self
            .ids
            .lock()
            .map_err(|_| "the private image list is poisoned".to_string())?;
        if !ids.insert(id) {
            return Ok(());
        }
        let bytes = serde_json::to_vec(&*ids).map_err(|e| e.to_string())?;
        let tmp = self.path.with_extension("tmp");
        std::fs::write(&tmp, bytes)
            .and_then(|()| std::fs::rename(&tmp, &self.path))
            .map_err(|e| {
                format!(
                    "cannot record a private image in {}: {e}",
                    self.path.display()
                )
            })
    }
}

/// A lease's registry credentials as the container client reads them: a
/// `config.json` (docker's and podman's auth file format) in a folder of
/// its own, removed with it.
struct AuthFile {
    dir: PathBuf,
}

impl AuthFile {
    fn write(
        under: &Path,
        lease: Uuid,
        image: &str,
        auth: &RegistryAuth,
    ) -> Result<AuthFile, String> {
        use base64::Engine;
        let fail = |e: std::io::Error| format!("cannot write the pull's credentials: {e}");
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(under)
            .map_err(fail)?;
        let dir = under.join(lease.to_string());
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .or_else(|e| {
                // A pull of the same lease that died before it cleaned up.
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    Ok(())
                } else {
                    Err(fail(e))
                }
            })?;
        let file = AuthFile { dir };
        let token = base64::engine::general_purpose::STANDARD
            .encode(format!("{}:{}", auth.username, auth.password));
        let config = serde_json::json!({"auths": {registry_of(image): {"auth": token}}});
        let path = file.path();
        let _ = std::fs::remove_file(&path);
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .and_then(|mut f| f.write_all(config.to_string().as_bytes()))
            .map_err(fail)?;
        Ok(file)
    }

    fn path(&self) -> PathBuf {
        self.dir.join("config.json")
    }
}

impl Drop for AuthFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What pulls and inspects images: the container client with its fixed
/// environment and the provider's registries. Cloned into the background
/// task that readies a lease (a pull can take minutes; the agent's loop
/// must not wait on it).
#[derive(Debug, Clone)]
pub struct Images {
    pub runtime: ContainerRuntime,
    pub env: BTreeMap<String, String>,
    pub allowed_registries: Vec<String>,
    /// Where a pull's auth file is written (0700, the agent's state).
    pub auth_dir: PathBuf,
    pub private: Arc<PrivateImages>,
}

impl Images {
    fn client(&self, args: &[&str]) -> Result<std::process::Output, String> {
        self.client_with(args, None)
    }

    fn client_with(
        &self,
        args: &[&str],
        auth: Option<&AuthFile>,
    ) -> Result<std::process::Output, String> {
        let mut cmd = Command::new(&self.runtime.program);
        cmd.env_clear().envs(&self.env);
        match auth {
            Some(file) if self.runtime.podman => {
                let (verb, rest) = args.split_first().unwrap_or((&"", &[]));
                cmd.arg(verb).arg("--authfile").arg(file.path()).args(rest);
            }
            // docker reads credentials only from a config folder.
            Some(file) => {
                cmd.args(args).env("DOCKER_CONFIG", &file.dir);
            }
            None => {
                cmd.args(args);
            }
        }
        cmd.stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", self.runtime.program.display()))
    }

    /// The ID of `image` if the host has it.
    fn local_id(&self, image: &str) -> Result<Option<String>, String> {
        let out = self.client(&["image", "inspect", "--format", "{{.Id}}", image])?;
        if !out.status.success() {
            return Ok(None);
        }
        normalise_id(String::from_utf8_lossy(&out.stdout).trim()).map(Some)
    }

    fn pull(&self, image: &str, auth: Option<&AuthFile>) -> Result<(), String> {
        let pulled = self.client_with(&["pull", "--quiet", image], auth)?;
        if pulled.status.success() {
            Ok(())
        } else {
            Err(format!(
                "cannot pull {image}: {}",
                String::from_utf8_lossy(&pulled.stderr).trim()
            ))
        }
    }

    /// Readies `image` for `lease`, if its registry is allowed: pulled with
    /// the buyer's credentials when the order gave some (always: the
    /// registry, not this host's cache, decides who may run it), else
    /// pulled when the host lacks it or has it only as another buyer's
    /// private image. Blocking: run it off the agent's loop.
    pub fn ready(
        &self,
        image: &str,
        auth: Option<&RegistryAuth>,
        lease: Uuid,
    ) -> Result<(), String> {
        check_allowed(image, &self.allowed_registries)?;
        if let Some(auth) = auth {
            let file = AuthFile::write(&self.auth_dir, lease, image, auth)?;
            self.pull(image, Some(&file))?;
            drop(file);
            let id = self
                .local_id(image)?
                .ok_or_else(|| format!("{image} was pulled but is not on this host"))?;
            return self.private.insert(id);
        }
        match self.local_id(image)? {
            Some(id) if !self.private.contains(&id) => Ok(()),
            Some(_) => self.pull(image, None).map_err(|e| {
                format!("{image} is private here and this order gives no credentials for it: {e}")
            }),
            None => self.pull(image, None),
        }
    }

    /// The ID (`sha256:` and 64 hex digits) of `image`, which the host has
    /// ([`Images::ready`] pulled it): one local look-up.
    pub fn id(&self, image: &str) -> Result<String, String> {
        check_allowed(image, &self.allowed_registries)?;
        let out = self.client(&["image", "inspect", "--format", "{{.Id}}", image])?;
        if !out.status.success() {
            return Err(format!(
                "the image {image} is not on this host: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        normalise_id(String::from_utf8_lossy(&out.stdout).trim())
    }
}

/// podman prints an ID as 64 hex digits, docker with `sha256:` before them.
fn normalise_id(raw: &str) -> Result<String, String> {
    let hex = raw.strip_prefix("sha256:").unwrap_or(raw);
    if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(format!("sha256:{}", hex.to_ascii_lowercase()))
    } else {
        Err(format!("the container client gave no image ID but {raw:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_is_read_as_docker_and_podman_read_it() {
        for (image, registry) in [
            ("python:3.12-slim", "docker.io"),
            ("library/python", "docker.io"),
            ("nvcr.io/nvidia/pytorch:24.01-py3", "nvcr.io"),
            ("localhost/gpuex-test:busybox", "localhost"),
            ("127.0.0.1:5000/x", "127.0.0.1:5000"),
            (
                "Registry.Example.COM/team/x@sha256:00",
                "registry.example.com",
            ),
        ] {
            assert_eq!(registry_of(image), registry, "{image}");
        }
    }

    #[test]
    fn only_listed_registries_run_when_the_provider_lists_any() {
        assert!(check_allowed("python:3", &[]).is_ok());
        let allowed = ["nvcr.io".to_string(), "localhost".to_string()];
        assert!(check_allowed("nvcr.io/nvidia/cuda:12", &allowed).is_ok());
        assert!(check_allowed("localhost/x", &allowed).is_ok());
        let refused = check_allowed("python:3", &allowed).unwrap_err();
        assert!(
            refused.contains("docker.io") && refused.contains("nvcr.io"),
            "{refused}"
        );
    }

    /// A podman stand-in with one registry: its image pulls only with an
    /// auth file holding `token`; it records every call and the auth file
    /// it saw (content and mode).
    fn fake_podman(dir: &Path, token: &str) -> Images {
        use std::os::unix::fs::PermissionsExt;
        let d = dir.display();
        let script = format!(
            "#!/bin/sh\necho \"$*\" >> {d}/calls\ncase \"$1\" in\n\
             image) [ -f {d}/have ] && cat {d}/have && exit 0; exit 1 ;;\n\
             pull) if [ \"$2\" = --authfile ]; then stat -c %a \"$3\" > {d}/mode; \
             cat \"$3\" > {d}/auth; grep -q '{token}' \"$3\" && \
             {{ echo {id} > {d}/have; exit 0; }}; fi; \
             echo 'unauthorized: authentication required' >&2; exit 1 ;;\nesac\n",
            id = "cd".repeat(32),
        );
        let program = dir.join("podman");
        std::fs::write(&program, script).unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        Images {
            runtime: ContainerRuntime {
                program,
                podman: true,
            },
            env: BTreeMap::new(),
            allowed_registries: vec![],
            auth_dir: dir.join("registry-auth"),
            private: Arc::new(PrivateImages::load(dir.join("private-images.json")).unwrap()),
        }
    }

    #[test]
    fn a_private_image_pulls_with_the_buyers_auth_file_and_no_one_else_runs_it_from_the_cache() {
        use base64::Engine;
        let dir = tempfile::tempdir().unwrap();
        let good = RegistryAuth {
            username: "ci".into(),
            password: "s3cret-pass".into(),
        };
        let token = base64::engine::general_purpose::STANDARD.encode("ci:s3cret-pass");
        let images = fake_podman(dir.path(), &token);
        let image = "registry.example.com/team/model:1";
        let lease = Uuid::now_v7();
        images.ready(image, Some(&good), lease).unwrap();
        // podman read a 0600 file naming the image's registry; it is gone.
        let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
        assert_eq!(read("mode").trim(), "600");
        let auth: serde_json::Value = serde_json::from_str(&read("auth")).unwrap();
        assert_eq!(
            auth,
            serde_json::json!({"auths": {"registry.example.com": {"auth": token}}})
        );
        assert!(!dir
            .path()
            .join("registry-auth")
            .join(lease.to_string())
            .exists());
        assert!(
            !read("calls").contains("s3cret"),
            "the password is on no command line"
        );
        let id = format!("sha256:{}", "cd".repeat(32));
        assert!(read("private-images.json").contains(&id));

        // Another order naming it without credentials, or with wrong ones,
        // does not run the cached copy.
        let none = images.ready(image, None, Uuid::now_v7()).unwrap_err();
        assert!(
            none.contains("private") && none.contains("unauthorized"),
            "{none}"
        );
        let wrong = RegistryAuth {
            username: "ci".into(),
            password: "guess".into(),
        };
        let refused = images
            .ready(image, Some(&wrong), Uuid::now_v7())
            .unwrap_err();
        assert!(refused.contains("unauthorized"), "{refused}");
        // A restarted agent remembers.
        let restarted = fake_podman(dir.path(), &token);
        assert!(restarted.ready(image, None, Uuid::now_v7()).is_err());
    }

    #[test]
    fn a_public_image_the_host_has_runs_without_a_pull() {
        let dir = tempfile::tempdir().unwrap();
        let images = fake_podman(dir.path(), "unused");
        std::fs::write(dir.path().join("have"), "ef".repeat(32)).unwrap();
        images
            .ready("localhost/tool:1", None, Uuid::now_v7())
            .unwrap();
        let calls = std::fs::read_to_string(dir.path().join("calls")).unwrap();
        assert!(!calls.contains("pull"), "{calls}");
    }

    #[test]
    fn an_image_id_is_kept_as_sha256_and_64_hex_digits() {
        let hex = "A".repeat(64);
        assert_eq!(
            normalise_id(&hex).unwrap(),
            format!("sha256:{}", "a".repeat(64))
        );
        assert_eq!(
            normalise_id(&format!("sha256:{hex}")).unwrap(),
            format!("sha256:{}", "a".repeat(64))
        );
        assert!(normalise_id("latest").is_err());
    }
}
