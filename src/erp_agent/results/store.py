"""Results too large for the model stay server-side under an id, owned by the user who made
them; the model sees one page and a summary, and pages, sorts or exports by id.

A ``ResultStore`` is a drop-in for the engine's ``MemoryResults`` (``put``/``fetch``/
``fetch_stored``) and satisfies ``tools.base.ResultAccess``; records keep the tool's data
unchanged, so reports stay whole for display and export.
"""

from __future__ import annotations

import datetime as dt
import secrets
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cached_property
from typing import Any, TypedDict

from erp_agent.errors import ToolInputError
from erp_agent.results.summary import columns_of, is_number, summarize_report, summarize_rows

PAGE_SIZE = 20
MAX_PAGE = 200
_ROW_KEYS = ("records", "rows", "result", "table")  # where tool results keep their table


@dataclass(frozen=True)
class Table:
    """A result as a table: rows, their columns, its chart, and everything else it carried."""

    rows: list[dict[str, Any]]
    columns: list[str]
    chart: dict[str, Any] | None
    extra: dict[str, Any]

    @property
    def is_report(self) -> bool:
        return "total_row" in self.extra

    def _report_columns(self) -> list[Mapping[str, Any]]:
        cols = self.extra.get("columns")
        return [c for c in cols if isinstance(c, Mapping)] if isinstance(cols, list) else []

    @property
    def labels(self) -> dict[str, str]:
        """Column headings: a report's own labels; otherwise the column names."""
        named = {
            str(c.get("fieldname")): str(c.get("label") or c.get("fieldname"))
            for c in self._report_columns()
            if c.get("fieldname")
        }
        return {c: named.get(c, c) for c in self.columns}

    @property
    def total(self) -> dict[str, Any] | None:
        """A report's total row as the ERP computed it, by column; None when it has none."""
        values = self.extra.get("total_row")
        cols = self._report_columns()
        if not isinstance(values, list) or not cols:
            return None
        return {str(c.get("fieldname")): v for c, v in zip(cols, values, strict=False) if v != ""}


def tabulate(data: Any) -> Table:
    """The table in what a tool returned: rows, a page of records, a report, an aggregate, an
    analysis (its small table and chart) — or one object as one row."""
    rows: list[dict[str, Any]]
    extra: dict[str, Any] = {}
    chart = None
    if isinstance(data, Sequence) and not isinstance(data, str | bytes):
        rows = [dict(r) if isinstance(r, Mapping) else {"value": r} for r in data]
    elif isinstance(data, Mapping):
        raw_chart = data.get("chart")
        chart = dict(raw_chart) if isinstance(raw_chart, Mapping) else None
        key = next((k for k in _ROW_KEYS if isinstance(data.get(k), list)), None)
        if key is None:
            rows = [{k: v for k, v in data.items() if k != "chart"}]
        else:
            rows = [dict(r) for r in data[key] if isinstance(r, Mapping)]
            extra = {k: v for k, v in data.items() if k not in (key, "chart")}
    else:
        rows = [{"value": data}]
    columns = columns_of(rows)
    declared = extra.get("columns")
    if isinstance(declared, list):
        # A report's column order, not the order keys happen to appear in its rows.
        order = [str(c.get("fieldname")) for c in declared if isinstance(c, Mapping)]
        columns = [c for c in order if c in columns] + [c for c in columns if c not in order]
    return Table(rows, columns, chart, extra)


@dataclass
class ResultRecord:
    """A stored result: the tool's data exactly as returned, and who owns it."""

    id: str
    user: str
    tool: str
    data: Any
    entity: str | None = None
    title: str = ""
    created_at: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))

    @cached_property
    def table(self) -> Table:
        return tabulate(self.data)

    @property
    def rows(self) -> list[dict[str, Any]]:
        return self.table.rows

    @property
    def columns(self) -> list[str]:
        return self.table.columns

    @property
    def chart(self) -> dict[str, Any] | None:
        return self.table.chart

    @property
    def total_rows(self) -> int:
        return len(self.table.rows)


@dataclass
class StoredResult:
    """What the model sees of a stored result."""

    id: str
    summary: dict[str, Any]
    page: list[dict[str, Any]]
    total_rows: int
    columns: list[str]

    def for_model(self) -> dict[str, Any]:
        return {
            "result_id": self.id,
            "total_rows": self.total_rows,
            "columns": self.columns,
            "summary": self.summary,
            "page": self.page,
            "has_more": len(self.page) < self.total_rows,
            "note": "Only this page is shown; the totals in the summary are exact. Page or sort "
            "with results.page; export with results.export.",
        }


def new_result_id() -> str:
    return "res_" + secrets.token_urlsafe(12)


def summarize(table: Table) -> dict[str, Any]:
    return (
        summarize_report({**table.extra, "rows": table.rows})
        if table.is_report
        else (summarize_rows(table.rows))
    )


@dataclass(frozen=True)
class ExportRecord:
    """An exported file of a result: its owner, where it is, when it goes (None: kept)."""

    result_id: str
    format: str
    user: str
    path: str
    name: str
    mime: str
    size: int
    created_at: dt.datetime
    expires_at: dt.datetime | None = None

    def expired(self, now: dt.datetime) -> bool:
        return self.expires_at is not None and self.expires_at <= now


