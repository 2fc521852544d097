"""Many web workers on PostgreSQL + Redis: 200 concurrent conversations against `erp-agent
serve --workers N` for N = 1, 2, 4, with a scripted OpenAI-compatible model that answers every
call after a fixed 300 ms (its own process). Prints, per N: turns per second sustained, p50/p95
turn latency, and the web workers' CPU milliseconds per turn (from /proc, all their processes).

    uv run python benchmarks/many_workers.py                    # 1, 2, 4 workers
    uv run python benchmarks/many_workers.py --workers 2 --seconds 10 --conversations 50

Needs PostgreSQL (ERP_AGENT_TEST_PG, a role that may create databases) and Redis
(ERP_AGENT_TEST_REDIS); a database and a key prefix are made for the run and removed after.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from _common import percentile

from demo_erp.context import Settings as ErpSettings
from demo_erp.seed import seed
from demo_erp.server import free_port, running

PG_DSN = os.environ.get("ERP_AGENT_TEST_PG", "postgresql://app:app@127.0.0.1:5433/app")
REDIS_URL = os.environ.get("ERP_AGENT_TEST_REDIS", "redis://127.0.0.1:6379/0")
SESSION_KEY = "x" * 43 + "="
TODAY = dt.date(2026, 11, 30)
FAILURES: list[str] = []
CACHED: list[bool] = []  # --cache-hits
HITS: list[str] = []  # answers the response cache served
QUESTIONS = ["How are sales this month?", "And last month?", "Which customers owe us most?"]


# ------------------------------------------------------------------ the scripted model


def model_server(port: int, latency: float) -> None:
    """An OpenAI-compatible endpoint: every completion after ``latency`` seconds."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    async def complete(request: Request) -> Response:
        body = json.loads(await request.body())
        await asyncio.sleep(latency)
        if body.get("stream"):  # the engine streams: the same answer as SSE chunks
            return StreamingResponse(_chunks(), media_type="text/event-stream")
        return JSONResponse(
            {
                "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": "scripted-300ms",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": "Scripted answer."},
                    }
                ],
                "usage": {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105},
            }
        )

    async def _chunks() -> Any:
        base = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0,
                "model": "scripted-300ms"}  # fmt: skip
        for choice, usage in (
            ({"index": 0, "delta": {"role": "assistant", "content": "Scripted answer."}}, None),
            ({"index": 0, "delta": {}, "finish_reason": "stop"}, None),
            (None, {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105}),
        ):
            chunk = {**base, "choices": [choice] if choice else [], "usage": usage}
            yield f"data: {json.dumps(chunk)}\n\n"
        yield "data: [DONE]\n\n"

    app = Starlette(routes=[Route("/v1/chat/completions", complete, methods=["POST"])])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", backlog=4096)


# ------------------------------------------------------------------ processes


