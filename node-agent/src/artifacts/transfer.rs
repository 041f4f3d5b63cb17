//! Moving an artifact's bytes from a checked address into a temporary file,
//! hashing them on the way. `http://` goes through hyper over a TCP
//! connection the agent opens itself to one of the checked addresses;
//! `https://` through `curl` (the agent links no TLS stack), pinned to a
//! checked address with `--connect-to`, so curl never resolves the name
//! itself. Redirects are not followed: a redirect could lead anywhere.

use super::destination::Target;
use super::Failure;
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use sha2::{Digest, Sha256};
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;
use tokio::io::AsyncWriteExt;

/// How long a fetch may go without receiving a byte.
const STALL: Duration = Duration::from_secs(60);

/// How long connecting to one address may take.
const CONNECT: Duration = Duration::from_secs(10);

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A TCP connection to the first of `addrs` that answers.
async fn connect(addrs: &[SocketAddr]) -> Result<tokio::net::TcpStream, Failure> {
    let mut errors = Vec::new();
    for addr in addrs {
        match tokio::time::timeout(CONNECT, tokio::net::TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => return Ok(stream),
            Ok(Err(e)) => errors.push(format!("{addr}: {e}")),
            Err(_) => errors.push(format!("{addr}: timed out")),
        }
    }
    Err(Failure::Unreachable(errors.join("; ")))
}

/// GETs `target` from one of `addrs` into `tmp`: its size and SHA-256.
pub(super) async fn fetch_http(
    target: &Target,
    addrs: &[SocketAddr],
    tmp: &Path,
    max_bytes: u64,
) -> Result<(u64, String), Failure> {
    let stream = connect(addrs).await?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake::<_, Empty<bytes::Bytes>>(TokioIo::new(stream))
            .await
            .map_err(|e| Failure::Transfer(format!("handshake: {e}")))?;
    // Drives the connection; it ends with the response's body.
    tokio::spawn(connection);
    let request = hyper::Request::get(target.path.as_str())
        .header(hyper::header::HOST, target.authority.as_str())
        .header(
            hyper::header::USER_AGENT,
            concat!("gpuex-agent/", env!("CARGO_PKG_VERSION")),
        )
        .body(Empty::new())
        .map_err(|e| Failure::BadUrl(e.to_string()))?;
    let response = tokio::time::timeout(STALL, sender.send_request(request))
        .await
        .map_err(|_| Failure::TimedOut)?
        .map_err(|e| Failure::Transfer(e.to_string()))?;
    let status = response.status();
    if !status.is_success() {
        return Err(Failure::Status(status.as_u16()));
    }
    let declared = response
        .headers()
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max_bytes) {
        return Err(Failure::TooLarge(max_bytes));
    }
    let mut file = tokio::fs::File::create(tmp)
        .await
        .map_err(|e| Failure::Store(e.to_string()))?;
    let mut body = response.into_body();
    let mut hasher = Sha256::new();
    let mut total: u64 = 0;
    loop {
        let frame = tokio::time::timeout(STALL, body.frame())
            .await
            .map_err(|_| Failure::TimedOut)?;
        let Some(frame) = frame else { break };
        let frame = frame.map_err(|e| Failure::Transfer(e.to_string()))?;
        if let Ok(chunk) = frame.into_data() {
            total += chunk.len() as u64;
            if total > max_bytes {
                return Err(Failure::TooLarge(max_bytes));
            }
            hasher.update(&chunk);
            file.write_all(&chunk)
                .await
                .map_err(|e| Failure::Store(e.to_string()))?;
        }
    }
    file.sync_all()
        .await
        .map_err(|e| Failure::Store(e.to_string()))?;
    Ok((total, hex(&hasher.finalize())))
}

/// GETs `url` through curl into `tmp`, connecting only to `addr`: its
/// size and SHA-256.
pub(super) async fn fetch_curl(
    url: &str,
    addr: SocketAddr,
    tmp: &Path,
    max_bytes: u64,
) -> Result<(u64, String), Failure> {
    let curl = crate::launcher::find_program("curl").ok_or_else(|| {
        Failure::Store("https:// artifacts need curl on the host (the agent links no TLS)".into())
    })?;
    // Any host and port of this transfer goes to the checked address (the
    // URL's name still serves TLS's certificate check).
    let pin = match addr {
        SocketAddr::V4(a) => format!("::{}:{}", a.ip(), a.port()),
        SocketAddr::V6(a) => format!("::[{}]:{}", a.ip(), a.port()),
    };
    let out = tokio::process::Command::new(curl)
        // First: no .curlrc may add `--location` or a proxy.
        .arg("--disable")
        .args(["--silent", "--show-error", "--proto", "=https"])
        .args(["--noproxy", "*", "--connect-to", &pin])
        .args(["--write-out", "%{http_code}"])
        .args(["--max-filesize", &max_bytes.to_string()])
        .args(["--speed-time", "60", "--speed-limit", "1"])
        .args(["--connect-timeout", &CONNECT.as_secs().to_string()])
        .arg("--output")
        .arg(tmp)
        .arg("--")
        .arg(url)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .map_err(|e| Failure::Store(format!("cannot run curl: {e}")))?;
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_owned();
    match out.status.code() {
        Some(0) => {}
        Some(7) => return Err(Failure::Unreachable(format!("{stderr} ({addr})"))),
        Some(28) => return Err(Failure::TimedOut),
        Some(63) => return Err(Failure::TooLarge(max_bytes)),
        _ => return Err(Failure::Transfer(format!("curl: {stderr}"))),
    }
    // Without `--location` a redirect is an answer like any other: refused.
    let status: u16 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0);
    if !(200..300).contains(&status) {
        return Err(Failure::Status(status));
    }
    let bytes = tokio::fs::read(tmp)
        .await
        .map_err(|e| Failure::Store(e.to_string()))?;
    if bytes.len() as u64 > max_bytes {
        return Err(Failure::TooLarge(max_bytes));
    }
    Ok((bytes.len() as u64, hex(&Sha256::digest(&bytes))))
}
