"""`erp-agent ask` and `erp-agent chat` against the demo ERP over HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from server_doubles import CREATE_LEAD, SALES_BY_CUSTOMER, ScriptBook
from typer.testing import CliRunner

from erp_agent.cli import _agent
from erp_agent.cli.ask import ask
from erp_agent.cli.chat import chat

app = typer.Typer()
app.command("ask")(ask)
app.command("chat")(chat)
runner = CliRunner()


@pytest.fixture(autouse=True)
def erp(demo_erp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ERP_AGENT_ERP_URL", demo_erp.url)
    monkeypatch.setenv("ERP_AGENT_PASSWORD", "demo")
    monkeypatch.setenv("ERP_AGENT_DATA_DIR", str(tmp_path))


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_agent, "model_for", lambda runtime, spec: ScriptBook())


def test_ask_json_with_the_offline_planner() -> None:
    result = runner.invoke(
        app,
        [
            "ask",
            "How many customers are there?",
            "--as",
            "admin@demo.local",
            "--model",
            "offline",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert set(payload) == {"conversation_id", "blocks", "tools_called", "usage", "model"}
    assert set(payload["usage"]) == {"prompt", "cached", "completion"}
    assert payload["blocks"][0]["type"] == "text"
    assert payload["tools_called"]


def test_ask_continues_a_conversation_by_its_id(demo_erp: Any) -> None:
    """The second `ask` is a follow-up: it only makes sense with the first one's state."""
    base = ["--as", "admin@demo.local", "--model", "offline", "--erp-url", demo_erp.url]
    first = runner.invoke(app, ["ask", "Revenue by month this year", *base, "--json"])
    assert first.exit_code == 0, first.output
    conversation = json.loads(first.stdout)["conversation_id"]
    plain = runner.invoke(app, ["ask", "why?", *base, "--conversation", conversation])
    assert plain.exit_code == 0, plain.output
    assert f"conversation {conversation}" in plain.stdout
    # How the last figure was computed: its definition (documents, filters, source).
    assert "How I got that" in plain.stdout
    assert "Sales Invoices" in plain.stdout
    alone = runner.invoke(app, ["ask", "why?", *base])
    assert "no earlier result" in alone.stdout


@pytest.mark.usefixtures("scripted")
def test_ask_prints_a_table_and_a_chart() -> None:
    result = runner.invoke(app, ["ask", SALES_BY_CUSTOMER, "--as", "admin@demo.local"])
    assert result.exit_code == 0, result.output
    assert "Sales by customer" in result.stdout
    assert "customer" in result.stdout
    assert "█" in result.stdout  # the chart's bars


@pytest.mark.usefixtures("scripted")
def test_ask_never_writes() -> None:
    result = runner.invoke(app, ["ask", CREATE_LEAD, "--as", "admin@demo.local"])
    assert result.exit_code == 0, result.output
    assert "Proposed change" in result.stdout
    assert "Nothing was written" in result.stdout


def test_an_unknown_model_is_one_clear_line() -> None:
    result = runner.invoke(app, ["ask", "hi", "--as", "admin@demo.local", "--model", "gpt"])
    assert result.exit_code == 1
    assert "--model offline" in result.output


@pytest.mark.usefixtures("scripted")
def test_chat_confirms_a_proposal_with_y() -> None:
    result = runner.invoke(
        app, ["chat", "--as", "admin@demo.local"], input=f"{CREATE_LEAD}\ny\nexit\n"
    )
    assert result.exit_code == 0, result.output
    assert "Jane Roe" in result.stdout
    assert "Done: Create Lead for Jane Roe" in result.stdout


@pytest.mark.usefixtures("scripted")
def test_chat_rejects_with_n_and_keeps_the_conversation() -> None:
    result = runner.invoke(
        app,
        ["chat", "--as", "admin@demo.local"],
        input=f"{CREATE_LEAD}\nn\n{SALES_BY_CUSTOMER}\n\n",
    )
    assert result.exit_code == 0, result.output
    assert "Rejected: nothing was written." in result.stdout
    assert "Sales by customer" in result.stdout


def test_ask_says_how_a_figure_was_computed() -> None:
    """--json carries each figure's definition; the plain answer prints it."""
    base = ["ask", "How many sales invoices do we have?", "--as", "admin@demo.local"]
    result = runner.invoke(app, [*base, "--model", "offline", "--json"])
    assert result.exit_code == 0, result.output
    calls = json.loads(result.stdout)["tools_called"]
    definitions = [c["definition"] for c in calls if "definition" in c]
    assert definitions
    assert any("drafts and cancelled excluded" in f for f in definitions[0]["filters"])
    plain = runner.invoke(app, [*base, "--model", "offline"], env={"COLUMNS": "250"})
    assert plain.exit_code == 0, plain.output
    assert "How this was computed" in plain.stdout
    assert "drafts and cancelled excluded" in plain.stdout


def test_ask_says_how_the_figure_was_computed_not_how_names_were_looked_up() -> None:
    """A question naming a supplier and an item looks both up ("name like %Nairo%"); the plain
    answer explains the figure it gives, never those look-ups."""
    question = "what did we pay Nairobi Steel Works for the Green Wall Switch last time?"
    base = ["ask", question, "--as", "admin@demo.local", "--model", "offline"]
    calls = json.loads(runner.invoke(app, [*base, "--json"]).stdout)["tools_called"]
    assert any(" like %" in " ".join(c.get("definition", {}).get("filters", [])) for c in calls)
    plain = runner.invoke(app, base, env={"COLUMNS": "250"})
    assert plain.exit_code == 0, plain.output
    assert plain.stdout.count("How this was computed") == 1, plain.stdout
    assert "Last purchase rate" in plain.stdout
    assert " like %" not in plain.stdout
