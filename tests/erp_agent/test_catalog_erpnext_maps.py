"""The ERPNext maps name only DocTypes, fields and options that exist in the demo ERP's DocType
definitions (which follow ERPNext), with compatible types. Read as files, never imported."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from erp_agent.catalog import Catalog, Field, FieldMap, FieldType, load_catalog

DOCTYPES_DIR = Path(__file__).resolve().parents[2] / "src" / "demo_erp" / "doctypes"

# Columns every Frappe DocType table has; DocType definitions do not list them.
STANDARD_FIELDS = {
    "name": "Data",
    "owner": "Link",
    "creation": "Datetime",
    "modified": "Datetime",
    "modified_by": "Link",
    "docstatus": "Int",
    "idx": "Int",
}

# Native field types a canonical type may be stored in.
COMPATIBLE = {
    FieldType.STRING: {"Data", "Link", "Dynamic Link", "Select", "Small Text"},
    FieldType.TEXT: {"Small Text", "Text", "Long Text", "Code", "Data"},
    FieldType.INTEGER: {"Int"},
    FieldType.NUMBER: {"Float", "Int"},
    FieldType.MONEY: {"Currency"},
    FieldType.PERCENT: {"Percent"},
    FieldType.DATE: {"Date"},
    FieldType.DATETIME: {"Datetime"},
    FieldType.BOOLEAN: {"Check"},
    FieldType.ENUM: {"Select"},
    FieldType.LINK: {"Link"},
    FieldType.TABLE: {"Table"},
}

# The standard reports the demo ERP serves (frappe-rest-api.md section 10.5).
NATIVE_REPORTS = {
    "Accounts Receivable", "Accounts Payable", "General Ledger", "Profit and Loss Statement",
    "Balance Sheet", "Stock Balance", "Sales Analytics", "Gross Profit", "Employee Leave Balance",
}  # fmt: skip
FORM_HELPERS = {"hrms.hr.doctype.leave_application.leave_application.get_leave_details"}

# "<Fieldtype>[(<options>)] [flags]": fieldtypes are capitalised words, flags lower-case.
_SPEC = re.compile(r"^(?P<type>[A-Z][a-z]*(?: [A-Z][a-z]*)*)(?:\((?P<options>[^)]*)\))?(?:\s|$)")


@dataclass(frozen=True)
class NativeField:
    fieldtype: str
    options: str | None


def load_doctypes() -> dict[str, dict[str, NativeField]]:
    doctypes: dict[str, dict[str, NativeField]] = {}
    for path in sorted(DOCTYPES_DIR.glob("*.yaml")):
        for doctype, meta in yaml.safe_load(path.read_text(encoding="utf-8")).items():
            fields = {}
            for fieldname, spec in (meta.get("fields") or {}).items():
                match = _SPEC.match(spec)
                assert match, f"{path.name}: {doctype}.{fieldname}: {spec!r}"
                fields[fieldname] = NativeField(match["type"], match["options"])
            doctypes[doctype] = fields
    return doctypes


@pytest.fixture(scope="module")
def doctypes() -> dict[str, dict[str, NativeField]]:
    return load_doctypes()


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def native_field(
    doctypes: dict[str, dict[str, NativeField]], doctype: str, fieldname: str
) -> NativeField | None:
    if fieldname in STANDARD_FIELDS:
        return NativeField(STANDARD_FIELDS[fieldname], None)
    return doctypes[doctype].get(fieldname)


def check_fields(
    catalog: Catalog,
    doctypes: dict[str, dict[str, NativeField]],
    where: str,
    doctype: str,
    fields: dict[str, Field],
    maps: dict[str, FieldMap],
) -> list[str]:
    problems: list[str] = []
    doctype_of = {name: m.doctype for name, m in catalog.maps("erpnext").entities.items()}
    for name, field in fields.items():
        fmap = maps[name]
        native = native_field(doctypes, doctype, fmap.native)
        if native is None:
            problems.append(f"{where}.{name}: {doctype} has no field {fmap.native!r}")
            continue
        if native.fieldtype not in COMPATIBLE[field.type]:
            problems.append(f"{where}.{name}: {field.type} stored in {native.fieldtype}")
        if field.type is FieldType.LINK and native.options != doctype_of.get(field.target or ""):
            problems.append(
                f"{where}.{name}: links to {native.options}, not {field.target}'s doctype"
            )
        if field.type is FieldType.ENUM and native.fieldtype == "Select":
            options = set((native.options or "").split("|"))
            for value in field.values:
                if fmap.native_value(value) not in options:
                    problems.append(f"{where}.{name}: value {value!r} is not a {doctype} option")
        if field.type is FieldType.TABLE:
            if native.options != fmap.doctype or fmap.doctype not in doctypes:
                problems.append(
                    f"{where}.{name}: table of {native.options}, mapped as {fmap.doctype}"
                )
            else:
                problems += check_fields(
                    catalog, doctypes, f"{where}.{name}", fmap.doctype, field.fields, fmap.fields
                )
    return problems


def test_demo_doctype_definitions_parse(doctypes: dict[str, dict[str, NativeField]]) -> None:
    assert doctypes["Sales Invoice"]["items"] == NativeField("Table", "Sales Invoice Item")
    assert doctypes["Sales Invoice"]["customer"] == NativeField("Link", "Customer")
    assert doctypes["GL Entry"]["debit"].fieldtype == "Currency"


def test_every_mapped_doctype_exists(
    catalog: Catalog, doctypes: dict[str, dict[str, NativeField]]
) -> None:
    missing = [
        f"{m.entity} -> {m.doctype}"
        for m in catalog.maps("erpnext").entities.values()
        if m.doctype not in doctypes
    ]
    assert not missing


def test_every_entity_has_an_erpnext_map(catalog: Catalog) -> None:
    assert set(catalog.maps("erpnext").entities) == set(catalog.entities)


def test_every_mapped_field_exists_with_a_compatible_type(
    catalog: Catalog, doctypes: dict[str, dict[str, NativeField]]
) -> None:
    problems: list[str] = []
    for emap in catalog.maps("erpnext").entities.values():
        entity = catalog.entity(emap.entity)
        problems += check_fields(
            catalog, doctypes, entity.name, emap.doctype, entity.fields, emap.fields
        )
    assert not problems, "\n".join(problems)


def test_id_patterns_follow_the_naming_series_of_the_doctype(catalog: Catalog) -> None:
    series = {}
    for path in sorted(DOCTYPES_DIR.glob("*.yaml")):
        for doctype, meta in yaml.safe_load(path.read_text(encoding="utf-8")).items():
            autoname = str(meta.get("autoname", ""))
            if autoname.startswith("series:"):
                series[doctype] = autoname.removeprefix("series:")
    for emap in catalog.maps("erpnext").entities.values():
        if emap.doctype not in series:
            continue
        # The series as a sample id: ACC-SINV-.YYYY.-.##### -> ACC-SINV-2026-00012
        sample = series[emap.doctype].replace(".YYYY.", "2026").replace(".#####", "00012")
        sample = sample.replace(".", "")
        assert emap.matches_id(sample), (emap.entity, sample)


def test_every_report_maps_to_a_standard_report(catalog: Catalog) -> None:
    reports = catalog.maps("erpnext").reports
    assert set(reports) == set(catalog.reports)
    assert {r.native for r in reports.values() if not r.method} == NATIVE_REPORTS
    # The rest are hrms's form helpers, served as whitelisted methods.
    assert {r.method for r in reports.values() if r.method} == FORM_HELPERS


def test_the_checker_catches_a_wrong_map(
    catalog: Catalog, doctypes: dict[str, dict[str, NativeField]]
) -> None:
    emap = catalog.native("erpnext", "sales_invoice")
    entity = catalog.entity("sales_invoice")
    wrong = {
        **emap.fields,
        "total": FieldMap(native="grand_totl"),
        "due_date": FieldMap(native="posting_time"),
        "customer": FieldMap(native="territory"),
        "status": FieldMap(
            native="status", values={v: v.upper() for v in entity.field("status").values}
        ),
    }
    problems = check_fields(catalog, doctypes, "x", emap.doctype, entity.fields, wrong)
    assert any("no field 'grand_totl'" in p for p in problems)
    assert any("x.due_date" in p for p in problems)
    assert any("x.customer: links to Territory" in p for p in problems)
    assert any("value 'Paid' is not a Sales Invoice option" in p for p in problems)
