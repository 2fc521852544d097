"""`erp-agent scan FILE --as USER` against the demo ERP over HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from bad_scans import png
from scan_fixtures import documents
from typer.testing import CliRunner

from conftest import DemoERP, raw
from erp_agent.cli.scan import scan
from erp_agent.documents.samples import render_pdf

app = typer.Typer()
app.command("scan")(scan)
app.command("noop")(lambda: None)
runner = CliRunner()


@pytest.fixture(autouse=True)
def erp(demo_erp: DemoERP, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ERP_AGENT_ERP_URL", demo_erp.url)
    monkeypatch.setenv("ERP_AGENT_PASSWORD", "demo")
    monkeypatch.setenv("ERP_AGENT_DATA_DIR", str(tmp_path))


def invoices(demo: DemoERP) -> int:
    return int(raw(demo, 'SELECT COUNT(*) FROM "tabPurchase Invoice"')[0][0])


def test_scan_shows_the_draft_and_writes_only_on_yes(demo_erp: DemoERP, tmp_path: Path) -> None:
    doc = documents(demo_erp, 1, seed=61, kind="purchase_invoice")[0]
    path = tmp_path / "bill.pdf"
    path.write_bytes(render_pdf(doc))
    before = invoices(demo_erp)

    shown = runner.invoke(app, ["scan", str(path), "--as", "accounts@demo.local", "--no-input"])
    assert shown.exit_code == 0, shown.output
    assert "Draft Purchase Invoice prepared, not written" in shown.output
    assert doc.party in shown.output
    assert invoices(demo_erp) == before

    declined = runner.invoke(app, ["scan", str(path), "--as", "accounts@demo.local"], input="n\n")
    assert declined.exit_code == 0, declined.output
    assert invoices(demo_erp) == before

    written = runner.invoke(app, ["scan", str(path), "--as", "accounts@demo.local"], input="y\n")
    assert written.exit_code == 0, written.output
    assert invoices(demo_erp) == before + 1
    assert (
        raw(demo_erp, 'SELECT COUNT(*) FROM "tabPurchase Invoice" WHERE bill_no = ?', doc.number)[
            0
        ][0]
        == 1
    )


def test_scan_json_and_a_bad_file(demo_erp: DemoERP, tmp_path: Path) -> None:
    doc = documents(demo_erp, 1, seed=62, kind="purchase_invoice")[0]
    path = tmp_path / "bill.pdf"
    path.write_bytes(render_pdf(doc))
    result = runner.invoke(app, ["scan", str(path), "--as", "accounts@demo.local", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["values"]["supplier"] == doc.party
    assert payload["proposal"]["status"] == "pending"

    junk = tmp_path / "notes.txt"
    junk.write_text("not an invoice")
    bad = runner.invoke(app, ["scan", str(junk), "--as", "accounts@demo.local"])
    assert bad.exit_code == 1
    assert "not a PDF or an image" in bad.output
    assert "Traceback" not in bad.output


def test_a_hostile_image_is_refused_in_words(tmp_path: Path) -> None:
    """The 1 KB PNG of 1,000,000×1 pixels that once grew a server to 22 GB."""
    path = tmp_path / "row.png"
    path.write_bytes(png(1_000_000, 1))
    result = runner.invoke(app, ["scan", str(path), "--as", "accounts@demo.local"])
    assert result.exit_code == 1
    assert "a side under 16 pixels cannot hold a legible line" in " ".join(result.output.split())
    assert "Traceback" not in result.output


def test_a_supplier_several_records_fit_is_chosen_by_number(
    demo_erp: DemoERP, tmp_path: Path
) -> None:
    import dataclasses

    doc = documents(demo_erp, 1, seed=62, kind="purchase_invoice")[0]
    doc = dataclasses.replace(doc, party="Wire & Cable Ltd")
    path = tmp_path / "bill.pdf"
    path.write_bytes(render_pdf(doc))
    shown = runner.invoke(
        app, ["scan", str(path), "--as", "accounts@demo.local", "--json"], catch_exceptions=False
    )
    options = json.loads(shown.output)["choices"]["options"]
    assert len(options) >= 2
    chosen = options[1]["value"]  # not the one the draft started from

    done = runner.invoke(app, ["scan", str(path), "--as", "accounts@demo.local"], input="2\ny\n")
    assert done.exit_code == 0, done.output
    assert "Which supplier" in done.output
    assert "a new proposal" in done.output
    written = raw(
        demo_erp, 'SELECT supplier FROM "tabPurchase Invoice" WHERE bill_no = ?', doc.number
    )
    assert [r[0] for r in written] == [chosen]
