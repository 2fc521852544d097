"""`erp-agent connector check --as USER`: computed by asking the ERP as that user."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import DemoERP
from erp_agent.cli import app


@pytest.fixture
def env(demo_erp: DemoERP, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ERP_AGENT_ERP_URL", demo_erp.url)
    monkeypatch.setenv("ERP_AGENT_PASSWORD", "demo")


@pytest.mark.usefixtures("env")
def test_check_as_sales_user_json() -> None:
    result = CliRunner().invoke(app, ["connector", "check", "--as", "sales@demo.local", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["user"] == "sales@demo.local"
    assert "Sales User" in report["roles"]
    assert report["entities"]["salary_slip"]["read"] is False
    assert report["entities"]["quotation"] == {
        "read": True, "create": True, "update": True, "submit": True, "cancel": True, "delete": True,
    }  # fmt: skip
    assert report["entities"]["sales_invoice"]["read"] is True
    assert report["entities"]["sales_invoice"]["create"] is False
    assert report["reports"]["accounts_receivable"] is False
    assert report["reports"]["sales_analytics"] is False


@pytest.mark.usefixtures("env")
def test_check_as_accounts_user_table() -> None:
    result = CliRunner().invoke(
        app, ["connector", "check", "--as", "accounts@demo.local"], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    assert "sales_invoice" in result.output
    assert "Accounts Receivable".lower().replace(" ", "_") in result.output


def test_wrong_password_is_one_clear_line(
    demo_erp: DemoERP, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ERP_AGENT_ERP_URL", demo_erp.url)
    monkeypatch.setenv("ERP_AGENT_PASSWORD", "nope")
    result = CliRunner().invoke(app, ["connector", "check", "--as", "sales@demo.local"])
    assert result.exit_code == 1
    assert "Invalid login credentials" in result.output
