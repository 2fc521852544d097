"""Total: a sum over the records the request describes, per currency (never added across),
per group or as a top-N, from the ERP's own aggregate."""

from __future__ import annotations

from erp_agent.planner.answer import capabilities, fmt
from erp_agent.planner.direction import direction_field
from erp_agent.planner.filters import all_filters
from erp_agent.planner.steps import (
    Ctx,
    Step,
    call,
    counted_line,
    described,
    display,
    failed,
    group_keys,
    group_label,
    hand_over,
    measure_field,
    missing_tool,
    names_said,
    rows_of,
    say,
)


def handle(ctx: Ctx) -> Step:
    e = ctx.req.entity
    assert e is not None
    name = f"{e.name}.aggregate"
    measure = measure_field(ctx, e)
    if measure is None and ctx.req.top:
        # "Our biggest expense account": a ranking by an amount these records do not carry; a
        # count of them would answer another question.
        return say(
            f"I can't tell what to rank {e.plural.lower()} by: they carry no amount. "
            f"{capabilities(e, ctx.tools)}"
        )
    if not ctx.has(name) or measure is None:
        return (
            hand_over("count")
            if ctx.has(f"{e.name}.count") and measure is None
            else missing_tool(ctx, e, "aggregate")
        )
    flts, step = all_filters(ctx, e)
    if step:
        return step
    keys = group_keys(ctx, e)
    if ctx.req.top and not keys:
        return say(f"I can't tell what to rank {e.plural.lower()} by. {capabilities(e, ctx.tools)}")
    currency = "currency" in e.fields and e.fields["currency"].groupable and not ctx.view.company
    # Amounts in different currencies are never added together: split every total by currency.
    group = ([{"field": "currency"}] if currency else []) + keys
    way = direction_field(e)
    if way is not None and way not in ctx.req.enum_filters and all(k["field"] != way for k in keys):
        # Money in and money out are never added together either: the sentence did not say
        # which, so each is its own figure.
        keys = [*keys, {"field": way}]
        group.append({"field": way})
    args = {
        "measures": [{"func": "sum", "field": measure}, {"func": "count"}],
        "group_by": group,
        "filters": flts,
    }
    r = ctx.result(name, args)
    if r is None:
        return call(name, args)
    if not r.ok:
        return failed(r)
    rows = rows_of(r)
    sum_key = f"sum_{measure}"
    label = e.fields[measure].label.lower()
    desc = described(ctx, names_said(ctx))
    if not rows or all(not row.get("count_records") for row in rows):
        return say(f"No records found: there are no {e.plural.lower()}{desc} that you can see.")
    if not keys:
        parts = [
            f"{row.get('currency') or ''} {fmt(row.get(sum_key))} over {fmt(row.get('count_records'))} {e.plural.lower()}".strip()
            for row in rows
        ]
        what = "Total" if label == "total" else f"Total {label}"
        return say(
            f"{what} of {e.plural.lower()}{desc}: " + "; ".join(parts) + "." + counted_line(r)
        )
    key = keys[-1]["field"]
    group_cols = [k for k in rows[0] if k not in (sum_key, "count_records", "currency")]
    label_key = group_cols[-1] if group_cols else key
    chart = "line" if ctx.req.date_part else "bar"
    wants_chart = ctx.req.chart or bool(ctx.req.top)
    shown = display(
        ctx,
        r,
        chart=chart if wants_chart else None,
        label=label_key,
        values=[sum_key],
        title=f"{label.title()} by {ctx.req.date_part or key.replace('_', ' ')}",
        top=ctx.req.top,
    )
    if shown:
        return shown
    ordered = sorted(rows, key=lambda row: -(row.get(sum_key) or 0)) if ctx.req.top else rows
    picked = ordered[: ctx.req.top] if ctx.req.top else ordered[:12]
    lines = [
        f"- {group_label(row, group_cols, ctx.req.date_part)}: {row.get('currency') or ''} "
        f"{fmt(row.get(sum_key))} ({fmt(row.get('count_records'))} {e.plural.lower()})".replace(
            ": ", ": ", 1
        ).replace("  ", " ")
        for row in picked
    ]
    head = (
        f"Top {ctx.req.top} by {label}"
        if ctx.req.top
        else f"{label.capitalize()} by {key.replace('_', ' ')}"
    )
    if ctx.req.date_part:
        head = f"{label.capitalize()} by {ctx.req.date_part}"
    more = "\n(the rest are in the table)" if len(rows) > len(picked) and not ctx.req.top else ""
    return say(f"{head} of {e.plural.lower()}{desc}:\n" + "\n".join(lines) + more)
