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

# ERPNext's own composite indexes (each doctype's ``on_doctype_update``): the ledger by voucher,
# by date and company, by party; sales returns by customer. The date-and-company pair is also
# given to the invoices, which the metrics add up by month: grouped by raw date and company
# (see query._rollup), SQLite reads them in that index's order instead of sorting every row.
ERPNEXT_INDEXES = (
    ("GL Entry", ("voucher_type", "voucher_no")),
    ("GL Entry", ("posting_date", "company")),
    ("GL Entry", ("party_type", "party")),
    ("Sales Invoice", ("customer", "is_return", "return_against")),
    ("Sales Invoice", ("posting_date", "company")),
    ("Purchase Invoice", ("posting_date", "company")),
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


def _add_new_columns(conn: sqlite3.Connection, meta: DocType) -> None:
    """A field added to a DocType since the database was made becomes a column, as Frappe's
    migrate adds it (a Custom Field, say); nothing else about an existing table changes."""
    have = {row[1] for row in conn.execute(f'pragma table_info("{meta.table_name}")')}
    for f in meta.data_fields:
        if f.fieldname not in have:
            conn.execute(
                f'alter table "{meta.table_name}" add column "{f.fieldname}" '
                f"{column_type(f.fieldtype)}"
            )


def create_schema(conn: sqlite3.Connection) -> None:
    conn.executescript(INTERNAL_SCHEMA)
    for meta in all_doctypes().values():
        for statement in table_ddl(meta):
            conn.execute(statement)
        _add_new_columns(conn, meta)
    doctypes = all_doctypes()
    for doctype, columns in (*LINK_INDEXES, *ERPNEXT_INDEXES):
        if not all(doctypes[doctype].is_valid_column(c) for c in columns):
            continue
        quoted = ", ".join(f'"{c}"' for c in columns)
        conn.execute(
            f'create index if not exists "idx_{doctype}_{"_".join(columns)}" '
            f'on "tab{doctype}" ({quoted})'
        )
    analyze(conn)


def analyze(conn: sqlite3.Connection) -> None:
    """Statistics for the query planner, as MariaDB keeps them for ERPNext: without them SQLite
    takes any equality on an indexed column as selective, and reads a million submitted
    invoices through the docstatus index. Sampled (analysis_limit): milliseconds per table."""
    conn.execute("pragma analysis_limit = 1000")
    conn.execute("analyze")
