"""`erp-agent mcp` over stdio answers the handshake before the agent is assembled: a client's
`initialize` gets the server's name and instructions even while the ERP cannot be reached (the
agent's modules, runtime and sign-in come after, off the loop that answers), and then each request
says why it cannot be served, in words. How fast is measured by benchmarks/mcp_start.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

from demo_erp.server import free_port


def _send(stdin: IO[str], message: dict[str, Any]) -> None:
    stdin.write(json.dumps(message) + "\n")
    stdin.flush()


def _answer(stdout: IO[str], wanted: int) -> dict[str, Any]:
    for line in stdout:
        message = json.loads(line)  # nothing but the protocol on standard output
        if message.get("id") == wanted:
            return dict(message)
    raise AssertionError("the server closed its output before answering")


def test_the_handshake_is_answered_before_the_agent_is_up(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ERP_AGENT_")}
    env |= {
        "ERP_AGENT_ERP_URL": f"http://127.0.0.1:{free_port()}",  # nothing listens there
        "ERP_AGENT_PASSWORD": "demo",
        "ERP_AGENT_DATA_DIR": str(tmp_path),
        "ERP_AGENT_EMBEDDINGS": "none",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "erp_agent", "mcp", "--as", "admin@demo.local"],
        env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        _send(process.stdin, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}})  # fmt: skip
        hello = _answer(process.stdout, 1)["result"]
        assert hello["serverInfo"]["name"] == "erp-agent"
        assert "metrics.query" in hello["instructions"]
        assert "tools" in hello["capabilities"]
        assert "resources" in hello["capabilities"]
        _send(process.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _send(process.stdin, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        refused = _answer(process.stdout, 2)
        assert "error" in refused, refused
        assert "127.0.0.1" in refused["error"]["message"]  # which ERP it could not reach
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()
        assert process.stderr is not None
        stderr = process.stderr.read()
        process.stderr.close()
    assert "Error:" in stderr
    assert "Traceback" not in stderr
