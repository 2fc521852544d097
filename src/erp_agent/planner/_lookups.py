"""One document, its workflow, and search: get by id, the actions open to this user, knowledge
passages with their titles, records found by id or description."""

from __future__ import annotations

import re
from typing import Any

from erp_agent.catalog import Entity
from erp_agent.planner import _fill
from erp_agent.planner.answer import capabilities, fmt, is_number, join
from erp_agent.planner.intents import Kind
from erp_agent.planner.plan import (
    Ctx,
    Step,
    _call,
    _failed,
    _list,
    _missing_tool,
    _rows,
    _text,
)


def earlier_id(ctx: Ctx, e: Entity | None) -> tuple[Entity, str] | None:
    """'this purchase order': the most recent id of that entity earlier in the conversation."""
    for text in reversed(ctx.view.earlier):
        found = ctx.catalog.find_document_ids(ctx.connector, text)
        for entity, doc_id in reversed(found):
            if e is None or entity.name == e.name:
                return entity, doc_id
    return None


def document(ctx: Ctx) -> Step:
    e, doc_id = ctx.req.doc_ids[0]
    name = f"{e.name}.get"
    if not ctx.has(name):
        if ctx.has("records.search"):
            return find(ctx)
        return _missing_tool(ctx, e, "get")
    r = ctx.result(name, {"id": doc_id})
    if r is None:
        return _call(name, {"id": doc_id})
    if not r.ok:
        if r.status == "erp_refused":
            return _text(
                f"No records found for {e.label} {doc_id} that you can see. The ERP said: {r.message}"
            )
        return _failed(r)
    row = r.data if isinstance(r.data, dict) else {}
    parts: list[str] = []
    if e.status_field and row.get(e.status_field):
        parts.append(f"status {row[e.status_field]}")
    if row.get("workflow_state"):
        parts.append(f"workflow state {row['workflow_state']}")
    if e.amount_field and is_number(row.get(e.amount_field)):
        cur = f"{row['currency']} " if row.get("currency") else ""
        parts.append(f"{e.fields[e.amount_field].label.lower()} {cur}{fmt(row[e.amount_field])}")
    if is_number(row.get("outstanding")):
        parts.append(f"outstanding {fmt(row['outstanding'])}")
    for fname in ctx.req.fields_asked:
        value = row.get(fname)
        label = e.fields[fname].label.lower()
        if (
            value is not None
            and not isinstance(value, (list, dict))
            and label not in " ".join(parts)
        ):
            parts.append(f"{label} {fmt(value)}")
    for fname in ("due_date", "customer_name", "supplier_name"):
        if row.get(fname) and fname.replace("_", " ") not in " ".join(parts):
            parts.append(f"{fname.replace('_', ' ')} {row[fname]}")
    return _text(f"{e.label} {doc_id}: " + ", ".join(parts) + ".")


def _workflow_describe(
    ctx: Ctx, e: Entity, doc_id: str | None
) -> tuple[Step | None, dict[str, Any] | None]:
    tool = f"{e.name}.workflow"
    args: dict[str, Any] | None = {"id": doc_id} if doc_id else {}
    if not ctx.has(tool):
        tool = "workflow.describe"
        args = (
            _fill.fill(ctx.tools[tool], {"entity": e.name, "id": doc_id}) if ctx.has(tool) else None
        )
        if args is None:
            return _text(
                f"No approval workflow information about {e.plural.lower()} is available to you."
            ), None
    if args is None:
        return _text("No approval workflow information is available to you."), None
    r = ctx.result(tool, args)
    if r is None:
        return _call(tool, args), None
    if not r.ok:
        return _failed(r), None
    return None, (r.data if isinstance(r.data, dict) else {})


_MINE = re.compile(
    r"\b(waiting for my|awaiting my|pending my|my approvals?|(?:do|must|should|can) i approve|"
    r"for me to approve|need(?:s)? my approval|(?:i|we) (?:need|have|must|should|got) to approve|"
    r"approval queue|pending approval)\b"
)


def pending(ctx: Ctx) -> Step:
    """'What is waiting for my approval?': the ERP's answer, document by document."""
    e = ctx.req.entity
    args: dict[str, Any] = {"entity": e.name} if e is not None else {}
    r = ctx.result("workflow.pending", args)
    if r is None:
        return _call("workflow.pending", args)
    if not r.ok:
        return _failed(r)
    data = r.data if isinstance(r.data, dict) else {}
    docs = [d for d in data.get("documents") or [] if isinstance(d, dict)]
    note = f" {data['message']}" if data.get("message") and docs else ""
    if not docs:
        return _text(str(data.get("message") or "Nothing is waiting for an action of yours."))
    lines = []
    for d in docs:
        label = ctx.catalog.entity(str(d["entity"])).label
        who = d.get("supplier_name") or d.get("customer_name") or d.get("employee_name")
        amount = d.get("total")
        figure = f", {d.get('currency') or ''} {fmt(amount)}".rstrip() if is_number(amount) else ""
        actions = join([str(a) for a in d.get("actions") or []], "or")
        lines.append(f"- {label} {d['id']}" + (f" ({who}{figure})" if who else figure)
                     + f": {d.get('workflow_state')}; you can {actions}")  # fmt: skip
    head = f"{len(docs)} {'documents wait' if len(docs) != 1 else 'document waits'} for an action of yours:"
    return _text(head + "\n" + "\n".join(lines) + note)


