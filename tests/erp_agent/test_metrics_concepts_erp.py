"""What finance, stock and HR users ask for, each one metric with one definition, checked over
real HTTP against the demo ERP as demo users. Every expected figure is computed here from the
ERP's REST API in its own terms (doctype, native fields, docstatus) or read from the ERP's own
report for the concept; and each check is shown to fail for a deliberately wrong definition
(grand total for what is owed, invoices of a period for a ledger balance, allocation without
leave taken, drafts or ended leave counted, net pay for payroll cost, purchases for cost of
goods sold, quantities added across units)."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import signed_in_context
from rest_truth import RestERP, cents, sums
from test_metrics_query_erp import erp, erp_url, rest

from conftest import TEST_TODAY
from erp_agent.catalog import Catalog, load_catalog
from erp_agent.catalog.metrics import MetricMeasure
from erp_agent.connectors.frappe.connector import ERPNextConnector
from erp_agent.tools.modules import metrics, workflow

pytestmark = pytest.mark.anyio
__all__ = ["erp", "erp_url", "rest"]  # the ERP at v15 and v16, shared with the metrics.query tests
CATALOG = load_catalog()
ADMIN = "admin@demo.local"
SAVANNA = "Savanna Trading Ltd"
TODAY = TEST_TODAY.isoformat()
SUBMITTED = ["docstatus", "=", 1]
READS = frozenset(f"{e}.{op}" for e in CATALOG.entities for op in ("list", "count", "aggregate"))


async def query(
    erp: ERPNextConnector, args: dict[str, Any], user: str = ADMIN, catalog: Catalog = CATALOG
) -> Any:
    ctx = await signed_in_context(erp, user, READS, catalog)
    run = next(t for t in metrics.tools(catalog) if t.name == "metrics.query").run
    assert run is not None
    return await run(ctx, {"as_of": TODAY, **args})


def wrong(name: str, **update: Any) -> Catalog:
    """The catalog with metric ``name`` defined wrongly."""
    metric = CATALOG.metric(name)
    return CATALOG.model_copy(
        update={"metrics": {**CATALOG.metrics, name: metric.model_copy(update=update)}}
    )


def figures(result: dict[str, Any], *keys: str, column: str | None = None) -> dict[Any, Decimal]:
    """{(row keys...): value} of a metrics.query result, as exact cents."""
    name = column or result["metric"]
    return {
        tuple(row.get(k) for k in keys): cents(row[name])
        for row in result["rows"]
        if not row.get("others") and row[name] is not None
    }


def exact(truth: dict[Any, Decimal]) -> dict[Any, Decimal]:
    return {k if isinstance(k, tuple) else (k,): cents(v) for k, v in truth.items()}


def day(value: Any) -> dt.date:
    return dt.date.fromisoformat(str(value)[:10])


# ---------------------------------------------------------------- what is owed


async def test_what_customers_owe_is_the_outstanding_of_submitted_invoices(
    erp: ERPNextConnector, rest: RestERP
) -> None:
    """'Owed' is outstanding_amount per customer, not the grand totals billed."""
    result = await query(erp, {"metric": "receivables", "group_by": ["customer"]})
    rows = rest.rows(
        "Sales Invoice",
        ["customer", "currency", "outstanding_amount"],
        [SUBMITTED, ["outstanding_amount", "!=", 0]],
    )
    truth = exact(sums(rows, lambda r: (r["customer"], r["currency"]), "outstanding_amount"))
    assert truth
    assert figures(result, "customer", "currency") == truth
    billed = await query(
        erp,
        {"metric": "receivables", "group_by": ["customer"]},
        catalog=wrong("receivables", measure=MetricMeasure.model_validate("sum(total)")),
    )
    assert figures(billed, "customer", "currency") != truth
    # The list behind the figure: one row per invoice.
    per_invoice = await query(erp, {"metric": "receivables", "group_by": ["invoice"]})
    assert figures(per_invoice, "invoice") == exact(
        sums(rows, lambda r: r["name"], "outstanding_amount")
    )


async def test_what_we_owe_suppliers_matches_the_accounts_payable_report(
    erp: ERPNextConnector, rest: RestERP
) -> None:
    result = await query(
        erp,
        {"metric": "payables", "group_by": ["supplier"],
         "filters": [{"dimension": "company", "value": SAVANNA}]},
    )  # fmt: skip
    rows = rest.rows(
        "Purchase Invoice",
        ["supplier", "outstanding_amount"],
        [SUBMITTED, ["outstanding_amount", "!=", 0], ["company", "=", SAVANNA]],
    )
    truth = exact(sums(rows, lambda r: r["supplier"], "outstanding_amount"))
    assert truth
    assert figures(result, "supplier") == truth
    report = rest.report(
        "Accounts Payable",
        {"company": SAVANNA, "report_date": TODAY, "ageing_based_on": "Due Date"},
    )
    per_party = sums(
        (r for r in report["result"] if isinstance(r, dict) and r.get("voucher_no")),
        lambda r: r["party"],
        "outstanding",
    )
    assert exact(per_party) == truth


async def test_receivables_by_age_bucket_match_the_accounts_receivable_report(
    erp: ERPNextConnector, rest: RestERP
) -> None:
    """Ageing on the due date, in the report's ranges (0-30 holds what is not yet due)."""
    args = {
        "metric": "receivables",
        "group_by": ["ageing"],
        "filters": [{"dimension": "company", "value": SAVANNA}],
    }
    result = await query(erp, args)
    report = rest.report(
        "Accounts Receivable",
        {"company": SAVANNA, "report_date": TODAY, "ageing_based_on": "Due Date",
         "range": "30, 60, 90, 120"},
    )  # fmt: skip
    labels = ["0-30", "31-60", "61-90", "91-120", "121-Above"]
    vouchers = [r for r in report["result"] if isinstance(r, dict) and r.get("voucher_no")]
    by_range = {
        (label,): cents(sum((Decimal(str(r[f"range{i + 1}"])) for r in vouchers), Decimal(0)))
        for i, label in enumerate(labels)
    }
    assert figures(result, "ageing") == {k: v for k, v in by_range.items() if v}
    rows = rest.rows(
        "Sales Invoice",
        ["due_date", "outstanding_amount"],
        [SUBMITTED, ["outstanding_amount", "!=", 0], ["company", "=", SAVANNA]],
    )

    def bucket(row: dict[str, Any]) -> str:
        age = (TEST_TODAY - day(row["due_date"])).days
        return next((lab for lab, top in zip(labels, (30, 60, 90, 120), strict=False)
                     if age <= top), labels[-1])  # fmt: skip

    assert figures(result, "ageing") == exact(sums(rows, bucket, "outstanding_amount"))
    dims = {**CATALOG.dimensions}
    dims["ageing"] = dims["ageing"].model_copy(update={"paths": {"sales_invoice": "date"}})
    by_posting = CATALOG.model_copy(update={"dimensions": dims})
    bad = await query(erp, args, catalog=by_posting)  # aged from the invoice date
    assert figures(bad, "ageing") != figures(result, "ageing")


