"""Report requests: the ERP's own report with typed parameters filled from the request and the
session; link parameters named loosely are resolved to ids through the offered list tools."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

from erp_agent.planner import master_data, metric_plan, vocabulary
from erp_agent.planner.answer import capabilities, fmt, is_number, join
from erp_agent.planner.context import Result
from erp_agent.planner.parse_dates import Period
from erp_agent.planner.reading import Kind, Request
from erp_agent.planner.steps import (
    Ctx,
    Step,
    call,
    display,
    enable,
    failed,
    hand_over,
    rows_of,
    say,
)
from erp_agent.results.summary import report_figures


def company_step(ctx: Ctx) -> tuple[str | None, Step | None]:
    """The company a report or new document belongs to: the session's, the only one the user
    can see, or the one the request names; otherwise ask, never pick one."""
    if ctx.view.company:
        return ctx.view.company, None
    r = ctx.result("company.list")
    if r is None:
        if ctx.has("company.list"):
            return None, call("company.list", {"fields": ["id"], "limit": 20})
        if (
            ctx.has("tools.search")
            and ctx.result("tools.search", {"query": "company list"}) is None
        ):
            return None, call("tools.search", {"query": "company list"})
        return None, say("Which company should I use? Please name it.")
    names = [str(row["id"]) for row in rows_of(r) if row.get("id")]
    if len(names) == 1:
        return names[0], None
    said = [v.lower() for _, v in ctx.req.names]
    named = [
        n
        for n in names
        if n.lower() in ctx.req.text.lower()
        or any(len(v) > 3 and n.lower().startswith(v) for v in said)
    ]
    if len(named) == 1:
        return named[0], None
    if not names:
        return None, say("I can't see any company with your access.")
    default = ctx.view.default_company
    if default in names:
        # The user's own default company in the ERP, as its desk would pre-fill it.
        note = f"Company: {default}, your default company in the ERP (name another to change it)."
        if note not in ctx.view.notes:
            ctx.view.notes.append(note)
        return default, None
    question = f"Which company: {join(names, 'or')}?"
    if ctx.has("display.choices") and 2 <= len(names) <= 8:
        if ctx.result("display.choices") is None:
            options = [{"label": n, "value": n} for n in names]
            return None, call(
                "display.choices", {"question": question, "options": options, "slot": "company"}
            )
        return None, say(question + " Pick one and I'll carry on with your request.")
    return None, say(f"{question} Ask again naming one.")


def _asks(step: Step) -> bool:
    """Whether a step puts a question to the user (rather than fetching what it needs)."""
    return step.text is not None or any(c.name == "display.choices" for c in step.calls)


_ACROSS = re.compile(r"\b(all|across|every|total|overall|combined|everywhere)\b")


def _across(ctx: Ctx) -> bool:
    """A question the records answer for every company at once: it says so ("across all
    warehouses", "in total"), or it has a condition the report cannot take (an age, an amount),
    or it names a balance's figure ("stock value")."""

    req = ctx.req
    if _ACROSS.search(req.text.lower()) or req.age_days is not None or req.amount is not None:
        return True
    metric = metric_plan.pick(ctx.catalog, req)
    entity = ctx.catalog.entities.get(metric.entity) if metric is not None else None
    return entity is not None and not entity.date_field


def _record_plane(ctx: Ctx) -> Step | None:
    """The report's question answered without the report: from the metric the words name, or
    the report's own documents, filtered — across every company the user can see."""

    step = metric_plan.metric_step(ctx)
    if step is not None:
        return step
    report = ctx.req.report
    if report is None or not report.entity or report.entity not in ctx.catalog.entities:
        return None
    if not ctx.has(f"{report.entity}.list"):
        return None
    return _documents(ctx, report.entity)


def report(ctx: Ctx, preset: Mapping[str, Any] | None = None) -> Step:
    """The report the request names, its parameters from the request, the session and
    ``preset`` (what the caller already resolved, e.g. the accounts of a ledger question)."""
    report = ctx.req.report
    assert report is not None
    name = f"report.{report.name}"
    if not ctx.has(name):
        # Routing reads the words as typed; the report named in shorthand ("p and l") or
        # another inflection still gets its tool when the user may run it.
        step = enable(ctx, name)
        if step is not None:
            return step
        if (
            report.entity
            and report.entity in ctx.catalog.entities
            and ctx.has(f"{report.entity}.list")
        ):
            return _documents(ctx, report.entity)
        return say(
            f"I can't run the {report.label} report with your access. {capabilities(ctx.req.entity, ctx.tools)}"
        )
    schema = ctx.tools[name]
    props: Mapping[str, Any] = schema.get("properties") or {}
    args: dict[str, Any] = {}
    if "company" in props:
        company, step = company_step(ctx)
        if step and _asks(step) and _across(ctx):
            # A report runs for one company; a user of several asked across them, so answer
            # from the records (per company and currency) rather than ask which one.
            step = _record_plane(ctx) or step
        companies = _companies(ctx)
        if step and _asks(step) and 2 <= len(companies) <= _MAX_COMPANIES:
            # Nothing in the question picks one of the user's companies: the report for each,
            # one after the other, rather than a question back ("name one to see it alone").
            return _per_company(ctx, report, name, schema, props, preset or {}, companies)
        if step:
            return step
        args["company"] = company
    args.update(preset or {})
    return _run(ctx, report, name, schema, props, args)


_MAX_COMPANIES = 4  # a user of more companies is asked which one


def _companies(ctx: Ctx) -> list[str]:
    r = ctx.result("company.list")
    return [str(row["id"]) for row in rows_of(r) if row.get("id")] if r is not None else []


def _per_company(
    ctx: Ctx, report: Any, name: str, schema: Mapping[str, Any], props: Mapping[str, Any],
    preset: Mapping[str, Any], companies: list[str],
) -> Step:  # fmt: skip
    pending: list[Any] = []
    texts: list[str] = []
    empty: list[str] = []
    before, settled = list(ctx.req.settled), list(ctx.req.settled)
    for company in companies:
        # Each company's report takes the names the question gave, lowercase ones included
        # (settled by the first company's run, they filter every other company's too).
        ctx.req.settled = list(before)
        step = _run(ctx, report, name, schema, props, {"company": company, **preset}, show=False)
        settled += [n for n in ctx.req.settled if n not in settled]
        if step.calls:
            pending += [c for c in step.calls if c not in pending]
        elif step.text is not None:
            ran = next(
                (
                    r
                    for r in ctx.view.results
                    if r.name == name and r.args.get("company") == company
                ),
                None,
            )
            if ran is not None and ran.ok and not rows_of(ran) and not ran.content.get("summary"):
                empty.append(company)  # nothing of what was asked in this company
            else:
                texts.append(step.text)
    ctx.req.settled = settled
    if pending:
        return Step(calls=pending)
    if texts and empty:
        # What was named lives in one company: its report alone, and the others said empty.
        return say("\n\n".join(texts) + f"\n(Nothing in {join(empty)}.)")
    note = (
        f"You can see {len(companies)} companies, so here is the {report.label} report for each "
        "(name one to see it alone)."
    )
    return say(note + "\n\n" + "\n\n".join(texts))


def _documents(ctx: Ctx, entity: str) -> Step:
    """The report's documents, filtered: what the record plane can answer of it."""
    ctx.req.entity = ctx.catalog.entities[entity]
    if any(w in ctx.req.text.lower() for w in ("overdue", "unpaid", "outstanding", "owe")):
        e = ctx.req.entity
        if e.status_field and not ctx.req.statuses and "Overdue" in e.fields[e.status_field].values:
            ctx.req.statuses = ["Overdue"]
    ctx.req.kind = Kind.LIST
    return hand_over("list")


def _run(
    ctx: Ctx, report: Any, name: str, schema: Mapping[str, Any], props: Mapping[str, Any],
    args: dict[str, Any], *, show: bool = True,
) -> Step:  # fmt: skip
    req, today = ctx.req, ctx.view.today
    period = req.period
    compare = (
        "compare" in req.text.lower() or " vs" in req.text.lower() or "versus" in req.text.lower()
    )
    if period is None and ("from_date" in props or "based_on" in props):
        period = Period(dt.date(today.year, 1, 1), today, f"{today.year} to date")
    if period is not None and compare and period.start.month == 1 and period.start.day == 1:
        period = type(period)(
            period.start.replace(year=period.start.year - 1), period.end, period.label
        )
    if (
        "based_on" in props
        and "date_range" in (props["based_on"].get("enum") or [])
        and period is not None
    ):
        args["based_on"] = "date_range"
    if period is not None and "from_date" in props:
        args["from_date"], args["to_date"] = period.start.isoformat(), period.end.isoformat()
    if req.as_of is not None:
        if period is not None and "from_date" in props:
            args["from_date"] = dt.date(req.as_of.year, 1, 1).isoformat()
        if "as_of_date" in props:
            args["as_of_date"] = req.as_of.isoformat()
        elif "to_date" in props:
            args["to_date"] = req.as_of.isoformat()
            args.setdefault("from_date", dt.date(req.as_of.year, 1, 1).isoformat())
            if "based_on" in props:
                args["based_on"] = "date_range"
    if "periodicity" in props:
        part = req.date_part or ("yearly" if compare else None)
        wanted = {"month": "monthly", "quarter": "quarterly", "year": "yearly"}.get(
            part or "", part
        )
        if wanted and wanted in (props["periodicity"].get("enum") or []):
            args["periodicity"] = wanted
    if "group_by_party" in props and (req.amount is not None or req.text.lower().startswith("who")):
        args["group_by_party"] = True
    placed: set[str] = set()
    for pname, prop in props.items():
        target = None
        param = report.params.get(pname)
        if param is not None:
            target = param.target
        for hint, value in req.names:
            if hint == pname or (target and (hint == target or _mentions(req.text, target, value))):
                args[pname] = [value] if prop.get("type") == "array" else value
                placed.add(value)
    step = _unplaced_names(ctx, report, props, args, placed)
    if step is not None:
        return step
    missing = [p for p in schema.get("required") or () if p not in args]
    if missing:
        return say(f"To run the {report.label} report I need: {join(missing)}. Please give them.")
    # Link parameters named loosely ("account Debtors") are resolved to ids through list tools.
    step = _resolve_links(ctx, report.name, args)
    if step is not None:
        return step
    r = ctx.result(name, args)
    if r is None:
        return call(name, args)
    if not r.ok:
        return failed(r)
    shown = display(ctx, r, title=report.label) if show else None
    if shown:
        return shown
    return say(_report_text(report.label, r, args, req))


def _unplaced_names(
    ctx: Ctx, report: Any, props: Mapping[str, Any], args: dict[str, Any], placed: set[str]
) -> Step | None:
    """'How much do we owe Kenya Wire & Cable?': a name no parameter took is looked up among
    the records the report's link parameters filter by (its suppliers, customers, territories…)
    and filters the report; a name found nowhere is said so, never dropped. The company's own
    name is the company, which the report already runs for."""

    company = str(args.get("company") or "").lower()
    settled = {v.lower() for v in ctx.req.settled}
    names: list[tuple[str | None, str]] = [
        (None, v)
        for _, v in ctx.req.names
        if v not in placed and v.lower() not in company and v.lower() not in settled
    ]
    # Names typed in lowercase ("ageing for gulf traders") are kept when a record has them.
    said = {v.lower() for _, v in ctx.req.names} | settled | {p.lower() for p in placed}
    loose = [
        n
        for n in vocabulary.loose_names(ctx.req.text, ctx.catalog)
        if n.lower() not in said and n.lower() not in company
    ]
    names += [(None, n) for n in loose]
    if not names:
        return None
    dims = getattr(ctx.catalog, "dimensions", {}) or {}
    by_target = {
        p.target: pname
        for pname, p in report.params.items()
        if pname in props and p.target and p.target != "company" and p.target in dims
    }
    if not by_target:
        return None
    found, step = master_data.resolve(ctx, names, list(by_target), loose)
    if step is not None:
        return step
    ctx.req.settled += [n for n in loose if n in found]
    for dim, record in found.values():
        pname = by_target[dim]
        if props[pname].get("type") == "array":
            args[pname] = list(dict.fromkeys([*(args.get(pname) or []), record]))
        else:
            args[pname] = record
    return None


def _party_lines(r: Result, rows: list[dict[str, Any]], req: Request) -> list[str]:
    """Ageing reports: exact column totals the engine computed, then the largest balances
    (filtered by the request's amount and age, never re-added here)."""
    if not rows or "outstanding" not in rows[0]:
        return []
    lines: list[str] = []
    data = r.data if isinstance(r.data, dict) else {}
    labels = {
        c.get("fieldname"): c.get("label") for c in data.get("columns") or [] if isinstance(c, dict)
    }
    numeric = (r.content.get("summary") or {}).get("numeric") or {}
    for key in ("outstanding", "range1", "range2", "range3", "range4", "range5"):
        if key in numeric:
            lines.append(f"- {labels.get(key) or key}: {fmt(numeric[key]['sum'])} in total")
    picked = rows
    if req.amount is not None:
        limit = float(req.amount.value)
        picked = [
            row
            for row in picked
            if is_number(row.get("outstanding"))
            and (row["outstanding"] > limit if ">" in req.amount.op else row["outstanding"] < limit)
        ]
    if req.age_days is not None:
        picked = [
            row
            for row in picked
            if any(
                is_number(row.get(k)) and row[k] > 0 and _in_age(req, _lower_bound(labels.get(k)))
                for k in row
                if str(k).startswith("range")
            )
        ]
    picked = sorted(picked, key=lambda row: -(row.get("outstanding") or 0))[:8]
    if (req.amount is not None or req.age_days is not None) and not picked:
        return [*lines, "- No records found that match your amount and age conditions."]
    for row in picked:
        who = row.get("voucher_no") or row.get("party")
        extra = f", {row['party']}" if row.get("voucher_no") and row.get("party") else ""
        age = f", {fmt(row['age'])} days" if is_number(row.get("age")) else ""
        lines.append(f"- {who}{extra}: outstanding {fmt(row['outstanding'])}{age}")
    return lines


def _in_age(req: Request, lower: int) -> bool:
    """Whether an ageing bucket starting at ``lower`` days is of the age asked: past it, or
    (a bucket asked, "1-30 days") that very bucket."""
    assert req.age_days is not None
    if req.age_until is None:
        return lower > req.age_days
    return req.age_days <= lower < req.age_until


def _lower_bound(label: Any) -> int:
    found = re.search(r"\d+", str(label or ""))
    return int(found.group(0)) if found else 0


def _mentions(text: str, target: str, value: str) -> bool:
    low = text.lower()
    word = target.replace("_", " ")
    return f"{word} {value.lower()}" in low or f"{value.lower()} {word}" in low


def _resolve_links(ctx: Ctx, report: str, args: dict[str, Any]) -> Step | None:
    params = ctx.catalog.reports[report].params
    for pname, value in list(args.items()):
        param = params.get(pname)
        if param is None or not param.target or pname == "company":
            continue
        tool = f"{param.target}.list"
        if not ctx.has(tool):
            continue
        target = ctx.catalog.entities.get(param.target)
        if target is None or "id" not in target.fields or not target.fields["id"].filterable:
            continue
        # Every value of a list is resolved: none of the records named is dropped.
        resolved: list[str] = []
        for raw in value if isinstance(value, list) else [value]:
            lookup = {
                "filters": [{"field": "id", "op": "like", "value": f"%{raw}%"}],
                "fields": ["id"],
                "limit": 5,
            }
            r = ctx.result(tool, lookup)
            if r is None:
                return call(tool, lookup)
            ids = [str(row["id"]) for row in rows_of(r) if row.get("id")]
            if args.get("company"):
                ids = [i for i in ids if _company_suffix_ok(i, str(args["company"]))] or ids
            if not ids:
                return say(
                    f"No records found: I can't find a {param.target.replace('_', ' ')} "
                    f"called {raw}."
                )
            exact = [i for i in ids if i == str(raw)]
            resolved.append((exact or ids)[0])
        args[pname] = list(dict.fromkeys(resolved)) if isinstance(value, list) else resolved[0]
    return None


def _company_suffix_ok(account: str, company: str) -> bool:
    """ERPNext suffixes accounts with the company's initials ('Debtors - ST')."""
    abbr = "".join(w[0] for w in company.split() if w[:1].isupper())
    return account.endswith(f" - {abbr}") or account.endswith(f" - {abbr[:2]}")


_AGE = re.compile(r"\bage\b", re.IGNORECASE)  # an age column: never a figure to add up


def _report_text(label: str, r: Result, args: Mapping[str, Any], req: Request) -> str:
    data = r.data if isinstance(r.data, dict) else {}
    rows = rows_of(r)
    lines: list[str] = []
    complete = "page" not in r.content and "summary" not in r.content
    # An ageing report's own figures, as every channel shows them: each bucket summed, the
    # total, the average age weighted by amount — never ages added up.
    figures = report_figures(data) if complete else []
    lines += [f"- {f['label']}: {fmt(f['value'])}" for f in figures]
    summary = data.get("summary")
    if lines:
        pass
    elif isinstance(summary, list):
        for item in summary[:14]:
            if (
                isinstance(item, dict)
                and item.get("label") is not None
                and item.get("value") is not None
                and not _AGE.search(str(item["label"]))
            ):
                lines.append(f"- {item['label']}: {fmt(item['value'])}")
    if not lines:
        total = data.get("total_row")
        if isinstance(total, dict):
            lines += [
                f"- {k.replace('_', ' ')}: {fmt(v)}" for k, v in total.items() if is_number(v)
            ][:12]
        elif isinstance(total, list):
            labels = [
                str(c.get("label", "")) for c in data.get("columns") or [] if isinstance(c, dict)
            ]
            pairs = zip(labels, total, strict=False)
            lines += [
                f"- {lab}: {fmt(v)}"
                for lab, v in pairs
                if is_number(v) and v and lab and not _AGE.search(lab)
            ][:12]
    if not lines:
        for row in rows:
            key = str(row.get("account") or "")
            if key.startswith("'") and any(is_number(v) for v in row.values()):
                nums = [
                    f"{k.replace('_', ' ')} {fmt(v)}"
                    for k, v in row.items()
                    if is_number(v) and k != "opening_balance"
                ]
                lines.append(f"- {key.strip(chr(39))}: " + ", ".join(nums[:6]))
    lines += _party_lines(r, rows, req)
    scope = ", ".join(
        f"{k.replace('_', ' ')} {v}"
        for k, v in args.items()
        if k in ("company", "from_date", "to_date", "as_of_date", "periodicity")
    )
    count = data.get("row_count")
    count = count if isinstance(count, int) else len(rows)
    named = f"{label} ({scope})" if scope else label
    if not count and not lines:
        return f"No records found: the {named} report returned no rows."
    head = f"{named}: {fmt(count)} rows, shown in the table."
    return head + ("\n" + "\n".join(lines) if lines else "")
