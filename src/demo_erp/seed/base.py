"""Shared state of one seed run: the admin context, the random source and what was created."""

from __future__ import annotations

import datetime as dt
import random
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from demo_erp import documents, records
from demo_erp.context import ADMINISTRATOR, Ctx, Settings, load_roles
from demo_erp.meta import get_meta

T = TypeVar("T")
Doc = dict[str, Any]
_MASK40 = (1 << 40) - 1
_ENTRY_MARGIN = dt.timedelta(hours=1)  # room for the 1 ms steps of one day's writes


@dataclass
class SeedCtx(Ctx):
    """An Administrator context whose clock is set by the seeder.

    ``creation``/``modified`` then follow the document dates (as if entered on the day) and two
    runs with the same seed write identical rows.
    """

    clock: dt.datetime = dt.datetime(2000, 1, 1)
    # Live writes stamp `modified` with the real clock: a seeded record stamped later than the
    # moment of seeding would sit ahead of every edit, and a delta sync watermarked on it would
    # skip those edits. Documents of "today" are therefore entered before this moment.
    not_after: dt.datetime | None = None

    def now(self) -> str:
        self.clock += dt.timedelta(milliseconds=1)
        return self.clock.strftime("%Y-%m-%d %H:%M:%S.%f")


def make_ctx(
    conn: sqlite3.Connection, settings: Settings, not_after: dt.datetime | None = None
) -> SeedCtx:
    roles, user_type = load_roles(conn, ADMINISTRATOR)
    return SeedCtx(
        conn=conn,
        settings=settings,
        user=ADMINISTRATOR,
        roles=roles,
        user_type=user_type,
        not_after=not_after,
    )


@dataclass
class CompanyInfo:
    name: str
    abbr: str
    currency: str
    country: str
    tax_rate: float
    # Rough value of one USD in this currency, to price the shared catalogue.
    fx: float
    branches: list[str] = field(default_factory=list)

    def acc(self, account_name: str) -> str:
        return f"{account_name} - {self.abbr}"


@dataclass
class BranchInfo:
    name: str
    company: str
    territory: str
    city: str
    warehouse: str = ""
    cost_center: str = ""
    # Relative share of the company's business.
    weight: float = 1.0


@dataclass
class Seeder:
    ctx: SeedCtx
    rng: random.Random
    today: dt.date
    start: dt.date
    scale: float
    progress: Callable[[str], None] | None = None
    counts: Counter[str] = field(default_factory=Counter)
    companies: dict[str, CompanyInfo] = field(default_factory=dict)
    branches: dict[str, BranchInfo] = field(default_factory=dict)
    # Filled by the master-data steps and read by the transaction steps.
    data: dict[str, Any] = field(default_factory=dict)
    _hash_seq: int = 0

    @property
    def conn(self) -> sqlite3.Connection:
        return self.ctx.conn

    # ------------------------------------------------------------ helpers

    def say(self, message: str) -> None:
        if self.progress is not None:
            self.progress(message)

    def n(self, base: float, minimum: int = 1) -> int:
        """A volume scaled by the run's ``scale``."""
        return max(minimum, round(base * self.scale))

    def at(self, day: dt.date, hour: int = 9) -> None:
        """Move the clock to a working hour of ``day``: documents look entered on that day."""
        clock = dt.datetime.combine(day, dt.time(hour)) + dt.timedelta(
            minutes=self.rng.randrange(0, 480)
        )
        latest = self.ctx.not_after
        if latest is not None and clock > latest - _ENTRY_MARGIN:
            # Entered earlier that day instead: never stamped after the seeding moment.
            clock = max(dt.datetime.combine(day, dt.time()), latest - _ENTRY_MARGIN)
        self.ctx.clock = clock

    def hash_name(self) -> str:
        """A deterministic stand-in for Frappe's random 10-hex names (a bijection of a counter)."""
        self._hash_seq += 1
        return f"{((self._hash_seq * 0x9E3779B97F) ^ 0x5DEECE66D) & _MASK40:010x}"

    def pick(self, items: Sequence[T]) -> T:
        return items[self.rng.randrange(len(items))]

    def weighted(self, items: Sequence[T], weights: Sequence[float]) -> T:
        return self.rng.choices(items, weights=weights, k=1)[0]

    def days(self, lo: int, hi: int) -> dt.timedelta:
        return dt.timedelta(days=self.rng.randint(lo, hi))

    # ------------------------------------------------------------ writing

    def insert(self, doctype: str, data: Mapping[str, Any], on: dt.date | None = None) -> Doc:
        """Create (and with ``docstatus: 1`` submit) a document through the normal lifecycle."""
        if on is not None:
            self.at(on)
        payload = dict(data)
        meta = get_meta(doctype)
        assert meta is not None, doctype
        if meta.autoname == "hash" and "name" not in payload:
            payload["name"] = self.hash_name()
        for table in meta.table_fields:
            rows = payload.get(table.fieldname)
            if rows:
                payload[table.fieldname] = [
                    {**row, "name": row.get("name") or self.hash_name()} for row in rows
                ]
        doc = documents.insert(self.ctx, doctype, payload, ignore_permissions=True)
        self.counts[doctype] += 1
        return doc

    def set_values(self, doctype: str, name: str, values: Mapping[str, Any]) -> None:
        records.db_set(self.ctx, doctype, name, values)

    def cancel(self, doctype: str, name: str, on: dt.date | None = None) -> None:
        if on is not None:
            self.at(on)
        documents.cancel(self.ctx, doctype, name, ignore_permissions=True)


def month_starts(start: dt.date, today: dt.date) -> list[dt.date]:
    """First day of every month from ``start``'s month to ``today``'s month."""
    out = []
    day = start.replace(day=1)
    while day <= today:
        out.append(day)
        day = (day + dt.timedelta(days=32)).replace(day=1)
    return out


def month_end(day: dt.date) -> dt.date:
    return (day.replace(day=1) + dt.timedelta(days=32)).replace(day=1) - dt.timedelta(days=1)


def workdays(first: dt.date, last: dt.date) -> list[dt.date]:
    out = []
    day = first
    while day <= last:
        if day.weekday() < 5:
            out.append(day)
        day += dt.timedelta(days=1)
    return out


def add_months(day: dt.date, months: int) -> dt.date:
    year, month0 = divmod(day.year * 12 + day.month - 1 + months, 12)
    first = dt.date(year, month0 + 1, 1)
    return first.replace(day=min(day.day, month_end(first).day))


def round2(value: float) -> float:
    return round(value + 1e-9, 2)


def chunks(items: Sequence[T], size: int) -> Iterable[Sequence[T]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
