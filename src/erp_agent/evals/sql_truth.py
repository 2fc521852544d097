"""Ground truth on a bespoke SQL database: a suite's hand-written statements, run straight on the
database at eval time with an engine of their own.

Deliberately independent of the agent: SQLAlchemy Core ``text()`` statements written in the
suite, bound date tokens, and nothing from the catalog, the metrics, the sql connector or its
mapping, so an agent that adds up the wrong rows cannot score itself right."""

from __future__ import annotations

import asyncio
import datetime as dt
from decimal import Decimal
from typing import Any

import sqlalchemy as sa

from erp_agent.errors import ConfigError
from erp_agent.evals.spec import Pick, Query, SqlEdit, SqlPick, SqlQuery, TrytonQuery
from erp_agent.evals.truth import date_tokens


class SqlTruth:
    """Hand-written statements on the database at ``url`` (its own engine, its own pool)."""

    def __init__(self, url: str, today: dt.date) -> None:
        self.today = today
        try:
            self._engine = sa.create_engine(url)
        except (sa.exc.ArgumentError, ImportError) as exc:
            raise ConfigError(f"eval truth: {url!r} is not a database URL ({exc})") from exc

    async def aclose(self) -> None:
        await asyncio.to_thread(self._engine.dispose)

    def _statement(self, sql: str, pick: dict[str, Any] | None) -> tuple[Any, dict[str, Any]]:
        """The statement with its date tokens bound as dates (each dialect's own date type)
        and ``:pick_COLUMN`` bound to the picked row; only the names it uses."""
        statement = sa.text(sql)
        names = set(statement._bindparams)  # the statement's own :names
        tokens = date_tokens(self.today)
        params: dict[str, Any] = {}
        dates = []
        for name in names:
            if name in tokens:
                params[name] = tokens[name]
                dates.append(sa.bindparam(name, type_=sa.Date))
            elif name == "now":
                params[name] = dt.datetime.now(dt.UTC).replace(tzinfo=None)
                dates.append(sa.bindparam(name, type_=sa.DateTime))
            elif name.startswith("pick_") and pick is not None and name[5:] in pick:
                params[name] = pick[name[5:]]
            else:
                raise ConfigError(f"eval truth: nothing binds :{name} in {sql.strip()[:80]!r}")
        return (statement.bindparams(*dates) if dates else statement), params

    def _rows(self, sql: str, pick: dict[str, Any] | None) -> list[dict[str, Any]]:
        statement, params = self._statement(sql, pick)
        with self._engine.connect() as conn:
            return [dict(row._mapping) for row in conn.execute(statement, params)]

    def _write(self, sql: str, pick: dict[str, Any] | None) -> None:
        statement, params = self._statement(sql, pick)
        with self._engine.begin() as conn:
            conn.execute(statement, params)

    async def pick(self, spec: Pick | SqlPick, user: str) -> dict[str, Any] | None:
        if not isinstance(spec, SqlPick):
            raise ConfigError("eval truth: an sql suite picks its row with a SELECT (sql: ...)")
        rows = await asyncio.to_thread(self._rows, spec.sql, None)
        return rows[0] if rows else None

    async def edit(self, spec: SqlEdit, pick: dict[str, Any] | None) -> None:
        await asyncio.to_thread(self._write, spec.sql, pick)

    async def restore(self, spec: SqlEdit, pick: dict[str, Any] | None) -> None:
        await asyncio.to_thread(self._write, spec.restore, pick)

    async def figures(
        self, user: str, q: Query | SqlQuery | TrytonQuery, pick: dict[str, Any] | None
    ) -> list[Any]:
        """Every value of every row (the first ``top`` rows): numbers as plain numbers, text as
        text. ``user`` is not used: each statement states its own scope."""
        if not isinstance(q, SqlQuery):
            raise ConfigError("eval truth: an sql suite states its figures as SQL (sql: ...)")
        rows = await asyncio.to_thread(self._rows, q.sql, pick)
        if q.top is not None:
            rows = rows[: q.top]
        return [_plain(v) for row in rows for v in row.values() if v is not None]


def _plain(value: Any) -> Any:
    """A database value as the scorer compares it: SQLite's float sums rounded to the cent they
    are stored as, Decimals kept exact, dates as ISO text, everything else as text."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return Decimal(str(round(value, 6)))
    if isinstance(value, int | Decimal):
        return value
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)
