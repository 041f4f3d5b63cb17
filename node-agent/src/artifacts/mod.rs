//! Fetching a lease's artifacts (ARCHITECTURE.md §13) into its working folder before
//! its workload starts: each is streamed to a temporary file, counted against
//! the size limit and hashed on the way, and renamed into place only when its
//! SHA-256 matches. Where it may be fetched from is checked at fetch time
//! ([`destination`], ARCHITECTURE.md §19); how its bytes travel is [`transfer`].
//! Progress lines go to the lease's output tail.
//!
//! What the buyer sees of a failure (the lease's `failure` and its logs)
//! says what went wrong in general words, never the addresses a name
//! resolved to, the ports tried or the hash of what came back: those can
//! describe the provider's own network. The whole story goes to the agent's
//! log.

mod destination;
mod transfer;

use destination::Scheme;
use gpuex_wire::netguard::Forbidden;
use gpuex_wire::protocol::Artifact;
use std::net::IpAddr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// What the agent allows artifact fetches.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    /// The most an artifact may weigh, in bytes.
    pub max_bytes: u64,
    /// Whether loopback, private and other internal addresses may be
    /// fetched from (`--artifact-allow-private`).
    pub allow_private: bool,
}

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

/// Why one artifact could not be fetched. [`Failure::public`] is what the
/// buyer sees; `Display` is for the agent's log.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Failure {
    #[error("bad URL: {0}")]
    BadUrl(String),
    #[error("`{host}` resolves to {ip}, a {why}")]
    NotAllowed {
        host: String,
        ip: IpAddr,
        why: Forbidden,
    },
    #[error("`{host}` does not resolve: {error}")]
    Unresolved { host: String, error: String },
    #[error("cannot connect: {0}")]
    Unreachable(String),
    #[error("the server answered {0}")]
    Status(u16),
    #[error("larger than the limit of {0} bytes")]
    TooLarge(u64),
    #[error("timed out")]
    TimedOut,
    #[error("the transfer failed: {0}")]
    Transfer(String),
    #[error("sha256 mismatch: expected {expected}, got {got}")]
    Mismatch { expected: String, got: String },
    #[error("cannot store it: {0}")]
    Store(String),
}

impl Failure {
    /// The failure in words that carry no address, port or hash.
    pub(crate) fn public(&self) -> String {
        match self {
            Failure::BadUrl(_) => "malformed URL".into(),
            Failure::NotAllowed { .. } => "destination not allowed".into(),
            Failure::Unresolved { .. } => "the host does not resolve".into(),
            Failure::Unreachable(_) => "cannot connect".into(),
            Failure::Status(code) if (300..400).contains(code) => {
                format!("the server answered {code} (redirects are not followed)")
            }
            Failure::Status(code) => format!("the server answered {code}"),
            Failure::TooLarge(max) => format!("larger than the limit of {max} bytes"),
            Failure::TimedOut => "timed out".into(),
            Failure::Transfer(_) => "the transfer failed".into(),
            Failure::Mismatch { .. } => "sha256 mismatch".into(),
            Failure::Store(_) => "cannot store it on the node".into(),
        }
    }
}

