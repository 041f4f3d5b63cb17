//! The client's HTTP side: one `reqwest` client, the caller's credential,
//! and problem+json answers turned into [`CliError`]s with exit codes.

use super::{CliError, Exit};
use reqwest::{Method, RequestBuilder, Response, StatusCode};
use serde::Deserialize;
use serde_json::Value;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

/// The envelope every cursor-paged list shares (`OrderPage`, `LeasePage`,
/// `ListingPage`, …). Its items stay as the server sent them, for
/// `--output json`; the commands read each as the server's item type.
#[derive(Deserialize)]
struct Page {
    items: Vec<Value>,
    next_cursor: Option<uuid::Uuid>,
}

pub struct Api {
    pub server: String,
    client: reqwest::Client,
    /// For streams, which stay open for as long as the user follows them.
    streaming: reqwest::Client,
    pub token: Option<String>,
    /// The highest `Gpuex-Seq` a write of this client was answered with:
    /// every later request asks for it (`Gpuex-Min-Seq`), so whichever
    /// replica answers shows this client its own writes (ARCHITECTURE.md §20).
    seen_seq: AtomicI64,
}

impl Api {
    pub fn new(server: &str, token: Option<String>) -> Result<Api, CliError> {
        let server = server.trim_end_matches('/').to_owned();
        let agent = concat!("gpuex-cli/", env!("CARGO_PKG_VERSION"));
        let build = |timeout: Option<Duration>| {
            let mut b = reqwest::Client::builder()
                .user_agent(agent)
                .connect_timeout(Duration::from_secs(10));
            if let Some(t) = timeout {
                b = b.timeout(t);
            }
            b.build()
                .map_err(|e| CliError::io(format!("cannot start the HTTP client: {e}")))
        };
        Ok(Api {
            server,
            client: build(Some(Duration::from_secs(60)))?,
            streaming: build(None)?,
            token,
            seen_seq: AtomicI64::new(0),
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}{}", self.server, path)
    }

    pub fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.with_auth(self.client.request(method, self.url(path)))
    }

    pub fn stream_request(&self, path: &str) -> RequestBuilder {
        self.with_auth(self.streaming.get(self.url(path)))
    }

    /// A POST whose body is a file streamed as it is read: no time limit,
    /// as an upload of hundreds of megabytes may take minutes.
    pub fn upload_request(&self, path: &str) -> RequestBuilder {
        self.with_auth(self.streaming.post(self.url(path)))
    }

    fn with_auth(&self, builder: RequestBuilder) -> RequestBuilder {
        let seen = self.seen_seq.load(Ordering::Relaxed);
        let builder = if seen > 0 {
            builder.header("Gpuex-Min-Seq", seen)
        } else {
            builder
        };
        match &self.token {
            Some(t) => builder.bearer_auth(t),
            None => builder,
        }
    }

