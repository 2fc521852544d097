"""Tools generated from the packaged catalog: names, schemas, descriptions, argument parsing."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker

from erp_agent.catalog import Catalog, load_catalog
from erp_agent.connectors.query import DatePart, Filter, Func, GroupKey, Measure, Op
from erp_agent.errors import ToolInputError
from erp_agent.tools.base import Effect, Requirement, Tool, ToolRegistry
from erp_agent.tools.factories import catalog_tools, entity_tools, report_tools, workflow_tools
from erp_agent.tools.factories import filters as grammar


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="module")
def tools(catalog: Catalog) -> dict[str, Tool]:
    return {t.name: t for t in catalog_tools(catalog)}


def valid(tool: Tool, args: dict[str, Any]) -> bool:
    validator = Draft202012Validator(tool.parameters, format_checker=FormatChecker())
    return validator.is_valid(args)


def test_counts_names_and_kinds(catalog: Catalog) -> None:
    entity, report, workflow = (
        entity_tools(catalog),
        report_tools(catalog),
        workflow_tools(catalog),
    )
    everything = catalog_tools(catalog)
    assert len(everything) >= 200
    assert len(everything) == len(entity) + len(report) + len(workflow)
    assert len(ToolRegistry(everything)) == len(everything)  # names are unique
    assert len(entity) == sum(len(e.operations) for e in catalog.entities.values())
    assert {t.name for t in report} == {f"report.{r}" for r in catalog.reports}
    assert {t.name for t in workflow} == {
        "purchase_order.workflow",
        "purchase_order.workflow_action",
    }
    actions = Counter(t.action for t in entity)
    assert actions["list"] == actions["get"] == actions["count"] == len(catalog.entities)


def test_every_schema_is_a_strict_draft_2020_12_schema(tools: dict[str, Tool]) -> None:
    for tool in tools.values():
        Draft202012Validator.check_schema(tool.parameters)
        assert tool.parameters["additionalProperties"] is False, tool.name
        assert tool.description, tool.name


def test_tool_metadata(tools: dict[str, Tool]) -> None:
    listing = tools["sales_invoice.list"]
    assert listing.effect is Effect.READ
    assert listing.module == "accounting"
    assert listing.requires == (Requirement(entity="sales_invoice", right="read"),)
    # Figures are sent to the always-offered figure tool; a description never names a tool
    # that may not be offered with it (this entity's own aggregate, say).
    assert "metrics.query" in listing.description
    assert "sales_invoice.aggregate" not in listing.description
    assert "Grand total (incl. tax)" in listing.description  # what "total" means in ERPNext
    # The core prompt's rules (figures as returned, writes only as proposals) are not
    # repeated per tool.
    assert not tools["sales_invoice.aggregate"].prompt_rules
    update = tools["quotation.update"]
    assert update.effect is Effect.WRITE
    assert update.requires == (Requirement(entity="quotation", right="update"),)
    assert "confirm" in update.description
    assert tools["customer.delete"].requires[0].right == "delete"
    report = tools["report.accounts_receivable"]
    assert report.module == "accounting"
    assert report.requires == (Requirement(report="accounts_receivable"),)
    assert "Default: today" in report.parameters["properties"]["as_of_date"]["description"]
    # entities without aggregate are not pointed at one
    assert "account.aggregate" not in tools["account.list"].description


def test_list_arguments(tools: dict[str, Tool]) -> None:
    tool = tools["sales_invoice.list"]
    good = {
        "fields": ["id", "customer", "total"],
        "filters": [
            {"field": "status", "op": "in", "value": ["Unpaid", "Overdue"]},
            {"field": "date", "op": "between", "value": ["2026-01-01", "2026-06-30"]},
            {"field": "items.item", "op": "=", "value": "ITEM-1"},
            {"field": "due_date", "op": "is set"},
        ],
        "order_by": [{"field": "date", "direction": "desc"}],
        "limit": 50,
        "start": 100,
    }
    assert valid(tool, good)
    assert valid(tool, {})
    assert not valid(tool, {"limit": 501})
    assert not valid(tool, {"limit": 0})
    assert not valid(tool, {"fields": ["items"]})  # tables are not list columns
    assert not valid(tool, {"filters": [{"field": "nope", "op": "=", "value": 1}]})
    assert not valid(tool, {"filters": [{"field": "status", "op": "~", "value": 1}]})
    assert not valid(tool, {"order_by": [{"field": "date", "direction": "up"}]})
    assert not valid(tool, {"colour": "red"})


def test_create_and_update_arguments(tools: dict[str, Tool]) -> None:
    create = tools["quotation.create"]
    props = create.parameters["properties"]
    assert "total" not in props  # read-only
    assert "id" not in props  # a transaction is numbered by the ERP
    assert "id" in tools["item.create"].parameters["properties"]  # an item code is given
    assert props["date"]["format"] == "date"
    assert props["order_type"]["enum"] == ["Sales", "Maintenance", "Shopping Cart"]
    # The rate is the ERP's (the price list), filled before the proposal; the user may set one.
    assert props["items"]["items"]["required"] == ["item", "qty"]
    assert "rate" in props["items"]["items"]["properties"]
    assert (
        "Customer"
        in tools["sales_order.create"].parameters["properties"]["customer"]["description"]
    )
    good = {
        "quotation_to": "customer",
        "party": "Acme Ltd",
        "company": "Savanna Trading Ltd",
        "date": "2026-11-30",
        "items": [{"item": "ITEM-1", "qty": 2, "rate": 10.5}],
    }
    assert valid(create, good)
    assert not valid(create, {**good, "date": "30/11/2026"})
    assert not valid(create, {**good, "items": []})
    assert not valid(create, {**good, "total": 5})
    assert not valid(create, {k: v for k, v in good.items() if k != "party"})
    assert not valid(create, {**good, "items": [{"item": "ITEM-1", "qty": "two", "rate": 1}]})
    update = tools["customer.update"]
    assert valid(update, {"id": "Acme Ltd", "values": {"credit_limit": 5000}})
    assert not valid(update, {"id": "Acme Ltd", "values": {}})
    assert not valid(update, {"id": "Acme Ltd", "values": {"created": "2026-01-01"}})
    assert not valid(update, {"values": {"credit_limit": 1}})
    for action in ("submit", "cancel", "delete"):
        tool = tools[f"sales_invoice.{action}"]
        assert valid(tool, {"id": "SINV-1"})
        assert not valid(tool, {"id": "SINV-1", "force": True})


def test_aggregate_and_report_arguments(tools: dict[str, Tool]) -> None:
    agg = tools["sales_invoice.aggregate"]
    good = {
        "measures": [{"func": "sum", "field": "total"}, {"func": "count"}],
        "group_by": [{"field": "date", "part": "month"}, {"field": "customer"}],
        "filters": [{"field": "status", "op": "!=", "value": "Cancelled"}],
    }
    assert valid(agg, good)
    assert not valid(agg, {"measures": []})
    assert not valid(agg, {"measures": [{"func": "median", "field": "total"}]})
    assert not valid(agg, {"measures": [{"func": "sum", "field": "customer"}]})
    assert not valid(agg, {"measures": [{"func": "count"}], "group_by": [{"field": "remarks"}]})
    report = tools["report.general_ledger"]
    assert valid(
        report,
        {"company": "X", "from_date": "2026-01-01", "to_date": "2026-03-31", "party": ["A"]},
    )
    assert not valid(report, {"company": "X", "from_date": "2026-01-01"})  # to_date required
    assert not valid(report, {"company": "X", "from_date": "2026-01-01", "to_date": "x"})
    assert not valid(
        report,
        {"company": "X", "from_date": "2026-01-01", "to_date": "2026-01-31", "group_by": "day"},
    )
    assert tools["report.accounts_receivable"].parameters["required"] == ["company"]
    ranges = tools["report.accounts_receivable"].parameters["properties"]["ageing_ranges"]
    assert ranges["items"] == {"type": "integer"}


def test_filters_become_connector_filters(catalog: Catalog) -> None:
    invoice = catalog.entity("sales_invoice")
    parsed = grammar.parse_filters(
        invoice,
        [
            {"field": "status", "op": "in", "value": ["Unpaid"]},
            {"field": "items.item", "op": "=", "value": "ITEM-1"},
            {"field": "due_date", "op": "is set", "value": "ignored"},
        ],
    )
    assert parsed == [
        Filter("status", Op.IN, ["Unpaid"]),
        Filter("items.item", Op.EQ, "ITEM-1"),
        Filter("due_date", Op.IS_SET, None),
    ]
    bad = [
        ({"field": "status", "op": "in", "value": "Unpaid"}, "needs a list"),
        ({"field": "date", "op": "between", "value": ["2026-01-01"]}, r"\[from, to\]"),
        ({"field": "status", "op": "=", "value": ["Unpaid"]}, "use 'in'"),
        ({"field": "status", "op": "="}, "needs a value"),
        ({"field": "remarks", "op": "=", "value": "x"}, "filterable fields"),
    ]
    for flt, message in bad:
        with pytest.raises(ToolInputError, match=message):
            grammar.parse_filters(invoice, [flt])
    assert grammar.parse_measures(
        invoice, [{"func": "sum", "field": "total"}, {"func": "count"}]
    ) == (
        Measure(Func.SUM, "total"),
        Measure(Func.COUNT),
    )
    with pytest.raises(ToolInputError, match="sum needs a field"):
        grammar.parse_measures(invoice, [{"func": "sum"}])
    assert grammar.parse_group_by(invoice, [{"field": "date", "part": "year"}]) == (
        GroupKey("date", DatePart.YEAR),
    )
    with pytest.raises(ToolInputError, match="only for date fields"):
        grammar.parse_group_by(invoice, [{"field": "customer", "part": "year"}])
