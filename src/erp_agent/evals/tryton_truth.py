"""Ground truth on Tryton: a suite's figures in Tryton's own terms (model, native fields, states,
domain), computed at eval time over Tryton's JSON-RPC as the asking user.

Deliberately independent of the agent: a plain JSON-RPC client written here (httpx and
``json``), nothing from the catalog, the metrics, the tryton connector or its maps, so an agent
that adds up the wrong records cannot score itself right. Amounts are added up as ``Decimal``.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from decimal import Decimal
from typing import Any

import httpx

from erp_agent.errors import ConfigError
from erp_agent.evals.spec import Pick, Query, SqlPick, SqlQuery, TrytonQuery
from erp_agent.evals.truth import resolve

_PAGE = 1000


def _decode(obj: dict[str, Any]) -> Any:
    kind = obj.get("__class__")
    if kind == "Decimal":
        return Decimal(obj["decimal"])
    if kind == "date":
        return dt.date(obj["year"], obj["month"], obj["day"])
    return obj


def _encode(value: Any) -> Any:
    if isinstance(value, dt.date):
        return {"__class__": "date", "year": value.year, "month": value.month, "day": value.day}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    return value


class TrytonTruth:
    """Figures asked of the trytond at ``url`` (database ``database``) as each user."""

    def __init__(self, url: str, database: str, password: str, today: dt.date) -> None:
        self.rpc = f"{url.rstrip('/')}/{database}/rpc/"
        self.password = password
        self.today = today
        self._http = httpx.AsyncClient(timeout=60)
        self._sessions: dict[str, tuple[str, dict[str, Any]]] = {}

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _post(self, method: str, params: list[Any], auth: str | None = None) -> Any:
        headers = {"Authorization": auth} if auth else {}
        body = {"id": 1, "method": method, "params": _encode(params)}
        reply = await self._http.post(self.rpc, json=body, headers=headers)
        if reply.status_code != 200:
            raise ConfigError(f"eval truth: Tryton answered HTTP {reply.status_code} to {method}")
        data = json.loads(reply.text, object_hook=_decode)
        if data.get("error"):
            raise ConfigError(f"eval truth: Tryton refused {method}: {data['error']}")
        return data["result"]

    async def _session(self, user: str) -> tuple[str, dict[str, Any]]:
        if user not in self._sessions:
            uid, token, *_ = await self._post(
                "common.db.login", [user, {"password": self.password}, "en"]
            )
            auth = "Session " + base64.b64encode(f"{user}:{uid}:{token}".encode()).decode()
            prefs = await self._post("model.res.user.get_preferences", [True, {}], auth)
            context = {k: v for k, v in prefs.items() if "." not in k and k != "locale"}
            self._sessions[user] = (auth, context)
        return self._sessions[user]

    async def call(self, user: str, method: str, *args: Any, context: dict[str, Any] | None = None) -> Any:  # fmt: skip
        auth, base = await self._session(user)
        return await self._post(f"model.{method}", [*args, {**base, **(context or {})}], auth)

    def _value(self, value: Any, pick: dict[str, Any] | None) -> Any:
        if isinstance(value, list):
            return [self._value(v, pick) for v in value]
        if not isinstance(value, str):
            return value
        resolved = resolve(value, self.today, pick)
        if resolved != value and isinstance(resolved, str):
            return dt.date.fromisoformat(resolved)  # a date token: Tryton compares dates
        return resolved

    async def pick(self, spec: Pick | SqlPick, user: str) -> dict[str, Any] | None:
        raise ConfigError("eval truth: tryton suites do not pick documents yet")

    async def figures(
        self, user: str, q: Query | SqlQuery | TrytonQuery, pick: dict[str, Any] | None
    ) -> list[Any]:
        """Every figure (one per group, the largest ``top`` when given), as the user."""
        if not isinstance(q, TrytonQuery):
            raise ConfigError("eval truth: a tryton suite states its figures in Tryton's terms")
        domain: list[Any] = [self._value(clause, pick) for clause in q.domain]
        if q.state != "any":
            domain.append(["state", "in", list(q.state)])
        context = {k: self._value(v, pick) for k, v in q.context.items()}
        fields = [*q.group_by, *([q.field] if q.field else [])]
        groups: dict[tuple[Any, ...], list[Decimal]] = {}
        offset = 0
        while True:
            rows = await self.call(user, f"{q.model}.search_read", domain, offset, _PAGE,
                                   [["id", "ASC"]], fields or ["id"], context=context)  # fmt: skip
            for row in rows:
                key = tuple(_dotted(row, g) for g in q.group_by)
                amount = row.get(q.field) if q.field else Decimal(1)
                groups.setdefault(key, []).append(Decimal(str(amount or 0)))
            if len(rows) < _PAGE:
                break
            offset += _PAGE
        values: list[Any] = [
            sum(v, Decimal(0)) if q.op == "sum" else len(v) for v in groups.values()
        ]
        if not q.group_by and not values:
            values = [Decimal(0) if q.op == "sum" else 0]
        if q.top:
            values = sorted(values, key=lambda v: -Decimal(str(v)))[: q.top]
        return values


def _dotted(row: dict[str, Any], path: str) -> Any:
    """A dotted field as search_read returns it: ``company.rec_name`` under ``company.``."""
    head, _, rest = path.partition(".")
    if not rest:
        return row.get(head)
    linked = row.get(f"{head}.")
    return linked.get(rest) if isinstance(linked, dict) else None
