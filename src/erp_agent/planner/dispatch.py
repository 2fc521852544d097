"""The planner's entry: bad input, arithmetic, follow-ups about the last result (export it,
chart it, open a row, how it was computed, submit the document just made), then the request
itself — read with the conversation's earlier messages — handed to the plan for its kind."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from erp_agent.catalog import Catalog
from erp_agent.catalog.lifecycle import BOOKED, CANCELLED
from erp_agent.planner import calc, company_codes, followup, nearest, read_as, records, vocabulary
from erp_agent.planner.answer import fmt, is_number
from erp_agent.planner.context import TurnView
from erp_agent.planner.plan import plan
from erp_agent.planner.steps import Call, Ctx, Step, call, failed, rows_of, say

MAX_READ = 600  # characters of a message the parser reads; the rest is said to be ignored


def next_step(
    catalog: Catalog, connector: str, view: TurnView, tools: dict[str, Mapping[str, Any]]
) -> Step:
    text = view.request.strip()
    if not text:
        return say(
            "Your message was empty. Ask me about your ERP data, for example "
            f"{nearest.examples(catalog, tools, 2)}."
        )
    note = ""
    if len(text) > MAX_READ:
        text = text[:MAX_READ]
        # Words, not counts: a number in the answer must come from the ERP (groundedness).
        last_words = " ".join(text.split()[-6:-1]) or text[-40:]
        note = f'(Your message is long; I read it up to "…{last_words}" and left the rest.) '
    expression = calc.expression(text)  # before typo correction: "twelve" is not a typo
    text = vocabulary.correct(text, catalog)
    view.request = text
    if expression is not None:
        return _with_note(note, _calculate(view, tools, expression))
    state = view.state
    last = state.get("last_query") if isinstance(state.get("last_query"), dict) else None
    pending = state.get("pending") if isinstance(state.get("pending"), dict) else None
    picked = pending is not None and followup.match_choice(text, pending.get("options") or [])
    step = None if picked else _about_last(catalog, view, tools, text, last)
    attribute = followup.attribute_of(text) if step is None and not picked else None
    if attribute is not None:
        step = _record_field(catalog, view, tools, last, attribute, connector)
    if step is not None:
        return _with_note(note, step)
    reading = followup.read(catalog, connector, text, view.today, state)
    if reading.orphan:
        return say(
            f"There's no earlier question in this conversation for “{text[:80]}” to follow up "
            f"on. Ask the whole question, for example {nearest.examples(catalog, tools, 2)}."
        )
    if reading.unmatched_reply is not None and reading.pending:
        return _with_note(note, _rechoose(view, tools, reading.pending))
    if reading.company:
        view.company = reading.company
    ctx = Ctx(reading.req, view, tools, catalog, connector)
    coded = company_codes.company_named(ctx)
    if isinstance(coded, Call):
        return Step(calls=[coded])
    if coded is not None:
        view.company = coded  # "on ST", "HG's receivables": as if the company were picked
    step = plan(ctx)
    if step.text is not None and not step.calls:
        said = read_as.line(reading.req, view.results, catalog, view.company, step.text)
        if said is not None:
            step.text = said + "\n\n" + step.text
    return _with_note(note, step, view)


def _with_note(note: str, step: Step, view: TurnView | None = None) -> Step:
    if note and step.text is not None:
        step.text = note + step.text
    if view is not None and view.notes and step.text is not None:
        step.text += "\n" + " ".join(view.notes)
    return step


# ------------------------------------------------------------------ arithmetic


def _calculate(view: TurnView, tools: Mapping[str, Any], expression: str) -> Step:
    if "calculator.evaluate" not in tools:
        # Not offered up front: ask tools.search for it, once.
        query = {"query": "calculator evaluate"}
        searched = any(r.name == "tools.search" and r.args == query for r in view.results)
        if "tools.search" in tools and not searched:
            return call("tools.search", query)
        return say("I can't do arithmetic in this session (the calculator isn't available).")
    r = next((r for r in view.results if r.name == "calculator.evaluate"), None)
    if r is None:
        return call("calculator.evaluate", {"expression": expression})
    if not r.ok:
        return say(f"I couldn't calculate {expression}: {r.message}")
    data = r.data if isinstance(r.data, dict) else {}
    return say(f"{expression} = {data.get('result')}")


# ------------------------------------------------------------------ the last result


def _about_last(
    catalog: Catalog,
    view: TurnView,
    tools: Mapping[str, Any],
    text: str,
    last: dict[str, Any] | None,
) -> Step | None:
    """Follow-ups that act on the last result or document as it is; None for anything else."""
    verb = followup.submit_verb(text)
    if verb is not None:
        return _act_on_document(catalog, view, tools, verb)
    if last is not None and followup.lists_them(text):
        behind = records.behind(view, tools, last)
        if behind is not None:
            return behind
    fmt_wanted = followup.export_format(text)
    why = followup.asks_why(text)
    row = followup.row_ordinal(text)
    if fmt_wanted is None and not why and row is None:
        return None
    if last is None:
        return say(
            "There is no earlier result in this conversation to "
            + ("export" if fmt_wanted else "explain" if why else "pick a row from")
            + ". Ask a question first, then follow up on its answer."
        )
    if why:
        return say(_explain(last))
    result_id = str(view.state.get("last_shown") or last.get("result_id") or "")
    if fmt_wanted is not None:
        if "results.export" not in tools:
            return say("I can't export results in this session.")
        args = {"result_id": result_id, "format": fmt_wanted}
        done = next((r for r in view.results if r.name == "results.export"), None)
        if done is None:
            return call("results.export", args)
        if not done.ok:
            return failed(done)
        return say(f"Here is the last result as a {fmt_wanted.upper()} file.")
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
        return say("I can't reopen the last table in this session.")
    start = max(0, n - 1)
    args: dict[str, Any] = {"result_id": result_id, "start": start, "limit": 1}
    if n < 0:
        args = {"result_id": result_id, "start": 0, "limit": 200}
    rows, step = _page(view, args)
    if step is not None:
        return step
    if not rows:
        return say(f"The last table has no row {n}.")
    row = rows[-1] if n < 0 else rows[0]
    entity = str(last.get("tool") or "").split(".")[0]
    doc_id = row.get("id")
    getter = f"{entity}.get"
    if doc_id and getter in tools:
        got = next((r for r in view.results if r.name == getter), None)
        if got is None:
            return call(getter, {"id": doc_id})
        if got.ok and isinstance(got.data, dict):
            row = got.data
    fields = ", ".join(
        f"{k.replace('_', ' ')} {fmt(v)}"
        for k, v in row.items()
        if not isinstance(v, (list, dict)) and v not in (None, "") and k != "id"
    )
    head = f"{doc_id}: " if doc_id else ""
    return say(f"Row {n if n > 0 else 'last'} of the last table — {head}{fields[:1500]}.")


# A party column of a transaction's report or aggregate: whose record it names.
_PARTY_OF = {"sales_invoice": "customer", "sales_order": "customer", "quotation": "customer",
             "purchase_invoice": "supplier", "purchase_order": "supplier"}  # fmt: skip


def _record_field(
    catalog: Catalog,
    view: TurnView,
    tools: Mapping[str, Any],
    last: Mapping[str, Any] | None,
    words: str,
    connector: str = "",
) -> Step | None:
    """'What is their credit limit?' after 'who owes us the most?': the named field of the
    record in the last answer's top row, read from the ERP as the user; None when the last
    answer holds no record ("and his sick leave?" after a leave balance edits that question).
    "What's it worth?" after "has PUR-ORD-… been approved?": the document asked about."""
    named = _document_asked(catalog, connector, view)
    if named is not None:
        return _field_of(catalog, view, tools, named, words)
    if last is None:
        return say(
            f"There is no earlier answer in this conversation whose {words} I could look up. "
            "Name the record, for example 'credit limit of <customer>'."
        )
    result_id = str(view.state.get("last_shown") or last.get("result_id") or "")
    if "results.page" not in tools or not result_id:
        return say("I can't reopen the last answer in this session.")
    args = {"result_id": result_id, "start": 0, "limit": 1}
    rows, step = _page(view, args)
    if step is not None:
        return step
    found = _record_in(catalog, last, rows[0]) if rows else None
    if found is None:
        return None
    return _field_of(catalog, view, tools, found, words)


def _document_asked(catalog: Catalog, connector: str, view: TurnView) -> tuple[str, str] | None:
    """The document the last message named by its number, when it named exactly one."""
    requests = [r for r in view.state.get("requests") or [] if isinstance(r, dict)]
    if not requests or not connector:
        return None
    found = catalog.find_document_ids(connector, str(requests[-1].get("text") or ""))
    return (found[0][0].name, found[0][1]) if len(found) == 1 else None


def _field_of(
    catalog: Catalog,
    view: TurnView,
    tools: Mapping[str, Any],
    found: tuple[str, str],
    words: str,
) -> Step | None:
    """The named field of one record, read from the ERP as the user."""
    entity, record_id = found
    field = _field_named(catalog.entities[entity], words)
    spec = catalog.entities[entity]
    if field is None:
        return say(f"{spec.label} records have no field “{words}” that I know of.")
    getter = f"{entity}.get"
    if getter not in tools:
        query = {"query": f"{entity.replace('_', ' ')} get"}
        searched = any(r.name == "tools.search" and r.args == query for r in view.results)
        if "tools.search" in tools and not searched:
            return call("tools.search", query)
        return say(f"I can't read {spec.plural.lower()} in this session.")
    got = next((r for r in view.results if r.name == getter), None)
    if got is None:
        return call(getter, {"id": record_id})
    if not got.ok or not isinstance(got.data, dict):
        return failed(got)
    label = spec.fields[field].label or field.replace("_", " ")
    value = got.data.get(field)
    title = spec.title_field.name if spec.title_field is not None else None
    who = f"{got.data.get(title)} ({record_id})" if title and got.data.get(title) else record_id
    if value in (None, ""):
        return say(f"{who} has no {label.lower()} set in the ERP.")
    shown = fmt(value) if is_number(value) else str(value)
    return say(f"{label} of {who}: {shown}.")


def _record_in(
    catalog: Catalog, last: Mapping[str, Any], row: Mapping[str, Any]
) -> tuple[str, str] | None:
    """The master record a result row is about: a column named after an entity ('customer'),
    a report's or aggregate's party column, or the row's own id."""
    tool = str(last.get("tool") or "")
    raw_args = last.get("args")
    args: Mapping[str, Any] = raw_args if isinstance(raw_args, dict) else {}
    source = tool.split(".")[0]
    if source == "metrics":
        metric = catalog.metrics.get(str(args.get("metric") or "")) if catalog.metrics else None
        source = metric.entity if metric is not None else source
    elif source == "report":
        report = catalog.reports.get(tool.split(".", 1)[-1])
        source = report.entity if report is not None and report.entity else source
    own = catalog.entities.get(source)
    if row.get("id") and own is not None and own.kind.value == "master":
        return source, str(row["id"])  # a customer's row is the customer, not its group
    for column, value in row.items():
        if value in (None, "") or isinstance(value, (list, dict)):
            continue
        if column in catalog.entities and catalog.entities[column].kind.value == "master":
            return column, str(value)
        if column == "party" and source in _PARTY_OF:
            return _PARTY_OF[source], str(value)
    if row.get("id") and source in catalog.entities:
        return source, str(row["id"])
    return None