async def test_paid_against_invoices_is_billed_less_outstanding(
    erp: ERPNextConnector, rest: RestERP
) -> None:
    q2 = ["2026-04-01", "2026-06-30"]
    period = {"from": q2[0], "to": q2[1]}
    result = await query(erp, {"metric": "invoices_settled", "period": period})
    rows = rest.rows(
        "Sales Invoice",
        ["currency", "grand_total", "outstanding_amount"],
        [SUBMITTED, ["is_return", "=", 0], ["posting_date", "between", q2]],
    )
    truth: dict[Any, Decimal] = defaultdict(Decimal)
    for r in rows:
        paid = Decimal(str(r["grand_total"])) - Decimal(str(r["outstanding_amount"]))
        truth[(r["currency"],)] += paid
    assert figures(result, "currency") == exact(truth)
    assert "sum(total) - sum(outstanding)" in result["definition"]["text"]
    # Money received in the quarter is another figure: it pays invoices of other quarters too.
    received = await query(erp, {"metric": "cash_received", "period": period})
    assert figures(received, "currency") != exact(truth)


# ---------------------------------------------------------------- ledger balances


def gl_balance(rest: RestERP, accounts: list[str], on: str) -> Decimal:
    rows = rest.rows(
        "GL Entry",
        ["debit", "credit"],
        [["is_cancelled", "=", 0], ["posting_date", "<=", on], ["account", "in", accounts]],
    )
    return sum((Decimal(str(r["debit"])) - Decimal(str(r["credit"])) for r in rows), Decimal(0))


