"""Every figure opens its documents (results.drill) against the demo ERP over real HTTP: for
every metric of the catalog, each total and grouped row of a metrics.query answer lists the
records it was computed from, as the same user; those records, read back and added up through
the ERP's REST API with raw httpx, equal the figure and its record count.

Also each kind of cut (a bucket of an ageing, a month and its earlier period, the 'All others'
row, a balance at a quarter's end, a dimension reached through a link), what the answer says
when it cannot list everything, and the references it refuses."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from agent_helpers import signed_in_context
from drill_fixtures import DrillERP, Truth, close, drill_erp
from rest_truth import RestERP

from conftest import TEST_TODAY
from erp_agent.catalog import MeasureFunc, Metric, load_catalog
from erp_agent.connectors.base import Page
from erp_agent.connectors.frappe.connector import ERPNextConnector
from erp_agent.errors import ToolInputError
from erp_agent.metrics import _drill_list as listing
from erp_agent.metrics.drill import row_refs, total_refs
from erp_agent.results.store import MemoryResultStore, ResultRecord
from erp_agent.tools.base import ToolContext
from erp_agent.tools.modules import drill, metrics

pytestmark = pytest.mark.anyio
__all__ = ["drill_erp"]
CATALOG = load_catalog()
ADMIN = "admin@demo.local"
TODAY = TEST_TODAY.isoformat()
READS = frozenset(f"{e}.{op}" for e in CATALOG.entities for op in ("list", "count", "aggregate"))
QUERY = next(t for t in metrics.tools(CATALOG) if t.name == "metrics.query").run
DRILL = drill.tools(CATALOG)[0].run
# Metrics "awaiting my approval" count what waits for the signed-in approver.
USERS = {
    "leave_applications_to_approve": "hr@demo.local",
    "expense_claims_to_approve": "hr@demo.local",
}


def _not_listable(metric: Metric) -> str | None:
    parts = [metric]
    if metric.measure.func is MeasureFunc.RATIO:
        parts = [CATALOG.metric(str(metric.measure.numerator)),
                 CATALOG.metric(str(metric.measure.denominator))]  # fmt: skip
    reports = {CATALOG.report(p.report.name).label for p in parts if p.report is not None}
    if reports:
        return (
            f"{metric.name} is a column of the ERP's {', '.join(sorted(reports))} report: its "
            "population is the report's lines, not records a list can show"
        )
    return None


@pytest.fixture
def rest(drill_erp: DrillERP) -> Iterator[RestERP]:
    session = RestERP(drill_erp.url, ADMIN)
    yield session
    session.close()


@pytest.fixture
async def erp(drill_erp: DrillERP) -> AsyncIterator[ERPNextConnector]:
    connector = ERPNextConnector(drill_erp.url, catalog=CATALOG)
    yield connector
    await connector.aclose()


async def context(erp: ERPNextConnector, user: str = ADMIN) -> ToolContext:
    ctx = await signed_in_context(erp, user, READS, CATALOG)
    ctx.results = MemoryResultStore()
    return ctx


async def answered(ctx: ToolContext, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A metrics.query answer, kept as the user's stored result (as every channel keeps it)."""
    result = await QUERY(ctx, {"as_of": TODAY, **args})
    assert isinstance(ctx.results, MemoryResultStore)
    return await ctx.results.put(ctx.session.user, "metrics.query", result), result


def check(truth: Truth, metric: Metric, opened: dict[str, Any]) -> None:
    """The listed records, read back from the ERP, are the figure and its record count."""
    figure, rows = opened["figure"], opened["rows"]
    assert opened["listed"]["matches"], opened["notes"]
    assert not opened["notes"] or metric.measure.func is MeasureFunc.LATEST, opened["notes"]
    if metric.measure.func is MeasureFunc.LATEST:
        # The figure is the value on the newest record's line, over the records counted.
        assert len(rows) == figure["records"]
        document = opened["listed"]["document"]
        assert rows[0]["id"] == document
        doctype = CATALOG.entity(metric.entity).label  # the ERP's doctype of the documents read
        line = truth.rest.client.get(f"/api/resource/{doctype}/{document}").json()["data"]
        rates = {i["rate"] for i in line["items"] if i["item_code"] == rows[0]["item"]}
        assert figure["value"] in rates
        return
    if metric.measure.func is MeasureFunc.RATIO:
        num = CATALOG.metric(str(metric.measure.numerator))
        den = CATALOG.metric(str(metric.measure.denominator))
        num_ids = [r["id"] for r in rows if r.get(num.name) is not None]
        den_ids = [r["id"] for r in rows if r.get(den.name) is not None]
        assert len(den_ids) == figure["records"]
        a, b = truth.value(num, num_ids), truth.value(den, den_ids)
        assert a is not None
        assert b
        assert close(metric, a / b * 100, figure["value"]), (a, b, figure)
        return
    ids = [r["id"] for r in rows]
    assert len(set(ids)) == len(ids)
    if figure["records"] is not None:
        assert len(ids) == figure["records"]
    value = truth.value(metric, ids)
    assert close(metric, value, figure["value"]), (value, figure)


