"""The offline planner's eval on several business dates and demo data sets: every ERPNext suite
and the held-out sets, each (date, seed) on its own freshly seeded demo ERP, through
`erp-agent eval --today D --seed N --scale X --json` (one process per run). Prints the wall time
of each run, accuracy / groundedness per suite and per question family (one column per run),
and with --misses every case that failed or was skipped.

    uv run python benchmarks/eval_dates.py                      # the runs CI checks
    uv run python benchmarks/eval_dates.py --dates 2027-01-02 --seeds 7:0.2 --misses
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HELDOUT = [ROOT / "tests/erp_agent/data/heldout_v2.yaml",
           ROOT / "tests/erp_agent/data/heldout_paraphrases.yaml"]  # fmt: skip
# CI's runs (tests/erp_agent/test_eval_dates.py): four days of the demo's year, two data sets.
DATES = ["2026-01-02", "2026-04-01", "2026-11-30", "2026-12-31"]
SEEDS = ["42:0.1", "7:0.2"]


def run_one(day: str, seed: str, scale: str, suites: list[str]) -> dict[str, Any]:
    args = ["--model", "offline", "--today", day, "--seed", seed, "--scale", scale, "--json"]
    args += [a for s in suites for a in ("--suite", s)]
    code = "from erp_agent.cli import app; app()"
    with tempfile.TemporaryDirectory(prefix="eval-dates-") as data:
        # A throwaway demo ERP is seeded only when no ERP is configured.
        env = {k: v for k, v in os.environ.items() if k != "ERP_AGENT_ERP_URL"}
        env["ERP_AGENT_DATA_DIR"] = data
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", code, "eval", *args], env=env, text=True,
                              capture_output=True, check=False)  # fmt: skip
        elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"eval {day} seed {seed} failed ({done.returncode}):\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout)
    result["process_seconds"] = round(elapsed, 1)
    return result


def _cell(metrics: dict[str, Any], key: str) -> str:
    acc, grd = metrics.get(f"accuracy{key}"), metrics.get(f"groundedness{key}")
    if acc is None:
        return "–"
    return f"{acc:.3f}/{grd:.2f}" if grd is not None and grd < 1 else f"{acc:.3f}"


def print_tables(runs: dict[str, dict[str, Any]], misses: bool) -> None:
    names = list(runs)
    width = max(13, *(len(n) for n in names))
    print("\nwall time per run (the eval's own / the whole process, seeding included)")
    for name, run in runs.items():
        print(f"  {name:<{width}} {run['seconds']:7.1f} s  {run['process_seconds']:7.1f} s")
    print("\naccuracy per suite and family (accuracy/groundedness where groundedness < 1)")
    header = f"{'':<44}" + "".join(f"{n:>{width + 2}}" for n in names)
    print(header)
    suites = list(dict.fromkeys(s["name"] for run in runs.values() for s in run["suites"]))
    for suite in suites:
        by_run = {n: next(s for s in r["suites"] if s["name"] == suite) for n, r in runs.items()}
        gates = next(iter(by_run.values()))["gates"]
        gate = ", ".join(f"{g} {v['bound']:g}" for g, v in gates.items())
        cells = "".join(f"{_cell(s['metrics'], ''):>{width + 2}}" for s in by_run.values())
        print(f"{suite[:28]:<28} {('gate ' + gate)[:15]:<15}" + cells)
        families = sorted({k[9:-1] for s in by_run.values() for k in s["metrics"]
                           if k.startswith("accuracy[")})  # fmt: skip
        for family in families:
            cells = "".join(
                f"{_cell(s['metrics'], f'[{family}]'):>{width + 2}}" for s in by_run.values()
            )
            print(f"  {family[:42]:<42}" + cells)
    if not misses:
        return
    for name, run in runs.items():
        print(f"\nmisses as of {name}")
        for suite in run["suites"]:
            for case in suite["cases"]:
                if case.get("skipped"):
                    print(f"  - {suite['name']}/{case['case']} skipped: {case['skipped']}")
                elif not (case["passed"] and case["grounded"]):
                    failed = [k for k, ok in case["checks"].items() if not ok]
                    failed += [] if case["grounded"] else ["grounded"]
                    why = case["error"] or ", ".join(failed)
                    answer = " ".join(case["answer"].split())[:140]
                    print(f"  x {suite['name']}/{case['case']} ({why})"
                          f": {case['question'][:100]!r} -> {answer!r}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dates", default=",".join(DATES), help="business dates, comma-separated")
    parser.add_argument("--seeds", default=",".join(SEEDS), help="SEED:SCALE, comma-separated")
    parser.add_argument("--suite", action="append", help="a suite (default: all, and held-out)")
    parser.add_argument("--jobs", type=int, default=1, help="runs at once (one process each)")
    parser.add_argument("--misses", action="store_true", help="print every missed case")
    args = parser.parse_args()
    from erp_agent.evals.spec import builtin_names

    suites = args.suite or [*builtin_names(), *map(str, HELDOUT)]
    plan = [
        (day, *pair.split(":")) for day in args.dates.split(",") for pair in args.seeds.split(",")
    ]
    for day, _, _ in plan:
        dt.date.fromisoformat(day)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(lambda p: run_one(p[0], p[1], p[2], suites), plan))
    runs = {
        f"{day} s{seed}/{scale}": r for (day, seed, scale), r in zip(plan, results, strict=True)
    }
    print_tables(runs, args.misses)


if __name__ == "__main__":
    main()
