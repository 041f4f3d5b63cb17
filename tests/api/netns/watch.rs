//! What each replica's `/readyz` says over the test, asked every 100 ms.
//!
//! Each probe is a task of its own: a replica cut off from the database
//! answers only after its pool gives up, and a probe waiting for it must
//! not hold back the next, or the others'.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One answer of `/readyz`.
#[derive(Debug, Clone)]
pub struct Probe {
    pub replica: usize,
    pub sent: Instant,
    pub answered: Instant,
    /// The role of a ready answer; `None` for not ready (503).
    pub role: Option<String>,
}

impl Probe {
    pub fn leads(&self) -> bool {
        self.role.as_deref() == Some("leader")
    }
}

pub struct Watch {
    probes: Arc<Mutex<Vec<Probe>>>,
    stop: Arc<AtomicBool>,
}

impl Watch {
    pub fn start(addresses: Vec<String>) -> Watch {
        let probes = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        // Longer than the replicas' pool takes to give up (10 s), so the
        // answer of a replica that lost its database is heard.
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(15))
            .build()
            .expect("client");
        let (kept, stopped) = (probes.clone(), stop.clone());
        tokio::spawn(async move {
            while !stopped.load(Ordering::Relaxed) {
                for (replica, address) in addresses.iter().enumerate() {
                    let (client, kept) = (client.clone(), kept.clone());
                    let url = format!("{address}/readyz");
                    tokio::spawn(async move {
                        let sent = Instant::now();
                        let Ok(r) = client.get(url).send().await else {
                            return;
                        };
                        let ready = r.status().is_success();
                        let body: serde_json::Value = r.json().await.unwrap_or_default();
                        let role = ready
                            .then(|| body["role"].as_str().map(str::to_owned))
                            .flatten();
                        kept.lock().unwrap().push(Probe {
                            replica,
                            sent,
                            answered: Instant::now(),
                            role,
                        });
                    });
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        Watch { probes, stop }
    }

    /// The answers so far of probes sent after `since`, in the order they
    /// came.
    pub fn since(&self, since: Instant) -> Vec<Probe> {
        let mut probes: Vec<Probe> = self
            .probes
            .lock()
            .unwrap()
            .iter()
            .filter(|p| p.sent > since)
            .cloned()
            .collect();
        probes.sort_by_key(|p| p.answered);
        probes
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
