"""SQLite storage: one table per DocType (``tab<DocType>``) as Frappe lays them out."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from demo_erp.meta import INT_TYPES, NUMERIC_TYPES, DocType, all_doctypes

# Columns worth an index: the filters and joins the API and reports use most.
_INDEXED = (
    "parent",
    "modified",
    "posting_date",
    "transaction_date",
    "customer",
    "supplier",
    "company",
    "account",
    "voucher_no",
    "item_code",
    "warehouse",
    "employee",
    "branch",
    "party",
    "docstatus",
)

# Lookups the controllers make on links between documents (orders, returns, payments).
LINK_INDEXES = (
    ("Sales Invoice Item", ("sales_order",)),
    ("Sales Invoice Item", ("delivery_note",)),
    ("Delivery Note Item", ("against_sales_order",)),
    ("Purchase Receipt Item", ("purchase_order",)),
    ("Purchase Invoice Item", ("purchase_order",)),
    ("Purchase Invoice Item", ("purchase_receipt",)),
    ("Sales Invoice", ("return_against", "docstatus")),
    ("Purchase Invoice", ("return_against", "docstatus")),
    ("Payment Entry Reference", ("reference_name",)),
)

INTERNAL_SCHEMA = """
create table if not exists __Auth (user text primary key, password text not null);
create table if not exists __Sessions (sid text primary key, user text not null, expires real not null);
create table if not exists __Series (name text primary key, current integer not null);
create table if not exists __Settings (key text primary key, value text);
create table if not exists __ApiSecrets (user text primary key, api_secret text not null);
"""


def column_type(fieldtype: str) -> str:
    if fieldtype in INT_TYPES:
        return "integer"
    if fieldtype in NUMERIC_TYPES:
        return "real"
    return "text"


def table_ddl(meta: DocType) -> list[str]:
    cols = [
        "name text primary key",
        "owner text",
        "creation text",
        "modified text",
        "modified_by text",
        "docstatus integer not null default 0",
        "idx integer not null default 0",
    ]
    if meta.istable:
        cols += ["parent text", "parentfield text", "parenttype text"]
    cols += [f'"{f.fieldname}" {column_type(f.fieldtype)}' for f in meta.data_fields]
    ddl = [f'create table if not exists "{meta.table_name}" ({", ".join(cols)})']
    for col in _INDEXED:
        if meta.is_valid_column(col) and col != "name":
            ddl.append(
                f'create index if not exists "idx_{meta.name}_{col}" on "{meta.table_name}" ("{col}")'
            )
    return ddl


def connect(path: str | Path) -> sqlite3.Connection:
    """A connection in autocommit mode: each API request opens its own transaction."""
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=30)
    conn.row_factory = sqlite3.Row
    conn.execute("pragma journal_mode=wal")
    conn.execute("pragma synchronous=normal")
    conn.execute("pragma cache_size=-65536")
    return conn


def create_schema(conn: sqlite3.Connection) -> None:
    conn.executescript(INTERNAL_SCHEMA)
    for meta in all_doctypes().values():
        for statement in table_ddl(meta):
            conn.execute(statement)
    for doctype, columns in LINK_INDEXES:
        quoted = ", ".join(f'"{c}"' for c in columns)
        conn.execute(
            f'create index if not exists "idx_{doctype}_{"_".join(columns)}" '
            f'on "tab{doctype}" ({quoted})'
        )