async def _item_bought_most(rest: RestERP) -> str:
    """The item on most of the first twenty submitted purchase invoices."""
    invoices = rest.rows("Purchase Invoice", [], [["docstatus", "=", 1], ["is_return", "=", 0]])
    counts: dict[str, int] = {}
    for row in invoices[:20]:
        doc = rest.client.get(f"/api/resource/Purchase Invoice/{row['name']}").json()["data"]
        for item in {i["item_code"] for i in doc["items"]}:
            counts[item] = counts.get(item, 0) + 1
    return max(counts, key=lambda k: counts[k])


async def _arguments(metric: Metric, rest: RestERP) -> dict[str, Any]:
    """metrics.query for the metric's figures: grouped by its first dimension that is not an
    ageing, as of the pinned day (a day someone is on leave, for who is on leave)."""
    args: dict[str, Any] = {"metric": metric.name}
    dims = [d for d in metric.dimensions if not CATALOG.dimension(d).age_ranges]
    if metric.measure.func is MeasureFunc.LATEST:
        item = await _item_bought_most(rest)
        args["filters"] = [{"dimension": "item", "op": "=", "value": item}]
        dims = [d for d in dims if d != "item"]
    if dims:
        args["group_by"] = [dims[0]]
    if metric.name == "employees_on_leave":
        leave = rest.rows(
            "Leave Application",
            ["from_date"],
            [["docstatus", "=", 1], ["status", "=", "Approved"]],
        )
        args["as_of"] = min(r["from_date"] for r in leave)
    return args


# Ageing buckets the seeded data may leave empty on the pinned day: (doctype, [oldest, newest]
# days past due).
_EMPTY_BUCKETS = {"payables_overdue_61_90": ("Purchase Invoice", (90, 61))}


@pytest.mark.parametrize("name", list(CATALOG.metrics))
async def test_every_figure_of_every_metric_opens_the_documents_that_make_it(
    name: str, erp: ERPNextConnector, rest: RestERP
) -> None:
    metric = CATALOG.metric(name)
    reason = _not_listable(metric)
    if reason:
        pytest.skip(reason)
    ctx = await context(erp, USERS.get(name, ADMIN))
    result_id, result = await answered(ctx, await _arguments(metric, rest))
    refs = [t["ref"] for t in total_refs(result_id, result)]
    refs += [r for r in row_refs(result_id, result, result["rows"]) if r][:2]
    if not refs and name in _EMPTY_BUCKETS:
        # A bucket the demo data leaves empty on the pinned day: the ERP's own rows agree.
        doctype, window = _EMPTY_BUCKETS[name]
        days = [(TEST_TODAY - dt.timedelta(days=d)).isoformat() for d in window]
        owed = rest.rows(doctype, [], [["docstatus", "=", 1], ["outstanding_amount", ">", 0],
                                       ["due_date", "between", days]])  # fmt: skip
        assert not owed, (name, owed)
        pytest.skip(f"no {doctype} is in {name}'s days past due on {TEST_TODAY}")
    assert refs, f"the demo data has figures of {name}"
    truth = Truth(rest, CATALOG)
    for ref in refs:
        opened = await DRILL(ctx, {"ref": ref})
        assert opened["ref"] == ref
        assert (
            opened["entity"]
            == CATALOG.metric(
                str(metric.measure.denominator) if metric.measure.numerator else name
            ).entity
        )
        check(truth, metric, opened)


CUTS = [
    # the 'All others' row after the top 3 customers, per currency
    ({"metric": "revenue", "group_by": ["customer"], "top": 3, "others": True}, "others"),
    # each bucket of an ageing (days past due, on the pinned day)
    ({"metric": "receivables", "group_by": ["ageing"]}, "rows"),
    # a month, and the same month of the earlier period it is compared with
    (
        {
            "metric": "billed",
            "group_by": ["month"],
            "period": {"from": "2026-07-01", "to": TODAY},
            "compare_to": "previous_period",
        },
        "previous",
    ),
    # a balance at each quarter's end: everything dated on or before it
    (
        {
            "metric": "account_balance",
            "group_by": ["quarter"],
            "filters": [{"dimension": "root_type", "op": "=", "value": "Asset"}],
            "period": {"from": "2026-01-01", "to": TODAY},
        },
        "rows",
    ),
    # a dimension reached through a link (an order's customer group via its customer)
    (
        {
            "metric": "sales_order_value",
            "group_by": ["customer_group", "quarter"],
            "period": {"from": "2026-01-01", "to": TODAY},
        },
        "rows",
    ),
    # a figure filtered through a link, top 2 with a threshold
    (
        {
            "metric": "payroll_gross",
            "group_by": ["department"],
            "top": 2,
            "others": True,
            "having": {"op": ">", "value": 1000},
        },
        "others",
    ),
]


