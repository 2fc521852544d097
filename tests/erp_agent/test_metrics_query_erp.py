"""metrics.query against the demo ERP over real HTTP, as demo users. Every expected figure is
computed from the ERP's REST API with raw httpx (doctype, native fields, docstatus), never through
the catalog, connector or tools under test; and a deliberately wrong metric is shown to fail."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import AsyncIterator, Iterator
from decimal import Decimal
from typing import Any

import pytest
from agent_helpers import signed_in_context
from rest_truth import RestERP, cents, sums

from conftest import TEST_TODAY, DemoERP
from erp_agent.catalog import Catalog, load_catalog
from erp_agent.connectors.frappe.connector import ERPNextConnector
from erp_agent.errors import ToolInputError
from erp_agent.tools.base import Tool, ToolContext
from erp_agent.tools.modules import metrics

pytestmark = pytest.mark.anyio
CATALOG = load_catalog()
ADMIN = "admin@demo.local"
TODAY = TEST_TODAY.isoformat()
YEAR = f"{TEST_TODAY.year}-01-01"
SUBMITTED = ["docstatus", "=", 1]
READS = frozenset(f"{e}.{op}" for e in CATALOG.entities for op in ("list", "count", "aggregate"))


def tool(catalog: Catalog = CATALOG) -> Tool:
    return next(t for t in metrics.tools(catalog) if t.name == "metrics.query")


@pytest.fixture(params=["v15", "v16"])
def erp_url(request: pytest.FixtureRequest, demo_erp: DemoERP) -> str:
    return demo_erp.url if request.param == "v15" else demo_erp.v16_url


@pytest.fixture
async def erp(erp_url: str) -> AsyncIterator[ERPNextConnector]:
    connector = ERPNextConnector(erp_url, catalog=CATALOG)
    yield connector
    await connector.aclose()


@pytest.fixture
def rest(erp_url: str) -> Iterator[RestERP]:
    session = RestERP(erp_url, ADMIN)
    yield session
    session.close()


async def query(erp: ERPNextConnector, args: dict[str, Any], user: str = ADMIN, **kw: Any) -> Any:
    ctx: ToolContext = await signed_in_context(erp, user, READS, CATALOG)
    run = tool(kw.get("catalog", CATALOG)).run
    assert run is not None
    return await run(ctx, {"as_of": TODAY, **args})


def currencies(rest: RestERP) -> dict[str, str]:
    """Each company's currency, as the ERP has it."""
    return {r["name"]: r["default_currency"] for r in rest.rows("Company", ["default_currency"])}


def figures(result: dict[str, Any], *keys: str) -> dict[Any, Decimal]:
    """{(row keys...): value} of a metrics.query result, as exact cents."""
    metric = result["metric"]
    return {
        tuple(row.get(k) for k in keys): cents(row[metric])
        for row in result["rows"]
        if not row.get("others")
    }


async def test_revenue_by_month_this_year_is_submitted_net_totals(
    erp: ERPNextConnector, rest: RestERP
) -> None:
    result = await query(
        erp, {"metric": "revenue", "group_by": ["month"], "period": {"from": YEAR, "to": TODAY}}
    )
    rows = rest.rows(
        "Sales Invoice",
        ["posting_date", "base_net_total", "company"],
        [SUBMITTED, ["posting_date", "between", [YEAR, TODAY]]],
    )
    money = currencies(rest)
    truth = sums(rows, lambda r: (r["posting_date"][:7], money[r["company"]]), "base_net_total")
    assert figures(result, "month", "currency") == {k: cents(v) for k, v in truth.items()}
    assert result["record_count"] == len(rows)
    definition = result["definition"]
    assert "drafts and cancelled excluded" in definition["filters"][0]
    assert definition["period"] == f"{YEAR} to {TODAY}"
    assert definition["record_count"] == len(rows)
    assert definition["source"].startswith("ERP aggregate")
    months = [c for c in result["columns"] if c["kind"] == "period"]
    assert months == [
        {"key": "month", "label": "Month", "kind": "period", "currency": None, "grain": "month"}
    ]


