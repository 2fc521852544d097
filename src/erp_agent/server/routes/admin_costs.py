"""Admin console: what answers cost (per day, user, organisation or model) and which questions
fail or are declined most often, each also as CSV. Figures are sums over the interaction log,
whose rows carry each turn's tokens and its cost at the price of its day (costs/)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import Response

from erp_agent.costs import report
from erp_agent.costs.prices import PriceTable
from erp_agent.server.routes._deps import Admin, Signed, State

router = APIRouter(prefix="/api/admin", tags=["admin"])
HIDDEN = "(question hidden: shown only to {roles})"


def _period(since: dt.date | None, until: dt.date | None) -> tuple[dt.datetime, dt.datetime]:
    """[since, until] as whole UTC days; default the last 30 days up to today."""
    today = dt.datetime.now(dt.UTC).date()
    last = min(until or today, dt.date.max - dt.timedelta(days=1))
    first = since or dt.date.fromordinal(max(last.toordinal() - 29, 1))
    if first > last:
        raise HTTPException(422, "since must not be after until.")
    start = dt.datetime.combine(first, dt.time(), tzinfo=dt.UTC)
    end = dt.datetime.combine(last + dt.timedelta(days=1), dt.time(), tzinfo=dt.UTC)
    return start, end


async def _costs(
    state: State, group: str, since: dt.date | None, until: dt.date | None
) -> dict[str, Any]:
    if group not in report.GROUPS:
        raise HTTPException(422, f"group must be one of {', '.join(report.GROUPS)}.")
    start, end = _period(since, until)
    rows = await report.log_rows(state.store, start, end)
    prices = PriceTable.from_settings(state.runtime.settings)
    grouped = report.costs(rows, group)
    total = report.CostRow("total")
    for row in rows:
        total.add(row)
    return {
        "group": group,
        "since": start.date().isoformat(),
        "until": (end - dt.timedelta(days=1)).date().isoformat(),
        "currency": prices.currency,
        "rows": [r.as_dict(prices.currency) for r in grouped],
        "total": total.as_dict(prices.currency),
        "prices": {m: p.model_dump() for m, p in prices.prices.items()},
        "note": "Cost = tokens × the price per million tokens of the turn's model on its day "
        "(cache reads and writes at their own prices); unpriced turns count tokens, not cost.",
    }


@router.get(
    "/costs",
    summary="Model cost, tool calls, latency and outcomes per day, user, organisation or model",
)
async def costs(
    _: Admin,
    state: State,
    group: str = Query("day", max_length=10, description="day, user, org or model"),
    since: dt.date | None = None,
    until: dt.date | None = None,
) -> dict[str, Any]:
    return await _costs(state, group, since, until)


@router.get("/costs.csv", summary="The cost view as CSV")
async def costs_csv(
    _: Admin,
    state: State,
    group: str = Query("day", max_length=10),
    since: dt.date | None = None,
    until: dt.date | None = None,
) -> Response:
    found = await _costs(state, group, since, until)
    text = report.to_csv([*found["rows"], found["total"]], report.COST_COLUMNS)
    name = f"erp-agent-costs-by-{group}-{found['since']}-{found['until']}.csv"
    return Response(text, media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})  # fmt: skip


def _may_read(admin: Signed, state: State) -> tuple[bool, str]:
    roles = state.runtime.settings.retention.question_text_roles
    return bool(set(roles) & set(admin.session.roles)), HIDDEN.format(
        roles=", ".join(roles) or "nobody"
    )


async def _failures(
    admin: Signed, state: State, since: dt.date | None, until: dt.date | None, limit: int
) -> dict[str, Any]:
    start, end = _period(since, until)
    rows = await report.log_rows(state.store, start, end, outcomes=report.FAILED_OUTCOMES)
    allowed, hidden = _may_read(admin, state)
    found = [q.as_dict() for q in report.failed_questions(rows, limit)]
    if not allowed:
        for entry in found:
            entry["question"] = hidden
    return {"since": start.date().isoformat(), "until": (end - dt.timedelta(days=1)).date().isoformat(),
            "questions": found}  # fmt: skip


@router.get("/failures", summary="The questions that most often failed or were declined")
async def failures(
    admin: Admin,
    state: State,
    since: dt.date | None = None,
    until: dt.date | None = None,
    limit: int = Query(20, ge=1, le=500),
) -> dict[str, Any]:
    return await _failures(admin, state, since, until, limit)


@router.get("/failures.csv", summary="The failed or declined questions as CSV")
async def failures_csv(
    admin: Admin,
    state: State,
    since: dt.date | None = None,
    until: dt.date | None = None,
    limit: int = Query(100, ge=1, le=5000),
) -> Response:
    found = await _failures(admin, state, since, until, limit)
    text = report.to_csv(found["questions"], report.FAILURE_COLUMNS)
    name = f"erp-agent-failed-questions-{found['since']}-{found['until']}.csv"
    return Response(text, media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})  # fmt: skip