def _field_named(entity: Any, words: str) -> str | None:
    """The entity's field the words name (its label or name), with typo tolerance."""
    from rapidfuzz import fuzz, process, utils

    names = {
        n: f"{(f.label or n).lower()} | {n.replace('_', ' ')}" for n, f in entity.fields.items()
    }
    exact = [
        n
        for n, f in entity.fields.items()
        if words in ((f.label or "").lower(), n.replace("_", " "))
    ]
    if exact:
        return str(exact[0])
    best = process.extractOne(
        words, names, scorer=fuzz.token_set_ratio, processor=utils.default_process, score_cutoff=85
    )
    if best:
        return str(best[2])
    # "Phone number", "cell", "e-mail address": how people name the ways to reach someone.
    said = re.sub(r"\s+(?:number|no\.?|address)$", "", words.strip())
    return next((f for f in _REACH.get(said, ()) if f in entity.fields), None)


_REACH = {"phone": ("phone", "mobile"), "telephone": ("phone", "mobile"), "tel": ("phone", "mobile"),
          "cell": ("mobile", "phone"), "cellphone": ("mobile", "phone"), "mobile": ("mobile", "phone"),
          "e-mail": ("email",), "mail": ("email",), "email": ("email",)}  # fmt: skip


def _page(view: TurnView, args: dict[str, Any]) -> tuple[list[dict[str, Any]], Step | None]:
    """The rows of a page of the last result, or the step that reads it (or says it failed)."""
    page = next((r for r in view.results if r.name == "results.page"), None)
    if page is None:
        return [], call("results.page", args)
    if not page.ok:
        return [], failed(page)
    return rows_of(page), None


