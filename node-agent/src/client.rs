//! A small JSON-over-HTTP client for the agent protocol.
//!
//! Plain `http://` through hyper: no TLS stack to compile, and the agent talks
//! to one server; terminate TLS in front of the server (or on a sidecar) when
//! the link leaves the machine room.

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::header::{AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::{Method, Request, StatusCode};
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::TokioExecutor;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::time::Duration;

/// Why a request did not get a useful answer.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// No answer at all: connection refused, reset, timed out.
    #[error("cannot reach the server: {0}")]
    Unreachable(String),
    /// The server answered with an error status.
    #[error("the server answered {status}: {body}")]
    Status { status: StatusCode, body: String },
    /// The answer was not the JSON expected.
    #[error("the server's answer is not valid: {0}")]
    Decode(String),
}

impl ClientError {
    /// 401: the server no longer knows the node token (revoked, or its node
    /// deleted). Nothing this agent sends will be taken again.
    pub fn is_unauthorized(&self) -> bool {
        matches!(self, ClientError::Status { status, .. } if *status == StatusCode::UNAUTHORIZED)
    }

    /// A 4xx other than 408/429: retrying the same request will not help.
    pub fn is_permanent(&self) -> bool {
        matches!(self, ClientError::Status { status, .. }
            if status.is_client_error()
                && *status != StatusCode::REQUEST_TIMEOUT
                && *status != StatusCode::TOO_MANY_REQUESTS)
    }
}

/// The agent's connection to its server.
#[derive(Clone)]
pub struct ApiClient {
    base: String,
    token: String,
    http: Client<HttpConnector, Full<Bytes>>,
    /// Files, streamed from disk.
    uploads: Client<HttpConnector, BoxBody<Bytes, std::io::Error>>,
    timeout: Duration,
}

impl ApiClient {
    /// A client for `base` (e.g. `http://127.0.0.1:8080`).
    pub fn new(base: &str, token: &str) -> Result<ApiClient, String> {
        if !base.starts_with("http://") {
            return Err(format!(
                "`{base}`: gpuex-agent speaks plain http://; put TLS in front of the server"
            ));
        }
        let mut connector = HttpConnector::new();
        connector.set_connect_timeout(Some(Duration::from_secs(5)));
        Ok(ApiClient {
            base: base.trim_end_matches('/').to_string(),
            token: token.to_string(),
            http: Client::builder(TokioExecutor::new()).build(connector.clone()),
            uploads: Client::builder(TokioExecutor::new()).build(connector),
            timeout: Duration::from_secs(10),
        })
    }

    /// POST `body` as JSON to `path` and decode the JSON answer.
    pub async fn post<B: Serialize, R: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<R, ClientError> {
        let bytes = self.post_raw(path, body).await?;
        serde_json::from_slice(&bytes).map_err(|e| ClientError::Decode(e.to_string()))
    }

    /// POST `body` as JSON to `path`, ignoring the answer's body.
    pub async fn post_no_content<B: Serialize>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<(), ClientError> {
        self.post_raw(path, body).await.map(|_| ())
    }

    /// PUT the first `size` bytes of `file` to `path`, streamed. The time
    /// allowed grows with the size (a minute, and a second a MiB).
    pub async fn put_file(
        &self,
        path: &str,
        file: tokio::fs::File,
        size: u64,
    ) -> Result<(), ClientError> {
        use futures_util::TryStreamExt;
        use tokio::io::AsyncReadExt;
        let frames =
            tokio_util::io::ReaderStream::new(file.take(size)).map_ok(hyper::body::Frame::data);
        let request = Request::builder()
            .method(Method::PUT)
            .uri(format!("{}{}", self.base, path))
            .header(CONTENT_TYPE, "application/octet-stream")
            .header(CONTENT_LENGTH, size)
            .header(AUTHORIZATION, format!("Bearer {}", self.token))
            .body(BodyExt::boxed(StreamBody::new(frames)))
            .map_err(|e| ClientError::Unreachable(e.to_string()))?;
        let allowed = Duration::from_secs(60 + size / (1 << 20));
        let exchange = async {
            let response = self
                .uploads
                .request(request)
                .await
                .map_err(|e| ClientError::Unreachable(e.to_string()))?;
            answer(response).await.map(|_| ())
        };
        tokio::time::timeout(allowed, exchange)
            .await
            .unwrap_or_else(|_| Err(ClientError::Unreachable("timed out".into())))
    }

