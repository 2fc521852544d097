"""Question kinds are data: catalog/data/questions.yaml declares every kind the planner
handles (cues, condition, slots, handler) and routing reads the same vocabulary; each handler
is a module of its own that imports no other handler; the planner has no import circle."""

from __future__ import annotations

import ast
import datetime as dt
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import TEST_TODAY, DemoERP, ask_offline
from erp_agent.catalog import load_catalog
from erp_agent.catalog.questions import load_questions
from erp_agent.engine import routing
from erp_agent.evals.score import figure_present
from erp_agent.planner import kinds, questions
from erp_agent.planner.intents import understand

PLANNER = Path(questions.__file__).parent


def test_every_kind_and_plan_has_its_handler_and_every_check_exists() -> None:
    spec = load_questions()
    names = {k.handler for k in spec.kinds} | {p.handler for p in spec.plans}
    for name in names:
        assert callable(kinds.handler(name)), name
    for plan in spec.plans:
        if plan.when == "applies":
            assert callable(kinds.applies(plan.handler)), plan.handler

    def checks(cond: Any) -> set[str]:
        if isinstance(cond, str):
            return set() if ":" in cond else {cond}
        return {
            c
            for v in cond.values()
            for item in (v if isinstance(v, list) else [v])
            for c in checks(item)
        }

    used = set().union(
        *(checks(k.when) for k in spec.kinds), *(checks(c) for c in spec.conditions.values())
    )
    known = set(questions.CHECKS) | set(spec.conditions) | {"applies"}
    assert used <= known, used - known


def test_routing_and_the_planner_read_one_vocabulary() -> None:
    spec = load_questions()
    assert spec.write_words == routing.WRITE_WORDS
    assert {"approve", "create", "cancel"} <= routing.WRITE_WORDS
    assert routing.ANALYSIS_WORDS["trend"] == "analytics.trend"
    assert spec.words("back") == routing.BACK_WORDS
    # A verb of a change in several words is one too, for the planner and for routing.
    req = understand(load_catalog(), "erpnext", "draw up a quotation for Acme Ltd", TEST_TODAY)
    assert (req.kind, req.change) == ("write", "create")
    assert "draw up" in routing.WRITE_PHRASES


def _imports(path: Path) -> set[str]:
    """Planner modules a module imports, at module level or inside functions."""
    tree = ast.parse(path.read_text())
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "erp_agent.planner" or node.module == "erp_agent.planner.kinds":
                out |= {f"{node.module}.{a.name}" for a in node.names}
            elif node.module.startswith("erp_agent.planner."):
                out.add(node.module)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("erp_agent.planner.")}
    return out


def _module_name(path: Path) -> str:
    rel = path.relative_to(PLANNER.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return "erp_agent." + ".".join(parts)


def test_the_planner_has_no_import_circle_and_handlers_import_no_handler() -> None:
    files = {_module_name(p): p for p in PLANNER.rglob("*.py")}
    graph = {m: {i for i in _imports(p) if i in files and i != m} for m, p in files.items()}
    graph["erp_agent.planner"] = set()  # the package re-exports the model; not a layer
    state: dict[str, int] = {}

    def visit(m: str, trail: list[str]) -> None:
        state[m] = 1
        for n in graph.get(m, ()):
            assert state.get(n) != 1, " → ".join([*trail, m, n])
            if n not in state:
                visit(n, [*trail, m])
        state[m] = 2

    for m in graph:
        if m not in state:
            visit(m, [])
    handlers = {m for m in files if m.startswith("erp_agent.planner.kinds.")}
    for m in handlers:
        assert not (graph[m] & handlers), (m, graph[m] & handlers)


def _on_leave(demo: DemoERP, day: dt.date) -> set[str]:
    """Approved, submitted leave applications covering ``day``, from the ERP's REST API."""
    with httpx.Client(base_url=demo.url) as client:
        client.post("/api/method/login", data={"usr": "hr@demo.local", "pwd": "demo"})
        reply = client.get(
            "/api/resource/Leave Application",
            params={
                "fields": '["employee_name"]',
                "filters": f'[["status","=","Approved"],["docstatus","=",1],'
                f'["from_date","<=","{day}"],["to_date",">=","{day}"]]',
                "limit_page_length": 0,
            },
        )
    return {row["employee_name"] for row in reply.json()["data"]}


@pytest.mark.anyio
async def test_the_kind_added_as_data_answers_who_is_on_leave_on_a_day(
    runtime: Any, demo_erp: DemoERP
) -> None:
    """The on_leave kind: one questions.yaml entry and one handler (kinds/on_leave.py)."""
    days = [TEST_TODAY - dt.timedelta(days=n) for n in range(0, 120)]
    busy = next(d for d in days if _on_leave(demo_erp, d))
    quiet = next(d for d in days if not _on_leave(demo_erp, d))
    for day in (busy, quiet):
        answer = await ask_offline(
            runtime, f"who is on leave on {day.isoformat()}?", "hr@demo.local"
        )
        text = answer["text"]
        expected = _on_leave(demo_erp, day)
        assert [c["name"] for c in answer["calls"]] == ["leave_application.list"], answer["calls"]
        for name in expected:
            assert name in text, (day, name, text)
        if not expected:
            assert "No one" in text, text
        assert figure_present(text, len(expected)) or not expected
        assert answer["grounded"], text
