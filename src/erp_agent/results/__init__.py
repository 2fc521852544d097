"""Tool results kept server-side: the store (owner-only), summaries computed in code for the
model, paging and sorting, and exports (CSV, XLSX, PDF)."""

from __future__ import annotations

from erp_agent.results.store import (
    MemoryResultStore,
    ResultRecord,
    ResultStore,
    StoredResult,
    Table,
    page_of,
    sort_rows,
    tabulate,
)
from erp_agent.results.summary import summarize_report, summarize_rows

__all__ = [
    "MemoryResultStore",
    "ResultRecord",
    "ResultStore",
    "StoredResult",
    "Table",
    "page_of",
    "sort_rows",
    "summarize_report",
    "summarize_rows",
    "tabulate",
]
