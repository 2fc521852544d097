"""Results too large for the model stay server-side under an id, owned by the user who made
them; the model sees one page and a summary, and pages, sorts or exports by id."""

from __future__ import annotations

import datetime as dt
import secrets
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from erp_agent.errors import ToolInputError
from erp_agent.results.summary import columns_of, is_number, summarize_report, summarize_rows

PAGE_SIZE = 20
MAX_PAGE = 200


@dataclass
class ResultRecord:
    """A stored result, whole: rows for display and export; report parts kept as the ERP gave."""

    id: str
    user: str
    tool: str
    title: str
    columns: list[str]
    rows: list[dict[str, Any]]
    chart: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # total_row, report_summary, columns…
    created_at: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))

    @property
    def total_rows(self) -> int:
        return len(self.rows)


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
            "note": "Only this page is shown; page with results.page, export with results.export.",
        }


def new_result_id() -> str:
    return "res_" + secrets.token_urlsafe(12)


def _tabulate(data: Any) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any] | None]:
    """(rows, extra, chart) from what a tool returned: rows, a page of records, a report, an
    aggregate, an analysis (its table) — or one object as one row."""
    if isinstance(data, Sequence) and not isinstance(data, str | bytes):
        return [dict(r) if isinstance(r, Mapping) else {"value": r} for r in data], {}, None
    if not isinstance(data, Mapping):
        return [{"value": data}], {}, None
    chart = data.get("chart") if isinstance(data.get("chart"), Mapping) else None
    for key in ("rows", "records", "table"):
        if isinstance(data.get(key), list):
            extra = {k: v for k, v in data.items() if k not in (key, "chart")}
            return [dict(r) for r in data[key] if isinstance(r, Mapping)], extra, chart
    return [dict(data)], {}, None


def is_report(record: ResultRecord) -> bool:
    return "total_row" in record.extra or "report" in record.extra


class ResultStore(ABC):
    """Persistence of results. ``save``/``load`` are the backend; the rest is shared."""

    @abstractmethod
    async def save(self, record: ResultRecord) -> None: ...

    @abstractmethod
    async def load(self, result_id: str) -> ResultRecord | None: ...

    async def store_result(
        self,
        user: str,
        tool: str,
        data: Any,
        *,
        title: str | None = None,
        page_size: int = PAGE_SIZE,
    ) -> StoredResult:
        """Keep ``data`` under a new id owned by ``user``; return its summary and first page."""
        rows, extra, chart = _tabulate(data)
        record = ResultRecord(
            id=new_result_id(),
            user=user,
            tool=tool,
            title=title or tool,
            columns=columns_of(rows),
            rows=rows,
            chart=dict(chart) if chart else None,
            extra=extra,
        )
        await self.save(record)
        summary = (
            summarize_report({**extra, "rows": rows}) if is_report(record) else summarize_rows(rows)
        )
        return StoredResult(record.id, summary, rows[:page_size], len(rows), record.columns)

    async def get(self, user: str, result_id: str) -> ResultRecord:
        """The result, if ``user`` owns it; otherwise the same refusal whether or not it exists,
        so ids of other users' results reveal nothing."""
        record = await self.load(result_id)
        if record is None or record.user != user:
            raise ToolInputError(f"There is no result {result_id} of yours.")
        return record

    async def page(
        self,
        user: str,
        result_id: str,
        *,
        start: int = 0,
        limit: int = PAGE_SIZE,
        sort_by: str | None = None,
        descending: bool = False,
    ) -> dict[str, Any]:
        record = await self.get(user, result_id)
        rows = sort_rows(record.rows, sort_by, descending=descending, columns=record.columns)
        limit = max(1, min(limit, MAX_PAGE))
        return {
            "result_id": record.id,
            "total_rows": record.total_rows,
            "start": start,
            "limit": limit,
            "sort_by": sort_by,
            "descending": descending,
            "rows": rows[start : start + limit],
            "has_more": start + limit < record.total_rows,
        }


def _sort_key(value: Any) -> tuple[int, Any]:
    # Numbers before text before empty, each ordered within its kind, so mixed columns sort.
    if value is None or value == "":
        return (2, "")
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
    if sort_by is None:
        return rows
    if sort_by not in columns:
        raise ToolInputError(f"cannot sort by {sort_by!r}; columns: {', '.join(columns)}")
    present = [r for r in rows if r.get(sort_by) not in (None, "")]
    empty = [r for r in rows if r.get(sort_by) in (None, "")]
    ordered = sorted(present, key=lambda r: _sort_key(r.get(sort_by)), reverse=descending)
    return ordered + empty  # empty values last either way


class MemoryResultStore(ResultStore):
    """Results in a dict: for tests and single-process use."""

    def __init__(self) -> None:
        self._records: dict[str, ResultRecord] = {}

    async def save(self, record: ResultRecord) -> None:
        self._records[record.id] = record

    async def load(self, result_id: str) -> ResultRecord | None:
        return self._records.get(result_id)
