"""Tables and charts a finance user accepts: labels, not field names; amounts at the currency's
precision; periods in words; statements with accounts first and indented; one chart per
currency with exactly the top N; a chart's values are the table's values."""

from __future__ import annotations

from typing import Any

from erp_agent.catalog import load_catalog
from erp_agent.engine import presentation
from erp_agent.engine.render import _chart, table_page
from erp_agent.results.store import ResultRecord

CATALOG = load_catalog()


def record(data: Any, entity: str | None = "sales_invoice") -> ResultRecord:
    return ResultRecord("res_test", "u@demo.local", "tool", data, entity)


def test_an_aggregate_shows_labels_rounded_amounts_and_months_in_words() -> None:
    rows = [
        {"currency": "KES", "month_date": 1, "sum_total": 56838076.789999984, "count_records": 3},
        {"currency": "KES", "month_date": 2, "sum_total": 10.005, "count_records": 1},
    ]
    data = {"rows": rows, "definition": {"text": "Billed.", "period": "2026-01-01 to 2026-12-31"}}
    page = table_page(record(data), rows, ["month_date", "sum_total", "count_records"], CATALOG)
    assert page["labels"] == ["Month", "Total (KES)", "Sales Invoices"]
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
    assert presentation.default_columns(stored.data, rows) == ["month", "currency", "billed"]
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
    shown = presentation.default_columns(stored.data, rows)
    assert shown == ["account", "total"]
    page = table_page(stored, rows, shown, CATALOG)
    assert page["labels"] == ["Account", "Total"]
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
    assert kes["spec"]["data"]["datasets"][0]["label"] == "Total (KES)"
    assert usd["spec"]["data"]["labels"] == ["U3", "U2", "U1"]
    assert usd["spec"]["data"]["datasets"][0]["data"] == [3.0, 2.0, 1.0]


def test_a_chart_without_a_definition_or_known_columns_still_draws() -> None:
    rows = [{"name": "a", "value": 1.23456789}]
    stored = record({"rows": rows}, entity=None)
    chart = _chart({"label": "name", "values": ["value"], "chart_type": "pie"}, stored, rows, None)
    assert chart["spec"]["type"] == "pie"
    assert chart["spec"]["data"]["datasets"][0] == {"label": "Value", "data": [1.2346]}