def cpu_seconds(group: int) -> float:
    """User + system CPU of every live process in process group ``group``."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group:  # pgrp
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


def wait_ready(url: str, process: subprocess.Popen[bytes], seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=2).status_code < 500:
                return
        except httpx.TransportError:
            pass
        if process.poll() is not None:
            raise RuntimeError(f"{process.args} exited with {process.returncode}")
        time.sleep(0.25)
    raise RuntimeError(f"{url} did not answer in {seconds:g} s")


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(5)


# ------------------------------------------------------------------ load


async def conversation(
    client: httpx.AsyncClient, base: str, until: float, latencies: list[float]
) -> None:
    conversation_id: str | None = None
    n = 0
    while time.monotonic() < until:
        if CACHED:  # the same question, each time a new conversation: served from the cache
            body = {"message": QUESTIONS[0], "conversation_id": None}
        else:
            body = {"message": QUESTIONS[n % len(QUESTIONS)], "conversation_id": conversation_id}
        started = time.perf_counter()
        text, status = "", 0
        try:
            async with client.stream("POST", f"{base}/api/chat", json=body) as reply:
                status = reply.status_code
                async for chunk in reply.aiter_text():
                    text += chunk
        except httpx.TransportError as exc:
            text = f"{type(exc).__name__}: {exc}"
        took = time.perf_counter() - started
        if status != 200 or "event: response" not in text:
            FAILURES.append(f"{status} {text[-200:]}")
            n += 1
            continue
        data = json.loads(text.split("event: response\ndata: ", 1)[1].split("\n\n", 1)[0])
        conversation_id = data["conversation_id"]
        if data.get("outcome") in ("error", "stopped"):
            FAILURES.append(f"outcome {data.get('outcome')}")
            n += 1
            continue
        if "cached" in data:
            HITS.append(data["cached"]["kind"])
        if time.monotonic() < until:
            latencies.append(took)
        n += 1


async def sign_in(client: httpx.AsyncClient, base: str) -> None:
    csrf = (await client.get(f"{base}/api/auth/csrf")).json()["csrf"]
    reply = await client.post(
        f"{base}/api/auth/sign-in",
        json={"user": "admin@demo.local", "password": "demo"},
        headers={"X-CSRF-Token": csrf},
    )
    reply.raise_for_status()
    client.headers["X-CSRF-Token"] = reply.json()["csrf"]


async def load(base: str, conversations: int, seconds: float, group: int) -> dict[str, float]:
    limits = httpx.Limits(
        max_connections=conversations + 10, max_keepalive_connections=conversations
    )
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        await sign_in(client, base)
        warm: list[float] = []
        await asyncio.gather(  # warm-up: connections, caches, the first queries of each process
            *(conversation(client, base, time.monotonic() + 3, warm) for _ in range(conversations))
        )
        latencies: list[float] = []
        cpu_before, started = cpu_seconds(group), time.monotonic()
        until = started + seconds
        await asyncio.gather(
            *(conversation(client, base, until, latencies) for _ in range(conversations))
        )
        elapsed, cpu = time.monotonic() - started, cpu_seconds(group) - cpu_before
    turns = len(latencies)
    return {
        "turns": turns,
        "tps": turns / elapsed,
        "p50": percentile(latencies, 50),
        "p95": percentile(latencies, 95),
        "cpu_ms": 1000 * cpu / max(turns, 1),
    }


# ------------------------------------------------------------------ main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="*", default=[1, 2, 4])
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument(
        "--cache-hits",
        action="store_true",
        help="Measure answers served by the response cache (one question, new conversations).",
    )
    parser.add_argument("--model-server", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cache_hits:
        CACHED.append(True)
    if args.model_server:
        model_server(args.model_server, args.latency)
        return

    import psycopg
    from sqlalchemy.engine import make_url

    work = Path(tempfile.mkdtemp(prefix="many-workers-"))
    erp_db = work / "demo.sqlite"
    seed(erp_db, today=TODAY, scale=0.05)
    database = f"bench_{uuid.uuid4().hex[:10]}"
    admin = psycopg.connect(PG_DSN, autocommit=True)
    admin.execute(f'CREATE DATABASE "{database}"')
    model_port = free_port()
    model = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--model-server",
            str(model_port),
            "--latency",
            str(args.latency),
        ],
        start_new_session=True,
    )
    results: dict[int, dict[str, float]] = {}
    try:
        with running(ErpSettings(db_path=str(erp_db), version=15, today=TODAY)) as erp:
            wait_ready(f"http://127.0.0.1:{model_port}/", model)
            for workers in args.workers:
                prefix = f"bench-{uuid.uuid4().hex[:8]}"
                url = make_url(PG_DSN).set(drivername="postgresql+psycopg", database=database)
                env = {
                    **os.environ,
                    "ERP_AGENT_ERP_URL": erp.url,
                    "ERP_AGENT_DATA_DIR": str(work / f"data-{workers}"),
                    "ERP_AGENT_DATABASE_URL": url.render_as_string(hide_password=False),
                    "ERP_AGENT_REDIS_URL": REDIS_URL,
                    "ERP_AGENT_REDIS_PREFIX": prefix,
                    "ERP_AGENT_SESSION_KEY": SESSION_KEY,
                    "ERP_AGENT_RESPONSE_CACHE_SECONDS": "600" if args.cache_hits else "0",
                    "ERP_AGENT_REASONING_MODEL": json.dumps(
                        {
                            "provider": "openai",
                            "model": "scripted-300ms",
                            "base_url": f"http://127.0.0.1:{model_port}/v1",
                            "api_key": "bench",
                            "max_retries": 0,
                            "stream_usage": True,
                        }
                    ),
                }
                port = free_port()
                serve = subprocess.Popen(
                    [sys.executable, "-m", "erp_agent", "serve", "--port", str(port),
                     "--workers", str(workers)],
                    env=env,
                    stdout=subprocess.DEVNULL,
                    start_new_session=True,
                )  # fmt: skip
                try:
                    base = f"http://127.0.0.1:{port}"
                    wait_ready(f"{base}/healthz", serve)
                    time.sleep(3 * workers)  # every worker process up, not only the first
                    results[workers] = asyncio.run(
                        load(base, args.conversations, args.seconds, serve.pid)
                    )
                finally:
                    stop(serve)
                r = results[workers]
                failed, FAILURES[:] = len(FAILURES), []
                print(
                    ("cache hits: " if args.cache_hits else "")
                    + f"{workers} web worker(s), {args.conversations} conversations, "
                    + (f"{len(HITS)} served from the cache, " if args.cache_hits else "")
                    + f"{failed} failed turns, "
                    f"{args.latency * 1000:.0f} ms model: {r['tps']:6.1f} turns/s  "
                    f"p50 {r['p50'] * 1000:6.0f} ms  p95 {r['p95'] * 1000:6.0f} ms  "
                    f"engine CPU {r['cpu_ms']:5.1f} ms/turn  (n={r['turns']:.0f})",
                    flush=True,
                )
    finally:
        stop(model)
        admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        admin.close()
    if 1 in results and 2 in results:
        ratio = results[2]["tps"] / results[1]["tps"]
        print(f"2 workers / 1 worker throughput: {ratio:.2f}x (target >= 1.6x)")
    for workers, r in results.items():
        capacity = 1000 / r["cpu_ms"] if r["cpu_ms"] else float("inf")
        print(f"{workers} worker(s): about {capacity:.0f} turns/s per core of engine CPU")


if __name__ == "__main__":
    main()
