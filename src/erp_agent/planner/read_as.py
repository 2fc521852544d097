"""How the planner read a question, in one line the answer begins with ("Read as: revenue
(net of tax) by branch, 2026-07-01 to 2026-09-30, branch Kisumu; ignored: board pack"), so a
wrong reading shows and one word fixes it. Built from the tool calls the answer was computed
from (what was actually asked of the ERP), and the words the reading left out."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from erp_agent.catalog import Catalog
from erp_agent.engine.response import READ_AS
from erp_agent.planner import vocabulary
from erp_agent.planner.answer import join
from erp_agent.planner.context import Result
from erp_agent.planner.reading import Request

# Tools whose answer is data read for the question (not display, search or housekeeping).
_DATA_SUFFIXES = (".list", ".aggregate", ".count", ".get")


# Answers that say a part of the question was not found or may not be seen: no reading of a
# figure to show.
_DECLINES = ("No records found: I couldn't find", "You can't", "I can't", "I didn't understand",
             "Which ", "I've prepared", "To prepare", "To run")  # fmt: skip


def line(
    req: Request, results: list[Result], catalog: Catalog, company: str | None, answer: str = ""
) -> str | None:
    """The reading, or None when no data was read (a decline, a question back, a process)."""
    if answer.startswith(_DECLINES):
        return None
    source = _source(results)
    if source is None:
        return None
    name, args = source.name, source.args
    figures = {str(r.args.get("metric")): r for r in results if r.ok and r.name == "metrics.query"}
    if len(figures) > 1 and not any("compare_period" in r.args for r in figures.values()):
        # Figures side by side: each with what it was asked for.
        parts = [" ".join(_metric(catalog, r, r.args)) for r in figures.values()]
        parts = [" and ".join(parts)]
    elif name == "metrics.query":
        parts = _metric(catalog, source, args)
    elif name.startswith("report."):
        report = catalog.reports.get(name.removeprefix("report."))
        parts = [f"the {report.label if report else name} report", *_report_args(args)]
    elif name.startswith("analytics."):
        data = source.data if isinstance(source.data, Mapping) else {}
        analysed = catalog.entities.get(str(data.get("entity") or args.get("entity") or ""))
        of = f" of {analysed.plural.lower()}" if analysed is not None else ""
        side = f" ({args['side']}s)" if args.get("side") else ""
        parts = [f"{name.removeprefix('analytics.')}{of}{side}", *_filters(args.get("filters"))]
    else:
        entity, _, action = name.rpartition(".")
        spec = catalog.entities.get(entity)
        what = spec.plural.lower() if spec is not None else entity.replace("_", " ")
        verb = {"list": "list of", "count": "count of", "aggregate": "totals of", "get": "one of"}
        fields = spec.fields if spec is not None else {}
        apart = _kept_apart(name, results)
        flts = [f for f in args.get("filters") or [] if f.get("field") != apart]
        parts = [
            f"{verb.get(action, '')} {what}".strip(),
            *_ranked_by(spec, args),
            *_filters(flts, fields),
        ]
        if apart:
            parts.append(f"per {apart.replace('_', ' ')}")
    if company and not any(company in p for p in parts):
        parts.append(f"company {company}")
    text = PREFIX + ", ".join(p for p in parts if p)
    # Words of a name the reading found ("white" of "white steel screw packs") were not left out.
    named = {w for name in req.settled for w in re.findall(r"[\w']+", name.lower())}
    ignored = [
        w
        for w in dict.fromkeys([*req.ignored, *vocabulary.filler_words(req.text, catalog)])
        if w.lower() not in named
    ]
    if ignored:
        text += f"; ignored: {join(ignored)}"
    return text + "."


def _ranked_by(spec: Any, args: Mapping[str, Any]) -> list[str]:
    """'largest 3 by grand total', 'latest 1': records ranked, not a page listed newest first."""
    order = (args.get("order_by") or [{}])[0]
    field = spec.fields.get(str(order.get("field"))) if spec is not None else None
    if field is None or not args.get("limit") or args["limit"] > 20:
        return []  # a page of records, newest first: no ranking asked
    if order.get("field") == spec.date_field:
        return [f"{'latest' if order.get('direction') == 'desc' else 'oldest'} {args['limit']}"]
    if order.get("direction") != "desc":
        return []
    return [f"largest {args.get('limit')} by {field.label.lower()}"]


def _kept_apart(name: str, results: list[Result]) -> str | None:
    """The field several reads of one tool were kept apart by (one list per currency)."""
    reads = [r for r in results if r.ok and r.name == name and not is_lookup(r.args)]
    if len(reads) < 2:
        return None
    differ = {
        str(f.get("field"))
        for r in reads
        for f in r.args.get("filters") or []
        if f.get("op") == "=" and any(f not in (o.args.get("filters") or []) for o in reads)
    }
    return next(iter(differ)) if len(differ) == 1 else None


def _source(results: list[Result]) -> Result | None:
    """The call the answer was computed from: the figure or report, else the last read of
    records that is not a look-up of a name ("name like %Acme%")."""
    compared = [
        r for r in results if r.ok and r.name == "metrics.query" and "compare_period" in r.args
    ]
    if compared:
        return compared[-1]  # a comparison, not the whole earlier period given beside it
    for r in reversed(results):
        if r.ok and (r.name == "metrics.query" or r.name.startswith(("report.", "analytics."))):
            return r
    for suffix in _DATA_SUFFIXES:  # a list before the counts that probed where names live
        found = [r for r in results if r.ok and r.name.endswith(suffix) and not is_lookup(r.args)]
        if found:
            return max(found, key=lambda r: len(r.args.get("filters") or []))
    # Only counts by one condition were made ("how many employees in the HR department"): the
    # last of them, never a look-up of which record a number or a user is.
    counted = [r for r in results if r.ok and r.name.endswith(".count") and not _probed(r.args)]
    return counted[-1] if counted else None


def is_lookup(args: Mapping[str, Any]) -> bool:
    """A call that looks up where a name lives (ids and titles "like" the words), not one an
    answer is computed from."""
    fields = args.get("fields")
    like = any(isinstance(f, Mapping) and f.get("op") == "like" for f in args.get("filters") or [])
    # A look-up asks for ids and names only; a count probe has one filter and nothing else.
    lookup = isinstance(fields, list) and (
        set(fields) <= {"id", "name", "title"} or (fields[:1] == ["id"] and len(fields) == 2)
    )  # ids and titles ("id", "item_name"): what master_data.probe_args asks for
    counted_one = fields is None and "limit" not in args and len(args.get("filters") or []) == 1
    # The ids of a whole small list read for reference (which companies there are).
    reference = lookup and not args.get("filters") and not args.get("order_by")
    return (like and lookup) or reference or counted_one or _probed(args)


def _probed(args: Mapping[str, Any]) -> bool:
    """ "Which record holds this number?", "which employee is the user?": one or two records
    at most, by one value, in no order."""
    one = args.get("filters") or []
    return (
        int(args.get("limit") or 99) <= 2
        and not args.get("order_by")
        and len(one) == 1
        and isinstance(one[0], Mapping)
        and one[0].get("op") == "="
    )


def _metric(catalog: Catalog, r: Result, args: Mapping[str, Any]) -> list[str]:
    data = r.data if isinstance(r.data, dict) else {}
    metric = catalog.metrics.get(str(args.get("metric")))
    label = str(data.get("label") or (metric.label if metric else args.get("metric"))).lower()
    groups = [str(g).replace("_", " ") for g in args.get("group_by") or []]
    parts = [label + (f" by {join(groups)}" if groups else "")]
    if args.get("top"):
        parts.append(f"top {args['top']}")
    period = args.get("period")
    if isinstance(period, Mapping) and period.get("from"):
        parts.append(f"{period.get('from')} to {period.get('to')}")
    compared = args.get("compare_period")
    if isinstance(compared, Mapping):
        parts.append(f"against {compared.get('from')} to {compared.get('to')}")
    elif args.get("compare_to"):
        parts.append(f"against the {str(args['compare_to']).replace('_', ' ')}")
    if args.get("as_of"):
        parts.append(f"as of {args['as_of']}")
    return parts + _filters(args.get("filters"))


def _filters(raw: Any, fields: Mapping[str, Any] | None = None) -> list[str]:
    out = []
    for f in raw or []:
        if not isinstance(f, Mapping):
            continue
        field = str(f.get("dimension") or f.get("field") or "").replace("_", " ")
        value = f.get("value")
        spec = (fields or {}).get(str(f.get("field")))
        if spec is not None and spec.named_by and f.get("op") == "=":
            out.append(f"{spec.named_by[0]}s only" if value else f"no {spec.named_by[0]}s")
            continue
        shown = join([str(v) for v in value], "or") if isinstance(value, list) else str(value)
        op = str(f.get("op") or "=")
        if op in ("=", "in"):
            out.append(f"{field} {shown}")
        elif op == "like":
            core = str(value).strip("%")
            if "%" in core:
                out.append(f"{field} matching what was asked")  # a phone's digits in order
                continue
            if "%" not in str(value):
                out.append(f"{field} {core}")  # a like without a wildcard: the value, any case
                continue
            how = "containing" if str(value).startswith("%") else "starting"
            out.append(f"{field} {how} {core}")
        elif op == "between" and isinstance(value, list):
            out.append(f"{field} {value[0]} to {value[-1]}")
        else:
            out.append(f"{field} {op} {shown}")
    return out


def _report_args(args: Mapping[str, Any]) -> list[str]:
    out = []
    if args.get("company"):
        out.append(f"company {args['company']}")
    if args.get("from_date"):
        out.append(f"{args['from_date']} to {args.get('to_date')}")
    elif args.get("as_of_date") or args.get("to_date"):
        out.append(f"as of {args.get('as_of_date') or args.get('to_date')}")
    return out


PREFIX = READ_AS


def split(text: str) -> tuple[str | None, str]:
    """(the reading line or None, the rest of the answer)."""
    if text.startswith(PREFIX):
        first, _, rest = text.partition("\n")
        return first, rest.lstrip("\n")
    return None, text
