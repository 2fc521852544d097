"""results.drill: the documents behind one figure of a stored metrics.query result, listed as
the user with the figure's own filters, period and scope (``erp_agent.metrics.drill``).

A reference names the stored result and the figure (``res_….r3``: row 3; ``res_….t0``: the
first total; ``res_….p3``: row 3's earlier period). It opens only for the user who owns the
result, and only for ``DRILL_DAYS`` after the figure was computed; anything else is refused in
plain words. The web app, the CLI (``erp-agent drill``), the API (``GET /api/drill/{ref}``) and
the links MCP and the OpenAI-compatible API show all run this tool through the gateway.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from erp_agent.catalog import Catalog
from erp_agent.errors import ToolInputError
from erp_agent.metrics.compute import MetricComputer
from erp_agent.metrics.drill import drill, parse_ref
from erp_agent.results.store import ResultStore
from erp_agent.tools.base import Args, Effect, ReadHandler, Shape, Tool, ToolContext
from erp_agent.tools.factories.schemas import obj
from erp_agent.tools.modules import _fetch

DRILL_DAYS = 7  # how long after a figure was computed its documents can be opened
NAME = "results.drill"
# How the two refusals a reference can get begin (the API answers them 404 and 410).
NOT_YOURS = "There is no result"
EXPIRED = "This drill-down reference expired"


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def handler(catalog: Catalog, clock: Any = _utcnow) -> ReadHandler:
    async def run(ctx: ToolContext, args: Args) -> dict[str, Any]:
        target = parse_ref(str(args.get("ref") or ""))
        if ctx.results is None:
            raise ToolInputError("Results are not kept in this session; no figure can be opened.")
        created: dt.datetime | None = None
        if isinstance(ctx.results, ResultStore):
            record = await ctx.results.fetch_stored(target.result_id, ctx.session.user)
            data = record.data if record is not None else None
            created = record.created_at if record is not None else None
        else:
            data = await ctx.results.fetch(target.result_id, ctx.session.user)
        if data is None:
            # The same words whether the result is another user's or does not exist.
            raise ToolInputError(
                f"{NOT_YOURS} {target.result_id} of yours: this drill-down reference "
                "cannot be opened. A figure opens only for the person it was computed for."
            )
        if created is not None:
            if created.tzinfo is None:
                created = created.replace(tzinfo=dt.UTC)
            until = created + dt.timedelta(days=DRILL_DAYS)
            if clock() >= until:
                raise ToolInputError(
                    f"{EXPIRED} on {until:%Y-%m-%d %H:%M} UTC: a "
                    f"figure's documents can be opened for {DRILL_DAYS} days after it was "
                    "computed. Ask the question again for figures you can open."
                )
        if not isinstance(data, dict):
            raise ToolInputError(f"Result {target.result_id} holds no figures to open.")
        spec = data.get("drill")
        # "today" in the figure's filters (overdue, not yet due) is the day it was computed on.
        as_of = spec.get("as_of") if isinstance(spec, dict) else None
        today = dt.date.fromisoformat(str(as_of)) if as_of else _fetch.today(ctx)
        computer = MetricComputer(ctx, catalog, today)
        opened = await drill(computer, catalog, data, target)
        return {"ref": target.ref, **opened}

    return run


def tools(catalog: Catalog) -> list[Tool]:
    return [
        Tool(
            name=NAME,
            description=(
                "The documents behind one figure of a metrics.query result, listed as the user "
                "with the figure's own filters and period: their count is the figure's record "
                "count and their shares add up to the figure. `ref` is '<result_id>.r<row>' "
                "(a row, counted from 0), '<result_id>.t<n>' (a total) or '<result_id>.p<row>' "
                "(a row's earlier period). Use for 'which invoices make up this?'."
            ),
            parameters=obj(
                {"ref": {"type": "string", "maxLength": 200, "description": "e.g. res_abc.r0"}},
                ["ref"],
            ),
            effect=Effect.READ,
            module="results",
            run=handler(catalog),
            action="drill",
            shape=Shape.ROWS,
        )
    ]
