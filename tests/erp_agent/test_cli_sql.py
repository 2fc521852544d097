"""The CLI on the bespoke database: `connector check` and `tools` answer from the sql
connector's profile and the principal's roles; a broken mapping is one clear line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sql_databases import MAPPING, seeded
from typer.testing import CliRunner

from erp_agent.cli import app


@pytest.fixture
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = seeded(f"sqlite:///{tmp_path / 'shop.sqlite'}", per_branch=3)
    monkeypatch.setenv("ERP_AGENT_CONNECTOR", "sql")
    monkeypatch.setenv("ERP_AGENT_ERP_URL", url)
    monkeypatch.setenv("ERP_AGENT_SQL_MAPPING", str(MAPPING))
    monkeypatch.setenv("ERP_AGENT_PASSWORD", "demo")
    return url


@pytest.mark.usefixtures("shop")
def test_connector_check_answers_from_the_mapping() -> None:
    result = CliRunner().invoke(
        app, ["connector", "check", "--as", "viewer@savanna.test", "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert set(report["entities"]) == {
        "company", "branch", "warehouse", "customer", "item", "sales_invoice", "payment_entry",
        "stock_balance"}  # fmt: skip
    assert report["entities"]["stock_balance"]["read"] is False  # Sales User: no stock
    assert report["entities"]["customer"]["create"] is False
    assert report["reports"] == {"customer_balances": True}


@pytest.mark.usefixtures("shop")
def test_tools_are_what_the_connector_can_do() -> None:
    result = CliRunner().invoke(app, ["tools", "--as", "owner@savanna.test", "--json"])
    assert result.exit_code == 0, result.output
    names = [n for group in json.loads(result.output)["modules"].values() for n in group]
    assert "customer.create" in names
    assert "report.customer_balances" in names
    assert not [n for n in names if n.endswith((".submit", ".cancel", ".workflow_action"))]
    assert not [n for n in names if n.startswith(("purchase_invoice.", "salary_slip."))]


def test_a_broken_mapping_is_one_clear_line(
    shop: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text(MAPPING.read_text().replace("table: invoices", "table: invoice"))
    monkeypatch.setenv("ERP_AGENT_SQL_MAPPING", str(broken))
    result = CliRunner().invoke(app, ["connector", "check", "--as", "owner@savanna.test"])
    assert result.exit_code != 0
    assert "no table invoice" in result.output
    assert "Traceback" not in result.output
