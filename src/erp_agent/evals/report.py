"""Eval results as a rich table (people) and JSON (CI and dashboards)."""

from __future__ import annotations

import json

from rich.console import Console
from rich.table import Table

from erp_agent.evals.runner import EvalRun


def _cell(value: float | None) -> str:
    return "–" if value is None else f"{value:g}"


def table(run: EvalRun) -> Table:
    out = Table(title=f"erp-agent eval · model {run.model}")
    for column in (
        "suite",
        "cases",
        "accuracy",
        "grounded",
        "recall@k",
        "prompt tok",
        "p50 ms",
        "p95 ms",
        "gates",
    ):
        out.add_column(column, justify="left" if column in ("suite", "gates") else "right")
    for s in run.suites:
        m = s.metrics
        gates = (
            ", ".join(
                f"[{'green' if g['ok'] else 'red'}]{name} {_cell(g['value'])}/{g['bound']:g}[/]"
                for name, g in s.gates.items()
            )
            or "–"
        )
        out.add_row(
            s.name, _cell(m["cases"]), _cell(m["accuracy"]), _cell(m["groundedness"]),
            _cell(m["recall_at_k"]), _cell(m["prompt_tokens"]), _cell(m["latency_ms_p50"]),
            _cell(m["latency_ms_p95"]), gates,
        )  # fmt: skip
    return out


def families(run: EvalRun) -> Table | None:
    """Accuracy per question family, for suites whose cases name one (None when none do)."""
    rows = [
        (s.name, key.removeprefix("accuracy[").removesuffix("]"), value)
        for s in run.suites
        for key, value in s.metrics.items()
        if key.startswith("accuracy[")
    ]
    if not rows:
        return None
    out = Table(title="accuracy per family")
    for column in ("suite", "family", "cases", "accuracy"):
        out.add_column(column, justify="right" if column in ("cases", "accuracy") else "left")
    for suite_name, family, value in rows:
        suite = next(s for s in run.suites if s.name == suite_name)
        count = sum(1 for c in suite.cases if c.family == family)
        style = "green" if value is not None and value >= 0.95 else "red"
        out.add_row(suite_name, family, str(count), f"[{style}]{_cell(value)}[/]")
    return out


def failures(run: EvalRun, console: Console, limit: int = 20) -> None:
    shown = 0
    for s in run.suites:
        for c in s.cases:
            if c.passed or shown >= limit:
                continue
            shown += 1
            failed = ", ".join(k for k, ok in c.checks.items() if not ok) or c.error or "?"
            console.print(f"[red]✗[/] {s.name}/{c.case} ({failed}): {c.question}")
            if c.answer:
                console.print(f"    → {c.answer[:200]!r}")


def to_json(run: EvalRun) -> str:
    return json.dumps(run.as_dict(), indent=2, default=str)
