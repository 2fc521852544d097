"""``records.search``: find ERP records by meaning or by number, as fact cards with links.

Cards are indexed with a service credential, so every hit is re-checked against the ERP AS THE
USER before the model sees it: one list call per entity with ``id in [...]`` (one call for a
search of one entity; several entities are asked at once). A record the user may not read, or
one deleted or cancelled since the last sync, is dropped; the card shown is re-rendered from the
fresh record, so its figures are today's. The user's search scope (the companies and branches
the ERP lets them list) is asked once and kept for ``SCOPE_TTL`` seconds per session.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import re
import time
from collections import defaultdict
from typing import Any

from erp_agent.catalog import Catalog
from erp_agent.connectors.query import Filter, Op
from erp_agent.errors import ErpRefusal, ToolInputError
from erp_agent.retrieval.cards import card_fields, is_cancelled, render_card
from erp_agent.retrieval.documents import Document, Hit, Kind, Scope
from erp_agent.retrieval.retriever import Retriever
from erp_agent.tools.base import Args, Effect, Tool, ToolContext
from erp_agent.tools.factories.schemas import obj

MODULE = "records"
DEFAULT_LIMIT = 8
OVERFETCH = 3  # candidates per wanted card: some fail the re-check as the user
SCOPE_TTL = 60.0  # seconds a user's allowed companies/branches are reused

_TOTALS = re.compile(
    r"\b(total|totals|sum|how (much|many)|count|number of|average|avg|mean|revenue|turnover|"
    r"trend|per (month|week|year|quarter|customer|branch)|by (month|week|year|quarter|"
    r"customer|branch)|breakdown)\b",
    re.IGNORECASE,
)

DESCRIPTION = (
    "Find specific ERP records by meaning or by number (an invoice number, 'the order for "
    "Acme's generators', 'overdue invoices of Gulf Traders'). Returns fact cards — one sentence "
    "per record with its party, branch, date, currency, amounts and status — and a link to each. "
    "Only records the user may read are returned. Not for numbers across records: totals, "
    "counts, averages and trends come from metrics.query (not an aggregate of search hits)."
)

PROMPT_RULES = (
    "Quote card figures as written and link each record you mention. Search results are a "
    "sample, not a complete set: never add up, count or average them (metrics.query does)."
)


def totals_hint(query: str, entity: str | None) -> str | None:
    """A pointer to the exact tools when the query asks for a figure across records."""
    if not _TOTALS.search(query):
        return None
    del entity  # the figure tool answers for every kind of record
    return (
        "For totals, counts and averages use metrics.query (the exact figure, with its "
        "definition). Search results are examples, not a complete set: never add them up."
    )


def _date(args: Args, name: str) -> dt.date | None:
    value = args.get(name)
    if not value:
        return None
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        raise ToolInputError(f"{name} must be a date as YYYY-MM-DD, not {value!r}.") from None


async def _allowed(ctx: ToolContext, entity: str) -> frozenset[str] | None:
    """The ids of ``entity`` (branch, company) this user may see, as the ERP answers; None when
    the ERP lists them all or will not say (the re-check still guards every hit)."""
    if entity not in ctx.catalog.entities:
        return None
    try:
        page = await ctx.connector.list(ctx.session.credential, entity, fields=["id"], limit=500)
    except ErpRefusal:
        return None
    if page.has_more:
        return None
    return frozenset(str(r["id"]) for r in page.records)


Allowed = tuple[frozenset[str] | None, frozenset[str] | None]  # (companies, branches)


class ScopeCache:
    """Each session's allowed companies and branches, as the ERP answered, for a short time:
    a conversation's searches then cost no scope look-ups, and a permission change in the ERP
    reaches search within ``ttl`` seconds (the per-hit re-check applies it at once anyway)."""

    def __init__(self, ttl: float = SCOPE_TTL) -> None:
        self.ttl = ttl
        self._entries: dict[tuple[str, str, str], tuple[float, Allowed]] = {}

    async def allowed(self, ctx: ToolContext) -> Allowed:
        session = ctx.session
        key = (session.id, session.user, session.org)
        now = time.monotonic()
        found = self._entries.get(key)
        if found is not None and now - found[0] < self.ttl:
            return found[1]
        companies, branches = await asyncio.gather(
            _allowed(ctx, "company"), _allowed(ctx, "branch")
        )
        self._entries = {k: v for k, v in self._entries.items() if now - v[0] < self.ttl}
        self._entries[key] = (now, (companies, branches))
        return companies, branches


async def user_scope(
    ctx: ToolContext,
    entity: str | None,
    date_from: dt.date | None,
    date_to: dt.date | None,
    *,
    cache: ScopeCache | None = None,
) -> Scope:
    """The search scope of this user: their tenant, and the companies and branches the ERP lets
    them see — applied inside both search legs so the top-k is filled with their records."""
    companies, branches = await (cache or ScopeCache(ttl=0)).allowed(ctx)
    return Scope(
        ctx.session.org,
        kinds=frozenset({Kind.RECORD}),
        companies=companies,
        branches=branches,
        entities=frozenset({entity}) if entity else None,
        date_from=date_from,
        date_to=date_to,
    )


async def recheck(ctx: ToolContext, catalog: Catalog, hits: list[Hit]) -> list[Document]:
    """The hits the user may read now, re-rendered from the fresh records, in hit order."""
    by_entity: dict[str, list[str]] = defaultdict(list)
    for hit in hits:
        if hit.doc.entity in catalog.entities and hit.doc.record_id:
            by_entity[hit.doc.entity].append(hit.doc.record_id)
    fresh: dict[tuple[str, str], Document] = {}

    async def one(entity: str, ids: list[str]) -> None:
        spec = catalog.entity(entity)
        ident = spec.identifier.name
        try:
            page = await ctx.connector.list(
                ctx.session.credential,
                entity,
                fields=card_fields(spec),
                filters=[Filter(ident, Op.IN, ids)],
                limit=len(ids),
            )
        except ErpRefusal:
            return  # the user may not read this entity at all
        for record in page.records:
            if is_cancelled(ctx.connector, entity, record):
                continue
            card = render_card(spec, record, tenant=ctx.session.org, connector=ctx.connector)
            fresh[(entity, str(record[ident]))] = card

    await asyncio.gather(*(one(entity, ids) for entity, ids in by_entity.items()))
    return [
        fresh[(h.doc.entity, h.doc.record_id)]
        for h in hits
        if h.doc.entity and h.doc.record_id and (h.doc.entity, h.doc.record_id) in fresh
    ]


def tools(retriever: Retriever, catalog: Catalog) -> list[Tool]:
    """``records.search`` over the cards in ``retriever``'s index."""
    entities = sorted(catalog.entities)
    scopes = ScopeCache()

    async def run(ctx: ToolContext, args: Args) -> dict[str, Any]:
        query = str(args["query"])
        entity = args.get("entity")
        limit = int(args.get("limit") or DEFAULT_LIMIT)
        dates = _date(args, "date_from"), _date(args, "date_to")
        scope = await user_scope(ctx, entity, *dates, cache=scopes)
        hits = await retriever.asearch(query, scope, limit=limit * OVERFETCH)
        cards = (await recheck(ctx, catalog, hits))[:limit]
        result: dict[str, Any] = {
            "cards": [
                {"entity": c.entity, "id": c.record_id, "card": c.text, "link": c.link}
                for c in cards
            ]
        }
        if not cards:
            result["message"] = "No record you can see matches."
        notes = [totals_hint(query, entity)]
        waiting = await asyncio.to_thread(retriever.keyword_only, ctx.session.org)
        if waiting:
            notes.append(f"Keyword-only for {waiting:,} cards still being embedded.")
        if any(notes):
            result["note"] = " ".join(n for n in notes if n)
        return result

    date = {"type": "string", "format": "date"}
    return [
        Tool(
            name="records.search",
            description=DESCRIPTION,
            parameters=obj(
                {
                    "query": {"type": "string", "minLength": 1, "description": "What to find."},
                    "entity": {
                        "type": "string",
                        "enum": entities,
                        "description": "Only records of this entity.",
                    },
                    "date_from": {**date, "description": "Records dated on or after (YYYY-MM-DD)."},
                    "date_to": {**date, "description": "Records dated on or before (YYYY-MM-DD)."},
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 20,
                        "default": DEFAULT_LIMIT,
                    },
                },
                ["query"],
            ),
            effect=Effect.READ,
            module=MODULE,
            run=run,
            prompt_rules=PROMPT_RULES,
            action="search",
        )
    ]