/// Fetch every artifact into `workdir`, owned by `owner` (uid, gid). Stops
/// at the first failure, whose reason (for the buyer) is returned with the
/// progress so far.
pub async fn fetch_all(
    artifacts: &[Artifact],
    workdir: &Path,
    owner: Option<(u32, u32)>,
    policy: Policy,
) -> Result<Progress, (Progress, String)> {
    let mut progress = Progress::default();
    for (i, a) in artifacts.iter().enumerate() {
        if !Artifact::path_is_safe(&a.path) || !Artifact::sha256_is_valid(&a.sha256) {
            let reason = format!("artifacts[{i}]: unsafe path or malformed sha256");
            return Err((progress, reason));
        }
        progress.say(format!("fetching artifacts[{i}] {} -> {}", a.url, a.path));
        let target = workdir.join(&a.path);
        match fetch_one(a, &target, workdir, owner, policy).await {
            Ok(bytes) => progress.say(format!(
                "artifacts[{i}] {}: {bytes} bytes, sha256 ok",
                a.path
            )),
            Err(e) => {
                tracing::warn!(artifact = i, url = %a.url, "artifact fetch failed: {e}");
                let reason = format!("artifacts[{i}]: {}", e.public());
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
    policy: Policy,
) -> Result<u64, Failure> {
    if let Some(parent) = target.parent() {
        make_dirs(workdir, parent, owner).map_err(Failure::Store)?;
    }
    let tmp = PathBuf::from(format!("{}.gpuex-part", target.display()));
    let result = fetch_checked(&a.url, &tmp, policy).await;
    let (bytes, digest) = match result {
        Ok(r) => r,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    if !digest.eq_ignore_ascii_case(&a.sha256) {
        let _ = std::fs::remove_file(&tmp);
        return Err(Failure::Mismatch {
            expected: a.sha256.to_ascii_lowercase(),
            got: digest,
        });
    }
    let store = |e: std::io::Error| Failure::Store(e.to_string());
    // Readable (and runnable, for scripts) by the lease's user only; the
    // folder is 0700 anyway.
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o700)).map_err(store)?;
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::chown(&tmp, Some(uid), Some(gid)).map_err(store)?;
    }
    std::fs::rename(&tmp, target).map_err(store)?;
    Ok(bytes)
}

/// Resolves and checks the URL's host, then fetches from the checked
/// addresses only: its size and SHA-256.
async fn fetch_checked(url: &str, tmp: &Path, policy: Policy) -> Result<(u64, String), Failure> {
    let target = destination::parse(url)?;
    let addrs = destination::resolve(&target, policy.allow_private).await?;
    match target.scheme {
        Scheme::Http => transfer::fetch_http(&target, &addrs, tmp, policy.max_bytes).await,
        Scheme::Https => {
            // `resolve` never returns an empty list.
            let first = addrs
                .first()
                .copied()
                .ok_or_else(|| Failure::Unreachable("no address".into()))?;
            transfer::fetch_curl(url, first, tmp, policy.max_bytes).await
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Answers every connection on 127.0.0.1 with `head` and `body`, and
    /// counts the connections.
    async fn serve_raw(head: String, body: &'static [u8]) -> (u16, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let count = Arc::new(AtomicUsize::new(0));
        let seen = count.clone();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                seen.fetch_add(1, Ordering::SeqCst);
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf).await;
                let _ = s.write_all(head.as_bytes()).await;
                let _ = s.write_all(body).await;
            }
        });
        (port, count)
    }

    /// Serves `body` once per connection on 127.0.0.1.
    async fn serve(body: &'static [u8]) -> String {
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let (port, _) = serve_raw(head, body).await;
        format!("http://127.0.0.1:{port}/a")
    }

    fn scratch() -> PathBuf {
        let d = std::env::temp_dir().join(format!("gpuex-artifacts-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    const HELLO_SHA: &str = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";

    /// As the demo and the tests run the agent: local artifacts allowed.
    fn local(max_bytes: u64) -> Policy {
        Policy {
            max_bytes,
            allow_private: true,
        }
    }

    fn hello(url: String, path: &str) -> Artifact {
        Artifact {
            url,
            sha256: HELLO_SHA.into(),
            path: path.into(),
        }
    }

    #[tokio::test]
    async fn a_matching_artifact_lands_at_its_path_and_a_wrong_hash_fails_without_the_hash() {
        let url = serve(b"hello").await;
        let dir = scratch();
        let p = fetch_all(&[hello(url.clone(), "code/x.txt")], &dir, None, local(1000))
            .await
            .unwrap();
        assert!(p.lines.contains("sha256 ok"), "{}", p.lines);
        assert_eq!(std::fs::read(dir.join("code/x.txt")).unwrap(), b"hello");

        let bad = Artifact {
            url,
            sha256: "0".repeat(64),
            path: "y.txt".into(),
        };
        let (p, reason) = fetch_all(&[bad], &dir, None, local(1000))
            .await
            .unwrap_err();
        assert_eq!(reason, "artifacts[0]: sha256 mismatch");
        assert!(
            p.lines.ends_with("failed: artifacts[0]: sha256 mismatch\n"),
            "{}",
            p.lines
        );
        assert!(!p.lines.contains(HELLO_SHA), "{}", p.lines);
        assert!(!dir.join("y.txt").exists());
        assert!(!dir.join("y.txt.gpuex-part").exists());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[tokio::test]
    async fn an_artifact_over_the_size_limit_or_unreachable_fails_naming_no_port() {
        let url = serve(b"hello").await;
        let dir = scratch();
        let (_, reason) = fetch_all(&[hello(url, "x")], &dir, None, local(3))
            .await
            .unwrap_err();
        assert_eq!(reason, "artifacts[0]: larger than the limit of 3 bytes");
        let gone = hello("http://127.0.0.1:1/x".into(), "x");
        let (p, reason) = fetch_all(&[gone], &dir, None, local(1000))
            .await
            .unwrap_err();
        assert_eq!(reason, "artifacts[0]: cannot connect");
        assert!(
            p.lines.ends_with("failed: artifacts[0]: cannot connect\n"),
            "{}",
            p.lines
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[tokio::test]
    async fn a_private_destination_is_refused_before_any_connection_in_every_spelling() {
        let head = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\n";
        let (port, connections) = serve_raw(head.into(), b"hello").await;
        let dir = scratch();
        let strict = Policy {
            max_bytes: 1000,
            allow_private: false,
        };
        for host in [
            "127.0.0.1",
            "localhost",
            "[::1]",
            "[::ffff:127.0.0.1]",
            "[::ffff:0:7f00:1]",
            "[2002:7f00:1::]",
            "[64:ff9b::7f00:1]",
            "2130706433",
        ] {
            let url = format!("http://{host}:{port}/a");
            let (p, reason) = fetch_all(&[hello(url.clone(), "x")], &dir, None, strict)
                .await
                .unwrap_err();
            assert_eq!(reason, "artifacts[0]: destination not allowed", "{url}");
            assert!(
                p.lines
                    .ends_with("failed: artifacts[0]: destination not allowed\n"),
                "{url}: {}",
                p.lines
            );
            assert!(!dir.join("x").exists());
        }
        // https:// is checked the same way, before curl runs.
        let url = format!("https://127.0.0.1:{port}/a");
        let (_, reason) = fetch_all(&[hello(url, "x")], &dir, None, strict)
            .await
            .unwrap_err();
        assert_eq!(reason, "artifacts[0]: destination not allowed");
        assert_eq!(
            connections.load(Ordering::SeqCst),
            0,
            "nothing reached the server"
        );
        // With --artifact-allow-private the same artifact is fetched.
        let url = format!("http://localhost:{port}/a");
        fetch_all(&[hello(url, "x")], &dir, None, local(1000))
            .await
            .unwrap();
        assert_eq!(std::fs::read(dir.join("x")).unwrap(), b"hello");
        assert_eq!(connections.load(Ordering::SeqCst), 1);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[tokio::test]
    async fn a_redirect_is_not_followed() {
        let (target_port, reached) = serve_raw(
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\n".into(),
            b"hello",
        )
        .await;
        let head = format!(
            "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:{target_port}/a\r\n\
             Content-Length: 0\r\nConnection: close\r\n\r\n"
        );
        let (port, _) = serve_raw(head, b"").await;
        let dir = scratch();
        let url = format!("http://127.0.0.1:{port}/a");
        let (_, reason) = fetch_all(&[hello(url, "x")], &dir, None, local(1000))
            .await
            .unwrap_err();
        assert_eq!(
            reason,
            "artifacts[0]: the server answered 302 (redirects are not followed)"
        );
        assert_eq!(reached.load(Ordering::SeqCst), 0);
        let _ = std::fs::remove_dir_all(dir);
    }
}
