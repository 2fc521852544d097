"""The ``results`` table (SQLAlchemy Core), in the store's naming convention.

Kept on its own ``MetaData`` until the store's migration 0002 creates it; then it belongs on
``erp_agent.store.tables.metadata`` so that migrations and tables are compared as one schema.
"""

from __future__ import annotations

from sqlalchemy import JSON, Column, Index, Integer, MetaData, String, Table, Text

from erp_agent.store.column_types import UTCDateTime
from erp_agent.store.tables import NAMING_CONVENTION

metadata = MetaData(naming_convention=NAMING_CONVENTION)

results = Table(
    "results",
    metadata,
    Column("id", String, primary_key=True),
    Column("user", String, nullable=False),
    Column("tool", String, nullable=False),
    Column("entity", String, nullable=True),
    Column("title", Text, nullable=False),
    # The tool's data exactly as returned (one JSON document: written once, read whole).
    Column("data", JSON, nullable=False),
    Column("total_rows", Integer, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    # The owner's results newest first; expiry sweeps by age.
    Index(None, "user", "created_at"),
    Index(None, "created_at"),
)