async def test_billed_by_kisumu_branch_in_the_second_quarter(
    erp: ERPNextConnector, rest: RestERP
) -> None:
    q2 = ["2026-04-01", "2026-06-30"]
    result = await query(
        erp,
        {
            "metric": "billed",
            "filters": [{"dimension": "branch", "op": "=", "value": "Kisumu"}],
            "period": {"from": q2[0], "to": q2[1]},
        },
    )
    rows = rest.rows(
        "Sales Invoice",
        ["base_grand_total", "company"],
        [SUBMITTED, ["branch", "=", "Kisumu"], ["posting_date", "between", q2]],
    )
    assert rows, "the demo data has Kisumu invoices in Q2"
    total = sum((Decimal(str(r["base_grand_total"])) for r in rows), Decimal(0))
    [row] = result["rows"]
    assert cents(row["billed"]) == cents(total)
    assert row["currency"] == "KES"
    assert "Branch = Kisumu" in result["definition"]["filters"]
    all_time = rest.rows(
        "Sales Invoice", ["base_grand_total"], [SUBMITTED, ["branch", "=", "Kisumu"]]
    )
    assert len(all_time) > len(rows)  # the period was applied, not the all-time figure


async def test_top_five_customers_per_currency_with_all_others(
    erp: ERPNextConnector, rest: RestERP
) -> None:
    result = await query(
        erp, {"metric": "revenue", "group_by": ["customer"], "top": 5, "others": True}
    )
    rows = rest.rows("Sales Invoice", ["customer", "base_net_total", "company"], [SUBMITTED])
    money = currencies(rest)
    truth = sums(rows, lambda r: (money[r["company"]], r["customer"]), "base_net_total")
    for currency in {c for c, _ in truth}:
        ranked = sorted(((v, k[1]) for k, v in truth.items() if k[0] == currency), reverse=True)
        got = [r for r in result["rows"] if r["currency"] == currency]
        assert [(r["customer"], cents(r["revenue"])) for r in got[:5]] == [
            (name, cents(value)) for value, name in ranked[:5]
        ]
        [others] = [r for r in got if r.get("others")]
        assert cents(others["revenue"]) == cents(sum(v for v, _ in ranked[5:]))
        assert others["customer"] == "All others"
    measure = next(c for c in result["columns"] if c["kind"] == "measure")
    assert measure["label"].startswith("Revenue (net of tax)")


async def test_customers_whose_overdue_outstanding_exceeds_ten_thousand(
    erp: ERPNextConnector, rest: RestERP
) -> None:
    result = await query(
        erp,
        {
            "metric": "overdue_receivables",
            "group_by": ["customer"],
            "having": {"op": ">", "value": 10000},
        },
    )
    rows = rest.rows(
        "Sales Invoice",
        ["customer", "currency", "outstanding_amount"],
        [
            SUBMITTED,
            ["is_return", "=", 0],
            ["outstanding_amount", ">", 0],
            ["due_date", "<", TODAY],
        ],
    )
    truth = sums(rows, lambda r: (r["customer"], r["currency"]), "outstanding_amount")
    expected = {k: cents(v) for k, v in truth.items() if v > 10000}
    assert expected
    assert figures(result, "customer", "currency") == expected
    assert "only groups whose Overdue receivables > 10000" in result["definition"]["filters"]


async def test_a_dimension_through_a_link_is_regrouped_exactly(
    erp: ERPNextConnector, rest: RestERP
) -> None:
    result = await query(erp, {"metric": "sales_order_value", "group_by": ["customer_group"]})
    groups = {r["name"]: r["customer_group"] for r in rest.rows("Customer", ["customer_group"])}
    orders = rest.rows("Sales Order", ["customer", "net_total", "currency"], [SUBMITTED])
    truth = sums(orders, lambda r: (groups[r["customer"]], r["currency"]), "net_total")
    assert figures(result, "customer_group", "currency") == {k: cents(v) for k, v in truth.items()}
    assert (
        "customer group looked up from each Sales Order's customer"
        in result["definition"]["source"]
    )
    filtered = await query(
        erp,
        {
            "metric": "sales_order_value",
            "filters": [{"dimension": "customer_group", "op": "=", "value": "Wholesale"}],
        },
    )
    wholesale = {k: v for k, v in truth.items() if k[0] == "Wholesale"}
    assert {r["currency"]: cents(r["sales_order_value"]) for r in filtered["rows"]} == {
        k[1]: cents(v) for k, v in wholesale.items()
    }


