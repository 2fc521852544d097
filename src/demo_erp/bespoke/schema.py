"""The bespoke demo schema, portable across SQLite, MariaDB and PostgreSQL."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects import mysql

# Microsecond timestamps everywhere: updated_at is both the sync watermark and the write version.
Stamp = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")
Money = sa.Numeric(14, 2)

metadata = sa.MetaData()

tenants = sa.Table(
    "tenants", metadata,
    sa.Column("id", sa.String(20), primary_key=True),
    sa.Column("name", sa.String(120), nullable=False),
    sa.Column("currency", sa.String(3), nullable=False),
    sa.Column("country", sa.String(60), nullable=False),
    sa.Column("vat_rate", sa.Numeric(5, 2), nullable=False),
    sa.Column("updated_at", Stamp, nullable=False),
)  # fmt: skip

branches = sa.Table(
    "branches", metadata,
    sa.Column("id", sa.String(40), primary_key=True),
    sa.Column("tenant_id", sa.String(20), sa.ForeignKey("tenants.id"), nullable=False),
    sa.Column("town", sa.String(80), nullable=False),
    sa.Column("updated_at", Stamp, nullable=False),
)  # fmt: skip

users = sa.Table(
    "app_users", metadata,
    sa.Column("email", sa.String(120), primary_key=True),
    sa.Column("full_name", sa.String(120), nullable=False),
    sa.Column("password_hash", sa.String(200), nullable=False),
    sa.Column("tenant_id", sa.String(20)),
    sa.Column("branches", sa.String(400)),
    sa.Column("roles", sa.String(400)),
    sa.Column("disabled", sa.Boolean, nullable=False, default=False),
)  # fmt: skip

customers = sa.Table(
    "customers", metadata,
    sa.Column("code", sa.String(30), primary_key=True),
    sa.Column("tenant_id", sa.String(20), nullable=False, index=True),
    sa.Column("branch_id", sa.String(40), nullable=False),
    sa.Column("display_name", sa.String(160), nullable=False),
    sa.Column("kind", sa.String(20), nullable=False),
    sa.Column("phone", sa.String(40)),
    sa.Column("email", sa.String(120)),
    sa.Column("credit_limit", Money),
    sa.Column("terms_days", sa.Integer, nullable=False, server_default="30"),
    sa.Column("updated_at", Stamp, nullable=False),
    sa.Column("deleted_at", Stamp),
)  # fmt: skip

products = sa.Table(
    "products", metadata,
    sa.Column("sku", sa.String(30), primary_key=True),
    sa.Column("tenant_id", sa.String(20), nullable=False, index=True),
    sa.Column("title", sa.String(160), nullable=False),
    sa.Column("category", sa.String(60), nullable=False),
    sa.Column("unit", sa.String(20), nullable=False),
    sa.Column("list_price", Money, nullable=False),
    sa.Column("unit_cost", Money, nullable=False),
    sa.Column("reorder_at", sa.Integer, nullable=False),
    sa.Column("updated_at", Stamp, nullable=False),
    sa.Column("deleted_at", Stamp),
)  # fmt: skip

invoices = sa.Table(
    "invoices", metadata,
    sa.Column("number", sa.String(30), primary_key=True),
    sa.Column("tenant_id", sa.String(20), nullable=False),
    sa.Column("branch_id", sa.String(40), nullable=False),
    sa.Column("customer_code", sa.String(30), nullable=False),
    sa.Column("issued_on", sa.Date, nullable=False),
    sa.Column("due_on", sa.Date, nullable=False),
    sa.Column("currency", sa.String(3), nullable=False),
    sa.Column("net_amount", Money, nullable=False),
    sa.Column("tax_amount", Money, nullable=False),
    sa.Column("gross_amount", Money, nullable=False),
    sa.Column("balance", Money, nullable=False),
    sa.Column("stage", sa.String(10), nullable=False),  # draft | posted | void
    sa.Column("pay_state", sa.String(12), nullable=False),  # draft unpaid partly_paid paid overdue void
    sa.Column("is_credit_note", sa.Boolean, nullable=False, default=False),
    sa.Column("notes", sa.Text),
    sa.Column("created_by", sa.String(120)),
    sa.Column("created_at", Stamp, nullable=False),
    sa.Column("updated_at", Stamp, nullable=False),
    sa.Column("deleted_at", Stamp),
    sa.Index("ix_invoices_scope", "tenant_id", "branch_id", "issued_on"),
)  # fmt: skip

invoice_lines = sa.Table(
    "invoice_lines", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("invoice_number", sa.String(30), nullable=False, index=True),
    sa.Column("line_no", sa.Integer, nullable=False),
    sa.Column("sku", sa.String(30), nullable=False),
    sa.Column("description", sa.String(200)),
    sa.Column("qty", sa.Numeric(12, 3), nullable=False),
    sa.Column("unit_price", Money, nullable=False),
    sa.Column("line_total", Money, nullable=False),
)  # fmt: skip

payments = sa.Table(
    "payments", metadata,
    sa.Column("ref", sa.String(30), primary_key=True),
    sa.Column("tenant_id", sa.String(20), nullable=False),
    sa.Column("branch_id", sa.String(40), nullable=False),
    sa.Column("customer_code", sa.String(30), nullable=False),
    sa.Column("invoice_number", sa.String(30)),
    sa.Column("paid_on", sa.Date, nullable=False),
    sa.Column("amount", Money, nullable=False),
    sa.Column("method", sa.String(20), nullable=False),
    sa.Column("reference", sa.String(60)),
    sa.Column("updated_at", Stamp, nullable=False),
    sa.Column("deleted_at", Stamp),
)  # fmt: skip

stock_levels = sa.Table(
    "stock_levels", metadata,
    sa.Column("id", sa.String(80), primary_key=True),
    sa.Column("tenant_id", sa.String(20), nullable=False),
    sa.Column("branch_id", sa.String(40), nullable=False),
    sa.Column("sku", sa.String(30), nullable=False),
    sa.Column("on_hand", sa.Numeric(12, 3), nullable=False),
    sa.Column("unit_cost", Money, nullable=False),
    sa.Column("stock_value", Money, nullable=False),
    sa.Column("updated_at", Stamp, nullable=False),
)  # fmt: skip

# Deletions of rows that are removed outright (stock levels), for delta sync.
tombstones = sa.Table(
    "tombstones", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("tenant_id", sa.String(20), nullable=False),
    sa.Column("table_name", sa.String(40), nullable=False),
    sa.Column("record_id", sa.String(80), nullable=False),
    sa.Column("deleted_at", Stamp, nullable=False),
)  # fmt: skip