    /// GET `path` into `dest`, streamed, checking the body against the
    /// answer's `X-Checksum-Sha256`. `None` on 404; else the answer's
    /// headers.
    pub async fn get_file(
        &self,
        path: &str,
        dest: &std::path::Path,
    ) -> Result<Option<hyper::HeaderMap>, ClientError> {
        use sha2::Digest;
        use tokio::io::AsyncWriteExt;
        let request = Request::builder()
            .method(Method::GET)
            .uri(format!("{}{}", self.base, path))
            .header(AUTHORIZATION, format!("Bearer {}", self.token))
            .body(Full::new(Bytes::new()))
            .map_err(|e| ClientError::Unreachable(e.to_string()))?;
        let exchange = async {
            let response = self
                .http
                .request(request)
                .await
                .map_err(|e| ClientError::Unreachable(e.to_string()))?;
            if response.status() == StatusCode::NOT_FOUND {
                return Ok(None);
            }
            if !response.status().is_success() {
                return answer(response).await.map(|_| None);
            }
            let headers = response.headers().clone();
            let fail = |e: std::io::Error| {
                ClientError::Decode(format!("cannot write {}: {e}", dest.display()))
            };
            let mut file = tokio::fs::File::create(dest).await.map_err(fail)?;
            let mut hasher = sha2::Sha256::new();
            let mut body = response.into_body();
            while let Some(frame) = body.frame().await {
                let frame = frame.map_err(|e| ClientError::Unreachable(e.to_string()))?;
                if let Ok(data) = frame.into_data() {
                    hasher.update(&data);
                    file.write_all(&data).await.map_err(fail)?;
                }
            }
            file.sync_all().await.map_err(fail)?;
            let got: String = hasher
                .finalize()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            let said = headers
                .get("x-checksum-sha256")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            if got != said {
                return Err(ClientError::Decode(format!(
                    "the body's SHA-256 is {got}, not the {said} the server said"
                )));
            }
            Ok(Some(headers))
        };
        tokio::time::timeout(Duration::from_secs(600), exchange)
            .await
            .unwrap_or_else(|_| Err(ClientError::Unreachable("timed out".into())))
    }

    async fn post_raw<B: Serialize>(&self, path: &str, body: &B) -> Result<Bytes, ClientError> {
        let json = serde_json::to_vec(body).map_err(|e| ClientError::Decode(e.to_string()))?;
        let request = Request::builder()
            .method(Method::POST)
            .uri(format!("{}{}", self.base, path))
            .header(CONTENT_TYPE, "application/json")
            .header(AUTHORIZATION, format!("Bearer {}", self.token))
            .body(Full::new(Bytes::from(json)))
            .map_err(|e| ClientError::Unreachable(e.to_string()))?;
        let exchange = async {
            let response = self
                .http
                .request(request)
                .await
                .map_err(|e| ClientError::Unreachable(e.to_string()))?;
            answer(response).await
        };
        tokio::time::timeout(self.timeout, exchange)
            .await
            .unwrap_or_else(|_| Err(ClientError::Unreachable("timed out".into())))
    }
}

/// The answer's body if its status is a success, else the error it says.
async fn answer(response: hyper::Response<hyper::body::Incoming>) -> Result<Bytes, ClientError> {
    let status = response.status();
    let body = match response.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        // A refusal that came while the request was still being sent (an
        // upload past its quota) can lose its body to the connection's
        // reset: the status still says what happened.
        Err(_) if !status.is_success() => Bytes::new(),
        Err(e) => return Err(ClientError::Unreachable(e.to_string())),
    };
    if status.is_success() {
        Ok(body)
    } else {
        Err(ClientError::Status {
            status,
            body: String::from_utf8_lossy(&body).chars().take(500).collect(),
        })
    }
}
