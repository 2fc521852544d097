"""Terminal start-up: `erp-agent --help`, and what `erp-agent ask` adds to the turn it runs.

Each figure is a median of --runs process starts, printed in seconds and as a ratio to
`python -c pass` (the interpreter's own start) measured in the same run. "ask adds" is the
`erp-agent ask` wall time minus the same question answered by an already-running engine
against the same demo ERP (the turn itself). Budgets: --help under 0.5 s, ask adds under 1.5 s.

uv run python benchmarks/cli_start.py [--runs 5] [--scale 0.1]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import seeded_db

QUESTION = "How many customers do we have?"
USER = "admin@demo.local"
PASSWORD = "demo"


def wall(argv: list[str], env: dict[str, str], runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


async def warm_turn(runs: int) -> float:
    """The same question through one engine that is already up: the turn without the start."""
    from erp_agent.assembly import offline
    from erp_agent.config import load_settings
    from erp_agent.runtime import Runtime

    runtime = await Runtime.create(load_settings())
    try:
        session = await runtime.sign_in(USER, PASSWORD)
        engine = runtime.engine(offline(runtime))
        await engine.run_turn(session, QUESTION)  # first turn loads what a turn loads lazily
        samples = []
        for _ in range(runs):
            started = time.perf_counter()
            await engine.run_turn(session, QUESTION)
            samples.append(time.perf_counter() - started)
        return statistics.median(samples)
    finally:
        await runtime.aclose()


def line(label: str, seconds: float, baseline: float, budget: float | None = None) -> str:
    verdict = (
        ""
        if budget is None
        else ("   within" if seconds < budget else "   OVER") + (f" {budget:.1f} s budget")
    )
    return f"{label:<28} {seconds:6.3f} s   {seconds / baseline:6.1f}x python -c pass{verdict}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5, help="process starts per figure")
    parser.add_argument("--scale", type=float, default=0.1, help="demo ERP data volume")
    parser.add_argument(
        "--data", type=Path, default=Path(tempfile.gettempdir()) / "erp-agent-bench"
    )
    args = parser.parse_args()
    from demo_erp.context import Settings
    from demo_erp.server import start_in_thread

    erp = start_in_thread(Settings(db_path=str(seeded_db(args.data, None, args.scale))))
    try:
        with tempfile.TemporaryDirectory() as data:
            # An installed product has its bytecode compiled; a checkout run with
            # PYTHONDONTWRITEBYTECODE would recompile every module on every start.
            env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
            env |= {
                "PYTHONPYCACHEPREFIX": str(Path(data) / "pycache"),
                "ERP_AGENT_ERP_URL": erp.url,
                "ERP_AGENT_PASSWORD": PASSWORD,
                "ERP_AGENT_DATA_DIR": data,
            }
            os.environ.update(env)
            cli = [sys.executable, "-m", "erp_agent"]
            ask = [*cli, "ask", QUESTION, "--as", USER, "--model", "offline", "--json"]
            wall(ask, env, 1)  # first start creates the agent's store and compiles bytecode
            baseline = wall([sys.executable, "-c", "pass"], env, args.runs)
            help_time = wall([*cli, "--help"], env, args.runs)
            ask_time = wall(ask, env, args.runs)
            turn = asyncio.run(warm_turn(args.runs))
    finally:
        erp.stop()
    print(f"load average {os.getloadavg()[0]:.1f}; medians of {args.runs} runs")
    print(line("python -c pass", baseline, baseline))
    print(line("erp-agent --help", help_time, baseline, 0.5))
    print(line("erp-agent ask (wall)", ask_time, baseline))
    print(line("the turn, engine already up", turn, baseline))
    print(line("erp-agent ask adds", ask_time - turn, baseline, 1.5))


if __name__ == "__main__":
    main()
