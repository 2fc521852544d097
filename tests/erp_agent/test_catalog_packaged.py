"""The packaged catalog: it loads, it is complete enough to route and answer, and its API works."""

from __future__ import annotations

import datetime as dt

import pytest

from erp_agent.catalog import (
    Catalog,
    Entity,
    EntityKind,
    FieldType,
    Operation,
    ParamType,
    load_catalog,
)
from erp_agent.catalog.templates import placeholders
from erp_agent.errors import CatalogError, ConfigError, ErpAgentError

MODULES = {"selling", "buying", "stock", "accounting", "hr", "crm", "projects", "setup"}
REQUIRED_ENTITIES = {
    "customer", "supplier", "item", "warehouse", "quotation", "sales_order", "sales_invoice",
    "delivery_note", "payment_entry", "purchase_order", "purchase_receipt", "purchase_invoice",
    "material_request", "stock_entry", "stock_ledger_entry", "stock_balance", "journal_entry",
    "gl_entry", "account", "cost_center", "company", "branch", "fiscal_year", "accounting_period",
    "employee", "leave_application", "leave_type", "salary_slip", "attendance", "expense_claim",
    "lead", "opportunity", "contact", "address", "project", "task", "customer_group",
    "supplier_group", "item_group", "territory", "item_price", "price_list", "department",
    "designation", "mode_of_payment", "currency",
}  # fmt: skip
REPORTS = {
    "accounts_receivable", "accounts_payable", "general_ledger", "profit_and_loss",
    "balance_sheet", "stock_balance", "sales_analytics", "gross_profit", "employee_leave_balance",
    "leave_details",
}  # fmt: skip


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def sample_value(kind: FieldType, values: tuple[str, ...]) -> object:
    return {
        FieldType.STRING: "X-1",
        FieldType.TEXT: "Some text",
        FieldType.INTEGER: 30,
        FieldType.NUMBER: 12.5,
        FieldType.MONEY: 1234.5,
        FieldType.PERCENT: 50.0,
        FieldType.DATE: dt.date(2026, 11, 30),
        FieldType.DATETIME: dt.datetime(2026, 11, 30, 9, 15),
        FieldType.BOOLEAN: True,
        FieldType.ENUM: values[0] if values else None,
        FieldType.LINK: "LINKED-1",
        FieldType.TABLE: [],
    }[kind]


def sample_record(entity: Entity) -> dict[str, object]:
    return {name: sample_value(f.type, f.values) for name, f in entity.fields.items()}


def test_packaged_catalog_loads_once_and_is_cached(catalog: Catalog) -> None:
    assert load_catalog() is catalog


def test_catalog_covers_the_required_entities_modules_and_reports(catalog: Catalog) -> None:
    assert len(catalog.entities) >= 40
    assert set(catalog.entities) >= REQUIRED_ENTITIES
    assert set(catalog.modules) == MODULES
    assert set(catalog.reports) == REPORTS


def test_every_module_has_keywords_and_entities(catalog: Catalog) -> None:
    for name, module in catalog.modules.items():
        assert module.keywords, name
        assert catalog.entities_for_module(name), name


def test_every_link_target_exists(catalog: Catalog) -> None:
    for entity in catalog.entities.values():
        for field in entity.fields.values():
            for f in (field, *field.fields.values()):
                if f.type is FieldType.LINK:
                    assert f.target in catalog.entities, (entity.name, f.name)
    for report in catalog.reports.values():
        for param in report.params.values():
            if param.target is not None:
                assert param.target in catalog.entities, (report.name, param.name)


def test_every_entity_is_described_for_the_model(catalog: Catalog) -> None:
    for entity in catalog.entities.values():
        assert len(entity.description) > 30, entity.name
        assert entity.keywords, entity.name
        assert entity.plural, entity.name
        assert entity.label, entity.name
        assert entity.identifier.name == "id", entity.name
        assert entity.modules[0] == entity.source.rsplit("/", 1)[-1].removesuffix(".yaml")


def test_every_fact_card_renders_one_sentence_from_a_sample_record(catalog: Catalog) -> None:
    for entity in catalog.entities.values():
        card = entity.render_fact_card(sample_record(entity))
        assert "{" not in card, (entity.name, card)
        assert "n/a" not in card, (entity.name, card)
        assert card.endswith("."), (entity.name, card)
        assert "\n" not in card


