"""Tables and charts a finance user accepts: labels, not field names; amounts at the currency's
precision; periods in words; statements with accounts first and indented; one chart per
currency with exactly the top N; a chart's values are the table's values."""

from __future__ import annotations

from typing import Any

from erp_agent.catalog import load_catalog
from erp_agent.results import charts
from erp_agent.results.layout import default_columns
from erp_agent.results.render import table_page
from erp_agent.results.store import ResultRecord

CATALOG = load_catalog()
TOTAL = CATALOG.entity("sales_invoice").fields["total"].label  # the catalog's words for `total`


def record(data: Any, entity: str | None = "sales_invoice") -> ResultRecord:
    return ResultRecord("res_test", "u@demo.local", "tool", data, entity)


def _chart(block: dict[str, Any], stored: ResultRecord, rows: Any, catalog: Any) -> Any:
    return charts.draw(block, stored.data, rows, catalog, stored.entity)


def test_an_aggregate_shows_labels_rounded_amounts_and_months_in_words() -> None:
    rows = [
        {"currency": "KES", "month_date": 1, "sum_total": 56838076.789999984, "count_records": 3},
        {"currency": "KES", "month_date": 2, "sum_total": 10.005, "count_records": 1},
    ]
    data = {"rows": rows, "definition": {"text": "Billed.", "period": "2026-01-01 to 2026-12-31"}}
    page = table_page(record(data), rows, ["month_date", "sum_total", "count_records"], CATALOG)
    assert page["labels"] == ["Month", f"{TOTAL} (KES)", "Sales Invoices"]
    assert page["rows"] == [["Jan 2026", 56838076.79, 3], ["Feb 2026", 10.01, 1]]


def test_a_metric_uses_its_declared_labels_and_currency_precision() -> None:
    rows = [
        {"month": "2026-01", "currency": "JPY", "billed": 1200.4, "records": 2},
        {"month": "2026-02", "currency": "JPY", "billed": 99.5, "records": 1},
    ]
    columns = [
        {"key": "month", "label": "Month", "kind": "period", "currency": None, "grain": "month"},
        {"key": "currency", "label": "Currency", "kind": "dimension", "currency": None},
        {"key": "billed", "label": "Billed (JPY)", "kind": "measure", "currency": "JPY"},
    ]
    stored = record({"rows": rows, "columns": columns}, entity=None)
    assert default_columns(stored.data, rows) == ["month", "currency", "billed"]
    page = table_page(stored, rows, ["month", "billed"], CATALOG)
    assert page["labels"] == ["Month", "Billed (JPY)"]
    assert page["rows"] == [["Jan 2026", 1200], ["Feb 2026", 100]]
    # A time series is a line unless the model asked for something else.
    chart = _chart({"label": "month", "values": ["billed"], "title": "Billed"}, stored, rows, None)
    assert chart["chart_type"] == "line"
    assert chart["spec"]["data"]["labels"] == ["Jan 2026", "Feb 2026"]
    assert chart["spec"]["data"]["datasets"][0]["data"] == [1200, 100]


def test_a_financial_statement_shows_accounts_first_indented_without_internal_columns() -> None:
    rows = [
        {"account": "Income - ST", "account_name": "Income", "indent": 0, "is_group": 1,
         "parent_account": None, "year_start_date": "2026-01-01", "currency": "KES",
         "total": 1000.123},
        {"account": "Sales - ST", "account_name": "Sales", "indent": 1, "is_group": 0,
         "parent_account": "Income - ST", "year_start_date": "2026-01-01", "currency": "KES",
         "total": 1000.123},
    ]  # fmt: skip
    columns = [
        {"fieldname": "account", "label": "Account", "fieldtype": "Link"},
        {"fieldname": "currency", "label": "Currency", "fieldtype": "Link", "hidden": 1},
        {"fieldname": "total", "label": "Total", "fieldtype": "Currency"},
    ]
    stored = record({"rows": rows, "columns": columns}, entity=None)
    shown = default_columns(stored.data, rows)
    assert shown == ["account", "total"]
    page = table_page(stored, rows, shown, CATALOG)
    assert page["labels"] == ["Account", "Total (KES)"]  # every amount names its currency
    assert page["rows"] == [["Income - ST", 1000.12], ["Sales - ST", 1000.12]]
    assert page["indent"] == [0, 1]


def test_a_top_five_chart_has_five_rows_per_currency_on_its_own_axis() -> None:
    rows = [{"customer": f"C{i}", "currency": "KES", "sum_total": 100.0 * i} for i in range(1, 9)]
    rows += [{"customer": f"U{i}", "currency": "USD", "sum_total": 1.0 * i} for i in range(1, 4)]
    stored = record({"rows": rows})
    block = {"label": "customer", "values": ["sum_total"], "top": 5, "title": "Top customers"}
    chart = _chart(block, stored, rows, CATALOG)
    assert chart["chart_type"] == "bar"
    kes, usd = chart["charts"]
    assert kes["currency"] == "KES"
    assert kes["title"] == "Top customers (KES)"
    assert kes["spec"]["data"]["labels"] == ["C8", "C7", "C6", "C5", "C4"]
    assert kes["spec"]["data"]["datasets"][0]["label"] == TOTAL  # two currencies: per chart
    assert usd["spec"]["data"]["labels"] == ["U3", "U2", "U1"]
    assert usd["spec"]["data"]["datasets"][0]["data"] == [3.0, 2.0, 1.0]