@pytest.mark.parametrize(("args", "kind"), CUTS, ids=[a["metric"] for a, _ in CUTS])
async def test_each_kind_of_cut_opens_its_own_documents(
    args: dict[str, Any], kind: str, erp: ERPNextConnector, rest: RestERP
) -> None:
    ctx = await context(erp)
    result_id, result = await answered(ctx, args)
    metric = CATALOG.metric(args["metric"])
    rows = result["rows"]
    if kind == "others":
        refs = [r for r, row in zip(row_refs(result_id, result, rows), rows, strict=True)
                if row.get("others")]  # fmt: skip
        assert refs, "the answer has an 'All others' row"
    elif kind == "previous":
        refs = [f"{result_id}.p{i}" for i, r in enumerate(rows) if r.get("previous") is not None]
        assert refs, "the answer compares periods"
    else:
        refs = [r for r in row_refs(result_id, result, rows) if r]
    truth = Truth(rest, CATALOG)
    for ref in refs:
        opened = await DRILL(ctx, {"ref": ref})
        check(truth, metric, opened)
    # The rows of a grouped answer split its total: no record is in two of them.
    if kind == "rows" and not metric.cumulative:
        seen: list[Any] = []
        for ref in refs:
            seen += [r["id"] for r in (await DRILL(ctx, {"ref": ref}))["rows"]]
        assert len(seen) == len(set(seen)) == result["record_count"]


async def test_a_list_that_cannot_show_everything_says_how_many_and_why(
    erp: ERPNextConnector, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = await context(erp)
    result_id, result = await answered(ctx, {"metric": "revenue", "group_by": ["customer"]})
    ref = row_refs(result_id, result, result["rows"])[0]
    assert ref is not None
    records = result["rows"][0]["records"]
    assert records > 3
    monkeypatch.setattr(listing, "MAX_LISTED", 3)
    capped = await DRILL(ctx, {"ref": ref})
    assert len(capped["rows"]) == 3
    assert capped["listed"]["records"] == records  # the count and the sum still cover all
    assert capped["listed"]["matches"]
    assert (
        f"{records - 3} sales invoices not listed: a drill-down lists at most 3"
        in capped["notes"][0]
    )
    monkeypatch.undo()

    # The ERP does not list one of the records to the user (a permission only the list obeys).
    hidden = capped["rows"][0]["id"]

    class Hiding(ERPNextConnector):
        async def list(self, *args: Any, **kwargs: Any) -> Page:
            page = await super().list(*args, **kwargs)
            kept = [r for r in page.records if r.get("id") != hidden]
            return dataclasses.replace(page, records=kept)

    hiding = Hiding(erp.base_url, catalog=CATALOG)
    try:
        ctx.connector = hiding
        opened = await DRILL(ctx, {"ref": ref})
    finally:
        await hiding.aclose()
    assert len(opened["rows"]) == records - 1
    assert opened["listed"]["records"] == records
    assert "1 of the sales invoices counted in the figure were not returned when listed as you" in (
        " ".join(opened["notes"])
    )


async def test_a_reference_that_is_not_the_users_or_has_expired_is_refused_plainly(
    erp: ERPNextConnector,
) -> None:
    admin = await context(erp)
    result_id, result = await answered(admin, {"metric": "revenue", "group_by": ["customer"]})
    ref = f"{result_id}.r0"
    assert (await DRILL(admin, {"ref": ref}))["listed"]["matches"]
    # Another user, even one who may read the same invoices, cannot open it.
    other = await context(erp, "accounts@demo.local")
    other.results = admin.results
    with pytest.raises(ToolInputError, match=f"There is no result {result_id} of yours"):
        await DRILL(other, {"ref": ref})
    # An expired one.
    store = admin.results
    assert isinstance(store, MemoryResultStore)
    old = ResultRecord("res_oldfigure", ADMIN, "metrics.query", result,
                       created_at=dt.datetime.now(dt.UTC) - dt.timedelta(days=drill.DRILL_DAYS + 1))  # fmt: skip
    await store.save(old)
    with pytest.raises(
        ToolInputError, match=r"This drill-down reference expired on .* Ask the question"
    ):
        await DRILL(admin, {"ref": "res_oldfigure.r0"})
    # Garbage, a row that is not there, a result with no figures, a report's figure.
    with pytest.raises(ToolInputError, match="is not a drill-down reference"):
        await DRILL(admin, {"ref": "SELECT * FROM tabUser"})
    with pytest.raises(ToolInputError, match="has no row 9999"):
        await DRILL(admin, {"ref": f"{result_id}.r9999"})
    listing = await store.put(ADMIN, "sales_invoice.list", {"records": [{"id": "X"}]})
    with pytest.raises(ToolInputError, match="holds no figures"):
        await DRILL(admin, {"ref": f"{listing}.r0"})
    report_id, _ = await answered(
        admin, {"metric": "gross_profit", "period": {"from": "2026-01-01", "to": TODAY}}
    )
    with pytest.raises(ToolInputError, match="computed by the ERP's own report"):
        await DRILL(admin, {"ref": f"{report_id}.t0"})