def _act_on_document(catalog: Catalog, view: TurnView, tools: Mapping[str, Any], verb: str) -> Step:
    state = view.state
    doc = state.get("created") if isinstance(state.get("created"), dict) else None
    docs = [d for d in state.get("documents", []) if isinstance(d, dict)]
    doc = doc or (docs[-1] if docs else None)
    if not doc:
        return say(
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
            return call("tools.search", query)
        return say(f"You can't {verb} {doc_id} in this session.")
    state_now = _document_state(catalog, view, tools, entity, doc_id, verb)
    if state_now is not None:
        return state_now
    done = next((r for r in view.results if r.name == tool), None)
    if done is None:
        args: dict[str, Any] = {"id": doc_id}
        if verb in ("approve", "reject"):
            args["action"] = verb.capitalize()
        return call(tool, args)
    if done.status == "proposal":
        return say(
            f"I've prepared this for you to confirm: {verb} {doc_id}. Nothing changes in the ERP "
            "until you confirm it."
        )
    return failed(done)


_ALREADY = {"submit": (BOOKED, "submitted"), "cancel": (CANCELLED, "cancelled")}


def _document_state(
    catalog: Catalog,
    view: TurnView,
    tools: Mapping[str, Any],
    entity: str,
    doc_id: str,
    verb: str,
) -> Step | None:
    """'Submit it' of a document the ERP already holds submitted (or cancelled) is said to be
    so — never a second document or a refused call. None: go on with the action."""
    ent = catalog.entities.get(entity)
    life = ent.lifecycle if ent is not None else None
    if verb not in _ALREADY or life is None or f"{entity}.get" not in tools:
        return None
    got = next((r for r in view.results if r.name == f"{entity}.get"), None)
    if got is None:
        return call(f"{entity}.get", {"id": doc_id})
    data = got.data if got.ok and isinstance(got.data, dict) else {}
    state, word = _ALREADY[verb]
    if life.state_of(data.get(life.field)) == state:
        return say(f"{doc_id} is already {word} in the ERP; nothing to do.")
    return None


def _rechoose(view: TurnView, tools: Mapping[str, Any], pending: Mapping[str, Any]) -> Step:
    options = [o for o in pending.get("options") or [] if isinstance(o, dict)]
    labels = ", ".join(str(o.get("label")) for o in options)
    question = str(pending.get("question") or "Which one do you mean?")
    said = re.sub(r"\s+", " ", view.request)[:80]
    if "display.choices" in tools and options and view.result("display.choices") is None:
        args: dict[str, Any] = {"question": question, "options": options}
        if pending.get("slot"):
            args["slot"] = pending["slot"]
        return call("display.choices", args)
    return say(
        f"“{said}” doesn't match any of the options ({labels}). {question} "
        "Pick one of them, or ask a new question."
    )