def test_fact_card_formats_values_and_marks_missing_ones(catalog: Catalog) -> None:
    invoice = catalog.entity("sales_invoice")
    card = invoice.render_fact_card(
        {
            "id": "ACC-SINV-2026-00012",
            "customer_name": "Gulf Traders",
            "branch": "Nakuru",
            "date": dt.date(2026, 8, 14),
            "currency": "KES",
            "total": 125000,
            "outstanding": 0.0,
            "status": "Paid",
        }
    )
    assert card == (
        "Sales Invoice ACC-SINV-2026-00012 to Gulf Traders (Nakuru) dated 2026-08-14: "
        "total KES 125,000.00, outstanding KES 0.00, status Paid, due n/a."
    )


def test_hints_point_at_fields_of_the_right_type(catalog: Catalog) -> None:
    invoice = catalog.entity("sales_invoice")
    assert (invoice.date_field, invoice.amount_field, invoice.status_field) == (
        "date",
        "total",
        "status",
    )
    assert invoice.field("outstanding").summable
    assert invoice.field("customer").target == "customer"
    assert invoice.field("items").fields["item"].target == "item"


def test_operations_follow_the_kind_of_entity(catalog: Catalog) -> None:
    for entity in catalog.entities.values():
        if entity.kind is EntityKind.LEDGER:
            assert set(entity.operations) <= {"list", "get", "count", "aggregate"}, entity.name
        if entity.kind is EntityKind.MASTER:
            assert not entity.allows(Operation.SUBMIT), entity.name
    assert catalog.entity("gl_entry").kind is EntityKind.LEDGER
    assert not catalog.entity("gl_entry").allows("create")
    assert catalog.entity("purchase_order").allows("submit")


def test_entities_for_module_include_secondary_modules(catalog: Catalog) -> None:
    selling = {e.name for e in catalog.entities_for_module("selling")}
    assert {"customer", "quotation", "sales_order", "sales_invoice"} <= selling
    assert "purchase_order" not in selling
    hr = {e.name for e in catalog.entities_for_module("hr")}
    assert {"employee", "leave_application", "salary_slip"} <= hr


def test_related_modules_load_alongside(catalog: Catalog) -> None:
    assert catalog.with_related(["crm"]) == ("crm", "selling")
    assert catalog.with_related(["hr", "accounting"])[:2] == ("hr", "accounting")


def test_reports_have_typed_parameters_and_defaults(catalog: Catalog) -> None:
    ar = catalog.report("accounts_receivable")
    assert ar.module == "accounting"
    ranges = ar.params["ageing_ranges"]
    assert (ranges.type, ranges.item, ranges.default) == (
        ParamType.LIST,
        ParamType.INTEGER,
        [30, 60, 90, 120],
    )
    assert ar.params["ageing_based_on"].values == ("due_date", "posting_date")
    assert ar.params["customer"].target == "customer"
    assert ar.required == ("company",)
    assert catalog.report("general_ledger").required == ("company", "from_date", "to_date")
    for report in catalog.reports.values():
        # Every report runs for a company, but one employee's leave, which is theirs.
        scope = "employee" if report.name == "leave_details" else "company"
        assert report.params[scope].type is ParamType.LINK, report.name
        assert report.description, report.name
        assert report.keywords, report.name


def test_report_parameters_translate_to_native_filters(catalog: Catalog) -> None:
    ar = catalog.native_report("erpnext", "accounts_receivable")
    filters = ar.native_filters(
        {
            "company": "Acme Kenya",
            "as_of_date": "2026-11-30",
            "ageing_based_on": "due_date",
            "ageing_ranges": [30, 60, 90, 120],
            "customer": ["Gulf Traders"],
            "group_by_party": True,
            "territory": None,
        }
    )
    assert filters == {
        "party_type": "Customer",
        "company": "Acme Kenya",
        "report_date": "2026-11-30",
        "ageing_based_on": "Due Date",
        "range": "30, 60, 90, 120",
        "party": ["Gulf Traders"],
        "group_by_party": 1,
    }
    pnl = catalog.native_report("erpnext", "profit_and_loss")
    assert pnl.native == "Profit and Loss Statement"
    assert pnl.native_filters({"periodicity": "half_yearly", "based_on": "date_range"}) == {
        "include_default_book_entries": 1,
        "periodicity": "Half-Yearly",
        "filter_based_on": "Date Range",
    }
    with pytest.raises(CatalogError, match="no parameter 'colour'"):
        pnl.native_filters({"colour": "red"})


