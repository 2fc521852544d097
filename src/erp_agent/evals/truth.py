"""Ground truth: the declarative queries of a suite, run with the connector (as an admin or as
the asking user) at eval time. Independent of the planner: its own date tokens, its own calls."""

from __future__ import annotations

import calendar
import datetime as dt
import re
from decimal import Decimal
from typing import Any

from erp_agent.catalog import Catalog
from erp_agent.connectors.base import Connector
from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.query import AggregateRequest, Func, GroupKey, Measure
from erp_agent.evals.spec import Pick, Query
from erp_agent.tools.factories.filters import parse_filters


def _month_end(day: dt.date) -> dt.date:
    return day.replace(day=calendar.monthrange(day.year, day.month)[1])


def date_tokens(today: dt.date) -> dict[str, dt.date]:
    q_start = dt.date(today.year, 3 * ((today.month - 1) // 3) + 1, 1)
    prev_q_end = q_start - dt.timedelta(days=1)
    prev_q_start = dt.date(prev_q_end.year, 3 * ((prev_q_end.month - 1) // 3) + 1, 1)
    month_start = today.replace(day=1)
    prev_month_end = month_start - dt.timedelta(days=1)
    out = {
        "today": today,
        "year_start": dt.date(today.year, 1, 1),
        "year_end": dt.date(today.year, 12, 31),
        "prev_year_start": dt.date(today.year - 1, 1, 1),
        "prev_year_end": dt.date(today.year - 1, 12, 31),
        "quarter_start": q_start,
        "quarter_end": _month_end(dt.date(q_start.year, q_start.month + 2, 1)),
        "prev_quarter_start": prev_q_start,
        "prev_quarter_end": prev_q_end,
        "month_start": month_start,
        "month_end": _month_end(today),
        "prev_month_start": prev_month_end.replace(day=1),
        "prev_month_end": prev_month_end,
    }
    for q in range(1, 5):
        out[f"q{q}_start"] = dt.date(today.year, 3 * q - 2, 1)
        out[f"q{q}_end"] = _month_end(dt.date(today.year, 3 * q, 1))
    for m in range(1, 13):
        name = calendar.month_name[m].lower()
        year = today.year if m <= today.month else today.year - 1
        out[f"{name}_start"] = dt.date(year, m, 1)
        out[f"{name}_end"] = _month_end(dt.date(year, m, 1))
    return out


_TOKEN = re.compile(r"^\{([a-z0-9_]+)(?:([+-])(\d+))?\}$")


def resolve(value: Any, today: dt.date, pick: dict[str, Any] | None = None) -> Any:
    """Date tokens → ISO dates; ``{pick.field}`` → the picked record's value; lists recursively."""
    if isinstance(value, list):
        return [resolve(v, today, pick) for v in value]
    if not isinstance(value, str):
        return value
    if value.startswith("{pick.") and value.endswith("}") and pick is not None:
        return pick.get(value[6:-1])
    m = _TOKEN.match(value)
    if not m:
        return value
    base = date_tokens(today).get(m.group(1))
    if base is None:
        return value
    days = int(m.group(3) or 0) * (1 if m.group(2) == "+" else -1)
    return (base + dt.timedelta(days=days)).isoformat()


class Truth:
    def __init__(self, connector: Connector, catalog: Catalog, today: dt.date) -> None:
        self.connector = connector
        self.catalog = catalog
        self.today = today

    def _filters(self, entity: str, raw: list[list[Any]], pick: dict[str, Any] | None) -> list[Any]:
        items = [{"field": f, "op": op, "value": resolve(v, self.today, pick)} for f, op, v in raw]
        return parse_filters(self.catalog.entity(entity), items)

    async def pick(self, cred: Credential, spec: Pick) -> dict[str, Any] | None:
        field, _, direction = spec.order_by.partition(" ")
        page = await self.connector.list(
            cred, spec.entity, fields=spec.fields, filters=self._filters(spec.entity, spec.filters, None),
            order_by=[(field, direction or "asc")], start=spec.offset, limit=1,
        )  # fmt: skip
        return dict(page.records[0]) if page.records else None

    async def figures(self, cred: Credential, q: Query, pick: dict[str, Any] | None) -> list[Any]:
        """The expected values: numbers for count/sum/get, id strings for ids."""
        flts = self._filters(q.entity, q.filters, pick)
        if q.op == "get":
            record_id = str(resolve(q.id or "{pick.id}", self.today, pick))
            record = await self.connector.get(cred, q.entity, record_id)
            return [record.get(q.field or "id")]
        if q.op == "ids":
            page = await self.connector.list(cred, q.entity, fields=["id"], filters=flts, limit=200)
            return [r["id"] for r in page.records]
        if q.op == "count" and not q.group_by:
            return [await self.connector.count(cred, q.entity, flts)]
        measure = Measure(Func.SUM, q.field) if q.op == "sum" else Measure(Func.COUNT, None)
        request = AggregateRequest(
            measures=(measure,),
            group_by=tuple(GroupKey(g, None) for g in q.group_by),
            filters=tuple(flts),
        )
        result = await self.connector.aggregate(cred, q.entity, request)
        key = f"sum_{q.field}" if q.op == "sum" else "count_records"
        values = [row.get(key) for row in result.rows if row.get(key) is not None]
        if q.top:
            values = sorted(values, key=lambda v: -Decimal(str(v)))[: q.top]
        return values