    /// Remembers the journal row a write's answer names.
    fn saw(&self, response: &Response) {
        let seq = response
            .headers()
            .get("gpuex-seq")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<i64>().ok());
        if let Some(seq) = seq {
            self.seen_seq.fetch_max(seq, Ordering::Relaxed);
        }
    }

    /// Sends and returns the JSON body of a 2xx answer (Null when empty).
    pub async fn send(&self, builder: RequestBuilder) -> Result<Value, CliError> {
        let response = self.execute(builder).await?;
        let bytes = response.bytes().await.map_err(|e| self.transport(&e))?;
        if bytes.is_empty() {
            return Ok(Value::Null);
        }
        serde_json::from_slice(&bytes)
            .map_err(|e| CliError::new(Exit::Server, format!("the server sent invalid JSON: {e}")))
    }

    /// Sends and returns the response of a 2xx answer, the error of any other.
    pub async fn execute(&self, builder: RequestBuilder) -> Result<Response, CliError> {
        let response = builder.send().await.map_err(|e| self.transport(&e))?;
        self.saw(&response);
        if response.status().is_success() {
            Ok(response)
        } else {
            Err(problem(response).await)
        }
    }

    pub async fn get(&self, path: &str, query: &[(&str, String)]) -> Result<Value, CliError> {
        self.send(self.request(Method::GET, path).query(query))
            .await
    }

    pub async fn post(&self, path: &str, body: &Value) -> Result<Value, CliError> {
        self.send(self.request(Method::POST, path).json(body)).await
    }

    /// POST with an `Idempotency-Key`, retried on transport errors and 5xx
    /// under the same key, so a lost answer never places an order twice.
    pub async fn post_idempotent(&self, path: &str, body: &Value) -> Result<Value, CliError> {
        let key = uuid::Uuid::new_v4().to_string();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let builder = self
                .request(Method::POST, path)
                .header("Idempotency-Key", &key)
                .json(body);
            match self.send(builder).await {
                Err(e) if e.exit == Exit::Server && attempt < 3 => {
                    tokio::time::sleep(Duration::from_millis(500 * attempt)).await;
                }
                other => return other,
            }
        }
    }

    /// Every item of a cursor-paged list, up to `max` (all when None).
    pub async fn pages(
        &self,
        path: &str,
        query: &[(&str, String)],
        max: Option<usize>,
    ) -> Result<Vec<Value>, CliError> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut q = query.to_vec();
            let want = max.map(|m| m.saturating_sub(items.len()).clamp(1, 100));
            q.push(("limit", want.unwrap_or(100).to_string()));
            if let Some(c) = &cursor {
                q.push(("cursor", c.clone()));
            }
            let page: Page = serde_json::from_value(self.get(path, &q).await?).map_err(|e| {
                CliError::new(Exit::Other, format!("unexpected page from the server: {e}"))
            })?;
            items.extend(page.items);
            cursor = page.next_cursor.map(|c| c.to_string());
            if cursor.is_none() || max.is_some_and(|m| items.len() >= m) {
                break;
            }
        }
        if let Some(m) = max {
            items.truncate(m);
        }
        Ok(items)
    }

    pub fn transport(&self, e: &reqwest::Error) -> CliError {
        let what = if e.is_timeout() {
            "timed out"
        } else if e.is_connect() {
            "could not connect"
        } else {
            "request failed"
        };
        CliError::new(Exit::Server, format!("{what}: {} ({e})", self.server))
    }
}

/// The exit code a status maps to.
pub fn exit_for(status: StatusCode) -> Exit {
    match status.as_u16() {
        401 | 403 => Exit::Auth,
        404 => Exit::NotFound,
        409 => Exit::Conflict,
        400 | 413 | 415 | 422 => Exit::Invalid,
        429 | 500..=599 => Exit::Server,
        _ => Exit::Other,
    }
}

/// A non-2xx answer as an error: the problem's `detail` and its field errors.
async fn problem(response: Response) -> CliError {
    let status = response.status();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    let detail = body["detail"]
        .as_str()
        .or_else(|| body["title"].as_str())
        .map(str::to_owned)
        .unwrap_or_else(|| status.to_string());
    let fields = body["errors"]
        .as_array()
        .map(|errors| {
            errors
                .iter()
                .map(|e| {
                    (
                        e["field"].as_str().unwrap_or("").to_owned(),
                        e["message"].as_str().unwrap_or("").to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let mut error = CliError::new(exit_for(status), detail);
    error.status = Some(status.as_u16());
    error.code = body["code"].as_str().map(str::to_owned);
    error.fields = fields;
    if status == StatusCode::UNAUTHORIZED {
        error.hint = Some("log in again with `gpuex login`".into());
    }
    error
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderMap;

    /// A server whose writes answer `Gpuex-Seq: 7` and whose reads echo the
    /// `Gpuex-Min-Seq` they were sent.
    async fn journal_server() -> String {
        let app = axum::Router::new().route(
            "/thing",
            axum::routing::post(|| async {
                ([("gpuex-seq", "7")], axum::Json(serde_json::json!({})))
            })
            .get(|headers: HeaderMap| async move {
                let asked = headers
                    .get("gpuex-min-seq")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                axum::Json(serde_json::json!({ "asked": asked }))
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let address = listener.local_addr().expect("address");
        tokio::spawn(async move { axum::serve(listener, app).await });
        format!("http://{address}")
    }

    #[tokio::test]
    async fn after_a_write_every_request_asks_for_its_journal_row() {
        let api = Api::new(&journal_server().await, None).expect("client");
        let before = api.get("/thing", &[]).await.expect("read");
        assert_eq!(before["asked"], Value::Null, "nothing written yet");
        api.post("/thing", &serde_json::json!({}))
            .await
            .expect("write");
        let after = api.get("/thing", &[]).await.expect("read");
        assert_eq!(after["asked"], "7");
    }
}