def test_native_entity_map_renames_fields_values_and_rows(catalog: Catalog) -> None:
    pe = catalog.native("erpnext", "payment_entry")
    assert pe.doctype == "Payment Entry"
    assert pe.native_field("date") == "posting_date"
    native = pe.to_native(
        {
            "party_type": "customer",
            "amount": 500,
            "references": [{"document_type": "sales_invoice", "document": "ACC-SINV-2026-00001"}],
        }
    )
    assert native == {
        "party_type": "Customer",
        "paid_amount": 500,
        "references": [
            {"reference_doctype": "Sales Invoice", "reference_name": "ACC-SINV-2026-00001"}
        ],
    }
    row = {"name": "ACC-PAY-2026-00003", "party_type": "Supplier", "unknown_native": 1}
    assert pe.to_canonical(row) == {"id": "ACC-PAY-2026-00003", "party_type": "supplier"}
    with pytest.raises(CatalogError, match="no native map for field 'colour'"):
        pe.native_field("colour")


def test_document_ids_are_recognised_and_linked(catalog: Catalog) -> None:
    found = catalog.find_document_ids(
        "erpnext", "Is PUR-ORD-2026-00087 approved, and was ACC-SINV-RET-2026-00002 applied?"
    )
    assert [(e.name, i) for e, i in found] == [
        ("sales_invoice", "ACC-SINV-RET-2026-00002"),
        ("purchase_order", "PUR-ORD-2026-00087"),
    ]
    invoice = catalog.native("erpnext", "sales_invoice")
    assert invoice.matches_id("ACC-SINV-2026-00012")
    assert not invoice.matches_id("XACC-SINV-2026-00012")
    assert "SINV" in invoice.keywords
    link = invoice.link_for("https://erp.example.com/", {"id": "ACC-SINV-2026-00012"})
    assert link == "https://erp.example.com/app/sales-invoice/ACC-SINV-2026-00012"
    slip = catalog.native("erpnext", "salary_slip")
    assert slip.link_for("http://erp", {"id": "Sal Slip/00012"}) == (
        "http://erp/app/salary-slip/Sal%20Slip%2F00012"
    )


def test_unknown_names_raise_catalog_errors_with_suggestions(catalog: Catalog) -> None:
    with pytest.raises(
        CatalogError, match=r"unknown entity 'sales_invoce'.*did you mean sales_invoice"
    ):
        catalog.entity("sales_invoce")
    with pytest.raises(CatalogError, match="unknown module 'finance'"):
        catalog.module("finance")
    with pytest.raises(CatalogError, match="unknown report"):
        catalog.report("cash_flow")
    with pytest.raises(CatalogError, match="unknown connector 'sap'"):
        catalog.native("sap", "customer")
    with pytest.raises(CatalogError, match="has no field 'colour'"):
        catalog.entity("customer").field("colour")


def test_catalog_error_is_a_config_error() -> None:
    assert issubclass(CatalogError, ConfigError)
    assert issubclass(ConfigError, ErpAgentError)


def test_catalog_models_are_frozen(catalog: Catalog) -> None:
    entity = catalog.entity("customer")
    with pytest.raises(ValueError, match="frozen"):
        entity.label = "Client"  # type: ignore[misc]


def test_templates_refuse_format_specs() -> None:
    assert placeholders("{a} and {b}") == ("a", "b")
    for bad in ("{a.b}", "{a[0]}", "{a:>8}", "{a!r}", "{a"):
        with pytest.raises(ValueError, match="template"):
            placeholders(bad)


def test_catalog_counts_are_reported(catalog: Catalog) -> None:
    assert catalog.field_count > 500
    assert sum(len(r.params) for r in catalog.reports.values()) > 60
