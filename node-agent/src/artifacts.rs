//! Fetching a lease's artifacts (DESIGN §13) into its working folder before
//! its workload starts: each is streamed to a temporary file, counted against
//! the size limit and hashed on the way, and renamed into place only when its
//! SHA-256 matches. `http://` goes through hyper; `https://` through `curl`
//! (the agent links no TLS stack), then is hashed the same way. Progress
//! lines go to the lease's output tail.

use gpuex::protocol::Artifact;
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::TokioExecutor;
use sha2::{Digest, Sha256};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::AsyncWriteExt;

/// How long a fetch may go without receiving a byte.
const STALL: Duration = Duration::from_secs(60);

/// What a fetch said along the way, and why it failed.
#[derive(Debug, Default)]
pub struct Progress {
    pub lines: String,
}

impl Progress {
    fn say(&mut self, line: String) {
        tracing::info!("{line}");
        self.lines.push_str("[gpuex-agent] ");
        self.lines.push_str(&line);
        self.lines.push('\n');
    }
}

/// Fetch every artifact into `workdir`, owned by `owner` (uid, gid). Stops
/// at the first failure, whose reason is returned with the progress so far.
pub async fn fetch_all(
    artifacts: &[Artifact],
    workdir: &Path,
    owner: Option<(u32, u32)>,
    max_bytes: u64,
) -> Result<Progress, (Progress, String)> {
    let mut progress = Progress::default();
    for (i, a) in artifacts.iter().enumerate() {
        if !Artifact::path_is_safe(&a.path) || !Artifact::sha256_is_valid(&a.sha256) {
            let reason = format!("artifacts[{i}]: unsafe path or malformed sha256");
            return Err((progress, reason));
        }
        progress.say(format!("fetching artifacts[{i}] {} -> {}", a.url, a.path));
        let target = workdir.join(&a.path);
        match fetch_one(a, &target, workdir, owner, max_bytes).await {
            Ok(bytes) => progress.say(format!(
                "artifacts[{i}] {}: {bytes} bytes, sha256 ok",
                a.path
            )),
            Err(e) => {
                let reason = format!("artifacts[{i}] ({}): {e}", a.url);
                progress.say(format!("failed: {reason}"));
                return Err((progress, reason));
            }
        }
    }
    Ok(progress)
}

async fn fetch_one(
    a: &Artifact,
    target: &Path,
    workdir: &Path,
    owner: Option<(u32, u32)>,
    max_bytes: u64,
) -> Result<u64, String> {
    if let Some(parent) = target.parent() {
        make_dirs(workdir, parent, owner)?;
    }
    let tmp = PathBuf::from(format!("{}.gpuex-part", target.display()));
    let result = if a.url.starts_with("http://") {
        fetch_http(&a.url, &tmp, max_bytes).await
    } else if a.url.starts_with("https://") {
        fetch_curl(&a.url, &tmp, max_bytes).await
    } else {
        Err("only http:// and https:// URLs".to_string())
    };
    let (bytes, digest) = match result {
        Ok(r) => r,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    if !digest.eq_ignore_ascii_case(&a.sha256) {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!(
            "sha256 mismatch: expected {}, got {digest}",
            a.sha256.to_ascii_lowercase()
        ));
    }
    // Readable (and runnable, for scripts) by the lease's user only; the
    // folder is 0700 anyway.
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| e.to_string())?;
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::chown(&tmp, Some(uid), Some(gid)).map_err(|e| e.to_string())?;
    }
    std::fs::rename(&tmp, target).map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// Create `dir` (inside `workdir`) and its missing parents, owned by `owner`.
