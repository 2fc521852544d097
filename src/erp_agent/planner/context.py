"""What the planner reads from the conversation: the session block, this turn's request and the
tool results already in hand. The planner keeps no state of its own between calls: every call
re-reads the messages, so any worker can continue a turn."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from erp_agent.engine.prompt import is_context as _is_context
from erp_agent.models.base import Message

# The engine's provenance check speaks as the user; it is not a new request.
_ENGINE_NOTES = ("Check your answer:",)


# Keys of a tool message that are about the message, not the result.
_ENVELOPE = frozenset(["page", "status", "note", "result_id", "message", "summary"])


@dataclass(frozen=True)
class Result:
    name: str
    args: dict[str, Any]
    content: dict[str, Any]

    @property
    def status(self) -> str:
        return str(self.content.get("status", ""))

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def result_id(self) -> str | None:
        value = self.content.get("result_id")
        return str(value) if value else None

    @property
    def data(self) -> Any:
        """The result itself, or for a big one its first page (with the summary beside it)."""
        if "result" in self.content:
            return self.content["result"]
        if "page" in self.content:
            # A big result's first page, with what it says of itself (a metric's label,
            # totals and definition), not only its rows.
            rest = {k: v for k, v in self.content.items() if k not in _ENVELOPE}
            return {
                **rest,
                "rows": self.content["page"],
                "summary": self.content.get("summary", {}),
            }
        summary = self.content.get("summary")
        if isinstance(summary, dict) and ("report_summary" in summary or "top_rows" in summary):
            # A big report: the engine sends its own summary (the ERP's totals, the top rows).
            # The report's own summary lines (opening, total, closing) after its top rows.
            rows = [*(summary.get("top_rows") or [])]
            rows += [r for r in summary.get("summary_rows") or [] if r not in rows]
            return {
                "rows": rows,
                "summary": summary.get("report_summary") or [],
                "total_row": summary.get("totals") or {},
                "columns": [
                    {"fieldname": c.get("name"), "label": c.get("label")}
                    for c in summary.get("columns") or []
                    if isinstance(c, dict)
                ],
                "row_count": summary.get("row_count"),
            }
        return None

    @property
    def message(self) -> str:
        refusal = self.content.get("erp_refusal")
        if isinstance(refusal, dict) and refusal.get("message"):
            return str(refusal["message"])
        return str(self.content.get("message") or "")


@dataclass
class TurnView:
    request: str
    today: dt.date
    company: str | None
    user: str | None
    default_company: str | None = None  # the user's default company in the ERP
    notes: list[str] = field(default_factory=list)  # said after the answer ("using …")
    results: list[Result] = field(default_factory=list)
    earlier: list[str] = field(default_factory=list)  # earlier user messages and tool contents
    answered: str | None = None  # our own answer, when the engine asks us to check it
    state: dict[str, Any] = field(default_factory=dict)  # the conversation state (engine)
    # What the user's ERP permissions restrict them to, as the session says it
    # ("Branch Kisumu; Company Savanna Trading Ltd"); empty when nothing does.
    restricted: str = ""

    def result(self, name: str) -> Result | None:
        return next((r for r in self.results if r.name == name), None)

    def called(self, name: str) -> bool:
        return any(r.name == name for r in self.results)


def read(messages: Sequence[Message], today: dt.date | None = None) -> TurnView:
    start = 0
    for i, m in enumerate(messages):
        if (
            m.role == "user"
            and not (m.content or "").startswith(_ENGINE_NOTES)
            and not _is_context(m)
        ):
            start = i
    # The session block is system text; the context tier (conversation state, knowledge)
    # arrives as a delimited user-role message just before the request. Earlier turns'
    # context messages stay in the history where they were sent: only this turn's is read.
    # Session facts come from the system text only: a passage in the context saying
    # "- Company: X" is data, not the session. The engine always writes the state line first
    # in the context, so the first one found is the engine's, never a passage's.
    system = "\n".join(m.content or "" for m in messages if m.role == "system")
    context_text = (
        messages[start - 1].content or "" if start and _is_context(messages[start - 1]) else ""
    )
    found = re.search(r"- Today: (\d{4}-\d{2}-\d{2})", system)
    company = re.search(r"- Company: (.+)", system)
    default_company = re.search(r"- Default company: (.+)", system)
    user = re.search(r"- User: (.+)", system)
    restricted = re.search(r"- Restricted by the user's ERP permissions to (.+?): records", system)
    state: dict[str, Any] = {}
    found_state = re.search(
        r"^Conversation state: (\{.*\})$", system + "\n" + context_text, re.MULTILINE
    )
    if found_state:
        try:
            loaded = json.loads(found_state.group(1))
        except json.JSONDecodeError:
            loaded = {}
        state = loaded if isinstance(loaded, dict) else {}
    request = messages[start].content or "" if messages else ""
    view = TurnView(
        request=request,
        today=dt.date.fromisoformat(found.group(1)) if found else (today or dt.date.today()),
        company=company.group(1).strip() if company else None,
        default_company=default_company.group(1).strip() if default_company else None,
        user=user.group(1).strip() if user else None,
        state=state,
        restricted=restricted.group(1) if restricted else "",
    )
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    for m in messages[:start]:
        if m.role in ("user", "tool") and m.content and not _is_context(m):
            view.earlier.append(m.content)
    for m in messages[start + 1 :]:
        if m.role == "assistant":
            for c in m.tool_calls:
                try:
                    args = json.loads(c.arguments or "{}")
                except json.JSONDecodeError:
                    args = {}
                calls[c.id] = (c.name, args if isinstance(args, dict) else {})
            if m.content and not m.tool_calls:
                view.answered = m.content
        elif m.role == "tool" and m.tool_call_id in calls:
            name, args = calls[m.tool_call_id]
            try:
                content = json.loads(m.content or "{}")
            except json.JSONDecodeError:
                content = {"status": "error", "message": m.content or ""}
            view.results.append(Result(name, args, content if isinstance(content, dict) else {}))
    return view
