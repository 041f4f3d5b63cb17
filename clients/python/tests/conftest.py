"""A real server for the SDK's tests: `gpuex demo` (SQLite, three simulated
agents, a credited buyer) on a free port, for the whole session; `demo`
starts another for a module whose agents must use another launcher."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[3]
BUYER = ("buyer@gpuex.demo", "demo-buyer-password")
# The demo's agents run workloads in containers where podman is installed
# (always under CI, which installs it: the demo then fails without it).
LAUNCHER = "container" if os.environ.get("GPUEX_CI") or shutil.which("podman") else "process"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def demo(launcher: str) -> Iterator[str]:
    """`gpuex demo` on a free port with its agents on `launcher`, until the block ends."""
    binary = Path(os.environ.get("GPUEX_BIN", REPO / "target" / "debug" / "gpuex"))
    if not binary.exists():
        pytest.fail(f"{binary} is missing: run `cargo build --workspace --bins` first")
    port = _free_port()
    with tempfile.TemporaryDirectory() as data:
        log = open(Path(data) / "demo.log", "w")
        proc = subprocess.Popen(
            # No resume scene: it stops a machine the tests' leases may be on.
            [str(binary), "demo", "--listen", f"127.0.0.1:{port}", "--data-dir", data,
             "--launcher", launcher, "--interrupt-after", "0"],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "RUST_LOG": "warn"},
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 90
            while True:
                if proc.poll() is not None:
                    pytest.fail(f"gpuex demo exited: {(Path(data) / 'demo.log').read_text()[-2000:]}")
                # Ready once the demo's buyer can log in and has running leases.
                try:
                    r = httpx.post(f"{url}/v1/auth/login", json={"email": BUYER[0], "password": BUYER[1]}, timeout=5)
                    if r.status_code == 200 and "Ctrl-C" in (Path(data) / "demo.log").read_text():
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    pytest.fail("gpuex demo did not come up in 90 s")
                time.sleep(0.5)
            yield url
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                # The demo waits for its agents to end their workloads.
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
            log.close()


@pytest.fixture(scope="session")
def server() -> Iterator[str]:
    with demo(LAUNCHER) as url:
        yield url