fn make_dirs(workdir: &Path, dir: &Path, owner: Option<(u32, u32)>) -> Result<(), String> {
    let rel = dir
        .strip_prefix(workdir)
        .map_err(|_| "path leaves the working folder".to_string())?;
    let mut at = workdir.to_path_buf();
    for part in rel.components() {
        at.push(part);
        if !at.exists() {
            std::fs::create_dir(&at).map_err(|e| e.to_string())?;
            std::fs::set_permissions(&at, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| e.to_string())?;
            if let Some((uid, gid)) = owner {
                std::os::unix::fs::chown(&at, Some(uid), Some(gid)).map_err(|e| e.to_string())?;
            }
        }
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

async fn fetch_http(url: &str, tmp: &Path, max_bytes: u64) -> Result<(u64, String), String> {
    let mut connector = HttpConnector::new();
    connector.set_connect_timeout(Some(Duration::from_secs(10)));
    let client: Client<_, Empty<bytes::Bytes>> =
        Client::builder(TokioExecutor::new()).build(connector);
    let uri: hyper::Uri = url.parse().map_err(|e| format!("bad URL: {e}"))?;
    let response = tokio::time::timeout(STALL, client.get(uri))
        .await
        .map_err(|_| "timed out".to_string())?
        .map_err(|e| format!("cannot fetch: {e}"))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("the server answered {status}"));
    }
    let declared = response
        .headers()
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max_bytes) {
        return Err(format!("larger than the limit of {max_bytes} bytes"));
    }
    let mut file = tokio::fs::File::create(tmp)
        .await
        .map_err(|e| e.to_string())?;
    let mut body = response.into_body();
    let mut hasher = Sha256::new();
    let mut total: u64 = 0;
    loop {
        let frame = tokio::time::timeout(STALL, body.frame())
            .await
            .map_err(|_| "stalled".to_string())?;
        let Some(frame) = frame else { break };
        let frame = frame.map_err(|e| format!("cannot fetch: {e}"))?;
        if let Ok(chunk) = frame.into_data() {
            total += chunk.len() as u64;
            if total > max_bytes {
                return Err(format!("larger than the limit of {max_bytes} bytes"));
            }
            hasher.update(&chunk);
            file.write_all(&chunk).await.map_err(|e| e.to_string())?;
        }
    }
    file.sync_all().await.map_err(|e| e.to_string())?;
    Ok((total, hex(&hasher.finalize())))
}

async fn fetch_curl(url: &str, tmp: &Path, max_bytes: u64) -> Result<(u64, String), String> {
    let curl = crate::launcher::find_program("curl")
        .ok_or("https:// artifacts need curl on the host (the agent links no TLS)")?;
    let status = tokio::process::Command::new(curl)
        .args([
            "--fail",
            "--silent",
            "--show-error",
            "--location",
            "--proto",
            "=https",
        ])
        .args([
            "--max-filesize",
            &max_bytes.to_string(),
            "--speed-time",
            "60",
            "--speed-limit",
            "1",
        ])
        .arg("--output")
        .arg(tmp)
        .arg("--")
        .arg(url)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .map_err(|e| format!("cannot run curl: {e}"))?;
    if !status.status.success() {
        return Err(format!(
            "curl: {}",
            String::from_utf8_lossy(&status.stderr).trim()
        ));
    }
    let bytes = tokio::fs::read(tmp).await.map_err(|e| e.to_string())?;
    if bytes.len() as u64 > max_bytes {
        return Err(format!("larger than the limit of {max_bytes} bytes"));
    }
    Ok((bytes.len() as u64, hex(&Sha256::digest(&bytes))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    /// Serves `body` once per connection on 127.0.0.1.
    async fn serve(body: &'static [u8]) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf).await;
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = s.write_all(head.as_bytes()).await;
                let _ = s.write_all(body).await;
            }
        });
        format!("http://{addr}/a")
    }

    fn scratch() -> PathBuf {
        let d = std::env::temp_dir().join(format!("gpuex-artifacts-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    const HELLO_SHA: &str = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";

    #[tokio::test]
    async fn a_matching_artifact_lands_at_its_path_and_a_wrong_hash_fails() {
        let url = serve(b"hello").await;
        let dir = scratch();
        let good = Artifact {
            url: url.clone(),
            sha256: HELLO_SHA.into(),
            path: "code/x.txt".into(),
        };
        let p = fetch_all(&[good], &dir, None, 1000).await.unwrap();
        assert!(p.lines.contains("sha256 ok"), "{}", p.lines);
        assert_eq!(std::fs::read(dir.join("code/x.txt")).unwrap(), b"hello");

        let bad = Artifact {
            url,
            sha256: "0".repeat(64),
            path: "y.txt".into(),
        };
        let (p, reason) = fetch_all(&[bad], &dir, None, 1000).await.unwrap_err();
        assert!(reason.contains("sha256 mismatch"), "{reason}");
        assert!(p.lines.contains("failed"));
        assert!(!dir.join("y.txt").exists());
        assert!(!dir.join("y.txt.gpuex-part").exists());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[tokio::test]
    async fn an_artifact_over_the_size_limit_or_unreachable_fails() {
        let url = serve(b"hello").await;
        let dir = scratch();
        let a = Artifact {
            url,
            sha256: HELLO_SHA.into(),
            path: "x".into(),
        };
        let (_, reason) = fetch_all(&[a], &dir, None, 3).await.unwrap_err();
        assert!(reason.contains("limit"), "{reason}");
        let gone = Artifact {
            url: "http://127.0.0.1:1/x".into(),
            sha256: HELLO_SHA.into(),
            path: "x".into(),
        };
        let (_, reason) = fetch_all(&[gone], &dir, None, 1000).await.unwrap_err();
        assert!(reason.contains("cannot fetch"), "{reason}");
        let _ = std::fs::remove_dir_all(dir);
    }
}
