"""Many web workers on PostgreSQL + Redis: concurrent conversations against `erp-agent serve
--workers N` for N = 1, 2, 4, with a scripted OpenAI-compatible model that answers every call
after a fixed 300 ms (its own process) and the demo ERP (its own process). The store, the
search index, the rate gate, the progress streams and the response cache are PostgreSQL and
Redis, as in a multi-worker deployment.

Per N it prints: turns per second with 200 conversations at once (saturated) and at the load
whose p95 stays within 2 s (found by lowering the conversations), p50/p95 turn latency, and the
CPU milliseconds per turn of the web workers (engine CPU, from /proc, all their processes), of
the load generator, the model and the ERP. Since a machine with few cores runs all of those at
once, it also prints turns per engine-CPU-second (what one core of web worker does, whatever
the others leave it) and how busy the whole machine was: when the workers' CPU per turn stays
the same from 1 to N workers and the machine is busy, throughput is bounded by the cores, not
by a lock or a shared connection.

    uv run python benchmarks/many_workers.py                    # 1, 2, 4 workers
    uv run python benchmarks/many_workers.py --workers 2 --seconds 8 --conversations 50
    uv run python benchmarks/many_workers.py --workers 1 --cache-hits   # cache-hit latency

Needs PostgreSQL with pgvector (ERP_AGENT_TEST_PG, a role that may create databases) and Redis
(ERP_AGENT_TEST_REDIS); a database and a key prefix are made for the run and removed after.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import random
import shutil
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
from demo_erp.server import free_port

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


def erp_server(port: int, db_path: str) -> None:
    """The demo ERP in a process of its own: in the load generator's, the two would share one
    interpreter lock and the ERP's answers would wait for the load's."""
    import uvicorn

    from demo_erp.api.app import create_app
    from demo_erp.server import prepare

    settings = ErpSettings(db_path=db_path, version=15, today=TODAY)
    prepare(settings)
    uvicorn.run(
        create_app(settings), host="127.0.0.1", port=port, log_level="warning", lifespan="off",
        backlog=4096,
    )  # fmt: skip


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


def own_cpu() -> float:
    """This process's CPU (the load generator: every client coroutine)."""
    times = os.times()
    return times.user + times.system


def machine_busy() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot, every core."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    ticks = os.sysconf("SC_CLK_TCK")
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields[:8]) - idle) / ticks, sum(fields[:8]) / ticks


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


def stop(process: subprocess.Popen[bytes], how: int = signal.SIGTERM) -> None:
    if process.poll() is None:
        os.killpg(process.pid, how)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(5)


def vector_extension(database: str) -> None:
    """pgvector in the run's database, for the search index: as the test role where it may,
    else as the local server's superuser (``su postgres``, as the CI set-up creates it)."""
    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(PG_DSN).set(database=database)
    try:
        with psycopg.connect(url.render_as_string(hide_password=False), autocommit=True) as db:
            db.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.errors.InsufficientPrivilege:
        sql = "CREATE EXTENSION IF NOT EXISTS vector"
        command = f"psql -p {url.port or 5432} -d {database} -qc '{sql}'"
        subprocess.run(["su", "postgres", "-c", command], check=True)


# ------------------------------------------------------------------ load


async def conversation(
    client: httpx.AsyncClient,
    base: str,
    until: float,
    done: list[tuple[float, float]],
    *,
    stagger: float = 1.0,
) -> None:
    """One user asking turn after turn until ``until``; each finished turn is recorded as
    (when it finished, how long it took); with --cache-hits, only the answers the cache served.
    The first question waits up to ``stagger`` seconds, so that the conversations do not move
    in lock-step."""
    await asyncio.sleep(random.uniform(0, stagger))
    conversation_id: str | None = None
    n = 0
    while time.monotonic() < until:
        if CACHED:  # the same question, each time a new conversation: served from the cache
            body = {"message": QUESTIONS[0], "conversation_id": None}
        else:
            body = {"message": QUESTIONS[n % len(QUESTIONS)], "conversation_id": conversation_id}
        n += 1
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
            continue
        data = json.loads(text.split("event: response\ndata: ", 1)[1].split("\n\n", 1)[0])
        conversation_id = data["conversation_id"]
        if data.get("outcome") in ("error", "stopped"):
            FAILURES.append(f"outcome {data.get('outcome')}")
            continue
        if "cached" in data:
            HITS.append(data["cached"]["kind"])
        elif CACHED:
            continue  # a miss (the first askers, before an answer is kept)
        done.append((time.monotonic(), took))