async def test_same_period_last_year(erp: ERPNextConnector, rest: RestERP) -> None:
    result = await query(
        erp,
        {
            "metric": "invoice_count",
            "group_by": ["company"],
            "period": {"from": "2026-04-01", "to": "2026-06-30"},
            "compare_to": "same_period_last_year",
        },
    )

    def counts(start: str, end: str) -> dict[str, int]:
        found = rest.rows(
            "Sales Invoice",
            ["company"],
            [SUBMITTED, ["is_return", "=", 0], ["posting_date", "between", [start, end]]],
        )
        out: dict[str, int] = defaultdict(int)
        for r in found:
            out[r["company"]] += 1
        return out

    now, before = counts("2026-04-01", "2026-06-30"), counts("2025-04-01", "2025-06-30")
    assert {r["company"]: (r["invoice_count"], r["previous"]) for r in result["rows"]} == {
        c: (now[c], before.get(c, 0) or None) for c in now
    }
    assert "compared with 2025-04-01 to 2025-06-30" in result["definition"]["period"]


async def test_fiscal_year_grain_uses_the_erps_fiscal_years(
    erp: ERPNextConnector, rest: RestERP
) -> None:
    result = await query(erp, {"metric": "payroll_gross", "group_by": ["fiscal_year"]})
    years = rest.rows("Fiscal Year", ["year_start_date", "year_end_date"])
    slips = rest.rows("Salary Slip", ["start_date", "gross_pay", "currency"], [SUBMITTED])

    def year_of(day: str) -> str:
        return next(y["name"] for y in years if y["year_start_date"] <= day <= y["year_end_date"])

    truth = sums(slips, lambda r: (year_of(r["start_date"]), r["currency"]), "gross_pay")
    assert figures(result, "fiscal_year", "currency") == {k: cents(v) for k, v in truth.items()}


async def test_stock_on_hand_matches_bins_and_the_stock_balance_report(
    erp: ERPNextConnector, rest: RestERP
) -> None:
    result = await query(erp, {"metric": "stock_on_hand", "group_by": ["warehouse"]})
    bins = rest.rows("Bin", ["warehouse", "actual_qty", "stock_uom"])
    # Quantities are kept per unit of measure, never added across units.
    truth = sums(bins, lambda r: (r["warehouse"], r["stock_uom"]), "actual_qty")
    got = {k: Decimal(str(v)) for k, v in figures(result, "warehouse", "uom").items()}
    assert got == {k: cents(v) for k, v in truth.items()}


async def test_a_wrong_metric_that_counts_drafts_is_caught(
    erp: ERPNextConnector, rest: RestERP
) -> None:
    """The same truth check fails for a revenue that forgets docstatus = 1."""
    revenue = CATALOG.metric("revenue")
    wrong = CATALOG.model_copy(
        update={
            "metrics": {
                **CATALOG.metrics,
                "revenue": revenue.model_copy(update={"documents": "all"}),
            }
        }
    )
    rows = rest.rows("Sales Invoice", ["base_net_total", "company"], [SUBMITTED])
    money = currencies(rest)
    truth = {
        (k,): cents(v)
        for k, v in sums(rows, lambda r: money[r["company"]], "base_net_total").items()
    }
    drafts = rest.rows("Sales Invoice", ["name"], [["docstatus", "!=", 1]])
    assert drafts, "the demo data has drafts or cancelled invoices"
    right = await query(erp, {"metric": "revenue"})
    bad = await query(erp, {"metric": "revenue"}, catalog=wrong)
    assert figures(right, "currency") == truth
    assert figures(bad, "currency") != truth


async def test_receivables_cross_check_with_the_accounts_receivable_report(
    erp: ERPNextConnector, rest: RestERP
) -> None:
    company = "Savanna Trading Ltd"
    result = await query(
        erp,
        {"metric": "receivables", "filters": [{"dimension": "company", "value": company}]},
    )
    report = rest.report(
        "Accounts Receivable",
        {"company": company, "report_date": TODAY, "ageing_based_on": "Due Date"},
    )
    rows = [r for r in report["result"] if isinstance(r, dict) and r.get("voucher_no")]
    outstanding = sum((Decimal(str(r.get("outstanding") or 0)) for r in rows), Decimal(0))
    [row] = result["rows"]
    assert cents(row["receivables"]) == cents(outstanding)