async def test_a_control_accounts_balance_at_a_period_end_is_its_ledger_balance(
    erp: ERPNextConnector, rest: RestERP
) -> None:
    end, debtors = "2026-06-30", "Debtors - ST"
    args = {
        "metric": "account_balance",
        "filters": [{"dimension": "account", "value": debtors}],
        "period": {"from": "2026-04-01", "to": end},
    }
    result = await query(erp, args)
    truth = gl_balance(rest, [debtors], end)
    assert figures(result, "currency") == {("KES",): cents(truth)}
    assert f"on or before {end} (a balance)" in " ".join(result["definition"]["filters"])
    report = rest.report(
        "General Ledger",
        {"company": SAVANNA, "from_date": "2026-01-01", "to_date": end, "account": [debtors]},
    )
    [closing] = [r for r in report["result"] if str(r.get("account")).startswith("'Closing")]
    assert cents(Decimal(str(closing["debit"])) - Decimal(str(closing["credit"]))) == cents(truth)
    # Wrong: what the quarter's invoices still owe, or the quarter's movement on the account.
    invoices = await query(
        erp,
        {"metric": "receivables", "period": args["period"],
         "filters": [{"dimension": "company", "value": SAVANNA}]},
    )  # fmt: skip
    assert figures(invoices, "currency") != figures(result, "currency")
    movement = await query(erp, {**args, "metric": "ledger_net_movement"})
    assert figures(movement, "currency") != figures(result, "currency")
    not_cumulative = await query(erp, args, catalog=wrong("account_balance", cumulative=False))
    assert figures(not_cumulative, "currency") != figures(result, "currency")


async def test_a_group_accounts_balance_takes_its_children_and_month_ends_run_on(
    erp: ERPNextConnector, rest: RestERP
) -> None:
    group = "Current Assets - ST"
    children = {r["name"]: r["parent_account"] for r in rest.rows("Account", ["parent_account"])}

    def under(name: str | None) -> bool:
        while name:
            if name == group:
                return True
            name = children.get(name)
        return False

    leaves = [a for a in children if under(a)]
    assert len(leaves) > 3
    result = await query(
        erp,
        {"metric": "account_balance", "group_by": ["month"],
         "filters": [{"dimension": "account", "value": group}],
         "period": {"from": "2026-04-01", "to": "2026-06-30"}},
    )  # fmt: skip
    ends = {"2026-04": "2026-04-30", "2026-05": "2026-05-31", "2026-06": "2026-06-30"}
    truth = {(m, "KES"): cents(gl_balance(rest, leaves, e)) for m, e in ends.items()}
    assert figures(result, "month", "currency") == truth
    [total] = result["totals"]
    assert cents(total["value"]) == truth[("2026-06", "KES")]  # the balance at the end
    assert "with the accounts under it" in " ".join(result["definition"]["filters"])


# ---------------------------------------------------------------- last purchase rate


def latest_line(
    rest: RestERP, doctype: str, item: str, order: list[str], *where: list[Any]
) -> dict[str, Any]:
    """The item's line on the newest submitted ``doctype`` with it, ERPNext's ordering."""
    docs = rest.rows(
        doctype,
        [*order, "supplier", "currency"],
        [SUBMITTED, [f"{doctype} Item", "item_code", "=", item], *where],
    )
    assert docs
    newest = max(docs, key=lambda d: tuple(str(d.get(k) or "") for k in [*order, "name"]))
    doc = rest.client.get(f"/api/resource/{doctype}/{newest['name']}").json()["data"]
    line = next(r for r in doc["items"] if r["item_code"] == item)
    return {**newest, "rate": line["rate"], "amount": line["amount"], "uom": line.get("uom"),
            "qty": line.get("qty")}  # fmt: skip