def test_a_chart_without_a_definition_or_known_columns_still_draws() -> None:
    rows = [{"name": "a", "value": 1.23456789}]
    stored = record({"rows": rows}, entity=None)
    chart = _chart({"label": "name", "values": ["value"], "chart_type": "pie"}, stored, rows, None)
    assert chart["spec"]["type"] == "pie"
    assert chart["spec"]["data"]["datasets"][0] == {"label": "Value", "data": [1.2346]}


# ------------------------------------------------------------ issue V/U part 5: one semantics


def _top_with_others() -> list[dict[str, Any]]:
    """metrics.query's top 5 with others: the rest summed, larger than any one customer."""
    rows: list[dict[str, Any]] = [
        {"customer": f"C{i}", "currency": "KES", "revenue": 1000.0 - 100 * i, "records": 1}
        for i in range(5)
    ]
    rows.append({"customer": "All others", "currency": "KES", "revenue": 90000.0,
                 "records": 40, "others": True})  # fmt: skip
    return rows


def test_a_top_five_chart_draws_exactly_five_entities_never_the_others_row() -> None:
    rows = _top_with_others()
    stored = record({"rows": rows}, entity=None)
    block = {"label": "customer", "values": ["revenue"], "top": 5, "title": "Top 5"}
    chart = _chart(block, stored, rows, None)
    # The fifth customer is there; the "All others" row (the largest figure) is not a bar.
    assert chart["spec"]["data"]["labels"] == ["C0", "C1", "C2", "C3", "C4"]
    assert chart["charts"][0]["others"] is False


def test_all_others_is_its_own_last_labelled_bar_only_when_asked() -> None:
    rows = _top_with_others()
    stored = record({"rows": rows}, entity=None)
    asked = {"label": "customer", "values": ["revenue"], "top": 5, "others": True, "title": ""}
    chart = _chart(asked, stored, rows, None)
    data = chart["spec"]["data"]
    assert data["labels"] == ["C0", "C1", "C2", "C3", "C4", "All others"]
    assert data["datasets"][0]["data"][-1] == 90000.0
    colours = data["datasets"][0]["backgroundColor"]
    assert colours[-1] != colours[0]
    assert len(set(colours[:5])) == 1
    assert chart["charts"][0]["others"] is True


def test_each_chart_names_its_one_currency_once_in_its_title() -> None:
    rows = [{"customer": "K1", "currency": "KES", "sum_total": 5.0},
            {"customer": "U1", "currency": "USD", "sum_total": 2.0}]  # fmt: skip
    stored = record({"rows": rows})
    # The model put one currency in its title: each chart is titled with its own, once.
    block = {"label": "customer", "values": ["sum_total"], "title": "Top customers (KES)"}
    titles = [c["title"] for c in _chart(block, stored, rows, CATALOG)["charts"]]
    assert titles == ["Top customers (KES)", "Top customers (USD)"]
    one = [r for r in rows if r["currency"] == "USD"]
    single = _chart({**block, "title": "Sales"}, record({"rows": one}), one, CATALOG)
    assert single["charts"][0]["title"] == "Sales (USD)"
    assert [c["currency"] for c in single["charts"]] == ["USD"]


def test_report_period_columns_say_which_period_they_hold() -> None:
    """A quarterly statement whose columns came labelled "This Year" shows their quarters."""
    keys = ["mar_2026", "jun_2026", "sep_2026", "dec_2026"]
    columns = [{"fieldname": "account", "label": "Account", "fieldtype": "Link"}]
    columns += [{"fieldname": k, "label": "This Year", "fieldtype": "Currency"} for k in keys]
    rows = [{"account": "Sales - ST", "currency": "KES", **dict.fromkeys(keys, 1.0)}]
    page = table_page(record({"rows": rows, "columns": columns}, None), rows, ["account", *keys],
                      CATALOG)  # fmt: skip
    assert page["labels"] == [
        "Account", "Jan–Mar 2026 (KES)", "Apr–Jun 2026 (KES)", "Jul–Sep 2026 (KES)",
        "Oct–Dec 2026 (KES)",
    ]  # fmt: skip
    # The ERP's own period labels stand.
    columns[1]["label"] = "Jan 26-Mar 26"
    own = table_page(record({"rows": rows, "columns": columns}, None), rows, keys[:1], CATALOG)
    assert own["labels"] == ["Jan 26-Mar 26 (KES)"]