async def test_revenue_cross_check_with_sales_analytics(
    erp: ERPNextConnector, rest: RestERP
) -> None:
    company, period = "Savanna Trading Ltd", {"from": "2026-01-01", "to": "2026-06-30"}
    result = await query(
        erp,
        {
            "metric": "revenue",
            "group_by": ["customer"],
            "filters": [{"dimension": "company", "value": company}],
            "period": period,
        },
    )
    report = rest.report(
        "Sales Analytics",
        {"company": company, "from_date": period["from"], "to_date": period["to"],
         "tree_type": "Customer", "doc_type": "Sales Invoice", "value_quantity": "Value",
         "range": "Monthly"},
    )  # fmt: skip
    by_customer = {
        r["entity"]: cents(r["total"])
        for r in report["result"]
        if isinstance(r, dict) and r.get("entity") and r.get("total")
    }
    assert by_customer
    assert {k[0]: v for k, v in figures(result, "customer").items() if v} == by_customer


async def test_stock_on_hand_cross_check_with_the_stock_balance_report(
    erp: ERPNextConnector, rest: RestERP
) -> None:
    company = "Savanna Trading Ltd"
    result = await query(
        erp,
        {
            "metric": "stock_on_hand",
            "group_by": ["item"],
            "filters": [{"dimension": "company", "value": company}],
        },
    )
    report = rest.report(
        "Stock Balance", {"company": company, "from_date": "2026-01-01", "to_date": TODAY}
    )
    by_item: dict[str, Decimal] = defaultdict(Decimal)
    for r in report["result"]:
        if isinstance(r, dict) and r.get("item_code"):
            by_item[r["item_code"]] += Decimal(str(r["bal_qty"]))
    got = figures(result, "item")
    assert {k[0]: v for k, v in got.items() if v} == {k: cents(v) for k, v in by_item.items() if v}


async def test_the_erp_refuses_what_the_user_may_not_read(erp: ERPNextConnector) -> None:
    from erp_agent.errors import ErpRefusal

    with pytest.raises(ErpRefusal):
        await query(erp, {"metric": "payroll_gross"}, user="sales@demo.local")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"metric": "profit"}, "unknown metric 'profit'"),
        ({"metric": "revenue", "group_by": ["warehouse"]}, "Its dimensions: company, branch"),
        ({"metric": "revenue", "group_by": ["colour"]}, "Allowed: company, branch"),
        ({"metric": "revenue", "period": {"from": "Q2"}}, "is not a date; give YYYY-MM-DD"),
        ({"metric": "revenue", "period": {"fiscal_year": "1999"}}, "the ERP's fiscal years:"),
        ({"metric": "stock_on_hand", "group_by": ["month"]}, "a figure as of now"),
        (
            {"metric": "revenue", "having": {"measure": "customer", "value": 1}},
            "'customer' is not a measure",
        ),
        ({"metric": "revenue", "compare_to": "previous_period"}, "needs a period with both"),
        ({"metric": "average_invoice_value", "top": 3, "others": True}, "cannot be added"),
    ],
)
async def test_bad_input_names_the_allowed_values(
    erp: ERPNextConnector, args: dict[str, Any], message: str
) -> None:
    with pytest.raises(ToolInputError) as info:
        await query(erp, args)
    assert message in str(info.value)


async def test_metrics_of_entities_the_user_cannot_read_are_neither_listed_nor_run(
    erp: ERPNextConnector,
) -> None:
    no_payroll = frozenset(n for n in READS if not n.startswith("salary_slip."))
    ctx = await signed_in_context(erp, ADMIN, no_payroll, CATALOG)
    tools = {t.name: t for t in metrics.tools(CATALOG)}
    listing, run = tools["metrics.catalog"].run, tools["metrics.query"].run
    assert listing is not None
    assert run is not None
    names = {m["name"] for m in (await listing(ctx, {"group": "hr"}))["metrics"]}
    assert "headcount" in names
    assert "payroll_gross" not in names
    with pytest.raises(ToolInputError, match="not available to you"):
        await run(ctx, {"metric": "payroll_gross"})
    described = await listing(ctx, {"metric": "revenue"})
    [revenue] = described["metrics"]
    assert revenue["measure"] == "sum(base_net_total)"
    assert revenue["documents"] == "submitted only"
