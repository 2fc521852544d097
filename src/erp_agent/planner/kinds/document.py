"""Document: one record by its id, its state, amounts and the fields the question names."""

from __future__ import annotations

from erp_agent.planner.answer import fmt, is_number
from erp_agent.planner.steps import Ctx, Step, call, failed, hand_over, missing_tool, say


def handle(ctx: Ctx) -> Step:
    e, doc_id = ctx.req.doc_ids[0]
    name = f"{e.name}.get"
    if not ctx.has(name):
        if ctx.has("records.search"):
            return hand_over("find")
        return missing_tool(ctx, e, "get")
    r = ctx.result(name, {"id": doc_id})
    if r is None:
        return call(name, {"id": doc_id})
    if not r.ok:
        if r.status == "erp_refused":
            return say(
                f"No records found for {e.label} {doc_id} that you can see. The ERP said: {r.message}"
            )
        return failed(r)
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
    return say(f"{e.label} {doc_id}: " + ", ".join(parts) + ".")
