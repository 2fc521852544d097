"""Eval results as a rich table (people) and JSON (CI and dashboards)."""

from __future__ import annotations

import json

from rich.console import Console
from rich.table import Table

from erp_agent.evals.runner import CaseResult, EvalRun


def _cell(value: float | None) -> str:
    return "–" if value is None else f"{value:g}"


def _title(run: EvalRun) -> str:
    day = f" · as of {run.today.isoformat()}" if run.today else ""
    return f"erp-agent eval · model {run.model}{day} · {run.seconds:g} s"


def table(run: EvalRun) -> Table:
    out = Table(title=_title(run))
    for column in (
        "suite",
        "cases",
        "skipped",
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
            s.name, _cell(m["cases"]), _cell(m.get("skipped")), _cell(m["accuracy"]),
            _cell(m["groundedness"]),
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
    out = Table(title="accuracy and groundedness per family")
    for column in ("suite", "family", "cases", "accuracy", "grounded"):
        out.add_column(column, justify="left" if column in ("suite", "family") else "right")
    for suite_name, family, value in rows:
        suite = next(s for s in run.suites if s.name == suite_name)
        count = sum(1 for c in suite.cases if c.family == family and c.skipped is None)
        grounded = suite.metrics.get(f"groundedness[{family}]")
        style = "green" if value is not None and value >= 0.95 else "red"
        g_style = "green" if grounded == 1.0 else "red"
        out.add_row(suite_name, family, str(count), f"[{style}]{_cell(value)}[/]",
                    f"[{g_style}]{_cell(grounded)}[/]")  # fmt: skip
    return out


def _missed(c: CaseResult) -> str:
    if c.error:
        return c.error
    failed = [k for k, ok in c.checks.items() if not ok] + ([] if c.grounded else ["grounded"])
    return ", ".join(failed) or "?"


def failures(run: EvalRun, console: Console, limit: int = 20) -> None:
    shown = 0
    for s in run.suites:
        for c in s.cases:
            if c.skipped is not None or (c.passed and c.grounded) or shown >= limit:
                continue
            shown += 1
            console.print(f"[red]✗[/] {s.name}/{c.case} ({_missed(c)}): {c.question}")
            if c.answer:
                console.print(f"    → {c.answer[:200]!r}")
    skipped = [(s.name, c) for s in run.suites for c in s.cases if c.skipped is not None]
    for name, c in skipped[:limit]:
        console.print(f"[yellow]–[/] {name}/{c.case} skipped: {c.skipped}")


def summary(run: EvalRun, answers: int = 160) -> str:
    """Plain text for logs and assertion messages: each suite's metrics and gates, every
    family's accuracy and groundedness (worst first), then every miss and every skip."""
    lines = [_title(run)]
    for s in run.suites:
        m = s.metrics
        gates = ", ".join(
            f"{name} {_cell(g['value'])}/{g['bound']:g} {'ok' if g['ok'] else 'FAILED'}"
            for name, g in s.gates.items()
        )
        lines.append(
            f"{s.name}: accuracy {_cell(m['accuracy'])}, groundedness {_cell(m['groundedness'])}"
            f" ({_cell(m['cases'])} cases, {_cell(m.get('skipped'))} skipped; gates {gates})"
        )
        by_family = sorted(
            (v, k.removeprefix("accuracy[").removesuffix("]"))
            for k, v in m.items()
            if k.startswith("accuracy[") and v is not None
        )
        for value, family in by_family:
            grounded = m.get(f"groundedness[{family}]")
            lines.append(f"  [{family}] accuracy {value:g}, groundedness {_cell(grounded)}")
        for c in s.cases:
            if c.skipped is not None:
                lines.append(f"  - {c.case} skipped: {c.skipped}")
            elif not (c.passed and c.grounded):
                answer = " ".join(c.answer.split())[:answers]
                lines.append(f"  x {c.case} ({_missed(c)}): {c.question[:120]!r} -> {answer!r}")
    return "\n".join(lines)


def to_json(run: EvalRun) -> str:
    return json.dumps(run.as_dict(), indent=2, default=str)
