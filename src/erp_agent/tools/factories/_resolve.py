"""Names resolved as the user means them, before a write is prepared.

"for Safari Electricals", "3 x blue widget", "from the Nairobi store": each link value is tried as
an id first; otherwise it is matched against the linked records' names the user can see (an
exact name, then a name containing it, then a fuzzy match). One clear match replaces the text by
the record's id; several close ones become a choice for the user; none is a clear error. Nothing
is ever created because a name did not match.
"""

from __future__ import annotations

import re
from typing import Any

from rapidfuzz import fuzz, process

from erp_agent.catalog import Entity, EntityKind, FieldType
from erp_agent.connectors.query import Filter, Op
from erp_agent.errors import ErpRefusal, NeedsChoice, ToolInputError
from erp_agent.tools.base import ToolContext

# A clear fuzzy winner scores at least this, and beats the runner-up by the margin.
ACCEPT, MARGIN, CONSIDER = 88.0, 8.0, 75.0
MAX_OPTIONS = 6
SCAN_LIMIT = 2000
# Masters a business knows by their name (two leads or employees may share one; two
# customers may not): a create whose name exists is refused.
NAMED_BY_TITLE = frozenset({"customer", "supplier", "warehouse", "company", "price_list"})
# A field whose target entity is named by another field's value (a Dynamic Link).
_DYNAMIC = {"party": "quotation_to"}


def _target(ctx: ToolContext, entity: Entity, name: str, values: dict[str, Any]) -> Entity | None:
    if name in _DYNAMIC and _DYNAMIC[name] in entity.fields:
        kind = values.get(_DYNAMIC[name])
        return ctx.catalog.entities.get(str(kind)) if kind else None
    field = entity.fields.get(name)
    if field is None or field.type is not FieldType.LINK or not field.target:
        return None
    return ctx.catalog.entities.get(field.target)


def _resolvable(target: Entity | None) -> bool:
    return (
        target is not None and target.kind is EntityKind.MASTER and target.title_field is not None
    )


async def _exists(ctx: ToolContext, target: Entity, record_id: str) -> bool:
    try:
        await ctx.connector.get(ctx.session.credential, target.name, record_id)
    except ErpRefusal as exc:
        if exc.refusal.status == 404:
            return False
        raise
    return True


def _label(record: dict[str, Any], title: str) -> str:
    name, rid = str(record.get(title) or ""), str(record.get("id") or "")
    return name if not name or name == rid else f"{name} ({rid})"


# Words that name a legal form, not a business: "Acme Ltd" is not like "Savanna Trading Ltd".
_FORMS = re.compile(r"\b(ltd|limited|inc|llc|plc|co|company|corp|corporation|group|&|and)\b\.?")


def _plain(value: str) -> str:
    return " ".join(_FORMS.sub(" ", value.casefold()).split())


def _best_matches(text: str, records: list[dict[str, Any]], title: str) -> list[tuple[str, float]]:
    """Record ids by their best fuzzy score against the name or the id, best first."""
    keys, texts = [], []
    for r in records:
        for value in {str(r.get(title) or ""), str(r["id"])} - {""}:
            keys.append(str(r["id"]))
            texts.append(value)
    best: dict[str, float] = {}
    for _, score, index in process.extract(
        text, texts, scorer=fuzz.WRatio, processor=_plain, limit=MAX_OPTIONS * 2
    ):
        best[keys[index]] = max(best.get(keys[index], 0.0), float(score))
    return sorted(best.items(), key=lambda kv: -kv[1])[:MAX_OPTIONS]


async def resolve(ctx: ToolContext, target: Entity, text: str, what: str) -> str:
    """The id of the ``target`` record ``text`` names; NeedsChoice or ToolInputError if unclear."""
    if await _exists(ctx, target, text):
        return text
    title = target.title_field
    assert title is not None
    cred = ctx.session.credential
    containing = await ctx.connector.list(
        cred, target.name, fields=[title.name],
        filters=[Filter(title.name, Op.LIKE, f"%{text}%")], limit=MAX_OPTIONS * 2,
    )  # fmt: skip
    records = containing.records
    exact = [r for r in records if str(r.get(title.name) or "").casefold() == text.casefold()]
    if len(exact) == 1 or len(records) == 1:
        return str((exact or records)[0]["id"])
    if not records:
        page = await ctx.connector.list(cred, target.name, fields=[title.name], limit=SCAN_LIMIT)
        by_id = {str(r["id"]): r for r in page.records}
        scored = _best_matches(text, page.records, title.name)
        if (
            scored
            and scored[0][1] >= ACCEPT
            and (len(scored) == 1 or scored[0][1] - scored[1][1] >= MARGIN)
        ):
            return scored[0][0]
        records = [by_id[key] for key, score in scored if score >= CONSIDER]
    if not records:
        raise ToolInputError(
            f"No {target.label.lower()} you can see matches {text!r} ({what}). "
            f"Check the name, or look it up with {target.name}.list. Nothing was prepared."
        )
    options = [
        {"label": _label(r, title.name), "value": str(r["id"])} for r in records[:MAX_OPTIONS]
    ]
    raise NeedsChoice(f"Which {target.label.lower()} do you mean by {text!r}?", options)


async def resolve_links(ctx: ToolContext, entity: Entity, values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with every name of a linked master (and of each line's) replaced by its id."""
    out = dict(values)
    for name, value in values.items():
        field = entity.fields.get(name)
        if field is not None and field.type is FieldType.TABLE and isinstance(value, list):
            rows = []
            for index, row in enumerate(value):
                row = dict(row) if isinstance(row, dict) else row
                if isinstance(row, dict):
                    for key, cell in list(row.items()):
                        child = field.fields.get(key)
                        target = (
                            ctx.catalog.entities.get(child.target)
                            if child and child.target
                            else None
                        )
                        if (
                            child is not None
                            and child.type is FieldType.LINK
                            and _resolvable(target)
                            and isinstance(cell, str)
                        ):
                            assert target is not None
                            row[key] = await resolve(
                                ctx, target, cell, f"line {index + 1}, {child.label.lower()}"
                            )
                rows.append(row)
            out[name] = rows
            continue
        target = _target(ctx, entity, name, values)
        if _resolvable(target) and isinstance(value, str) and value:
            assert target is not None
            label = field.label.lower() if field is not None else name
            out[name] = await resolve(ctx, target, value, label)
    return out


async def refuse_duplicate(ctx: ToolContext, entity: Entity, values: dict[str, Any]) -> None:
    """A master whose name already exists is never proposed for creation."""
    title = entity.title_field
    if entity.name not in NAMED_BY_TITLE or title is None:
        return
    name = values.get(title.name)
    if not isinstance(name, str) or not name.strip():
        return
    found = await ctx.connector.list(
        ctx.session.credential, entity.name, fields=[title.name],
        filters=[Filter(title.name, Op.LIKE, name.strip())], limit=1,
    )  # fmt: skip
    if found.records:
        existing = found.records[0]
        raise ToolInputError(
            f"{entity.label} {_label(existing, title.name)} already exists; nothing to create. "
            "Use it by its name in the document instead."
        )
