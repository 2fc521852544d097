"""The planner's entry: bad input, arithmetic, follow-ups about the last result (export it,
chart it, open a row, how it was computed, submit the document just made), then the request
itself — read with the conversation's earlier messages — handed to the plan for its kind."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from erp_agent.catalog import Catalog
from erp_agent.planner import calc, followup, nearest, vocabulary
from erp_agent.planner.answer import fmt, is_number
from erp_agent.planner.context import TurnView
from erp_agent.planner.plan import Ctx, Step, _call, _failed, _rows, _text, plan

MAX_READ = 600  # characters of a message the parser reads; the rest is said to be ignored


def next_step(
    catalog: Catalog, connector: str, view: TurnView, tools: dict[str, Mapping[str, Any]]
) -> Step:
    text = view.request.strip()
    if not text:
        return _text(
            "Your message was empty. Ask me about your ERP data, for example "
            f"{nearest.examples(catalog, tools, 2)}."
        )
    note = ""
    if len(text) > MAX_READ:
        note = f"(Your message is {fmt(len(text))} characters long; I read its first {MAX_READ}.) "
        text = text[:MAX_READ]
    expression = calc.expression(text)  # before typo correction: "twelve" is not a typo
    text = vocabulary.correct(text, catalog)
    view.request = text
    if expression is not None:
        return _with_note(note, _calculate(view, tools, expression))
    state = view.state
    last = state.get("last_query") if isinstance(state.get("last_query"), dict) else None
    pending = state.get("pending") if isinstance(state.get("pending"), dict) else None
    picked = pending is not None and followup.match_choice(text, pending.get("options") or [])
    step = None if picked else _about_last(view, tools, text, last)
    if step is not None:
        return _with_note(note, step)
    reading = followup.read(catalog, connector, text, view.today, state)
    if reading.orphan:
        return _text(
            f"There's no earlier question in this conversation for “{text[:80]}” to follow up "
            f"on. Ask the whole question, for example {nearest.examples(catalog, tools, 2)}."
        )
    if reading.unmatched_reply is not None and reading.pending:
        return _with_note(note, _rechoose(view, tools, reading.pending))
    if reading.company:
        view.company = reading.company
    return _with_note(note, plan(Ctx(reading.req, view, tools, catalog, connector)), view)


def _with_note(note: str, step: Step, view: TurnView | None = None) -> Step:
    if note and step.text is not None:
        step.text = note + step.text
    if view is not None and view.notes and step.text is not None:
        step.text += "\n" + " ".join(view.notes)
    return step


# ------------------------------------------------------------------ arithmetic


def _calculate(view: TurnView, tools: Mapping[str, Any], expression: str) -> Step:
    if "calculator.evaluate" not in tools:
        return _text("I can't do arithmetic in this session (the calculator isn't available).")
    r = next((r for r in view.results if r.name == "calculator.evaluate"), None)
    if r is None:
        return _call("calculator.evaluate", {"expression": expression})
    if not r.ok:
        return _text(f"I couldn't calculate {expression}: {r.message}")
    data = r.data if isinstance(r.data, dict) else {}
    return _text(f"{expression} = {data.get('result')}")


# ------------------------------------------------------------------ the last result


def _about_last(
    view: TurnView, tools: Mapping[str, Any], text: str, last: dict[str, Any] | None
) -> Step | None:
    """Follow-ups that act on the last result or document as it is; None for anything else."""
    verb = followup.submit_verb(text)
    if verb is not None:
        return _act_on_document(view, tools, verb)
    fmt_wanted = followup.export_format(text)
    why = followup.asks_why(text)
    row = followup.row_ordinal(text)
    if fmt_wanted is None and not why and row is None:
        return None
    if last is None:
        return _text(
            "There is no earlier result in this conversation to "
            + ("export" if fmt_wanted else "explain" if why else "pick a row from")
            + ". Ask a question first, then follow up on its answer."
        )
    if why:
        return _text(_explain(last))
    result_id = str(view.state.get("last_shown") or last.get("result_id") or "")
    if fmt_wanted is not None:
        if "results.export" not in tools:
            return _text("I can't export results in this session.")
        args = {"result_id": result_id, "format": fmt_wanted}
        done = next((r for r in view.results if r.name == "results.export"), None)
        if done is None:
            return _call("results.export", args)
        if not done.ok:
            return _failed(done)
        return _text(f"Here is the last result as a {fmt_wanted.upper()} file.")
    assert row is not None
    return _pick_row(view, tools, last, result_id, row)


def _explain(last: Mapping[str, Any]) -> str:
    definition = last.get("definition")
    if isinstance(definition, dict) and definition.get("text"):
        parts = [str(definition["text"])]
        if definition.get("filters"):
            parts.append("Filters: " + "; ".join(str(f) for f in definition["filters"]) + ".")
        if definition.get("period"):
            parts.append(f"Period: {definition['period']}.")
        if is_number(definition.get("record_count")):
            parts.append(f"Records counted: {fmt(definition['record_count'])}.")
        if definition.get("source"):
            parts.append(f"Source: {definition['source']}.")
        return "How I got that: " + " ".join(parts)
    args = last.get("args") or {}
    tool = str(last.get("tool") or "")
    words = [f"I called {tool} on the ERP as you"]
    filters = args.get("filters") or []
    if filters:
        shown = [
            f"{f.get('field') or f.get('dimension')} {f.get('op')} {f.get('value')}"
            for f in filters
            if isinstance(f, dict)
        ]
        words.append("with the filters " + "; ".join(shown))
    measures = [m for m in args.get("measures") or [] if isinstance(m, dict)]
    if measures:
        words.append(
            "computing "
            + ", ".join(f"{m.get('func')} of {m.get('field') or 'records'}" for m in measures)
        )
    groups = [g.get("field") if isinstance(g, dict) else g for g in args.get("group_by") or []]
    if groups:
        words.append("grouped by " + ", ".join(str(g) for g in groups))
    return (
        "How I got that: "
        + ", ".join(words)
        + ". The ERP applied your permissions; the figures are its own."
    )


def _pick_row(
    view: TurnView, tools: Mapping[str, Any], last: Mapping[str, Any], result_id: str, n: int
) -> Step:
    if "results.page" not in tools or not result_id:
        return _text("I can't reopen the last table in this session.")
    start = max(0, n - 1)
    args: dict[str, Any] = {"result_id": result_id, "start": start, "limit": 1}
    if n < 0:
        args = {"result_id": result_id, "start": 0, "limit": 200}
    page = next((r for r in view.results if r.name == "results.page"), None)
    if page is None:
        return _call("results.page", args)
    if not page.ok:
        return _failed(page)
    rows = _rows(page)
    if not rows:
        return _text(f"The last table has no row {n}.")
    row = rows[-1] if n < 0 else rows[0]
    entity = str(last.get("tool") or "").split(".")[0]
    doc_id = row.get("id")
    getter = f"{entity}.get"
    if doc_id and getter in tools:
        got = next((r for r in view.results if r.name == getter), None)
        if got is None:
            return _call(getter, {"id": doc_id})
        if got.ok and isinstance(got.data, dict):
            row = got.data
    fields = ", ".join(
        f"{k.replace('_', ' ')} {fmt(v)}"
        for k, v in row.items()
        if not isinstance(v, (list, dict)) and v not in (None, "") and k != "id"
    )
    head = f"{doc_id}: " if doc_id else ""
    return _text(f"Row {n if n > 0 else 'last'} of the last table — {head}{fields[:1500]}.")


def _act_on_document(view: TurnView, tools: Mapping[str, Any], verb: str) -> Step:
    state = view.state
    doc = state.get("created") if isinstance(state.get("created"), dict) else None
    docs = [d for d in state.get("documents", []) if isinstance(d, dict)]
    doc = doc or (docs[-1] if docs else None)
    if not doc:
        return _text(
            f"There is no document in this conversation to {verb}. Give its id (for example "
            f"'{verb} SAL-QTN-2026-00012')."
        )
    entity, doc_id = str(doc.get("entity")), str(doc.get("id"))
    tool = f"{entity}.workflow_action" if verb in ("approve", "reject") else f"{entity}.{verb}"
    if tool not in tools:
        # "submit it" names no record, so routing offered no tool for the document: ask for it.
        query = {"query": tool.replace(".", " ").replace("_", " ")}
        searched = any(r.name == "tools.search" and r.args == query for r in view.results)
        if "tools.search" in tools and not searched:
            return _call("tools.search", query)
        return _text(f"You can't {verb} {doc_id} in this session.")
    done = next((r for r in view.results if r.name == tool), None)
    if done is None:
        args: dict[str, Any] = {"id": doc_id}
        if verb in ("approve", "reject"):
            args["action"] = verb.capitalize()
        return _call(tool, args)
    if done.status == "proposal":
        return _text(
            f"I've prepared this for you to confirm: {verb} {doc_id}. Nothing changes in the ERP "
            "until you confirm it."
        )
    return _failed(done)


def _rechoose(view: TurnView, tools: Mapping[str, Any], pending: Mapping[str, Any]) -> Step:
    options = [o for o in pending.get("options") or [] if isinstance(o, dict)]
    labels = ", ".join(str(o.get("label")) for o in options)
    question = str(pending.get("question") or "Which one do you mean?")
    said = re.sub(r"\s+", " ", view.request)[:80]
    if "display.choices" in tools and options and view.result("display.choices") is None:
        args: dict[str, Any] = {"question": question, "options": options}
        if pending.get("slot"):
            args["slot"] = pending["slot"]
        return _call("display.choices", args)
    return _text(
        f"“{said}” doesn't match any of the options ({labels}). {question} "
        "Pick one of them, or ask a new question."
    )
