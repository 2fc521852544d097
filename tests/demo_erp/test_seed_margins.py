"""Demo figures a finance user would believe: at more than one scale, both seeded companies earn a
trading company's margins (gross 25-40 %, net 3-10 %) in every fiscal year of history, read from
the ERP's own Profit and Loss Statement over HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from conftest import TEST_TODAY, DemoERP
from demo_erp.context import Settings

COMPANIES = ("Savanna Trading Ltd", "Harbor Goods Inc")
# The last complete fiscal year and the current one (to date).
FISCAL_YEARS = (str(TEST_TODAY.year - 1), str(TEST_TODAY.year))


@pytest.fixture(scope="module")
def smaller_demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Half the volume of the shared demo ERP: the margins must not depend on the scale."""
    from demo_erp.seed import seed
    from demo_erp.server import start_in_thread

    path = Path(tmp_path_factory.mktemp("demo-erp-small")) / "demo.sqlite"
    seed(path, today=TEST_TODAY, scale=0.05)
    server = start_in_thread(Settings(db_path=str(path), version=15, today=TEST_TODAY))
    yield server.url
    server.stop()


def _profit_and_loss(url: str, company: str, year: str) -> dict[str, Decimal]:
    """Account → the year's total, from the report's rows."""
    with httpx.Client(base_url=url, timeout=120) as client:
        client.post("/api/method/login", data={"usr": "admin@demo.local", "pwd": "demo"})
        filters = {"company": company, "from_fiscal_year": year, "to_fiscal_year": year,
                   "periodicity": "Yearly"}  # fmt: skip
        reply = client.post(
            "/api/method/frappe.desk.query_report.run",
            data={"report_name": "Profit and Loss Statement", "filters": json.dumps(filters)},
        )
    assert reply.status_code == 200, reply.text
    rows = reply.json()["message"]["result"]
    return {
        str(r["account"]).rsplit(" - ", 1)[0]: Decimal(str(r.get("total") or 0))
        for r in rows
        if isinstance(r, dict) and r.get("account")
    }


def _margins(url: str) -> dict[tuple[str, str], tuple[float, float]]:
    out = {}
    for company in COMPANIES:
        for year in FISCAL_YEARS:
            pnl = _profit_and_loss(url, company, year)
            income, direct, expenses = pnl["Income"], pnl["Direct Expenses"], pnl["Expenses"]
            assert income > 0, (company, year)
            gross = float((income - direct) / income * 100)
            net = float((income - expenses) / income * 100)
            out[(company, year)] = (round(gross, 1), round(net, 1))
    return out


def _believable(margins: dict[tuple[str, str], tuple[float, float]]) -> list[str]:
    return [
        f"{company} FY{year}: gross {gross}%, net {net}%"
        for (company, year), (gross, net) in margins.items()
        if not (25 <= gross <= 40 and 3 <= net <= 10)
    ]


def test_both_companies_earn_believable_margins_at_the_test_scale(demo_erp: DemoERP) -> None:
    margins = _margins(demo_erp.url)
    assert not _believable(margins), margins


def test_both_companies_earn_believable_margins_at_half_the_scale(smaller_demo: str) -> None:
    margins = _margins(smaller_demo)
    assert not _believable(margins), margins


def test_overheads_are_all_there(demo_erp: DemoERP) -> None:
    """Rent, salaries, utilities, marketing and office costs are each booked every year: the
    margins come from a full cost base, not from leaving costs out."""
    for company in COMPANIES:
        for year in FISCAL_YEARS:
            pnl = _profit_and_loss(demo_erp.url, company, year)
            for account in ("Rent", "Salary", "Utilities", "Marketing", "Office Expenses"):
                assert pnl.get(account, Decimal(0)) > 0, (company, year, account)