async def test_last_purchase_rate_is_the_latest_receipt_line_with_its_date_supplier_and_quantity(
    erp: ERPNextConnector, rest: RestERP
) -> None:
    # The goods as they arrived: the newest receipt may not be billed yet (its rate is still
    # what we paid), and a reader of invoices would take an older rate.
    receipts = rest.rows(
        "Purchase Receipt", ["posting_date", "company"], [SUBMITTED, ["status", "!=", "Return"]]
    )
    newest = max(receipts, key=lambda b: (b["posting_date"], b["name"]))
    doc = rest.client.get(f"/api/resource/Purchase Receipt/{newest['name']}").json()["data"]
    item = next(r["item_code"] for r in doc["items"] if r["qty"] != 1)
    company = newest["company"]
    truth = latest_line(
        rest, "Purchase Receipt", item, ["posting_date"], ["company", "=", company],
        ["status", "!=", "Return"],
    )  # fmt: skip
    args = {
        "metric": "last_purchase_rate",
        "filters": [{"dimension": "item", "value": item},
                    {"dimension": "company", "value": company}],
    }  # fmt: skip
    result = await query(erp, args)
    [row] = result["rows"]
    assert cents(row["last_purchase_rate"]) == cents(truth["rate"])
    assert (row["date"], row["document"], row["supplier"], row["currency"]) == (
        truth["posting_date"][:10], truth["name"], truth["supplier"], truth["currency"],
    )  # fmt: skip
    assert row["uom"] == truth["uom"]
    assert row["qty"] == truth["qty"]
    [total] = result["totals"]
    assert cents(total["value"]) == cents(truth["rate"])
    amount = await query(
        erp, args,
        catalog=wrong("last_purchase_rate",
                      measure=MetricMeasure.model_validate("latest(items.amount)")),
    )  # fmt: skip
    assert cents(amount["rows"][0]["last_purchase_rate"]) != cents(truth["rate"])
    # Every company buying the item has its own last rate, in its own currency.
    everywhere = await query(erp, {**args, "filters": args["filters"][:1]})
    currencies = [r["currency"] for r in everywhere["rows"]]
    assert len(currencies) == len(set(currencies)) >= 1


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RestERP]:
    """A demo ERP of its own, as seeded: other tests in the session submit and cancel buying
    documents on the shared one, and the rate is the data's, whichever version serves it."""
    from demo_erp.context import Settings
    from demo_erp.seed import seed
    from demo_erp.server import start_in_thread

    path = tmp_path_factory.mktemp("pristine-erp") / "demo.sqlite"
    seed(path, today=TEST_TODAY, scale=0.1)
    server = start_in_thread(Settings(db_path=str(path), today=TEST_TODAY))
    session = RestERP(server.url, ADMIN)
    yield session
    session.close()
    server.stop()


async def test_the_items_last_purchase_rate_is_kept_as_erpnext_keeps_it(
    pristine: RestERP,
) -> None:
    """Item.last_purchase_rate: the latest submitted Purchase Order or Purchase Receipt."""
    rest = pristine
    items = rest.rows("Item", ["last_purchase_rate"], [["is_purchase_item", "=", 1]])
    checked = 0
    for item in sorted(items, key=lambda i: i["name"])[:6]:
        orders = rest.rows(
            "Purchase Order", ["transaction_date"],
            [SUBMITTED, ["Purchase Order Item", "item_code", "=", item["name"]]],
        )  # fmt: skip
        receipts = rest.rows(
            "Purchase Receipt", ["posting_date"],
            [SUBMITTED, ["Purchase Receipt Item", "item_code", "=", item["name"]]],
        )  # fmt: skip
        if not orders and not receipts:
            continue
        order = latest_line(rest, "Purchase Order", item["name"], ["transaction_date"]) if orders else None  # fmt: skip
        receipt = latest_line(rest, "Purchase Receipt", item["name"], ["posting_date", "posting_time"]) if receipts else None  # fmt: skip
        chosen = order
        if receipt and (order is None or receipt["posting_date"] > order["transaction_date"]):
            chosen = receipt
        assert chosen is not None
        assert cents(item["last_purchase_rate"]) == cents(chosen["rate"]), item["name"]
        checked += 1
    assert checked >= 3


