//! A small stand-in for the gpuex server's agent endpoints, bound on port 0:
//! it records what the agent sends, hands out queued assignments, and applies
//! each usage `(agent_id, seq)` once.

use bytes::Bytes;
use chrono::Utc;
use gpuex_wire::protocol::*;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::net::TcpListener;
use uuid::Uuid;

#[derive(Default)]
pub struct State {
    pub agent_id: Uuid,
    pub registrations: Vec<RegisterRequest>,
    pub heartbeats: Vec<HeartbeatRequest>,
    /// Handed out with the next heartbeat answer.
    pub queued: Vec<Assignment>,
    pub statuses: Vec<(Uuid, StatusReport)>,
    pub logs: HashMap<Uuid, LogsUpload>,
    /// Applied batches by seq: each seq once.
    pub applied: BTreeMap<u64, UsageBatch>,
    /// Every seq posted, duplicates included, in arrival order.
    pub usage_posts: Vec<u64>,
    /// Answer 503 to usage batches.
    pub refuse_usage: bool,
    /// Answer 503 to everything.
    pub down: bool,
    /// Apply this many usage batches but answer 503, as if the ack were lost.
    pub lose_acks: u32,
    /// The node token was revoked (its node deleted): answer 401 to it.
    pub revoked: bool,
    /// Requests answered 401, by path.
    pub refused: Vec<String>,
}

impl State {
    pub fn status_of(
        &self,
        lease: Uuid,
        pred: impl Fn(&AssignmentStatus) -> bool,
    ) -> Option<StatusReport> {
        self.statuses
            .iter()
            .find(|(id, r)| *id == lease && pred(&r.status))
            .map(|(_, r)| r.clone())
    }
}

pub struct FakeServer {
    pub state: Arc<Mutex<State>>,
    pub addr: SocketAddr,
}

impl FakeServer {
    pub async fn start() -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(State {
            agent_id: Uuid::new_v4(),
            ..State::default()
        }));
        let shared = state.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let state = shared.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req| handle(state.clone(), req));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        FakeServer { state, addr }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        f(&mut self.state.lock().unwrap())
    }
}

fn reply(status: StatusCode, body: Vec<u8>) -> Result<Response<Full<Bytes>>, hyper::Error> {
    Ok(Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body)))
        .unwrap())
}

fn json<T: serde::Serialize>(value: &T) -> Result<Response<Full<Bytes>>, hyper::Error> {
    reply(StatusCode::OK, serde_json::to_vec(value).unwrap())
}

async fn handle(
    state: Arc<Mutex<State>>,
    req: Request<hyper::body::Incoming>,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let path = req.uri().path().to_string();
    let authorized = req
        .headers()
        .get("authorization")
        .is_some_and(|v| v == "Bearer node-token");
    let body = req.into_body().collect().await?.to_bytes();
    let mut s = state.lock().unwrap();
    if s.down {
        return reply(StatusCode::SERVICE_UNAVAILABLE, b"{}".to_vec());
    }
    if !authorized || s.revoked {
        s.refused.push(path);
        return reply(StatusCode::UNAUTHORIZED, b"{}".to_vec());
    }
    if path == paths::REGISTER {
        s.registrations.push(serde_json::from_slice(&body).unwrap());
        return json(&RegisterResponse {
            agent_id: s.agent_id,
            server_time: Utc::now(),
            heartbeat_interval_s: 1,
            node_timeout_s: 30,
            last_usage_seq: s.applied.keys().last().copied(),
            quarantined: None,
        });
    }
    if path == paths::HEARTBEAT {
        s.heartbeats.push(serde_json::from_slice(&body).unwrap());
        let assignments = std::mem::take(&mut s.queued);
        return json(&HeartbeatResponse {
            server_time: Utc::now(),
            heartbeat_interval_s: 1,
            assignments,
        });
    }
    if path == paths::USAGE {
        if s.refuse_usage {
            return reply(StatusCode::SERVICE_UNAVAILABLE, b"{}".to_vec());
        }
        let batch: UsageBatch = serde_json::from_slice(&body).unwrap();
        s.usage_posts.push(batch.seq);
        let duplicate = s.applied.contains_key(&batch.seq);
        let seq = batch.seq;
        s.applied.entry(seq).or_insert(batch);
        if s.lose_acks > 0 {
            s.lose_acks -= 1;
            return reply(StatusCode::SERVICE_UNAVAILABLE, b"{}".to_vec());
        }
        return json(&UsageAck {
            seq,
            duplicate,
            refused: Vec::new(),
        });
    }
    if let Some(rest) = path.strip_prefix("/v1/agent/assignments/") {
        let (id, what) = rest.split_once('/').unwrap();
        let lease = Uuid::parse_str(id).unwrap();
        match what {
            "status" => s
                .statuses
                .push((lease, serde_json::from_slice(&body).unwrap())),
            "logs" => {
                s.logs.insert(lease, serde_json::from_slice(&body).unwrap());
            }
            _ => return reply(StatusCode::NOT_FOUND, b"{}".to_vec()),
        }
        return reply(StatusCode::NO_CONTENT, Vec::new());
    }
    reply(StatusCode::NOT_FOUND, b"{}".to_vec())
}