def workflow(ctx: Ctx) -> Step:
    req = ctx.req
    found = req.doc_ids[0] if req.doc_ids else earlier_id(ctx, req.entity)
    if found is None and ctx.has("workflow.pending") and _MINE.search(req.text.lower()):
        return pending(ctx)
    if found is None:
        if req.entity is None:
            return _text(
                "Which document do you mean? Give its id (for example a purchase order number) and I'll show its approval state and the actions available to you."
            )
        return _text(
            f"Which {req.entity.label.lower()}? Give its id and I'll show its state and the actions available to you."
        )
    e, doc_id = found
    step, info = _workflow_describe(ctx, e, doc_id)
    if step is not None or info is None:
        return step or _text("")
    if not info.get("states") and info.get("message"):
        return _text(str(info["message"]))
    state = info.get("current_state") or "unknown"
    available = [
        t.get("action") for t in info.get("available_actions") or [] if isinstance(t, dict)
    ]
    text = f"{e.label} {doc_id} is in state {state}. "
    if available:
        text += f"Actions available to you now: {join([str(a) for a in available], 'and')}."
    else:
        text += "No workflow action is available to you on it now."
        nexts = [
            t
            for t in info.get("transitions") or []
            if isinstance(t, dict) and t.get("state") == state
        ]
        if nexts:
            text += (
                " From this state: "
                + "; ".join(
                    f"{t.get('action')} (by {t.get('allowed_role')}) → {t.get('next_state')}"
                    for t in nexts
                )
                + "."
            )
        elif state:
            text += " No transition leaves this state."
    return _text(text)


# ------------------------------------------------------------------ search


def knowledge(ctx: Ctx) -> Step:
    if not ctx.has("knowledge.search"):
        return _text(
            "I can't search the process documentation in this session, so I won't describe the process from memory."
        )
    args = _fill.fill(ctx.tools["knowledge.search"], {"query": ctx.req.text})
    if args is None:
        return _text("I can't search the process documentation in this session.")
    r = ctx.result("knowledge.search", args)
    if r is None:
        return _call("knowledge.search", args)
    if not r.ok:
        return _failed(r)
    hits = _rows(r)
    if not hits:
        return _text(
            "I found nothing about that in the knowledge base, so I can't answer it reliably."
        )
    lines = []
    for hit in hits[:3]:
        title = (
            hit.get("title") or hit.get("source") or hit.get("document") or "a knowledge article"
        )
        snippet = str(hit.get("text") or hit.get("content") or hit.get("snippet") or "").strip()
        lines.append(f"- {title}: {snippet[:400]}")
    return _text("From the knowledge base:\n" + "\n".join(lines))


def find(ctx: Ctx) -> Step:
    query = " ".join(ctx.req.loose_ids) or ctx.req.text
    if not ctx.has("records.search"):
        if ctx.req.entity is not None and ctx.req.kind is Kind.FIND:
            ctx.req.kind = Kind.LIST
            return _list(ctx)
        return _text(
            f"I can't search records in this session. {capabilities(ctx.req.entity, ctx.tools)}"
        )
    slots: dict[str, Any] = {"query": query}
    if ctx.req.entity is not None:
        slots["entity"] = ctx.req.entity.name
    args = _fill.fill(ctx.tools["records.search"], slots) or _fill.fill(
        ctx.tools["records.search"], {"query": query}
    )
    if args is None:
        return _text("I can't search records in this session.")
    r = ctx.result("records.search", args)
    if r is None:
        return _call("records.search", args)
    if not r.ok:
        return _failed(r)
    hits = _rows(r)
    if ctx.req.loose_ids:
        exact = [h for h in hits if str(h.get("id") or h.get("name") or "") in ctx.req.loose_ids]
        if not exact:
            return _text(f"No records found for {join(ctx.req.loose_ids)} that you can see.")
        hits = exact
    if not hits:
        return _text("No records found that match that description and that you can see.")
    lines = []
    for hit in hits[:5]:
        hid = hit.get("id") or hit.get("name")
        text = str(
            hit.get("text") or hit.get("fact_card") or hit.get("snippet") or hit.get("title") or ""
        )
        lines.append(f"- {hid}: {text[:300]}" if text else f"- {hid}")
    return _text("Best matches:\n" + "\n".join(lines))


def unknown(ctx: Ctx) -> Step:
    if ctx.req.loose_ids:
        return find(ctx)
    from erp_agent.planner import nearest, vocabulary

    # Not a refusal: nothing refused anything, the words were simply not understood.
    part = " ".join(vocabulary.unknown_words(ctx.req.text, ctx.catalog)[:6])
    return _text(nearest.not_understood(ctx.req.text, part, ctx.catalog, ctx.tools))