# ---------------------------------------------------------------- leave


def leave_truth(rest: RestERP, company: str) -> dict[tuple[str, str], Decimal]:
    """Per (employee, leave type) with an allocation covering today: allocated - taken, taken
    being the approved, submitted applications' days inside the allocation period."""
    active = {
        r["name"]
        for r in rest.rows(
            "Employee", ["status"], [["company", "=", company], ["status", "=", "Active"]]
        )
    }
    allocations = rest.rows(
        "Leave Allocation",
        ["employee", "leave_type", "from_date", "to_date", "total_leaves_allocated"],
        [
            SUBMITTED,
            ["company", "=", company],
            ["from_date", "<=", TODAY],
            ["to_date", ">=", TODAY],
        ],
    )
    taken = rest.rows(
        "Leave Application",
        ["employee", "leave_type", "from_date", "to_date", "total_leave_days"],
        [SUBMITTED, ["status", "=", "Approved"], ["company", "=", company]],
    )
    out: dict[tuple[str, str], Decimal] = {}
    for a in allocations:
        if a["employee"] not in active:
            continue
        start, end = day(a["from_date"]), day(a["to_date"])
        balance = Decimal(str(a["total_leaves_allocated"]))
        for t in taken:
            if (t["employee"], t["leave_type"]) != (a["employee"], a["leave_type"]):
                continue
            first, last = day(t["from_date"]), day(t["to_date"])
            if last < start or first > end:
                continue
            if start <= first and last <= end:
                balance -= Decimal(str(t["total_leave_days"]))
            else:
                balance -= (min(last, end) - max(first, start)).days + 1
        out[(a["employee"], a["leave_type"])] = balance
    return out


async def test_leave_balance_is_allocation_less_leave_taken_as_the_leave_balance_report(
    erp: ERPNextConnector, rest: RestERP
) -> None:
    args = {
        "metric": "leave_balance",
        "group_by": ["employee", "leave_type"],
        "filters": [{"dimension": "company", "value": SAVANNA}],
    }
    result = await query(erp, args, user="hr@demo.local")
    truth = leave_truth(rest, SAVANNA)
    got = figures(result, "employee", "leave_type")
    assert truth
    assert {k: got.get(k) for k in truth} == {k: cents(v) for k, v in truth.items()}
    assert any(v < 21 for k, v in truth.items() if k[1] == "Annual Leave")  # leave was taken
    report = rest.report(
        "Employee Leave Balance",
        {"company": SAVANNA, "from_date": f"{TEST_TODAY.year}-01-01",
         "to_date": f"{TEST_TODAY.year}-12-31", "employee_status": "Active",
         "consolidate_leave_types": 0},
    )  # fmt: skip
    closing = {
        (r["employee"], r["leave_type"]): cents(r["closing_balance"])
        for r in report["result"]
        if isinstance(r, dict) and r.get("employee")
    }
    assert {k: v for k, v in got.items() if v} == {k: v for k, v in closing.items() if v}
    assert "Employee Leave Balance report" in result["definition"]["filters"][-1]
    allocated = await query(erp, {**args, "metric": "leave_allocated"}, user="hr@demo.local")
    assert {k: figures(allocated, "employee", "leave_type").get(k) for k in truth} != {
        k: cents(v) for k, v in truth.items()
    }  # the allocation alone, leave taken not subtracted


async def test_who_is_on_leave_on_a_day(erp: ERPNextConnector, rest: RestERP) -> None:
    approved = rest.rows(
        "Leave Application",
        ["employee", "from_date", "to_date"],
        [SUBMITTED, ["status", "=", "Approved"]],
    )
    on = max(day(a["from_date"]) for a in approved)
    away = {a["employee"] for a in approved if day(a["from_date"]) <= on <= day(a["to_date"])}
    args = {"metric": "employees_on_leave", "group_by": ["employee"], "as_of": on.isoformat()}
    result = await query(erp, args)
    assert {r["employee"] for r in result["rows"]} == away
    [total] = result["totals"]
    assert total["value"] == len(away)
    assert f"from date <= {on.isoformat()}" in result["definition"]["filters"]
    metric = CATALOG.metric("employees_on_leave")
    started = wrong("employees_on_leave", filters=metric.filters[:2])  # ended leave counted
    bad = await query(erp, args, catalog=started)
    assert {r["employee"] for r in bad["rows"]} != away