async def sign_in(client: httpx.AsyncClient, base: str) -> None:
    csrf = (await client.get(f"{base}/api/auth/csrf")).json()["csrf"]
    reply = await client.post(
        f"{base}/api/auth/sign-in",
        json={"user": "admin@demo.local", "password": "demo"},
        headers={"X-CSRF-Token": csrf},
    )
    reply.raise_for_status()
    client.headers["X-CSRF-Token"] = reply.json()["csrf"]


class Groups:
    """The process groups whose CPU is counted: the web workers, the model, the ERP."""

    def __init__(self, workers: int, model: int, erp: int) -> None:
        self.ids = {"workers": workers, "model": model, "erp": erp}

    def sample(self) -> dict[str, float]:
        busy, total = machine_busy()
        return {
            **{name: cpu_seconds(group) for name, group in self.ids.items()},
            "load": own_cpu(),
            "busy": busy,
            "total": total,
            "clock": time.monotonic(),
        }


async def measure(
    client: httpx.AsyncClient,
    base: str,
    conversations: int,
    seconds: float,
    groups: Groups,
    *,
    warm: float = 3.0,
) -> dict[str, float]:
    """``conversations`` users asking without pause; measured over ``seconds`` after ``warm``
    seconds of the same load (steady state: turns are counted when they finish inside the
    window, whenever they started)."""
    done: list[tuple[float, float]] = []
    begin = time.monotonic() + warm
    end = begin + seconds
    samples: list[dict[str, float]] = []

    async def sampler() -> None:
        for at in (begin, end):
            await asyncio.sleep(max(0.0, at - time.monotonic()))
            samples.append(groups.sample())

    await asyncio.gather(
        sampler(), *(conversation(client, base, end, done) for _ in range(conversations))
    )
    before, after = samples
    used = {k: after[k] - before[k] for k in after}
    latencies = [took for finished, took in done if before["clock"] <= finished <= after["clock"]]
    turns = len(latencies)
    per_turn = 1000 / max(turns, 1)
    return {
        "conversations": conversations,
        "turns": turns,
        "tps": turns / used["clock"],
        "p50": percentile(latencies, 50) if latencies else float("nan"),
        "p95": percentile(latencies, 95) if latencies else float("nan"),
        "cpu_ms": used["workers"] * per_turn,
        "load_ms": used["load"] * per_turn,
        "model_ms": used["model"] * per_turn,
        "erp_ms": used["erp"] * per_turn,
        "workers_cores": used["workers"] / used["clock"],  # cores the web workers kept busy
        "machine": used["busy"] / used["total"],  # share of every core that was busy
        # Every process's CPU per turn (the databases and Redis too): what a turn costs the box.
        "machine_ms": used["busy"] * per_turn,
        "cores": used["total"] / used["clock"],
    }


