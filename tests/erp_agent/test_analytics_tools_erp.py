"""analytics.* tools against the demo ERP over real HTTP, as demo users; every figure checked
against sums computed independently from the demo database with sqlite3."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

import numpy as np
import pytest
from agent_helpers import signed_in_context

from conftest import TEST_TODAY, DemoERP, raw
from erp_agent.catalog import load_catalog
from erp_agent.connectors.frappe.connector import ERPNextConnector
from erp_agent.errors import ErpRefusal, ToolInputError
from erp_agent.tools.base import Tool, ToolContext
from erp_agent.tools.modules import analytics

pytestmark = pytest.mark.anyio
CATALOG = load_catalog()
TOOLS: dict[str, Tool] = {t.name: t for t in analytics.tools(CATALOG)}
SUBMITTED = "docstatus = 1"


@pytest.fixture
async def erp(demo_erp: DemoERP) -> AsyncIterator[ERPNextConnector]:
    connector = ERPNextConnector(demo_erp.url, catalog=CATALOG)
    yield connector
    await connector.aclose()


async def context(erp: ERPNextConnector, user: str) -> ToolContext:
    return await signed_in_context(erp, user, TOOLS, CATALOG)


async def run(ctx: ToolContext, name: str, args: dict[str, Any]) -> Any:
    tool = TOOLS[name]
    assert tool.run is not None
    return await tool.run(ctx, args)


def cents(value: Any) -> Decimal:
    return Decimal(str(value)).quantize(Decimal("0.01"))


# ------------------------------------------------------------------ analytics.aggregate


async def test_aggregate_by_customer_with_shares_matches_the_database(
    erp: ERPNextConnector, demo_erp: DemoERP
) -> None:
    ctx = await context(erp, "accounts.manager@demo.local")
    result = await run(
        ctx,
        "analytics.aggregate",
        {
            "entity": "sales_invoice",
            "measures": [{"func": "sum", "field": "total"}, {"func": "count"}],
            "group_by": [{"field": "customer"}],
        },
    )
    expected = {
        r["customer"]: (r["n"], r["total"])
        for r in raw(
            demo_erp,
            "select customer, count(*) as n, sum(grand_total) as total from `tabSales Invoice` "
            f"where {SUBMITTED} group by customer",
        )
    }
    assert result["method"] == "pushdown"
    assert result["record_count"] == sum(n for n, _ in expected.values())
    assert {r["customer"]: r["count_records"] for r in result["rows"]} == {
        c: n for c, (n, _) in expected.items()
    }
    for row in result["rows"]:
        assert cents(row["sum_total"]) == cents(expected[row["customer"]][1])
    grand = sum(Decimal(str(t)) for _, t in expected.values())
    assert cents(result["totals"]["sum_total"]) == cents(grand)
    top = max(result["rows"], key=lambda r: r["sum_total"])
    share = Decimal(str(expected[top["customer"]][1])) / grand * 100
    assert top["share_sum_total"] == float(share.quantize(Decimal("0.01")))
    assert sum(r["share_count_records"] for r in result["rows"]) == pytest.approx(100, abs=0.5)
    assert "drafts and cancelled excluded" in result["basis"]
    assert result["definition"]["filters"][0] == result["basis"]


async def test_aggregate_by_month_through_the_chunked_fallback_is_the_same(
    erp: ERPNextConnector, demo_erp: DemoERP
) -> None:
    args = {
        "entity": "sales_invoice",
        "measures": [{"func": "sum", "field": "total"}, {"func": "avg", "field": "total"}],
        "group_by": [{"field": "date", "part": "year"}, {"field": "date", "part": "month"}],
        "filters": [{"field": "date", "op": "between", "value": ["2026-01-01", "2026-06-30"]}],
    }
    pushed = await run(
        await context(erp, "accounts.manager@demo.local"), "analytics.aggregate", args
    )
    slow = ERPNextConnector(demo_erp.url, catalog=CATALOG, allow_pushdown=False)
    try:
        chunked = await run(
            await context(slow, "accounts.manager@demo.local"), "analytics.aggregate", args
        )
    finally:
        await slow.aclose()
    assert chunked["method"] == "chunked"
    assert "all" in chunked["detail"]
    expected = {
        int(r["m"]): r["total"]
        for r in raw(
            demo_erp,
            "select cast(strftime('%m', posting_date) as integer) as m, sum(grand_total) as total "
            f"from `tabSales Invoice` where {SUBMITTED} and posting_date between "
            "'2026-01-01' and '2026-06-30' group by m",
        )
    }
    for result in (pushed, chunked):
        assert {int(r["month_date"]): cents(r["sum_total"]) for r in result["rows"]} == {
            m: cents(t) for m, t in expected.items()
        }
    assert pushed["record_count"] == chunked["record_count"]


async def test_aggregate_runs_as_the_user(erp: ERPNextConnector, demo_erp: DemoERP) -> None:
    # sales@demo.local is restricted to the Nairobi territory by a User Permission
    ctx = await context(erp, "sales@demo.local")
    result = await run(
        ctx, "analytics.aggregate", {"entity": "sales_invoice", "measures": [{"func": "count"}]}
    )
    nairobi = raw(
        demo_erp,
        f"select count(*) as n from `tabSales Invoice` where {SUBMITTED} and territory = 'Nairobi'",
    )[0]["n"]
    assert result["record_count"] == nairobi
    everyone = raw(demo_erp, f"select count(*) as n from `tabSales Invoice` where {SUBMITTED}")
    assert nairobi < everyone[0]["n"]


async def test_the_erp_refuses_an_entity_the_user_cannot_read(erp: ERPNextConnector) -> None:
    ctx = await context(erp, "employee@demo.local")
    with pytest.raises(ErpRefusal):
        await run(
            ctx, "analytics.aggregate", {"entity": "sales_invoice", "measures": [{"func": "count"}]}
        )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"measures": [{"func": "sum", "field": "customer"}]}, "cannot sum 'customer'"),
        ({"measures": [{"func": "sum"}]}, "needs a field"),
        (
            {"measures": [{"func": "count"}], "group_by": [{"field": "remarks"}]},
            "cannot be grouped by 'remarks'",
        ),
        (
            {"measures": [{"func": "count"}], "filters": [{"field": "x", "op": "=", "value": 1}]},
            "cannot be filtered on 'x'",
        ),
    ],
)
async def test_aggregate_names_the_valid_fields(
    erp: ERPNextConnector, args: dict[str, Any], message: str
) -> None:
    ctx = await context(erp, "accounts.manager@demo.local")
    with pytest.raises(ToolInputError, match=message):
        await run(ctx, "analytics.aggregate", {"entity": "sales_invoice", **args})


# ------------------------------------------------------------------ named analyses


def _currencies(demo: DemoERP, table: str) -> list[str]:
    rows = raw(demo, f"select distinct currency as c from `tab{table}` where {SUBMITTED}")
    return sorted(r["c"] for r in rows)


def _monthly(demo: DemoERP, currency: str) -> dict[str, float]:
    return {
        r["m"]: r["total"]
        for r in raw(
            demo,
            "select strftime('%Y-%m', posting_date) as m, sum(grand_total) as total from "
            f"`tabSales Invoice` where {SUBMITTED} and currency = ? group by m order by m",
            currency,
        )
    }


async def test_an_analysis_is_of_one_currency_each(
    erp: ERPNextConnector, demo_erp: DemoERP
) -> None:
    """Shillings and dollars are never added up: documents in two currencies are analysed
    once per currency, and a currency the user names is analysed alone."""
    ctx = await context(erp, "accounts.manager@demo.local")
    currencies = _currencies(demo_erp, "Sales Invoice")
    assert len(currencies) > 1  # the demo's two companies bill in KES and USD
    result = await run(ctx, "analytics.trend", {"entity": "sales_invoice"})
    assert result["currencies"] == currencies
    assert set(result["kpis"]) == set(currencies)
    assert all(o.split(":")[0] in currencies for o in result["observations"])
    only = await run(
        ctx,
        "analytics.trend",
        {"entity": "sales_invoice", "filters": [{"field": "currency", "op": "=", "value": "USD"}]},
    )
    usd = _monthly(demo_erp, "USD")
    assert cents(only["kpis"]["total"]) == cents(sum(Decimal(str(v)) for v in usd.values()))
    # What a mixed total would have been is not what any currency's is.
    mixed = sum(Decimal(str(v)) for c in currencies for v in _monthly(demo_erp, c).values())
    assert all(cents(result["kpis"][c]["total"]) != cents(mixed) for c in currencies)


async def test_monthly_trend_uses_the_erps_monthly_totals(
    erp: ERPNextConnector, demo_erp: DemoERP
) -> None:
    ctx = await context(erp, "accounts.manager@demo.local")
    result = await run(ctx, "analytics.trend", {"entity": "sales_invoice"})
    assert "rows" not in result
    assert "records" not in result
    assert result["source"]["method"] == "pushdown"
    for currency in _currencies(demo_erp, "Sales Invoice"):
        months, k = _monthly(demo_erp, currency), result["kpis"][currency]
        assert k["first_month"] == min(months)
        assert k["last_month"] == max(months)
        assert cents(k["total"]) == cents(sum(Decimal(str(v)) for v in months.values()))
        assert k["last_month_total"] == round(months[max(months)], 2)
    assert result["chart"]["type"] == "line"


async def test_period_comparison_year_to_date(erp: ERPNextConnector, demo_erp: DemoERP) -> None:
    ctx = await context(erp, "accounts.manager@demo.local")
    result = await run(
        ctx,
        "analytics.comparison",
        {"entity": "sales_invoice", "period": "year", "as_of": "2026-06-15"},
    )

    def total(currency: str, lo: str, hi: str) -> tuple[int, float]:
        row = raw(
            demo_erp,
            "select count(*) as n, sum(grand_total) as t from `tabSales Invoice` where "
            f"{SUBMITTED} and currency = ? and posting_date between ? and ?",
            currency,
            lo,
            hi,
        )[0]
        return row["n"], row["t"] or 0.0

    for currency in result["currencies"]:
        cur_n, cur_t = total(currency, "2026-01-01", "2026-06-15")
        prev_n, prev_t = total(currency, "2025-01-01", "2025-06-15")
        k = result["kpis"][currency]
        assert (k["current_count"], cents(k["current_total"])) == (cur_n, cents(cur_t))
        assert (k["previous_count"], cents(k["previous_total"])) == (prev_n, cents(prev_t))
    assert result["source"]["method"] == "pushdown"  # aggregates, no rows read


async def test_receivables_ageing_totals_the_open_balance(
    erp: ERPNextConnector, demo_erp: DemoERP
) -> None:
    ctx = await context(erp, "accounts.manager@demo.local")
    result = await run(ctx, "analytics.ageing", {"as_of": TEST_TODAY.isoformat()})
    for currency in result["currencies"]:
        rows = raw(
            demo_erp,
            "select due_date, outstanding_amount as o from `tabSales Invoice` "
            f"where {SUBMITTED} and outstanding_amount != 0 and currency = ?",
            currency,
        )
        k = result["kpis"][currency]
        assert k["documents"] == len(rows)
        assert cents(k["total_outstanding"]) == cents(sum(Decimal(str(r["o"])) for r in rows))
        overdue = sum(
            Decimal(str(r["o"])) for r in rows if dt.date.fromisoformat(r["due_date"]) < TEST_TODAY
        )
        assert cents(k["overdue"]) == cents(overdue)
        assert sum(b["documents"] for b in k["buckets"]) == len(rows)
    payables = await run(ctx, "analytics.ageing", {"side": "payable"})
    assert payables["entity"] == "purchase_invoice"
    for currency in payables["currencies"]:
        open_bills = raw(
            demo_erp,
            "select sum(outstanding_amount) as o, count(*) as n from `tabPurchase Invoice` "
            f"where {SUBMITTED} and outstanding_amount != 0 and currency = ?",
            currency,
        )[0]
        k = payables["kpis"][currency]
        assert k["documents"] == open_bills["n"]
        assert cents(k["total_outstanding"]) == cents(open_bills["o"] or 0)


async def test_concentration_by_customer(erp: ERPNextConnector, demo_erp: DemoERP) -> None:
    ctx = await context(erp, "accounts.manager@demo.local")
    result = await run(
        ctx, "analytics.concentration", {"entity": "sales_invoice", "by": "customer", "top_n": 5}
    )
    for currency in result["currencies"]:
        totals = sorted(
            (
                Decimal(str(r["t"]))
                for r in raw(
                    demo_erp,
                    "select sum(grand_total) as t from `tabSales Invoice` "
                    f"where {SUBMITTED} and currency = ? group by customer",
                    currency,
                )
                if r["t"] > 0
            ),
            reverse=True,
        )
        grand = sum(totals)
        k = result["kpis"][currency]
        assert cents(k["total"]) == cents(grand)
        top = sum(totals[:5]) / grand * 100
        assert k["top_n_share_pct"] == float(top.quantize(Decimal("0.1")))
        hhi = sum((t / grand * 100) ** 2 for t in totals)
        assert k["hhi"] == pytest.approx(float(hhi), abs=1)
        assert len([r for r in result["table"] if r["currency"] == currency]) == min(5, len(totals))


async def test_forecast_and_anomalies_run_as_the_user(
    erp: ERPNextConnector, demo_erp: DemoERP
) -> None:
    ctx = await context(erp, "accounts.manager@demo.local")
    fc = await run(ctx, "analytics.forecast", {"entity": "sales_invoice", "months_ahead": 3})
    assert len(fc["table"]) == 3 * len(fc["currencies"])
    assert all(r["lower_95"] <= r["forecast"] <= r["upper_95"] for r in fc["table"])

    result = await run(ctx, "analytics.anomalies", {"entity": "sales_invoice"})
    for currency in result["currencies"]:
        amounts = np.array(
            [
                r["t"]
                for r in raw(
                    demo_erp,
                    f"select grand_total as t from `tabSales Invoice` where {SUBMITTED} "
                    "and currency = ?",
                    currency,
                )
            ]
        )
        median = np.median(amounts)
        mad = np.median(np.abs(amounts - median))
        flagged = int(np.sum(np.abs(0.6745 * (amounts - median) / mad) > 3.5))
        assert result["kpis"][currency]["documents"] == len(amounts)
        assert result["kpis"][currency]["flagged_documents"] == flagged
        daily: dict[str, float] = defaultdict(float)
        for r in raw(
            demo_erp,
            f"select posting_date as d, grand_total as t from `tabSales Invoice` where {SUBMITTED} "
            "and currency = ?",
            currency,
        ):
            daily[r["d"]] += r["t"]
        assert result["kpis"][currency]["days"] == len(daily)


# ------------------------------------------------------------------ through the gateway


def test_every_schema_is_valid_draft_2020_12() -> None:
    import jsonschema

    from erp_agent.tools.modules import calculator, results

    for tool in [*TOOLS.values(), *calculator.tools(CATALOG), *results.tools(CATALOG)]:
        jsonschema.Draft202012Validator.check_schema(tool.parameters)
        assert tool.name.split(".")[0] in {"analytics", "calculator", "results"}


async def test_through_the_gateway_invalid_args_and_erp_refusals_reach_the_model(
    erp: ERPNextConnector,
) -> None:
    from erp_agent.calls.outcome import Status
    from erp_agent.gateway.gateway import Gateway
    from erp_agent.store.memory import MemoryStore
    from erp_agent.tools.base import ToolRegistry

    gateway = Gateway(ToolRegistry(TOOLS.values()), MemoryStore(), erp, CATALOG)
    manager = (await context(erp, "accounts.manager@demo.local")).session
    ok = await gateway.call(
        manager,
        "analytics.aggregate",
        {
            "entity": "sales_invoice",
            "measures": [{"func": "count"}],
            "group_by": [{"field": "status"}],
        },
    )
    assert ok.status is Status.OK
    assert ok.data["method"] == "pushdown"
    bad = await gateway.call(manager, "analytics.aggregate", {"entity": "nope", "measures": []})
    assert bad.status is Status.INVALID
    assert any("entity" in e for e in bad.errors)
    assert any("measures" in e for e in bad.errors)
    wrong_field = await gateway.call(
        manager, "analytics.concentration", {"entity": "sales_invoice", "by": "remarks"}
    )
    assert wrong_field.status is Status.INVALID
    assert "groupable fields" in wrong_field.message
    employee = (await context(erp, "employee@demo.local")).session
    refused = await gateway.call(
        employee,
        "analytics.aggregate",
        {"entity": "sales_invoice", "measures": [{"func": "count"}]},
    )
    assert refused.status is Status.ERP_REFUSED
    assert refused.refusal is not None
    assert refused.refusal["message"]
