"""`erp-agent mcp` over stdio: how long from the process start until it answers, as an MCP client
sees it. Clients give a server a fixed time to answer `initialize` (the MCP Inspector 15 s,
Claude Desktop about a minute) and then give up, so the start is what counts on a loaded machine.

Three figures per run, medians of --runs process starts: `initialize` answered (the client
counts the server as started), `tools/list` answered (signed in, the tools routed) and the
first `tools/call` answered (metrics.query, against the demo ERP). Run it with --load N to start
N busy processes beside it, as on the shared machine the issue was measured on.

uv run python benchmarks/mcp_start.py [--runs 5] [--load 0] [--scale 0.05] [--command "…"]

--command runs another start command (e.g. an older checkout's `python -m erp_agent mcp`); it
gets `--as USER` appended.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from _common import seeded_db

USER = "admin@demo.local"
PASSWORD = "demo"
BUDGET = 5.0  # seconds to `initialize`: well inside the Inspector's 15 s on a loaded machine


def _send(stdin: IO[str], message: dict[str, Any]) -> None:
    stdin.write(json.dumps(message) + "\n")
    stdin.flush()


def _answer(stdout: IO[str], wanted: int) -> dict[str, Any]:
    for line in stdout:
        message = json.loads(line)
        if message.get("id") == wanted:
            return dict(message)
    raise RuntimeError("the server closed its output before answering")


def one_start(env: dict[str, str], command: list[str]) -> tuple[float, float, float]:
    started = time.perf_counter()
    process = subprocess.Popen(
        [*command, "--as", USER],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        _send(process.stdin, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"}}})  # fmt: skip
        _answer(process.stdout, 1)
        initialized = time.perf_counter() - started
        _send(process.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _send(process.stdin, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        _answer(process.stdout, 2)
        listed = time.perf_counter() - started
        year = time.localtime().tm_year
        _send(process.stdin, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "metrics.query", "arguments": {"metric": "revenue", "period": {
                "from": f"{year}-01-01", "to": f"{year}-12-31"}}}})  # fmt: skip
        reply = _answer(process.stdout, 3)
        assert "result" in reply, reply
        called = time.perf_counter() - started
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()
    return initialized, listed, called


def _busy(stop: Any) -> None:
    while not stop.is_set():
        sum(i * i for i in range(10_000))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5, help="process starts per figure")
    parser.add_argument("--load", type=int, default=0, help="busy processes running beside it")
    parser.add_argument("--scale", type=float, default=0.05, help="demo ERP data volume")
    parser.add_argument(
        "--data", type=Path, default=Path(tempfile.gettempdir()) / "erp-agent-bench"
    )
    parser.add_argument("--command", default=None, help="the start command (without --as)")
    args = parser.parse_args()
    command = (
        shlex.split(args.command) if args.command else [sys.executable, "-m", "erp_agent", "mcp"]
    )
    from demo_erp.context import Settings
    from demo_erp.server import start_in_thread

    erp = start_in_thread(Settings(db_path=str(seeded_db(args.data, None, args.scale))))
    stop = multiprocessing.Event()
    busy = [multiprocessing.Process(target=_busy, args=(stop,)) for _ in range(args.load)]
    try:
        with tempfile.TemporaryDirectory() as data:
            env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
            env |= {
                "PYTHONPYCACHEPREFIX": str(Path(data) / "pycache"),
                "ERP_AGENT_ERP_URL": erp.url,
                "ERP_AGENT_PASSWORD": PASSWORD,
                "ERP_AGENT_DATA_DIR": data,
                "ERP_AGENT_EMBEDDINGS": "none",
            }
            one_start(env, command)  # the first start creates the store and compiles bytecode
            for process in busy:
                process.start()
            samples = [one_start(env, command) for _ in range(args.runs)]
    finally:
        stop.set()
        for process in busy:
            process.join()
        erp.stop()
    init, listed, called = (statistics.median(s[i] for s in samples) for i in range(3))
    print(f"load average {os.getloadavg()[0]:.1f}; {args.load} busy processes; medians of "
          f"{args.runs} starts")  # fmt: skip
    verdict = "within" if init < BUDGET else "OVER"
    print(f"initialize answered   {init:6.2f} s   {verdict} {BUDGET:.0f} s budget")
    print(f"tools/list answered   {listed:6.2f} s")
    print(f"first tools/call      {called:6.2f} s")


if __name__ == "__main__":
    main()
