//! A Server-Sent Events client for the tests: reads a streaming response
//! and splits it into events, as an `EventSource` would.

use serde_json::Value;
use std::time::Duration;

/// One event off the wire.
#[derive(Debug, Clone)]
pub struct SseEvent {
    pub id: Option<String>,
    pub event: Option<String>,
    pub data: Value,
}

/// An open stream.
pub struct SseStream {
    response: reqwest::Response,
    buffer: String,
    /// Comment lines seen (`: keep-alive`).
    pub comments: usize,
}

impl SseStream {
    /// Opens `url` with `token`, asserting a `text/event-stream` answer.
    pub async fn open(
        client: &reqwest::Client,
        url: &str,
        token: Option<&str>,
        last_event_id: Option<i64>,
    ) -> SseStream {
        let mut request = client
            .get(url)
            .header("accept", "text/event-stream")
            // A stream is endless: no overall timeout, only per read.
            .timeout(Duration::from_secs(3600));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id.to_string());
        }
        let response = request.send().await.expect("open the stream");
        assert_eq!(response.status(), 200, "the stream opens");
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        assert!(
            content_type.starts_with("text/event-stream"),
            "{content_type}"
        );
        SseStream {
            response,
            buffer: String::new(),
            comments: 0,
        }
    }

    /// The next event within `wait`; `None` when none came in time or the
    /// server closed the stream.
    pub async fn next(&mut self, wait: Duration) -> Option<SseEvent> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(event) = self.take_event() {
                return Some(event);
            }
            let chunk = tokio::time::timeout_at(deadline, self.response.chunk())
                .await
                .ok()?
                .ok()??;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    /// Events until `wait` passes with none.
    pub async fn drain(&mut self, wait: Duration) -> Vec<SseEvent> {
        let mut events = Vec::new();
        while let Some(event) = self.next(wait).await {
            events.push(event);
        }
        events
    }

    /// Whether the server ended the stream within `wait`.
    pub async fn ends_within(&mut self, wait: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            match tokio::time::timeout_at(deadline, self.response.chunk()).await {
                Err(_) => return false,
                Ok(Ok(Some(_))) => continue,
                Ok(_) => return true,
            }
        }
    }

    fn take_event(&mut self) -> Option<SseEvent> {
        loop {
            let end = self.buffer.find("\n\n")?;
            let block: String = self.buffer.drain(..end + 2).collect();
            let (mut id, mut event, mut data) = (None, None, String::new());
            let mut comment = false;
            for line in block.lines() {
                if line.starts_with(':') {
                    comment = true;
                } else if let Some(v) = line.strip_prefix("id:") {
                    id = Some(v.trim().to_owned());
                } else if let Some(v) = line.strip_prefix("event:") {
                    event = Some(v.trim().to_owned());
                } else if let Some(v) = line.strip_prefix("data:") {
                    if !data.is_empty() {
                        data.push('\n');
                    }
                    data.push_str(v.strip_prefix(' ').unwrap_or(v));
                }
            }
            if event.is_none() && data.is_empty() {
                if comment {
                    self.comments += 1;
                }
                continue;
            }
            let data = serde_json::from_str(&data).unwrap_or(Value::String(data));
            return Some(SseEvent { id, event, data });
        }
    }
}