# ---------------------------------------------------------------- payroll and margins


async def test_payroll_cost_is_the_gross_pay_of_submitted_salary_slips(
    erp: ERPNextConnector, rest: RestERP
) -> None:
    q2 = ["2026-04-01", "2026-06-30"]
    args = {"metric": "payroll_gross", "group_by": ["month"],
            "period": {"from": q2[0], "to": q2[1]}}  # fmt: skip
    result = await query(erp, args, user="hr@demo.local")
    slips = rest.rows(
        "Salary Slip",
        ["start_date", "currency", "gross_pay", "net_pay", "total_deduction"],
        [SUBMITTED, ["start_date", "between", q2]],
    )
    truth = exact(sums(slips, lambda r: (r["start_date"][:7], r["currency"]), "gross_pay"))
    assert figures(result, "month", "currency") == truth
    net = await query(erp, {**args, "metric": "payroll_net"}, user="hr@demo.local")
    deductions = await query(erp, {**args, "metric": "payroll_deductions"}, user="hr@demo.local")
    for key, gross in truth.items():
        assert (
            figures(net, "month", "currency")[key] + figures(deductions, "month", "currency")[key]
            == gross
        )
    assert figures(net, "month", "currency") != truth  # net pay is not the payroll cost


async def test_gross_margin_is_the_gross_profit_reports(
    erp: ERPNextConnector, rest: RestERP
) -> None:
    h1 = {"from": "2026-01-01", "to": "2026-06-30"}
    company = [{"dimension": "company", "value": SAVANNA}]
    report = rest.report(
        "Gross Profit",
        {"company": SAVANNA, "from_date": h1["from"], "to_date": h1["to"], "group_by": "Invoice"},
    )
    invoices = [r for r in report["result"] if isinstance(r, dict) and r.get("indent") == 0]
    selling, buying, profit = (
        cents(sum((Decimal(str(r[c])) for r in invoices), Decimal(0)))
        for c in ("base_amount", "buying_amount", "gross_profit")
    )
    assert selling - buying == profit
    got = {}
    for name in ("gross_profit", "cost_of_goods_sold", "gross_profit_selling_amount"):
        result = await query(erp, {"metric": name, "filters": company, "period": h1})
        [got[name]] = figures(result, "currency").values()
    assert (got["gross_profit"], got["cost_of_goods_sold"]) == (profit, buying)
    assert got["gross_profit_selling_amount"] == selling
    # Independently: the selling amount is the invoices' net total (no invoice discounts here).
    net = rest.rows(
        "Sales Invoice", ["base_net_total"],
        [SUBMITTED, ["company", "=", SAVANNA], ["posting_date", "between", [h1["from"], h1["to"]]]],
    )  # fmt: skip
    assert cents(sum((Decimal(str(r["base_net_total"])) for r in net), Decimal(0))) == selling
    margin = await query(erp, {"metric": "gross_margin_pct", "filters": company, "period": h1})
    [pct] = margin["rows"]
    assert Decimal(str(pct["gross_margin_pct"])) == (profit / selling * 100).quantize(
        Decimal("0.01")
    )
    # Wrong: revenue less purchases (what was bought in the period, not what was sold).
    revenue = await query(erp, {"metric": "revenue", "filters": company, "period": h1})
    bought = await query(erp, {"metric": "purchases", "filters": company, "period": h1})
    [rev] = figures(revenue, "currency").values()
    [pur] = figures(bought, "currency").values()
    assert rev - pur != profit


