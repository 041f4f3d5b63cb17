//! The demo's agents: one agent process per simulated machine (`gpuex
//! agent`, the agent this binary carries, unless `--agent` names a
//! `gpuex-agent`), run as root as on a provider's host, each with its own
//! uid pool and spool.
//! The fleet can stop one machine outright (SIGKILL, as a lost host) and
//! bring it back, which the resume scene does.

use anyhow::Context;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::process::{Child, Command};

/// How the demo's agents run workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launch {
    /// In containers of this image (which orders without one run in).
    Container(&'static str),
    /// As the pool's users on the host: for a trusted single tenant.
    Process,
}

/// The running agents, by their node's place in [`super::NODES`].
pub struct Fleet {
    pub agent: AgentProgram,
    pub addr: SocketAddr,
    pub data: PathBuf,
    pub launch: Launch,
    /// Each node's fleet file and token.
    pub nodes: Vec<(PathBuf, String)>,
    pub agents: Vec<Option<Child>>,
}

impl Fleet {
    /// Starts (or starts again) node `n`'s agent.
    pub fn start(&mut self, n: usize) -> anyhow::Result<()> {
        let (fleet, token) = self.nodes.get(n).context("no such demo node")?;
        let name = super::NODES[n].0;
        let spool = self.data.join("demo-spool").join((n + 1).to_string());
        std::fs::create_dir_all(&spool)?;
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.data.join(format!("demo-agent-{}.log", n + 1)))?;
        let mut cmd = Command::new(&self.agent.program);
        cmd.args(&self.agent.leading_args)
            .args(["--server", &format!("http://{}", self.addr)])
            .env("GPUEX_AGENT_TOKEN", token)
            .args(["--backend", "simulated"]);
        match self.launch {
            // Every sample runs in the demo's image; nothing else may run.
            Launch::Container(image) => {
                cmd.args(["--launcher", "container", "--default-image", image])
                    .args(["--allow-registry", "localhost"]);
            }
            // Said, not defaulted: the demo's agents and buyers are one
            // person on one machine, which is what `process` is for.
            Launch::Process => {
                cmd.args(["--launcher", "process"]);
            }
        }
        // Each agent its own users: a pool is one agent's alone.
        cmd.args([
            "--uid-pool",
            &format!("{}-{}", 63000 + n * 1000, 63999 + n * 1000),
        ])
        .arg("--fleet")
        .arg(fleet)
        .args(["--hostname", &format!("demo-{name}")])
        .arg("--spool")
        .arg(&spool)
        .args(["--heartbeat-interval", "2s", "--usage-interval", "10s"])
        // Outputs show up while a lease runs, not only when it ends.
        .args(["--outputs-interval", "10s"])
        // The example artifact is served on 127.0.0.1 (see `serve_example`).
        .arg("--artifact-allow-private")
        .stdout(Stdio::from(log.try_clone()?))
        .stderr(Stdio::from(log))
        .kill_on_drop(true);
        let child = cmd
            .spawn()
            .with_context(|| format!("cannot start {}", self.agent.program.display()))?;
        if self.agents.len() <= n {
            self.agents.resize_with(n + 1, || None);
        }
        self.agents[n] = Some(child);
        Ok(())
    }

    /// Stops node `n`'s agent as a machine is lost: SIGKILL, no goodbye.
    pub async fn kill(&mut self, n: usize) {
        if let Some(mut agent) = self.agents.get_mut(n).and_then(Option::take) {
            let _ = agent.kill().await;
        }
    }

    /// SIGTERM, so that each agent ends its workloads (a SIGKILLed agent
    /// would leave them running, and their disks mounted, until it starts
    /// again); SIGKILL for one that takes longer than its own bounded
    /// shutdown: the stop grace (10 s), the last outputs (at most 30 s).
    pub async fn stop(&mut self) {
        use nix::sys::signal::{kill, Signal};
        use nix::unistd::Pid;
        for agent in self.agents.iter().flatten() {
            if let Some(pid) = agent.id().and_then(|p| i32::try_from(p).ok()) {
                let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
            }
        }
        for agent in self.agents.iter_mut().flatten() {
            if tokio::time::timeout(Duration::from_secs(50), agent.wait())
                .await
                .is_err()
            {
                let _ = agent.kill().await;
            }
        }
    }
}

/// How the demo starts an agent: a program and the arguments before the agent's own.
#[derive(Debug, Clone)]
pub struct AgentProgram {
    pub program: PathBuf,
    pub leading_args: Vec<&'static str>,
}

/// `--agent`, else this binary's own `gpuex agent`: built with it, so the
/// demo never builds a second crate graph (or waits for one) at its start.
pub fn find_agent(explicit: Option<&Path>) -> anyhow::Result<AgentProgram> {
    Ok(match explicit {
        Some(path) => AgentProgram {
            program: path.to_owned(),
            leading_args: Vec::new(),
        },
        None => AgentProgram {
            program: std::env::current_exe().context("cannot find this binary to run its agent")?,
            leading_args: vec!["agent"],
        },
    })
}
