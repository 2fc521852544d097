"""Questions the planner can answer, built from the catalog and the tools offered, and the
ones nearest to a message it did not understand (rapidfuzz over their words)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rapidfuzz import fuzz, process

from erp_agent.catalog import Catalog
from erp_agent.planner.answer import join


def answerable(catalog: Catalog, tools: Mapping[str, Any]) -> list[str]:
    """One or two example questions per entity, report and metric this session can answer."""
    out: list[str] = []
    metrics: dict[str, Any] = getattr(catalog, "metrics", None) or {}
    if "metrics.query" in tools:
        for metric in metrics.values():
            label = str(getattr(metric, "label", "") or getattr(metric, "name", ""))
            if getattr(metric, "date_field", None):
                out.append(f"{label} by month this year")
                continue
            # A figure as of now (a balance, a rate) has no months: by what it is kept per.
            cuts = [d for d in getattr(metric, "dimensions", ()) if d != "company"]
            out.append(f"{label} by {cuts[0].replace('_', ' ')}" if cuts else label)
    for e in catalog.entities.values():
        plural = e.plural.lower()
        if f"{e.name}.aggregate" in tools and e.amount_field and e.date_field:
            out.append(f"Total {plural} by month this year")
        if f"{e.name}.count" in tools:
            status = e.fields[e.status_field].values[0] if e.status_field else ""
            out.append(f"How many {status.lower() + ' ' if status else ''}{plural} are there?")
        elif f"{e.name}.list" in tools:
            out.append(f"List {plural}")
    for r in catalog.reports.values():
        if f"report.{r.name}" in tools:
            out.append(f"Show the {r.label}")
    if "knowledge.search" in tools:
        out.append("How does a quotation become a sales order?")
    # An example with a number in it ("Receivables 31-60 days …") would read as a figure the
    # answer states without any tool having given it.
    return [q for q in dict.fromkeys(out) if not any(c.isdigit() for c in q)]


def nearest(text: str, catalog: Catalog, tools: Mapping[str, Any], n: int = 3) -> list[str]:
    options = answerable(catalog, tools)
    found = process.extract(text, options, scorer=fuzz.token_set_ratio, limit=n)
    return [str(f[0]) for f in found]


def examples(catalog: Catalog, tools: Mapping[str, Any], n: int = 3) -> str:
    picked = answerable(catalog, tools)[:n]
    return join([f"“{q}”" for q in picked], "or") if picked else "a question about your records"


def not_understood(text: str, part: str, catalog: Catalog, tools: Mapping[str, Any]) -> str:
    """'I didn't understand …' with the nearest questions this session can answer."""
    close = nearest(text, catalog, tools)
    said = part.strip() or text.strip()
    tail = (" Questions I can answer that come close: " + join([f"“{q}”" for q in close], "or")
            + ".") if close else ""  # fmt: skip
    return (
        f"I didn't understand “{said[:120]}” as a question about your ERP data, so I can't "
        f"answer it and won't guess.{tail}"
    )
