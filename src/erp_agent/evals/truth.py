"""Ground truth: a suite's expected figures, computed at eval time straight from the ERP's REST
API as the admin or the asking user, in the ERP's own terms (doctype, native fields, docstatus).

Deliberately independent of the agent: plain httpx calls to ``frappe.client.get_list`` (with
aggregate fields) and ``/api/resource``, its own date tokens, and nothing from the catalog, the
metrics, the connector or the tools, so an agent that adds up the wrong documents cannot score
itself right."""

from __future__ import annotations

import asyncio
import calendar
import datetime as dt
import json
import re
from decimal import Decimal
from typing import Any

import httpx

from erp_agent.errors import ConfigError
from erp_agent.evals.spec import Pick, Query, SqlPick, SqlQuery, TrytonQuery


def _month_end(day: dt.date) -> dt.date:
    return day.replace(day=calendar.monthrange(day.year, day.month)[1])


def _months_back(day: dt.date, months: int) -> dt.date:
    """The same day ``months`` earlier, clamped to that month's last day (31 Mar → 28 Feb)."""
    index = day.year * 12 + day.month - 1 - months
    year, month = divmod(index, 12)
    return dt.date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


def _quarter_start(day: dt.date) -> dt.date:
    return dt.date(day.year, 3 * ((day.month - 1) // 3) + 1, 1)


def _quarter_end(start: dt.date) -> dt.date:
    return _month_end(dt.date(start.year, start.month + 2, 1))


def date_tokens(today: dt.date) -> dict[str, dt.date]:
    """Every date token a suite may use, as of ``today`` (docs/evals.md lists them)."""
    q_start = _quarter_start(today)
    prev_q_start = _quarter_start(q_start - dt.timedelta(days=1))
    q_before_last = _quarter_start(prev_q_start - dt.timedelta(days=1))
    month_start = today.replace(day=1)
    prev_month_end = month_start - dt.timedelta(days=1)
    before_last_end = prev_month_end.replace(day=1) - dt.timedelta(days=1)
    out = {
        "today": today,
        "year_start": dt.date(today.year, 1, 1),
        "year_end": dt.date(today.year, 12, 31),
        "prev_year_start": dt.date(today.year - 1, 1, 1),
        "prev_year_end": dt.date(today.year - 1, 12, 31),
        "quarter_start": q_start,
        "quarter_end": _quarter_end(q_start),
        "prev_quarter_start": prev_q_start,
        "prev_quarter_end": q_start - dt.timedelta(days=1),
        "quarter_before_last_start": q_before_last,
        "quarter_before_last_end": prev_q_start - dt.timedelta(days=1),
        "month_start": month_start,
        "month_end": _month_end(today),
        "prev_month_start": prev_month_end.replace(day=1),
        "prev_month_end": prev_month_end,
        "month_before_last_start": before_last_end.replace(day=1),
        "month_before_last_end": before_last_end,
        # The same point of the previous period, for "so far" comparisons: this month up to
        # today against the previous month up to the same day (clamped to its last day).
        "prev_month_same_day": _months_back(today, 1),
        "prev_quarter_same_day": _months_back(today, 3),
        "prev_year_same_day": _months_back(today, 12),
    }
    for q in range(1, 5):
        # A quarter named alone is its latest one begun ("Q3" in January is last year's), as
        # a month's name is below; "Q3 last year" is the previous calendar year's.
        latest = today.year if 3 * q - 2 <= today.month else today.year - 1
        for year, prefix in ((latest, ""), (today.year - 1, "prev_year_")):
            start = dt.date(year, 3 * q - 2, 1)
            out[f"{prefix}q{q}_start"] = start
            out[f"{prefix}q{q}_end"] = _quarter_end(start)
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


_V16_AGGREGATES = "SQL functions are not allowed"


class ErpTruth:
    """REST calls as one user or another (password login, one cookie session per user)."""

    def __init__(
        self, base_url: str, password: str, today: dt.date, *, timeout: float = 60.0
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.password = password
        self.today = today
        self.timeout = timeout
        self._clients: dict[str, httpx.AsyncClient] = {}
        self._signing_in = asyncio.Lock()  # cases run concurrently: one sign-in per user
        self._dict_aggregates = False  # Frappe v16 rejects "sum(x) as y" strings

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()

    async def _client(self, user: str) -> httpx.AsyncClient:
        if user in self._clients:
            return self._clients[user]
        async with self._signing_in:
            if user not in self._clients:
                client = httpx.AsyncClient(base_url=self.base_url, timeout=self.timeout)
                reply = await client.post(
                    "/api/method/login", data={"usr": user, "pwd": self.password}
                )
                if reply.status_code != 200:
                    await client.aclose()
                    raise ConfigError(
                        f"eval truth: {user} cannot sign in to the ERP ({reply.status_code})"
                    )
                self._clients[user] = client
        return self._clients[user]

    async def _method(self, user: str, method: str, params: dict[str, Any]) -> Any:
        client = await self._client(user)
        encoded = {k: v if isinstance(v, str | int) else json.dumps(v) for k, v in params.items()}
        reply = await client.post(f"/api/method/{method}", data=encoded)
        if reply.status_code != 200:
            raise _RestError(reply.status_code, reply.text[:300])
        return reply.json().get("message")

    async def get_list(
        self, user: str, doctype: str, fields: list[Any], filters: list[list[Any]], *,
        group_by: list[str] | None = None, order_by: str | None = None, start: int = 0,
        limit: int = 0,
    ) -> list[dict[str, Any]]:  # fmt: skip
        params: dict[str, Any] = {
            "doctype": doctype, "fields": fields, "filters": filters, "limit_start": start,
            "limit_page_length": limit,
        }  # fmt: skip
        if group_by:
            params["group_by"] = ", ".join(group_by)
        if order_by:
            params["order_by"] = order_by
        rows = await self._method(user, "frappe.client.get_list", params)
        return list(rows or [])

    async def _aggregate(
        self, user: str, doctype: str, func: str, field: str, group_by: list[str],
        filters: list[list[Any]],
    ) -> list[dict[str, Any]]:  # fmt: skip
        for dict_syntax in (self._dict_aggregates, not self._dict_aggregates):
            measure: Any = (
                {func.upper(): field if func != "count" else "*", "as": "value"}
                if dict_syntax
                else f"{func}({field}) as value"
            )
            try:
                rows = await self.get_list(user, doctype, [*group_by, measure], filters,
                                           group_by=group_by)  # fmt: skip
            except _RestError as exc:
                if _V16_AGGREGATES in exc.body and not dict_syntax:
                    continue
                raise
            self._dict_aggregates = dict_syntax
            return rows
        raise ConfigError(f"eval truth: the ERP accepts no aggregate over {doctype}")

    async def pick(self, spec: Pick | SqlPick, user: str) -> dict[str, Any] | None:
        if not isinstance(spec, Pick):
            raise ConfigError("eval truth: an erpnext suite picks its document over REST")
        fields = list(dict.fromkeys(["name", *spec.fields]))
        filters = [[f, op, resolve(v, self.today)] for f, op, v in spec.filters]
        rows = await self.get_list(user, spec.doctype, fields, filters, order_by=spec.order_by,
                                   start=spec.offset, limit=1)  # fmt: skip
        return dict(rows[0]) if rows else None

    async def document(self, user: str, doctype: str, name: str) -> dict[str, Any]:
        client = await self._client(user)
        reply = await client.get(f"/api/resource/{doctype}/{name}")
        if reply.status_code != 200:
            raise _RestError(reply.status_code, reply.text[:300])
        data: dict[str, Any] = reply.json()["data"]
        return data

    async def set_value(self, user: str, doctype: str, name: str, field: str, value: Any) -> None:
        await self._method(user, "frappe.client.set_value",
                           {"doctype": doctype, "name": name, "fieldname": field, "value": value})  # fmt: skip

    async def figures(
        self, user: str, q: Query | SqlQuery | TrytonQuery, pick: dict[str, Any] | None
    ) -> list[Any]:
        """The expected values: numbers for count/sum/value, document names for names."""
        if not isinstance(q, Query):
            raise ConfigError("eval truth: an erpnext suite states its figures in ERP terms")
        if q.op == "value":
            name = str(resolve(q.name or "{pick.name}", self.today, pick))
            return [(await self.document(user, q.doctype, name)).get(q.field or "name")]
        filters = [[f, op, resolve(v, self.today, pick)] for f, op, v in q.filters]
        if q.docstatus is not None and q.docstatus != "any":
            status = q.docstatus
            filters.append(["docstatus", "in" if isinstance(status, list) else "=", status])
        if q.op == "names":
            rows = await self.get_list(user, q.doctype, ["name"], filters, limit=200)
            return [r["name"] for r in rows]
        func, field = ("sum", q.field or "") if q.op == "sum" else ("count", "name")
        rows = await self._aggregate(user, q.doctype, func, field, q.group_by, filters)
        values = [row["value"] for row in rows if row.get("value") is not None]
        if q.top:
            values = sorted(values, key=lambda v: -Decimal(str(v)))[: q.top]
        return values


class _RestError(Exception):
    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"HTTP {status}: {body}")
        self.status, self.body = status, body
