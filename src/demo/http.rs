//! Just enough of an HTTP/1.1 client for the demo to drive its own server
//! through the public API (the server crate has no client dependency).

use anyhow::{bail, Context};
use serde_json::Value;
use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A JSON client for one server.
#[derive(Clone, Copy)]
pub struct Client {
    pub addr: SocketAddr,
}

impl Client {
    /// Sends one request (`Connection: close`) and returns the status and JSON body.
    pub async fn call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> anyhow::Result<(u16, Value)> {
        let mut stream = TcpStream::connect(self.addr)
            .await
            .with_context(|| format!("cannot connect to {}", self.addr))?;
        let payload = body.map(Value::to_string).unwrap_or_default();
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nAccept: application/json\r\n",
            self.addr
        );
        if let Some(token) = token {
            head.push_str(&format!("Authorization: Bearer {token}\r\n"));
        }
        if body.is_some() {
            head.push_str(&format!(
                "Content-Type: application/json\r\nContent-Length: {}\r\n",
                payload.len()
            ));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(payload.as_bytes()).await?;
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await?;
        parse(&raw)
    }

    /// Like [`Client::call`], failing unless the status is 2xx.
    pub async fn ok(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> anyhow::Result<Value> {
        let (status, reply) = self.call(method, path, token, body).await?;
        if !(200..300).contains(&status) {
            bail!("{method} {path} answered {status}: {reply}");
        }
        Ok(reply)
    }
}

fn parse(raw: &[u8]) -> anyhow::Result<(u16, Value)> {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .context("no end of headers in the answer")?;
    let head = std::str::from_utf8(&raw[..split]).context("non-UTF-8 headers")?;
    let status: u16 = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .context("no status line")?;
    let chunked = head.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    let mut body = raw[split + 4..].to_vec();
    if chunked {
        body = dechunk(&body)?;
    }
    let json = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Ok((status, json))
}

fn dechunk(mut data: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = data
            .windows(2)
            .position(|w| w == b"\r\n")
            .context("truncated chunk")?;
        let size_text = std::str::from_utf8(&data[..line_end])?;
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        anyhow::ensure!(data.len() >= size, "truncated chunk");
        out.extend_from_slice(&data[..size]);
        data = data.get(size + 2..).unwrap_or_default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_with_a_length_or_in_chunks_are_read() {
        let plain = b"HTTP/1.1 201 Created\r\ncontent-length: 8\r\n\r\n{\"a\":1}\n";
        assert_eq!(parse(plain).unwrap(), (201, serde_json::json!({"a": 1})));
        let chunked =
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n3\r\n:2}\r\n0\r\n\r\n";
        assert_eq!(parse(chunked).unwrap(), (200, serde_json::json!({"a": 2})));
    }
}
