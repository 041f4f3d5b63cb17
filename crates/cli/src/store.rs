//! Where `gpuex login` keeps its credentials: `credentials.json` in the
//! user's config folder (`GPUEX_CONFIG_DIR`, else the platform's, e.g.
//! `~/.config/gpuex`), readable by the user alone (0600).

use super::CliError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

/// One server's credential.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Credential {
    pub email: String,
    /// A long-lived `gpx_` API key minted at login (revoked at logout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_id: Option<String>,
    /// Or a short-lived access token (`login --session`), with its expiry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<chrono::DateTime<chrono::Utc>>,
    /// The session's rotating refresh token: swapped for a new pair when the
    /// access token has expired (each works once), revoked by `gpuex logout`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_expires_at: Option<chrono::DateTime<chrono::Utc>>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Credentials {
    /// The server of the last login: used when neither `--server` nor `GPUEX_SERVER` is given.
    #[serde(default)]
    pub default_server: Option<String>,
    #[serde(default)]
    pub servers: BTreeMap<String, Credential>,
}

pub fn config_dir() -> Result<PathBuf, CliError> {
    if let Some(dir) = std::env::var_os("GPUEX_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    directories::ProjectDirs::from("dev", "gpuex", "gpuex")
        .map(|p| p.config_dir().to_path_buf())
        .ok_or_else(|| CliError::io("no home folder to keep credentials in; set GPUEX_CONFIG_DIR"))
}

fn path() -> Result<PathBuf, CliError> {
    Ok(config_dir()?.join("credentials.json"))
}

pub fn load() -> Result<Credentials, CliError> {
    let path = path()?;
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| CliError::io(format!("{} is not valid: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Credentials::default()),
        Err(e) => Err(CliError::io(format!("cannot read {}: {e}", path.display()))),
    }
}

/// Writes the file whole through a temporary one, created 0600 so the secret
/// is never readable by others, not even for a moment.
pub fn save(credentials: &Credentials) -> Result<PathBuf, CliError> {
    let path = path()?;
    let dir = path
        .parent()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    let fail = |e: std::io::Error| CliError::io(format!("cannot write {}: {e}", path.display()));
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(&dir).map_err(fail)?;
    let tmp = dir.join(".credentials.json.tmp");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&tmp).map_err(fail)?;
    let json = serde_json::to_vec_pretty(credentials)
        .map_err(|e| CliError::io(format!("cannot encode credentials: {e}")))?;
    file.write_all(&json).map_err(fail)?;
    file.sync_all().map_err(fail)?;
    #[cfg(unix)]
    {
        // An older file may have been created with looser permissions.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600)).map_err(fail)?;
    }
    std::fs::rename(&tmp, &path).map_err(fail)?;
    Ok(path)
}
