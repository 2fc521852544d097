"""A broken catalog fails at load with a message naming the file, the item and the problem."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from erp_agent.catalog import Catalog, load_catalog
from erp_agent.errors import CatalogError

DELETE = object()


def minimal_files() -> dict[str, Any]:
    """A small valid catalog: two modules, three entities, one report, ERPNext maps."""
    return {
        "data/modules.yaml": {
            "selling": {
                "label": "Selling",
                "description": "Customers and invoices.",
                "keywords": ["sell", "invoice"],
                "related": ["setup"],
            },
            "setup": {"label": "Setup", "description": "Companies.", "keywords": ["company"]},
        },
        "data/common.yaml": {"fields": {"id": "string id filter sort"}},
        "data/entities/setup.yaml": {
            "company": {
                "label": "Company",
                "plural": "Companies",
                "kind": "master",
                "description": "A legal entity with its own books.",
                "keywords": ["company"],
                "operations": ["list", "get"],
                "fact_card": "Company {id} in {currency}.",
                "fields": {"currency": "string"},
            }
        },
        "data/entities/selling.yaml": {
            "customer": {
                "label": "Customer",
                "plural": "Customers",
                "kind": "master",
                "description": "A party we sell to.",
                "keywords": ["customer", "client"],
                "operations": ["list", "get", "create"],
                "fact_card": "Customer {id} ({name}).",
                "fields": {"name": "string title req filter"},
            },
            "sales_invoice": {
                "label": "Sales Invoice",
                "plural": "Sales Invoices",
                "kind": "transaction",
                "description": "A bill to a customer.",
                "keywords": ["invoice", "bill"],
                "operations": ["list", "get", "create", "submit", "cancel"],
                "date_field": "date",
                "amount_field": "total",
                "status_field": "status",
                "fact_card": "Sales Invoice {id} to {customer} on {date}: {total}, {status}.",
                "fields": {
                    "customer": "link(customer) req filter group",
                    "company": "link(company) req",
                    "date": "date req filter sort",
                    "total": "money ro sum -- Grand total.",
                    "status": "enum(Draft|Paid|Overdue) ro filter",
                    "items": {
                        "spec": "table req",
                        "fields": {"item": "string req", "amount": "money sum"},
                    },
                },
            },
        },
        "data/reports.yaml": {
            "accounts_receivable": {
                "label": "Accounts Receivable",
                "module": "selling",
                "description": "What customers owe, aged.",
                "keywords": ["receivables"],
                "params": {
                    "company": "link(company) req",
                    "ageing_based_on": {
                        "spec": "enum(due_date|posting_date)",
                        "default": "due_date",
                    },
                    "ageing_ranges": {"spec": "list(integer)", "default": [30, 60, 90, 120]},
                },
            }
        },
        "maps/erpnext/_common.yaml": {"fields": {"id": "name"}},
        "maps/erpnext/setup.yaml": {
            "entities": {
                "company": {"doctype": "Company", "fields": {"currency": "default_currency"}}
            }
        },
        "maps/erpnext/selling.yaml": {
            "entities": {
                "customer": {"doctype": "Customer", "fields": {"name": "customer_name"}},
                "sales_invoice": {
                    "doctype": "Sales Invoice",
                    "link": "{base_url}/app/sales-invoice/{id}",
                    "id_patterns": [r"ACC-SINV-\d{4}-\d{5}"],
                    "fields": {
                        "customer": "customer",
                        "company": "company",
                        "date": "posting_date",
                        "total": "grand_total",
                        "status": "status",
                        "items": {
                            "native": "items",
                            "doctype": "Sales Invoice Item",
                            "fields": {"item": "item_code", "amount": "amount"},
                        },
                    },
                },
            },
            "reports": {
                "accounts_receivable": {
                    "native": "Accounts Receivable",
                    "params": {
                        "company": "company",
                        "ageing_based_on": {
                            "native": "ageing_based_on",
                            "values": {"due_date": "Due Date", "posting_date": "Posting Date"},
                        },
                        "ageing_ranges": {"native": "range", "transform": "join"},
                    },
                }
            },
        },
    }


def write(root: Path, files: dict[str, Any]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        text = content if isinstance(content, str) else yaml.safe_dump(content, sort_keys=False)
        path.write_text(text, encoding="utf-8")
    return root


def changed(rel: str, keys: list[str], value: object) -> dict[str, Any]:
    files = minimal_files()
    node = files[rel]
    for key in keys[:-1]:
        node = node[key]
    if value is DELETE:
        del node[keys[-1]]
    else:
        node[keys[-1]] = copy.deepcopy(value)
    return files


def load_error(tmp_path: Path, files: dict[str, Any]) -> str:
    with pytest.raises(CatalogError) as info:
        load_catalog(write(tmp_path, files))
    return str(info.value)


def test_the_minimal_catalog_is_valid(tmp_path: Path) -> None:
    catalog = load_catalog(write(tmp_path, minimal_files()))
    assert isinstance(catalog, Catalog)
    assert catalog.entity("sales_invoice").modules == ("selling",)
    assert catalog.native("erpnext", "sales_invoice").native_field("total") == "grand_total"
    assert load_catalog(tmp_path) is not catalog  # only the packaged catalog is cached


SE = "data/entities/selling.yaml"
SM = "maps/erpnext/selling.yaml"
SI = ["sales_invoice"]
SIF = ["sales_invoice", "fields"]
MAP_SI = ["entities", "sales_invoice"]
MAP_SIF = ["entities", "sales_invoice", "fields"]
AR = ["accounts_receivable", "params"]
MAP_AR = ["reports", "accounts_receivable", "params"]

CASES = [
    pytest.param(
        SE, [*SIF, "customer"], "link(client)",
        [SE, "entity 'sales_invoice'", "field 'customer' links to unknown entity 'client'"],
        id="unknown-link-target",
    ),
    pytest.param(
        SE, [*SIF, "items", "fields", "item"], "link(product)",
        [SE, "entity 'sales_invoice'", "field 'items.item' links to unknown entity 'product'"],
        id="unknown-link-target-in-table",
    ),
    pytest.param(
        SE, [*SI, "also_in"], ["finance"],
        [SE, "entity 'sales_invoice'", "unknown module 'finance'"],
        id="unknown-module",
    ),
    pytest.param(
        SE, [*SI, "fact_card"], "Invoice {id} for {client}.",
        [SE, "entity 'sales_invoice'", "fact_card uses unknown field {client}"],
        id="fact-card-unknown-field",
    ),
    pytest.param(
        SE, [*SI, "fact_card"], "Invoice {id} with {items}.",
        [SE, "entity 'sales_invoice'", "fact_card uses table field {items}"],
        id="fact-card-table-field",
    ),
    pytest.param(
        SE, [*SI, "fact_card"], "Invoice {id:>10}.",
        [SE, "entity 'sales_invoice'", "only plain {field} placeholders"],
        id="fact-card-format-spec",
    ),
    pytest.param(
        SM, [*MAP_SI, "link"], "{base_url}/app/sales-invoice/{number}",
        [SM, "entity map 'sales_invoice'", "link uses unknown field {number}"],
        id="link-template-unknown-field",
    ),
    pytest.param(
        SE, [*SIF, "status"], "enum ro filter",
        [SE, "entity 'sales_invoice'", "status", "an enum needs values"],
        id="enum-without-values",
    ),
    pytest.param(
        SE, [*SIF, "status"], "enum() ro filter",
        [SE, "entity 'sales_invoice'", "an enum needs values"],
        id="enum-with-empty-values",
    ),
    pytest.param(
        SE, [*SIF, "total"], "money ro sum fancy",
        [SE, "entity 'sales_invoice'", "unknown flag 'fancy'"],
        id="unknown-flag",
    ),
    pytest.param(
        SE, [*SIF, "total"], "currency ro",
        [SE, "entity 'sales_invoice'", "total", "unknown type 'currency'"],
        id="unknown-field-type",
    ),
    pytest.param(
        SE, [*SIF, "customer"], "string sum",
        [SE, "entity 'sales_invoice'", "'sum' is for money/number/integer fields"],
        id="sum-on-text",
    ),
    pytest.param(
        SE, [*SI, "amount_field"], "customer",
        [SE, "entity 'sales_invoice'", "amount_field 'customer' is link"],
        id="amount-hint-wrong-type",
    ),
    pytest.param(
        SE, [*SI, "date_field"], "posted_on",
        [SE, "entity 'sales_invoice'", "date_field 'posted_on' is not a field"],
        id="date-hint-unknown-field",
    ),
    pytest.param(
        SE, ["customer", "operations"], ["list", "submit"],
        [SE, "entity 'customer'", "a master cannot allow submit"],
        id="master-submittable",
    ),
    pytest.param(
        SE, [*SI, "kind"], "ledger",
        [SE, "entity 'sales_invoice'", "a ledger cannot allow"],
        id="ledger-writable",
    ),
    pytest.param(
        SE, [*SIF], ["customer", "date"],
        [f"{SE}: sales_invoice", "'fields' must be a mapping, not list"],
        id="fields-not-a-mapping",
    ),
    pytest.param(
        SE, [*SI, "colour"], "red",
        [SE, "entity 'sales_invoice'", "colour", "Extra inputs are not permitted"],
        id="unknown-key",
    ),
    pytest.param(
        "data/modules.yaml", ["selling", "related"], ["marketing"],
        ["data/modules.yaml", "module 'selling'", "bad related module 'marketing'"],
        id="unknown-related-module",
    ),
    pytest.param(
        "data/modules.yaml", ["selling", "keywords"], [],
        ["data/modules.yaml", "module 'selling'", "keywords"],
        id="module-without-keywords",
    ),
    pytest.param(
        SM, [*MAP_SIF, "discount"], "discount_amount",
        [SM, "entity map 'sales_invoice'", "maps 'discount', which the entity does not have"],
        id="map-to-unknown-field",
    ),
    pytest.param(
        SM, [*MAP_SIF, "total"], DELETE,
        [SM, "entity map 'sales_invoice'", "field 'total' has no native map"],
        id="field-without-map",
    ),
    pytest.param(
        SM, [*MAP_SIF, "items", "fields", "amount"], DELETE,
        [SM, "table 'items'", "field 'amount' has no native map"],
        id="table-row-field-without-map",
    ),
    pytest.param(
        SM, [*MAP_SIF, "status"], {"native": "status", "values": {"Paid": "Fully Paid"}},
        [SM, "entity map 'sales_invoice'", "values 'Draft', 'Overdue' are not mapped"],
        id="partial-value-map",
    ),
    pytest.param(
        SM, [*MAP_SIF, "status"], {"native": "status", "values": {"Void": "Cancelled", "Draft": "Draft", "Paid": "Paid", "Overdue": "Overdue"}},
        [SM, "entity map 'sales_invoice'", "maps unknown value 'Void'"],
        id="value-map-unknown-value",
    ),
    pytest.param(
        SM, [*MAP_SIF, "items"], "items",
        [SM, "entity map 'sales_invoice'", "table 'items' needs 'doctype'"],
        id="table-map-without-doctype",
    ),
    pytest.param(
        SM, [*MAP_SI, "id_patterns"], ["ACC-SINV-(\\d{4}"],
        [SM, "entity map 'sales_invoice'", "not a valid regex"],
        id="bad-id-pattern",
    ),
    pytest.param(
        SM, ["entities", "invoice"], {"doctype": "Sales Invoice", "fields": {}},
        [SM, "entity map 'invoice'", "unknown entity 'invoice'"],
        id="map-of-unknown-entity",
    ),
    pytest.param(
        "data/reports.yaml", [*AR, "ageing_ranges"], "range(integer)",
        ["data/reports.yaml", "report 'accounts_receivable'", "ageing_ranges", "unknown type 'range'"],
        id="report-param-unknown-type",
    ),
    pytest.param(
        "data/reports.yaml", [*AR, "ageing_ranges"], {"spec": "list(integer)", "default": [30, "sixty"]},
        ["data/reports.yaml", "report 'accounts_receivable'", "default 'sixty' is not a valid integer"],
        id="report-param-bad-default",
    ),
    pytest.param(
        "data/reports.yaml", [*AR, "ageing_based_on"], {"spec": "enum(due_date|posting_date)", "default": "today"},
        ["data/reports.yaml", "default 'today' is not a valid enum"],
        id="report-param-default-not-in-enum",
    ),
    pytest.param(
        "data/reports.yaml", [*AR, "company"], "link(firm) req",
        ["data/reports.yaml", "report 'accounts_receivable'", "parameter 'company' links to unknown entity 'firm'"],
        id="report-param-unknown-link",
    ),
    pytest.param(
        "data/reports.yaml", ["accounts_receivable", "module"], "finance",
        ["data/reports.yaml", "report 'accounts_receivable'", "unknown module 'finance'"],
        id="report-unknown-module",
    ),
    pytest.param(
        SM, [*MAP_AR, "ageing_ranges"], DELETE,
        [SM, "report map 'accounts_receivable'", "parameter 'ageing_ranges' has no native filter"],
        id="report-param-without-map",
    ),
    pytest.param(
        SM, [*MAP_AR, "company"], {"native": "company", "transform": "join"},
        [SM, "report map 'accounts_receivable'", "'join' is for lists"],
        id="report-transform-on-wrong-type",
    ),
    pytest.param(
        SM, [*MAP_AR, "company"], {"native": "company", "transform": "upper"},
        [SM, "report map 'accounts_receivable'", "transform"],
        id="report-unknown-transform",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("rel", "keys", "value", "expected"), CASES)
def test_broken_catalog_is_rejected_with_a_clear_message(
    tmp_path: Path, rel: str, keys: list[str], value: object, expected: list[str]
) -> None:
    message = load_error(tmp_path, changed(rel, keys, value))
    for part in expected:
        assert part in message, f"{part!r} not in:\n{message}"


def test_duplicate_entity_names_both_files(tmp_path: Path) -> None:
    files = minimal_files()
    files["data/entities/setup.yaml"]["customer"] = files[SE]["customer"]
    message = load_error(tmp_path, files)
    assert "entity 'customer': duplicate" in message
    assert "data/entities/setup.yaml" in message
    assert SE in message


def test_entity_file_of_unknown_module(tmp_path: Path) -> None:
    files = minimal_files()
    files["data/entities/finance.yaml"] = files.pop("data/entities/setup.yaml")
    message = load_error(tmp_path, files)
    assert "data/entities/finance.yaml: unknown module 'finance'" in message


def test_map_in_the_wrong_module_file(tmp_path: Path) -> None:
    files = minimal_files()
    files["maps/erpnext/setup.yaml"]["entities"]["customer"] = files[SM]["entities"].pop("customer")
    message = load_error(tmp_path, files)
    assert "entity map 'customer': belongs in the 'selling' file" in message


def test_invalid_yaml_names_the_file_and_line(tmp_path: Path) -> None:
    files = minimal_files()
    files["data/reports.yaml"] = "accounts_receivable:\n  label: [unclosed\n"
    message = load_error(tmp_path, files)
    assert "data/reports.yaml: not valid YAML" in message
    assert "line 2" in message


def test_missing_file_is_named(tmp_path: Path) -> None:
    files = minimal_files()
    del files["data/modules.yaml"]
    message = load_error(tmp_path, files)
    assert "data/modules.yaml: file is missing" in message


def test_a_folder_that_is_not_a_catalog(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="no 'data' folder"):
        load_catalog(tmp_path)


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    files = changed(SE, [*SIF, "customer"], "link(client)")
    files[SE]["customer"]["also_in"] = ["finance"]
    with pytest.raises(CatalogError) as info:
        load_catalog(write(tmp_path, files))
    assert len(info.value.problems) == 2
    assert str(info.value).startswith("2 problems in the catalog:")
