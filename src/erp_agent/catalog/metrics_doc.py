"""docs/metrics.md, generated from the catalog so it lists every metric with its definition.

Regenerate after changing ``data/metrics.yaml``::

    python -m erp_agent.catalog.metrics_doc > docs/metrics.md
"""

from __future__ import annotations

from erp_agent.catalog.catalog import Catalog
from erp_agent.catalog.loader import load_catalog

_INTRO = """\
# Metrics

The semantic layer: every business figure the agent gives comes from one of these definitions,
through `metrics.query` (see [architecture](architecture.md)). Each names its documents, the
filters that define it, what it does with credit notes, the date that places it in time, the
dimensions it may be grouped and filtered by, and its currency rule. Amounts are per currency and
never added across currencies. The definitions live in
`src/erp_agent/catalog/data/metrics.yaml` and are checked at start against the entities and every
connector's maps; this page is generated from them
(`python -m erp_agent.catalog.metrics_doc > docs/metrics.md`).

Rules every metric follows:

- Transactions count **submitted documents only** (docstatus = 1): drafts are not transactions
  yet and cancelled ones never happened. A metric that means drafts (pending leave) says so.
- **Billed** is the grand total including tax; **revenue** is the net total before tax.
- A dimension reached through a link (an order's customer group via its customer) is looked up
  from the linked records as the user and regrouped exactly in code; the answer says so.
- `today` in a filter is the user's today (or the query's `as_of`).

## Using `metrics.query`

```json
{"metric": "revenue", "group_by": ["customer", "month"],
 "filters": [{"dimension": "branch", "op": "=", "value": "Kisumu"}],
 "period": {"from": "2026-04-01", "to": "2026-06-30"},
 "compare_to": "same_period_last_year", "top": 5, "others": true,
 "having": {"op": ">", "value": 10000}}
```

Time grains: `day`, `week` (ISO, from Monday), `month`, `quarter`, `year`, `fiscal_year` (the
ERP's Fiscal Year records); a period may also be `{"fiscal_year": "2026"}`. Period keys in rows
read `2026-03-05`, `2026-W10`, `2026-03`, `2026-Q1`, `2026` and the fiscal year's name. `top` ranks
within each currency; `others` adds an "All others" row (sums and counts only). The result has
`rows`, `columns` (`key`, `label`, `kind`: dimension/period/measure, `currency`), `totals` (one per
currency), `record_count` and `definition` (`text`, `filters`, `period`, `record_count`, `source`).
"""


def _currency(rule: str) -> str:
    if rule == "company":
        return "company currency"
    if rule == "none":
        return "-"
    return f"each document's `{rule}`"


def render(catalog: Catalog) -> str:
    """The whole page."""
    out = [_INTRO, f"{len(catalog.metrics)} metrics, {len(catalog.dimensions)} dimensions.\n"]
    groups: dict[str, list[str]] = {}
    for metric in catalog.metrics.values():
        groups.setdefault(metric.group or "other", []).append(metric.name)
    for group, names in groups.items():
        out.append(f"## {group.capitalize()}\n")
        for name in names:
            m = catalog.metrics[name]
            entity = catalog.entity(m.entity)
            filters = [f"`{f}`" for f in m.filters]
            if m.documents == "submitted" and "docstatus" in entity.fields:
                filters.insert(0, "submitted only (`docstatus = 1`)")
            if m.returns_text:
                filters.append(str(m.returns_text))
            out.append(f"### `{m.name}` — {m.label}\n")
            out.append(" ".join(m.description.split()) + "\n")
            out.append(f"- Documents: {entity.plural} (`{m.entity}`)")
            out.append(f"- Measure: `{m.measure}`" + (f" ({m.unit})" if m.unit else ""))
            out.append(f"- Filters: {', '.join(filters) or 'none'}")
            out.append(f"- Date: `{m.date_field}`" if m.date_field else "- Date: none (as of now)")
            out.append(f"- Dimensions: {', '.join(m.dimensions) or 'none'}")
            out.append(f"- Currency: {_currency(m.currency)}")
            if m.synonyms:
                out.append(f"- Also called: {', '.join(m.synonyms)}")
            out.append("")
    out.append("## Dimensions\n")
    out.append("| dimension | label | reached through |")
    out.append("|---|---|---|")
    for dim in catalog.dimensions.values():
        paths = ", ".join(f"{e}: `{p}`" for e, p in dim.paths.items()) or "a field of that name"
        out.append(f"| `{dim.name}` | {dim.label} | {paths} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(render(load_catalog()), end="")