async def test_gross_profit_by_customer_sums_the_reports_customer_rows(
    erp: ERPNextConnector, rest: RestERP
) -> None:
    h1 = {"from": "2026-01-01", "to": "2026-06-30"}
    result = await query(
        erp,
        {"metric": "gross_profit", "group_by": ["customer"], "period": h1,
         "filters": [{"dimension": "company", "value": SAVANNA}]},
    )  # fmt: skip
    report = rest.report(
        "Gross Profit",
        {"company": SAVANNA, "from_date": h1["from"], "to_date": h1["to"], "group_by": "Customer"},
    )
    rows = [r for r in report["result"] if isinstance(r, dict) and r.get("customer")]
    assert figures(result, "customer") == exact(sums(rows, lambda r: r["customer"], "gross_profit"))


# ---------------------------------------------------------------- approvals


async def test_what_waits_for_my_approval_counts_per_document_type(
    erp: ERPNextConnector, rest: RestERP
) -> None:
    hr = "hr@demo.local"
    leave = rest.rows(
        "Leave Application", ["leave_approver"],
        [["docstatus", "=", 0], ["status", "=", "Open"], ["leave_approver", "=", hr]],
    )  # fmt: skip
    claims = rest.rows(
        "Expense Claim", ["expense_approver"],
        [["docstatus", "=", 0], ["approval_status", "=", "Draft"], ["expense_approver", "=", hr]],
    )  # fmt: skip
    assert leave
    assert claims
    mine = await query(erp, {"metric": "leave_applications_to_approve"}, user=hr)
    assert mine["totals"][0]["value"] == len(leave)
    assert f"approver = {hr}" in mine["definition"]["filters"]
    expenses = await query(erp, {"metric": "expense_claims_to_approve"}, user=hr)
    assert expenses["totals"][0]["value"] == len(claims)
    nobody = await query(erp, {"metric": "leave_applications_to_approve"})
    assert [t["value"] for t in nobody["totals"]] in ([], [0])  # admin approves no leave
    metric = CATALOG.metric("leave_applications_to_approve")
    anyones = wrong("leave_applications_to_approve", filters=metric.filters[:2])
    everyone = await query(erp, {"metric": metric.name}, catalog=anyones)
    assert everyone["totals"][0]["value"] > 0  # every open application, whoever approves it
    ctx = await signed_in_context(erp, hr, READS, CATALOG)
    pending = next(t for t in workflow.tools(CATALOG) if t.name == "workflow.pending").run
    assert pending is not None
    found = await pending(ctx, {})
    counts = {c["entity"]: c["count"] for c in found["by_entity"]}
    assert counts["leave_application"] == len(leave)
    assert counts["expense_claim"] == len(claims)
    assert found["count"] == sum(counts.values())


async def test_purchase_orders_waiting_for_an_approver_are_counted_by_type(
    erp: ERPNextConnector, rest: RestERP
) -> None:
    waiting = rest.rows(
        "Purchase Order", ["workflow_state", "owner"],
        [["docstatus", "=", 0], ["workflow_state", "=", "Pending Approval"]],
    )  # fmt: skip
    ctx = await signed_in_context(erp, "purchase.manager@demo.local", READS, CATALOG)
    pending = next(t for t in workflow.tools(CATALOG) if t.name == "workflow.pending").run
    assert pending is not None
    found = await pending(ctx, {})
    counts = {c["entity"]: c["count"] for c in found["by_entity"]}
    # The user's own orders count only where the workflow lets them act on their own
    # (ERPNext's allow_self_approval on a transition out of the state), as the ERP defines it.
    [flow] = rest.rows("Workflow", ["workflow_name"], [["document_type", "=", "Purchase Order"]])
    doc = rest.client.get(f"/api/resource/Workflow/{flow['name']}").json()["data"]
    own_allowed = any(
        t["state"] == "Pending Approval" and t["allowed"] == "Purchase Manager"
        and t.get("allow_self_approval") for t in doc["transitions"]
    )  # fmt: skip
    others = [w for w in waiting if w["owner"] != "purchase.manager@demo.local"]
    assert others
    assert counts.get("purchase_order") == (len(waiting) if own_allowed else len(others))
    assert "leave_application" not in counts


# ---------------------------------------------------------------- stock


