"""The metrics catalog: the packaged metrics compile, and a broken metric fails at load naming
the file, the metric and the problem."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_catalog_validation import load_error, minimal_files, write

from erp_agent.catalog import MeasureFunc, Returns, load_catalog
from erp_agent.catalog.metrics_check import resolve_path, table_field
from erp_agent.errors import CatalogError


def test_the_packaged_catalog_has_forty_metrics_across_the_business() -> None:
    catalog = load_catalog()
    assert len(catalog.metrics) >= 40
    groups = {m.group for m in catalog.metrics.values()}
    assert {"selling", "receivables", "buying", "payables", "cash", "stock", "hr", "crm",
            "projects"} <= groups  # fmt: skip
    for metric in catalog.metrics.values():
        entity = catalog.entity(metric.entity)
        assert len(metric.description) > 30, metric.name
        parts = [catalog.metrics.get(str(p)) for p in (metric.measure.numerator,
                                                        metric.measure.denominator)]  # fmt: skip
        reports = [m.report for m in (metric, *parts) if m is not None and m.report]
        for name in metric.dimensions:
            if reports:  # the ERP's report rows carry the dimension
                assert all(name == "company" or name in r.cuts for r in reports), name
                continue
            path = catalog.dimension(name).path_for(entity.name, entity.fields)
            assert path is not None, (metric.name, name)
            if table_field(entity, path) is None:  # a line's item is read from the line
                resolve_path(catalog, entity, path)


def test_billed_and_revenue_are_different_figures() -> None:
    catalog = load_catalog()
    billed, revenue = catalog.metric("billed"), catalog.metric("revenue")
    assert billed.measure.field == "base_total"  # grand total incl. tax, company currency
    assert revenue.measure.field == "base_net_total"  # before tax, as Sales Analytics
    assert billed.returns is Returns.INCLUDED
    assert revenue.returns is Returns.INCLUDED
    assert catalog.metric("quotation_win_rate").measure.func is MeasureFunc.RATIO


def test_every_transaction_has_docstatus_mapped_to_the_erps_field() -> None:
    catalog = load_catalog()
    for entity in catalog.entities.values():
        if entity.kind == "transaction":
            assert catalog.native("erpnext", entity.name).native_field("docstatus") == "docstatus"
        else:
            assert "docstatus" not in entity.fields, entity.name


def test_a_linked_dimension_resolves_through_the_link() -> None:
    catalog = load_catalog()
    order = catalog.entity("sales_order")
    hops = resolve_path(catalog, order, "customer.customer_group")
    assert [(e.name, f.name) for e, f in hops] == [
        ("sales_order", "customer"),
        ("customer", "customer_group"),
    ]


def _with_metrics(metrics: dict[str, Any], dimensions: dict[str, Any] | None = None) -> Any:
    files = minimal_files()
    files["data/common.yaml"]["transaction_fields"] = {"docstatus": "integer ro filter group"}
    files["maps/erpnext/_common.yaml"]["transaction_fields"] = {"docstatus": "docstatus"}
    files["data/metrics.yaml"] = {
        "dimensions": dimensions or {"customer": {"label": "Customer", "entity": "customer"}},
        "metrics": metrics,
    }
    return files


GOOD = {
    "label": "Billed",
    "description": "What customers were billed, submitted invoices only.",
    "entity": "sales_invoice",
    "measure": "sum(total)",
    "date_field": "date",
    "dimensions": ["customer"],
}


def test_a_valid_metric_loads(tmp_path: Path) -> None:
    catalog = load_catalog(write(tmp_path, _with_metrics({"billed": GOOD})))
    metric = catalog.metric("billed")
    assert metric.measure.func is MeasureFunc.SUM
    assert metric.measure.field == "total"
    assert catalog.dimension("customer").entity == "customer"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"measure": "sum(nothing)"}, "measure field 'nothing' is not a field of sales_invoice"),
        ({"measure": "sum(customer)"}, "sum of 'customer', a link field"),
        ({"measure": "total"}, "Input should be 'sum', 'count'"),
        ({"measure": "ratio(billed)"}, "ratio needs two metrics"),
        ({"dimensions": ["region"]}, "unknown dimension 'region'"),
        ({"date_field": "customer"}, "date_field 'customer' is not a date"),
        ({"filters": ["colour = red"]}, "no scalar field 'colour'"),
        ({"filters": ["total ~ 3"]}, "must look like 'field op value'"),
        ({"entity": "sales_order"}, "unknown entity 'sales_order'"),
        ({"currency": "customer"}, "currency field 'customer' is not a link to currency"),
        ({"returns": "included"}, "has no is_return field"),
        ({"documents": "some"}, "documents must be 'submitted' or 'all'"),
        ({"measure": "sum(total) - sum(nothing)"}, "measure field 'nothing' is not a field"),
        ({"details": ["customer"]}, "details are shown only beside a latest(...) figure"),
        ({"cumulative": True, "date_field": None}, "a cumulative metric adds up records by a"),
        ({"unit_field": "customer"}, "unit_field 'customer' is not a link to uom"),
        ({"report": {"name": "nope"}}, "unknown report 'nope'"),
        ({"measure": "latest(total)", "date_field": None}, "latest(...) needs a date_field"),
    ],
)
def test_a_broken_metric_names_file_metric_and_problem(
    tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    error = load_error(tmp_path, _with_metrics({"billed": {**GOOD, **change}}))
    assert "data/metrics.yaml" in error
    assert "'billed'" in error
    assert message in error


def test_a_net_of_two_sums_and_a_latest_value_compile() -> None:
    from erp_agent.catalog.metrics import MetricMeasure

    net = MetricMeasure.model_validate("sum(debit) - sum(credit)")
    assert (net.func, net.field, net.minus) == (MeasureFunc.NET, "debit", "credit")
    assert str(net) == "sum(debit) - sum(credit)"
    assert net.fields == ("debit", "credit")
    latest = MetricMeasure.model_validate("latest(items.rate)")
    assert (latest.func, latest.field) == (MeasureFunc.LATEST, "items.rate")
    catalog = load_catalog()
    assert catalog.metric("account_balance").cumulative
    assert catalog.metric("stock_on_hand").unit_field == "item.uom"
    assert catalog.dimension("ageing").age_labels == (
        "0-30",
        "31-60",
        "61-90",
        "91-120",
        "121-Above",
    )
    assert catalog.dimension("ageing").age_label(-5) == "0-30"  # not yet due: the first range


def test_a_dimension_path_through_a_non_link_fails(tmp_path: Path) -> None:
    dims = {"customer": {"label": "Customer", "paths": {"sales_invoice": "date.customer"}}}
    error = load_error(tmp_path, _with_metrics({"billed": GOOD}, dims))
    assert "sales_invoice.date is not a link" in error


def test_a_catalog_without_metrics_has_none(tmp_path: Path) -> None:
    catalog = load_catalog(write(tmp_path, minimal_files()))
    assert catalog.metrics == {}
    assert catalog.dimensions == {}
    with pytest.raises(CatalogError, match="unknown metric 'revenue'"):
        catalog.metric("revenue")


def test_docs_list_every_metric_with_its_definition() -> None:
    from pathlib import Path

    from erp_agent.catalog.metrics_doc import render

    catalog = load_catalog()
    page = (Path(__file__).parents[2] / "docs" / "metrics.md").read_text(encoding="utf-8")
    assert page == render(catalog), "regenerate: python -m erp_agent.catalog.metrics_doc"
    for metric in catalog.metrics.values():
        assert f"### `{metric.name}` — {metric.label}" in page
        assert " ".join(metric.description.split()) in page
