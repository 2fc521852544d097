"""Red team: `erp-agent serve` killed with `kill -9` while clients hold connections to it starts
again at once on the same port. The dead server's connections linger in the kernel (FIN_WAIT /
TIME_WAIT, a minute or more); a port check that binds without SO_REUSEADDR took them for a
server still running and refused to start for about 90 seconds. The port is chosen at run time."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from conftest import DemoERP
from demo_erp.server import free_port

pytestmark = pytest.mark.slow


class Serve:
    def __init__(self, erp_url: str, data_dir: Path, port: int) -> None:
        self.port = port
        self.env = {
            **os.environ,
            "ERP_AGENT_ERP_URL": erp_url,
            "ERP_AGENT_DATA_DIR": str(data_dir),
            "COLUMNS": "300",
        }
        self.log = data_dir / "serve.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> subprocess.Popen[bytes]:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "erp_agent", "serve", "--port", str(self.port)],
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        return self.process

    def wait_ready(self, seconds: float) -> float:
        """Seconds until /healthz answers; fails if the process exits first."""
        started = time.monotonic()
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{self.port}/healthz", timeout=2)
                return time.monotonic() - started
            except httpx.TransportError:
                assert self.process is not None
                assert self.process.poll() is None, self.log.read_text()
                assert time.monotonic() - started < seconds, self.log.read_text()
                time.sleep(0.1)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(15)


@pytest.fixture
def serve(demo_erp: DemoERP, tmp_path: Path) -> Iterator[Serve]:
    found = Serve(demo_erp.url, tmp_path, free_port())
    yield found
    found.stop()


def _live_connections(port: int) -> list[socket.socket]:
    """Connections as real clients leave them: keep-alive ones after a full request, and
    requests still being sent (the server holds them open, waiting for the rest)."""
    held: list[socket.socket] = []
    for index in range(6):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        if index % 2 == 0:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n")
            assert sock.recv(65536).startswith(b"HTTP/1.1")
        else:
            sock.sendall(b"POST /api/chat HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
        held.append(sock)
    return held


def _plain_bind_fails(port: int) -> bool:
    """Whether a bind without SO_REUSEADDR is refused: the dead server's sockets linger."""
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def test_serve_restarts_at_once_after_kill_9_with_live_connections(serve: Serve) -> None:
    first = serve.start()
    serve.wait_ready(60)
    held = _live_connections(serve.port)
    os.kill(first.pid, signal.SIGKILL)
    first.wait(10)
    for sock in held:  # the clients notice and close: the server's side enters TIME_WAIT
        sock.close()
    time.sleep(0.2)
    assert _plain_bind_fails(serve.port), "no lingering connections: the test proves nothing"
    serve.start()
    took = serve.wait_ready(30)
    assert took < 30
    assert "already in use" not in serve.log.read_text()
    # And a port truly in use is still refused, in one line.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "erp_agent", "serve", "--port", str(busy)],
            env=serve.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1
    assert f"Port {busy} on 127.0.0.1 is already in use" in done.stdout + done.stderr