class ResultStore(ABC):
    """Persistence of results and the index of their exports. ``save``/``load``/``forget``
    and the export index are the backend; the rest is shared."""

    @abstractmethod
    async def save(self, record: ResultRecord) -> None: ...

    @abstractmethod
    async def load(self, result_id: str) -> ResultRecord | None: ...

    @abstractmethod
    async def forget(self, *, user: str | None = None, before: dt.datetime | None = None) -> int:
        """Delete the results of ``user`` and/or made before ``before``; how many went."""

    @abstractmethod
    async def add_export(self, export: ExportRecord) -> None:
        """Index an export (replacing the entry of the same result and format)."""

    @abstractmethod
    async def find_export(self, user: str, result_id: str, fmt: str) -> ExportRecord | None:
        """The export of ``result_id`` in ``fmt`` if ``user`` owns it, else None."""

    @abstractmethod
    async def drop_exports(
        self, *, user: str | None = None, expired_at: dt.datetime | None = None
    ) -> list[ExportRecord]:
        """Remove from the index the exports of ``user`` and/or expired at ``expired_at``;
        the entries removed (the caller deletes their files)."""

    async def put(self, user: str, tool: str, data: Any, entity: str | None = None) -> str:
        """Keep ``data`` for ``user``; its id. (The engine's ``MemoryResults`` interface.)"""
        record = ResultRecord(new_result_id(), user, tool, data, entity, title=tool)
        await self.save(record)
        return record.id

    async def fetch_stored(self, result_id: str, user: str) -> ResultRecord | None:
        """The record if ``user`` owns it, else None — whether or not it exists."""
        record = await self.load(result_id)
        return record if record is not None and record.user == user else None

    async def fetch(self, result_id: str, user: str) -> Any | None:
        record = await self.fetch_stored(result_id, user)
        return None if record is None else record.data

    async def store_result(
        self,
        user: str,
        tool: str,
        data: Any,
        *,
        entity: str | None = None,
        page_size: int = PAGE_SIZE,
    ) -> StoredResult:
        """Keep ``data`` under a new id owned by ``user``; its summary and first page."""
        result_id = await self.put(user, tool, data, entity)
        table = tabulate(data)
        return StoredResult(
            result_id, summarize(table), table.rows[:page_size], len(table.rows), table.columns
        )

    async def get(self, user: str, result_id: str) -> ResultRecord:
        """The record, if ``user`` owns it; otherwise one refusal whether or not it exists,
        so the ids of other users' results reveal nothing."""
        record = await self.fetch_stored(result_id, user)
        if record is None:
            raise ToolInputError(f"There is no result {result_id} of yours.")
        return record


class RowsPage(TypedDict):
    """One page of a result's rows (``results.page``, the web app's paging route)."""

    total_rows: int
    start: int
    limit: int
    sort_by: str | None
    descending: bool
    rows: list[dict[str, Any]]  # the stored rows as the tool returned them
    has_more: bool


def page_of(
    table: Table,
    *,
    start: int = 0,
    limit: int = PAGE_SIZE,
    sort_by: str | None = None,
    descending: bool = False,
) -> RowsPage:
    """One page of a result's rows, optionally sorted on a column."""
    rows = sort_rows(table.rows, sort_by, descending=descending, columns=table.columns)
    limit = max(1, min(limit, MAX_PAGE))
    return {
        "total_rows": len(rows),
        "start": start,
        "limit": limit,
        "sort_by": sort_by,
        "descending": descending,
        "rows": rows[start : start + limit],
        "has_more": start + limit < len(rows),
    }


def _sort_key(value: Any) -> tuple[int, Any]:
    # Numbers before text, each ordered within its kind, so a mixed column still sorts.
    if is_number(value):
        return (0, Decimal(str(value)))
    return (1, str(value).casefold())


def sort_rows(
    rows: list[dict[str, Any]],
    sort_by: str | None,
    *,
    descending: bool = False,
    columns: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """Rows sorted on ``sort_by`` (stable); empty values last in either direction."""
    if sort_by is None:
        return rows
    if sort_by not in columns:
        raise ToolInputError(f"cannot sort by {sort_by!r}; columns: {', '.join(columns)}")
    present = [r for r in rows if r.get(sort_by) not in (None, "")]
    empty = [r for r in rows if r.get(sort_by) in (None, "")]
    ordered = sorted(present, key=lambda r: _sort_key(r.get(sort_by)), reverse=descending)
    return ordered + empty


class MemoryResultStore(ResultStore):
    """Results in a dict: for tests and a single process."""

    def __init__(self) -> None:
        self._records: dict[str, ResultRecord] = {}
        self._exports: dict[tuple[str, str], ExportRecord] = {}

    async def save(self, record: ResultRecord) -> None:
        self._records[record.id] = record

    async def load(self, result_id: str) -> ResultRecord | None:
        return self._records.get(result_id)

    async def forget(self, *, user: str | None = None, before: dt.datetime | None = None) -> int:
        gone = [
            k for k, r in self._records.items()
            if (user is None or r.user == user) and (before is None or r.created_at < before)
        ]  # fmt: skip
        for key in gone:
            del self._records[key]
        return len(gone)

    async def add_export(self, export: ExportRecord) -> None:
        self._exports[(export.result_id, export.format)] = export

    async def find_export(self, user: str, result_id: str, fmt: str) -> ExportRecord | None:
        found = self._exports.get((result_id, fmt))
        return found if found is not None and found.user == user else None

    async def drop_exports(
        self, *, user: str | None = None, expired_at: dt.datetime | None = None
    ) -> list[ExportRecord]:
        gone = [
            e for e in self._exports.values()
            if (user is None or e.user == user)
            and (expired_at is None or e.expired(expired_at))
        ]  # fmt: skip
        for export in gone:
            del self._exports[(export.result_id, export.format)]
        return gone