async def test_stock_on_hand_is_kept_per_unit_of_measure(
    erp: ERPNextConnector, rest: RestERP
) -> None:
    result = await query(erp, {"metric": "stock_on_hand"}, user="stock@demo.local")
    bins = rest.rows("Bin", ["actual_qty", "stock_uom"])
    truth = exact(sums(bins, lambda r: r["stock_uom"], "actual_qty"))
    assert len(truth) > 1
    assert figures(result, "uom") == truth
    assert {t["uom"]: cents(t["value"]) for t in result["totals"]} == {
        k[0]: v for k, v in truth.items()
    }
    assert [c["key"] for c in result["columns"]] == ["uom", "stock_on_hand"]
    added = await query(
        erp, {"metric": "stock_on_hand"}, user="stock@demo.local",
        catalog=wrong("stock_on_hand", unit_field=None, unit="units"),
    )  # fmt: skip
    assert len(added["totals"]) == 1  # units of every item added up: no such figure
    assert len(truth) != len(added["totals"])


async def test_below_reorder_rows_carry_on_hand_reorder_level_and_shortfall(
    erp: ERPNextConnector, rest: RestERP
) -> None:
    args = {"metric": "items_below_reorder_level", "group_by": ["item", "warehouse"]}
    result = await query(erp, args, user="stock@demo.local")
    items = {r["name"]: r for r in rest.rows("Item", ["reorder_level", "reorder_qty", "stock_uom"])}
    truth = {}
    for b in rest.rows("Bin", ["item_code", "warehouse", "actual_qty", "projected_qty"]):
        level = items[b["item_code"]]["reorder_level"] or 0
        if level > 0 and b["projected_qty"] < level:
            truth[(b["item_code"], b["warehouse"])] = (
                items[b["item_code"]]["stock_uom"], cents(b["actual_qty"]),
                cents(b["projected_qty"]), cents(level), cents(level - b["projected_qty"]),
            )  # fmt: skip
    assert truth
    got = {
        (r["item"], r["warehouse"]): (
            r["uom"], cents(r["on_hand"]), cents(r["projected"]), cents(r["reorder_level"]),
            cents(r["shortfall"]),
        )
        for r in result["rows"]
    }  # fmt: skip
    assert got == truth
    metric = CATALOG.metric("items_below_reorder_level")
    also = dict(metric.also)
    also["shortfall"] = also["shortfall"].model_copy(
        update={
            "measure": MetricMeasure.model_validate("sum(item.reorder_qty) - sum(projected_qty)")
        }
    )
    bad = await query(erp, args, user="stock@demo.local",
                      catalog=wrong("items_below_reorder_level", also=also))  # fmt: skip
    assert {(r["item"], r["warehouse"]): cents(r["shortfall"]) for r in bad["rows"]} != {
        k: v[4] for k, v in truth.items()
    }


async def test_stock_on_hand_on_a_bespoke_database_is_per_the_products_unit(
    tmp_path: Path,
) -> None:
    """The unit comes through the item link, so a system whose stock rows carry no unit (the
    bespoke SQL database) keeps quantities per its products' unit too."""
    from sql_databases import MAPPING, database, raw, seeded

    from erp_agent.connectors.profile import connector_catalog
    from erp_agent.connectors.sql.connector import SQLConnector

    with database("sqlite", tmp_path) as url:
        seeded(url, per_branch=5)
        connector = SQLConnector(url, mapping=MAPPING)
        try:
            catalog = connector_catalog(connector)
            ctx = await signed_in_context(
                connector,  # type: ignore[arg-type]
                "owner@savanna.test",
                frozenset(f"{e}.{op}" for e in catalog.entities for op in ("list", "aggregate")),
                catalog,
            )
            run = next(t for t in metrics.tools(catalog) if t.name == "metrics.query").run
            assert run is not None
            result = await run(ctx, {"metric": "stock_on_hand", "as_of": TODAY})
        finally:
            await connector.aclose()
        truth = raw(
            url,
            "select p.unit, sum(s.on_hand) from stock_levels s join products p on "
            "p.sku = s.sku and p.tenant_id = s.tenant_id where s.tenant_id = 'SAVANNA' "
            "group by p.unit",
        )
    assert len(truth) > 1
    assert figures(result, "uom") == {(unit,): cents(qty) for unit, qty in truth}
