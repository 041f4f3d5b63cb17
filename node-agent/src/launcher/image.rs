//! The order's image under the provider's policy: it comes only from a
//! registry the provider allows (`--allow-registry`), and it runs by the ID
//! it resolves to when the lease starts, which the lease records, so what
//! ran is known even if the tag moves afterwards.

use super::ContainerRuntime;
use std::collections::BTreeMap;
use std::process::{Command, Stdio};

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

/// What pulls and inspects images: the container client with its fixed
/// environment and the provider's registries. Cloned into the background
/// task that readies a lease (a pull can take minutes; the agent's loop
/// must not wait on it).
#[derive(Debug, Clone)]
pub struct Images {
    pub runtime: ContainerRuntime,
    pub env: BTreeMap<String, String>,
    pub allowed_registries: Vec<String>,
}

impl Images {
    fn client(&self, args: &[&str]) -> Result<std::process::Output, String> {
        Command::new(&self.runtime.program)
            .args(args)
            .env_clear()
            .envs(&self.env)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", self.runtime.program.display()))
    }

    /// Pulls `image` unless the host has it, if its registry is allowed.
    /// Blocking: run it off the agent's loop.
    pub fn ready(&self, image: &str) -> Result<(), String> {
        check_allowed(image, &self.allowed_registries)?;
        if self
            .client(&["image", "inspect", "--format", "{{.Id}}", image])?
            .status
            .success()
        {
            return Ok(());
        }
        let pulled = self.client(&["pull", "--quiet", image])?;
        if pulled.status.success() {
            Ok(())
        } else {
            Err(format!(
                "cannot pull {image}: {}",
                String::from_utf8_lossy(&pulled.stderr).trim()
            ))
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
