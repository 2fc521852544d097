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
- `today` in a filter is the user's today (or the query's `as_of`); `me` is the signed-in user.
- **Owed** is what is outstanding (`outstanding_amount` of submitted invoices), never the grand
  totals billed; ageing is on the due date, in the Accounts Receivable report's ranges.
- A **balance** (an account's balance) counts everything dated on or before the period's end (or
  `as_of`): a control account's balance is its ledger balance, not the invoices of the period.
  A filter on a group (an account group, a parent cost center) takes the nodes under it.
- **Quantities** are kept per unit of measure, like amounts per currency: never added across
  units.
- Where ERPNext has a report for a figure (gross profit, leave balance), the metric is that
  report's column, the report run as the user once per company.

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

## Periods and comparisons

Defined once (`erp_agent/metrics/periods.py` for `compare_to`, `erp_agent/planner/parse_dates.py`
for the words), and named in every answer. As of Saturday 2026-12-05:

| asked | read as | compared with |
|---|---|---|
| this month vs last month | 2026-12-01 to 2026-12-05 (month to date) | the same days of November (2026-11-01 to 2026-11-05); the whole of November is given beside it |
| this quarter vs last quarter | 2026-10-01 to 2026-12-05 | the same span of Q3 (2026-07-01 to 2026-09-04) |
| this year vs last year, YTD vs last YTD | 2026-01-01 to 2026-12-05 | 2025-01-01 to 2025-12-05 |
| Q3 vs Q2 | 2026-07-01 to 2026-09-30 | 2026-04-01 to 2026-06-30 |
| last quarter vs the same quarter last year | 2026-07-01 to 2026-09-30 | 2025-07-01 to 2025-09-30 |
| September vs August | 2026-09-01 to 2026-09-30 | 2026-08-01 to 2026-08-31 |
| last month vs the month before | 2026-11-01 to 2026-11-30 | 2026-10-01 to 2026-10-31 |
| last 30 days vs the 30 before | 2026-11-05 to 2026-12-05 | 2026-10-05 to 2026-11-04 |
| since the start of last quarter | 2026-07-01 to 2026-12-05 | — |
| last week | the calendar week before this one (2026-11-23 to 2026-11-29, Monday to Sunday) | — |
| the past week, the past month | the days just gone, up to today (2026-11-28 to 2026-12-05; 2026-11-05 to 2026-12-05) | — |
| in the next 2 weeks | 2026-12-05 to 2026-12-19 | — |
| invoices that fall due next week, bills due in the next 14 days | the period is of the due date, not the posting date | — |
| a month named alone ("in March") | the latest such month not after today | — |
| next Monday, this Friday, coming Friday, last Friday | that day of next week (Monday to Sunday), of this week, the first one after today, the latest one before today (2026-12-07; 2026-12-04; 2026-12-11; 2026-12-04) | — |
| 3 days (of leave) starting next Monday | 2026-12-07 to 2026-12-09: working days, Monday to Friday | — |
| 1-30 days overdue, between 31 and 60 days late | an ageing bucket: due 1 to 30 days ago (2026-11-05 to 2026-12-04), 31 to 60 days ago; "more than 60 days" is due before 2026-10-06 | — |
| fiscal year | the ERP's Fiscal Year records when the metric's grain is `fiscal_year`; calendar years otherwise, said in the answer | — |

`compare_to: previous_period` follows the same rules: whole months against as many whole months
before; a month, quarter or year to date against the same days of the one before; any other
span against the same number of days just before it. `compare_period` names the earlier period
outright.
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
            unit = f" ({m.unit})" if m.unit else f" (per `{m.unit_field}`)" if m.unit_field else ""
            out.append(f"- Measure: `{m.measure}`" + unit)
            if m.report is not None:
                out.append(f"- Computed by: the ERP's {catalog.report(m.report.name).label} report")
            if m.also:
                shown = ", ".join(f"{c.label} `{c.measure}`" for c in m.also.values())
                out.append(f"- Each row also: {shown}")
            if m.details:
                out.append(f"- With the latest record's: date, id, {', '.join(m.details)}")
            if m.split_by:
                cuts = ", ".join(f"by {d}: `{n}`" for d, n in m.split_by.items())
                out.append(f"- The same figure cut further comes from: {cuts}")
            out.append(f"- Filters: {', '.join(filters) or 'none'}")
            if m.cumulative:
                out.append(f"- Date: `{m.date_field}`, a balance: on or before the period's end")
            else:
                out.append(
                    f"- Date: `{m.date_field}`" if m.date_field else "- Date: none (as of now)"
                )
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
