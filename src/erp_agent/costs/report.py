"""The admin views over the interaction log: cost per day, user, organisation or model, and the
questions that most often failed or were declined; each also as CSV.

Every figure is a sum over the log's rows in the period (``since`` inclusive, ``until``
exclusive, UTC): the cost of a group is the sum of its turns' stored costs, each of which is
that turn's tokens × its model's price (``prices.py``), so the view and the log always agree.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlalchemy import select

from erp_agent.costs.prices import money
from erp_agent.store.base import Store
from erp_agent.store.records import Interaction
from erp_agent.store.tables import interactions

GroupBy = Literal["day", "user", "org", "model"]
GROUPS: tuple[GroupBy, ...] = ("day", "user", "org", "model")
FAILED_OUTCOMES = ("failed", "refused")  # failed: an error; refused: the policy or the ERP said no
_ALL = 10**7  # rows read for a period from a store without SQL (tests, throwaway sessions)


@dataclass
class CostRow:
    key: str
    turns: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    completion_tokens: int = 0
    cost_micros: int = 0
    unpriced_turns: int = 0  # turns whose model has no price: their tokens are not in the cost
    tool_calls: int = 0
    failed: int = 0
    refused: int = 0
    latency_ms: float = 0.0  # summed; the average is latency_ms / turns

    def add(self, row: Interaction) -> None:
        self.turns += 1
        self.prompt_tokens += row.prompt_tokens
        self.cached_tokens += row.cached_tokens
        self.cache_write_tokens += row.cache_write_tokens
        self.completion_tokens += row.completion_tokens
        if row.cost_micros is None:
            self.unpriced_turns += 1
        else:
            self.cost_micros += row.cost_micros
        self.tool_calls += len(row.tools)
        self.failed += row.outcome == "failed"
        self.refused += row.outcome == "refused"
        self.latency_ms += row.latency_ms

    def as_dict(self, currency: str) -> dict[str, Any]:
        return {
            "key": self.key,
            "turns": self.turns,
            "prompt_tokens": self.prompt_tokens,
            "cached_tokens": self.cached_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "completion_tokens": self.completion_tokens,
            "cost": str(money(self.cost_micros)),
            "cost_micros": self.cost_micros,
            "currency": currency,
            "unpriced_turns": self.unpriced_turns,
            "tool_calls": self.tool_calls,
            "failed": self.failed,
            "refused": self.refused,
            "average_latency_ms": round(self.latency_ms / self.turns, 1) if self.turns else 0.0,
        }


@dataclass
class FailedQuestion:
    question: str  # the latest wording asked
    count: int = 0
    users: set[str] = field(default_factory=set)
    outcomes: dict[str, int] = field(default_factory=dict)
    last_at: dt.datetime | None = None
    last_turn: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "count": self.count,
            "users": len(self.users),
            "outcomes": dict(sorted(self.outcomes.items())),
            "last_at": self.last_at.isoformat() if self.last_at else None,
            "last_turn": self.last_turn,
        }


async def log_rows(
    store: Store, since: dt.datetime, until: dt.datetime, *, outcomes: Sequence[str] = ()
) -> list[Interaction]:
    """The interaction log's rows made in [since, until)."""
    engine = getattr(store, "engine", None)
    if engine is None:
        rows: list[Interaction] = []
        chosen: list[str | None] = [*outcomes] or [None]
        for outcome in chosen:
            rows += await store.interactions(since=since, outcome=outcome, limit=_ALL)
        return [r for r in rows if r.at < until]
    query = select(interactions).where(interactions.c.at >= since, interactions.c.at < until)
    if outcomes:
        query = query.where(interactions.c.outcome.in_(list(outcomes)))
    async with engine.connect() as connection:
        found = (await connection.execute(query)).mappings().all()
    return [Interaction(**{c.name: r[c.name] for c in interactions.columns}) for r in found]


def _key(row: Interaction, group: GroupBy) -> str:
    if group == "day":
        return row.at.astimezone(dt.UTC).date().isoformat()
    value: str = getattr(row, group)
    return value


def costs(rows: Iterable[Interaction], group: GroupBy) -> list[CostRow]:
    """One row per group, days in order, others by cost (highest first)."""
    found: dict[str, CostRow] = {}
    for row in rows:
        key = _key(row, group)
        found.setdefault(key, CostRow(key)).add(row)
    if group == "day":
        return [found[k] for k in sorted(found)]
    return sorted(found.values(), key=lambda r: (-r.cost_micros, -r.turns, r.key))


_SPACE = re.compile(r"\s+")


def normalised(question: str) -> str:
    """The same question however it was spaced, cased or ended ("Stock of nails?" = "stock of
    nails")."""
    return _SPACE.sub(" ", question).strip().rstrip("?.! ").lower()


def failed_questions(rows: Iterable[Interaction], limit: int = 20) -> list[FailedQuestion]:
    """The failed or declined questions, most frequent first."""
    found: dict[str, FailedQuestion] = {}
    for row in sorted(rows, key=lambda r: r.at):
        if row.outcome not in FAILED_OUTCOMES or not row.message.strip():
            continue
        entry = found.setdefault(normalised(row.message), FailedQuestion(row.message))
        entry.count += 1
        entry.users.add(row.user)
        entry.outcomes[row.outcome] = entry.outcomes.get(row.outcome, 0) + 1
        entry.question, entry.last_at, entry.last_turn = row.message, row.at, row.turn_id
    ranked = sorted(
        found.values(),
        key=lambda q: (-q.count, -(q.last_at.timestamp() if q.last_at else 0.0)),
    )
    return ranked[:limit]


def to_csv(records: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(columns), extrasaction="ignore")
    writer.writeheader()
    for record in records:
        writer.writerow(
            {k: (v if not isinstance(v, dict) else "; ".join(f"{a}: {b}" for a, b in v.items()))
             for k, v in record.items()}
        )  # fmt: skip
    return out.getvalue()


COST_COLUMNS = (
    "key", "turns", "prompt_tokens", "cached_tokens", "cache_write_tokens", "completion_tokens",
    "cost", "currency", "unpriced_turns", "tool_calls", "failed", "refused", "average_latency_ms",
)  # fmt: skip
FAILURE_COLUMNS = ("question", "count", "users", "outcomes", "last_at", "last_turn")
