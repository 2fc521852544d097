"""The records behind the last figure ("list them", "show me those payments"): the metric's
documents, listed as the user with the same period, names and defining filters."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from erp_agent.catalog import load_catalog
from erp_agent.catalog.metrics import Returns, resolve_today
from erp_agent.planner.answer import fmt, is_number, record_line
from erp_agent.planner.context import TurnView
from erp_agent.planner.followup import linked_group
from erp_agent.planner.steps import Call, Step, failed, rows_of, say

_LIMIT = 50  # "list them": every record behind a figure, up to a page a person reads


def behind(view: TurnView, tools: Mapping[str, Any], last: Mapping[str, Any]) -> Step | None:
    """The list call for the records the last metrics.query counted, or None (not a figure)."""
    raw = last.get("args")
    args: Mapping[str, Any] = raw if isinstance(raw, dict) else {}
    catalog = load_catalog()
    tool_name = str(last.get("tool") or "")
    entity_name, _, action = tool_name.rpartition(".")
    metric = None
    if tool_name == "metrics.query":
        metric = catalog.metrics.get(str(args.get("metric")))
        if metric is None or metric.entity not in catalog.entities:
            return None
        entity = catalog.entities[metric.entity]
        filters = _filters(entity, metric, args, view)
        label = metric.label
    elif action in ("aggregate", "count") and entity_name in catalog.entities:
        # The records' own aggregate: its filters are already the list's.
        entity = catalog.entities[entity_name]
        filters = [f for f in args.get("filters") or [] if isinstance(f, dict)]
        label = f"{entity.plural.lower()} counted"
    else:
        return None
    if linked_group(entity, view.request, catalog) is not None:
        return None  # "which customers are they for?": the records per customer, not a list
    tool = f"{entity.name}.list"
    if tool not in tools:
        query = {"query": f"{entity.name.replace('_', ' ')} list"}
        searched = any(r.name == "tools.search" and r.args == query for r in view.results)
        if "tools.search" in tools and not searched:
            return Step(calls=[Call("tools.search", query)])
        return say(f"I can't list {entity.plural.lower()} in this session.")
    if filters is None:
        return say(
            f"I can't list the {entity.plural.lower()} behind that figure with the same "
            "conditions, so I won't show a list that would not add up to it."
        )
    call_args: dict[str, Any] = {"filters": filters, "limit": _LIMIT}
    if entity.date_field and entity.fields[entity.date_field].sortable:
        call_args["order_by"] = [{"field": entity.date_field, "direction": "desc"}]
    listed = next((r for r in view.results if r.name == tool and r.args == call_args), None)
    count_tool = f"{entity.name}.count"
    counted = next((r for r in view.results if r.name == count_tool), None)
    if listed is None:
        calls = [Call(tool, call_args)]
        if count_tool in tools:
            calls.append(Call(count_tool, {"filters": filters}))
        return Step(calls=calls)
    if not listed.ok:
        return failed(listed)
    rows = rows_of(listed)
    if not rows:
        return say(
            f"No records found: no {entity.plural.lower()} behind that figure that you can see."
        )
    total = (
        counted.data.get("count")
        if counted and counted.ok and isinstance(counted.data, dict)
        else None
    )
    head = f"{fmt(total)} {entity.plural.lower()}" if is_number(total) else entity.plural
    lines = [f"- {record_line(entity, row)}" for row in rows]
    more = (
        f"\n(the first {len(lines)} shown)" if isinstance(total, int) and total > len(lines) else ""
    )
    return say(f"{head} behind that figure ({label}):\n" + "\n".join(lines) + more)


def _filters(
    entity: Any, metric: Any, args: Mapping[str, Any], view: TurnView
) -> list[dict[str, Any]] | None:
    """The metric's population in the entity's own fields, or None when some condition can't
    be said as a filter of the list (a link path, a comparison of two fields). "today" in a
    definition is the turn's business date; returns are kept out or in as the metric has them."""
    fields = entity.fields
    out: list[dict[str, Any]] = []
    life = entity.lifecycle  # booked documents only, in the entity's own lifecycle
    if life is not None:
        out.append({"field": life.field, "op": "=", "value": life.booked})
    returns = {Returns.EXCLUDED: 0, Returns.ONLY: 1}.get(metric.returns)
    if returns is not None:
        if "is_return" not in fields:
            return None
        out.append({"field": "is_return", "op": "=", "value": returns})
    for flt in metric.filters:
        if "." in flt.field or str(flt.value).startswith("$") or flt.field not in fields:
            return None
        if life is not None and flt.field == life.field:
            continue
        value = resolve_today(flt.value, view.today, view.user)
        out.append({"field": flt.field, "op": flt.op, "value": value})
    period = args.get("period")
    if isinstance(period, Mapping) and period.get("from") and metric.date_field:
        if metric.date_field not in fields:
            return None
        out.append(
            {"field": metric.date_field, "op": "between", "value": [period["from"], period["to"]]}
        )
    for flt in args.get("filters") or []:
        if not isinstance(flt, Mapping):
            continue
        dim = str(flt.get("dimension"))
        if dim not in fields:
            return None
        out.append({"field": dim, "op": flt.get("op", "="), "value": flt.get("value")})
    return out