async def load(
    base: str, conversations: int, seconds: float, groups: Groups, *, slo: float
) -> list[dict[str, float]]:
    """The saturated run at ``conversations``, then runs at fewer conversations until one's
    p95 is within ``slo`` seconds (none when the first already is)."""
    limits = httpx.Limits(
        max_connections=conversations + 10, max_keepalive_connections=conversations
    )
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        await sign_in(client, base)
        if CACHED:  # one answer kept before the load, or the first 200 askers all miss at once
            await conversation(client, base, time.monotonic() + 0.1, [], stagger=0)
        runs = [await measure(client, base, conversations, seconds, groups, warm=5.0)]
        # Closed loop: latency ≈ conversations / throughput, so 0.35 × slo × turns/s
        # conversations keep a turn near a third of the target while the throughput holds.
        level = conversations
        while runs[-1]["p95"] > slo and level > 1 and len(runs) < 3:
            level = max(1, min(level // 2, round(0.35 * slo * runs[-1]["tps"])))
            runs.append(await measure(client, base, level, seconds, groups))
        if CACHED:  # a hit's own latency: one user, nothing else running
            runs.append(await measure(client, base, 1, seconds / 2, groups))
    return runs


def line(label: str, r: dict[str, float]) -> str:
    return (
        f"  {label:<18} {r['conversations']:4.0f} conv  {r['tps']:6.1f} turns/s  "
        f"p50 {r['p50'] * 1000:6.0f} ms  p95 {r['p95'] * 1000:6.0f} ms  "
        f"CPU ms/turn: workers {r['cpu_ms']:5.1f}, load {r['load_ms']:5.1f}, "
        f"model {r['model_ms']:4.1f}, ERP {r['erp_ms']:4.1f}, machine {r['machine_ms']:5.1f}  "
        f"workers busy {r['workers_cores']:.2f} cores, machine {100 * r['machine']:3.0f} % "
        f"of {r['cores']:.0f}  (n={r['turns']:.0f})"
    )


# ------------------------------------------------------------------ main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="*", default=[1, 2, 4])
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=10.0, help="Length of each measured run.")
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--slo", type=float, default=2.0, help="The p95 (s) throughput is held at.")
    parser.add_argument(
        "--cache-hits",
        action="store_true",
        help="Measure answers served by the response cache (one question, new conversations).",
    )
    parser.add_argument(
        "--profile", help="Run the 1-worker server under cProfile, writing its stats to this file."
    )
    parser.add_argument("--model-server", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--erp-server", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cache_hits:
        CACHED.append(True)
    if args.model_server:
        model_server(args.model_server, args.latency)
        return
    if args.erp_server:
        erp_server(int(args.erp_server[0]), args.erp_server[1])
        return

    import psycopg
    from sqlalchemy.engine import make_url

    work = Path(tempfile.mkdtemp(prefix="many-workers-"))
    erp_db = work / "demo.sqlite"
    seed(erp_db, today=TODAY, scale=0.05)
    database = f"bench_{uuid.uuid4().hex[:10]}"
    admin = psycopg.connect(PG_DSN, autocommit=True)
    admin.execute(f'CREATE DATABASE "{database}"')
    vector_extension(database)
    model_port, erp_port = free_port(), free_port()
    me = [sys.executable, __file__]
    model = subprocess.Popen(
        [*me, "--model-server", str(model_port), "--latency", str(args.latency)],
        start_new_session=True,
    )
    erp = subprocess.Popen(
        [*me, "--erp-server", str(erp_port), str(erp_db)], start_new_session=True
    )
    results: dict[int, list[dict[str, float]]] = {}
    try:
        wait_ready(f"http://127.0.0.1:{model_port}/", model)
        wait_ready(f"http://127.0.0.1:{erp_port}/", erp)
        for workers in args.workers:
            prefix = f"bench-{uuid.uuid4().hex[:8]}"
            url = make_url(PG_DSN).set(drivername="postgresql+psycopg", database=database)
            env = {
                **os.environ,
                "ERP_AGENT_ERP_URL": f"http://127.0.0.1:{erp_port}",
                "ERP_AGENT_DATA_DIR": str(work / f"data-{workers}"),
                "ERP_AGENT_DATABASE_URL": url.render_as_string(hide_password=False),
                # The search index in the same database (psycopg's own URL form).
                "ERP_AGENT_INDEX_URL": url.set(drivername="postgresql").render_as_string(
                    hide_password=False
                ),
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
            profile = (
                ["-m", "cProfile", "-o", args.profile] if args.profile and workers == 1 else []
            )
            serve = subprocess.Popen(
                [sys.executable, *profile, "-m", "erp_agent", "serve", "--port", str(port),
                 "--workers", str(workers)],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=(work / f"serve-{workers}.log").open("wb"),  # the workers' logs
                start_new_session=True,
            )  # fmt: skip
            try:
                base = f"http://127.0.0.1:{port}"
                wait_ready(f"{base}/healthz", serve)
                time.sleep(2 * workers)  # every worker process up, not only the first
                groups = Groups(serve.pid, model.pid, erp.pid)
                runs = asyncio.run(
                    load(base, args.conversations, args.seconds, groups, slo=args.slo)
                )
                results[workers] = runs
            except Exception:
                log = (work / f"serve-{workers}.log").read_text(errors="replace")
                print("the server's log ends:\n" + "\n".join(log.splitlines()[-150:]), flush=True)
                raise
            finally:  # uvicorn raises SIGTERM again once stopped: cProfile writes on SIGINT
                stop(serve, signal.SIGINT if profile else signal.SIGTERM)
            failures, FAILURES[:] = list(FAILURES), []
            print(
                ("cache hits: " if args.cache_hits else "")
                + f"{workers} web worker(s), {args.latency * 1000:.0f} ms model, "
                + (f"{len(HITS)} served from the cache, " if args.cache_hits else "")
                + f"{len(failures)} failed turns"
                + (f" (the first: {failures[0][:300]!r})" if failures else ""),
                flush=True,
            )
            HITS.clear()
            print(line("saturated", runs[0]), flush=True)
            within = [r for r in runs if r["p95"] <= args.slo and r["conversations"] > 1]
            if args.cache_hits:
                print(line("one user", runs[-1]), flush=True)
            if within:
                print(line(f"p95 <= {args.slo:g} s", within[0]), flush=True)
            else:
                print(f"  no run kept p95 within {args.slo:g} s", flush=True)
    finally:
        stop(model)
        stop(erp)
        admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        admin.close()
        shutil.rmtree(work, ignore_errors=True)
    summary(results, args.slo)


def summary(results: dict[int, list[dict[str, float]]], slo: float) -> None:
    def held(workers: int) -> float:
        runs = results[workers]
        within = [r["tps"] for r in runs if r["p95"] <= slo and r["conversations"] > 1]
        return within[0] if within else 0.0

    def per_cpu(workers: int) -> float:
        cpu_ms = results[workers][0]["cpu_ms"]
        return 1000 / cpu_ms if cpu_ms else float("inf")

    if 1 in results and 2 in results:
        saturated = results[2][0]["tps"] / results[1][0]["tps"]
        text = f"2 workers / 1 worker: {saturated:.2f}x turns/s saturated"
        if held(1):
            text += f", {held(2) / held(1):.2f}x at p95 <= {slo:g} s"
        print(
            f"{text} (target >= 1.6x); {per_cpu(2) / per_cpu(1):.2f}x turns per engine-CPU-second "
            "(1.0: a worker does as much per CPU second beside another, so no lock or shared "
            "connection holds it back; the rest is the cores the machine has free)"
        )
        # One worker is held to one core; N workers to the machine's cores, which every other
        # process of a turn (load, model, ERP, PostgreSQL, Redis) shares with them.
        one = results[1][0]
        ceiling = min(2.0, one["cores"] * one["cpu_ms"] / one["machine_ms"])
        print(
            f"the cores' ceiling for 2 workers / 1 worker on this machine: {ceiling:.2f}x "
            f"({one['cores']:.0f} cores x {one['cpu_ms']:.1f} ms of worker CPU / "
            f"{one['machine_ms']:.1f} ms of the whole machine's CPU per turn); measured "
            f"{saturated / ceiling:.0%} of it saturated"
        )
    for workers, runs in results.items():
        r = runs[0]
        print(
            f"{workers} worker(s): {per_cpu(workers):.1f} turns per engine-CPU-second, "
            f"{workers * per_cpu(workers):.0f} turns/s with a free core per worker; the workers "
            f"used {r['workers_cores']:.2f} of {r['cores']:.0f} cores, the machine was "
            f"{100 * r['machine']:.0f} % busy"
        )


if __name__ == "__main__":
    main()
