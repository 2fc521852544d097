"""A 15-question session with follow-ups, driven by a model that replays the right tool calls:
model calls per question, prompt tokens per answered question, and the share of each request
that is an unchanged prefix of the request before it (what a provider's prompt cache or a
server's prefix cache reuses; goal: at least 90% after the first round).

The replay model plays a capable model: for each question it makes the calls that answer it
(alternatives where a tool may be missing), first asking ``tools.search`` for a tool it was
not offered, answers once the results are in, and corrects an answer the groundedness check
sends back by leaving out the figures it names. Its answers name dates the way people do
("November 2026"). Requests are measured as an OpenAI-compatible server receives them (the
messages and the tools array, full schemas: a hosted model) and rendered as a Qwen2.5/Hermes
chat template lays them out (system, tools, messages) for the prefix comparison. Tokens are
estimated at 4 characters each.

The script runs against whatever ``erp_agent`` is importable, so the same session measures
an earlier version of the agent: ``PYTHONPATH=/path/to/old/src python benchmarks/session.py``.

    uv run python benchmarks/session.py [--user accounts.manager@demo.local] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import math
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from demo_erp.context import Settings as ErpSettings
from demo_erp.seed import seed
from demo_erp.server import running
from erp_agent.config import Settings
from erp_agent.models.base import ChatModel, Completion, Message, ModelProfile, ToolCall, Usage
from erp_agent.models.openai_compatible import wire_messages, wire_tools
from erp_agent.retrieval.knowledge import packaged_root
from erp_agent.runtime import Runtime
from erp_agent.store.memory import MemoryStore

TODAY = dt.date(2026, 11, 30)
GOAL_SHARE = 0.90
Args = dict[str, Any] | Callable[[Sequence[Message]], dict[str, Any]]


@dataclass
class Call:
    """One tool call; ``alternatives`` answer the same where this tool does not exist."""

    tool: str
    args: Args
    search: str  # what a model asks tools.search for when the tool was not offered
    alternatives: tuple[tuple[str, Args], ...] = ()


@dataclass
class Question:
    text: str
    rounds: list[list[Call]]
    answer: str
    unless_context: str = ""  # no call when the context message already holds this


def _results(messages: Sequence[Message]) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        if m.role == "tool" and m.content:
            try:
                out.append(json.loads(m.content))
            except ValueError:
                continue
    return out


def last_result_id(messages: Sequence[Message]) -> str:
    for result in reversed(_results(messages)):
        found = result.get("result_id") or (result.get("result") or {}).get("result_id")
        if found:
            return str(found)
    return "res_unknown"


def first_record_id(messages: Sequence[Message]) -> str:
    for result in reversed(_results(messages)):
        body = result.get("result", result)
        rows = (body.get("records") or body.get("page") or []) if isinstance(body, dict) else []
        if rows and isinstance(rows[0], dict) and rows[0].get("id"):
            return str(rows[0]["id"])
    return "SAL-ORD-UNKNOWN"


Q4 = {"from": "2026-10-01", "to": "2026-12-31"}
Q3 = {"from": "2026-07-01", "to": "2026-09-30"}
OPEN = ["To Deliver and Bill", "To Bill", "To Deliver"]

SESSION = [
    Question(
        "What did we bill in November 2026?",
        [[Call("metrics.query", {"metric": "billed", "period": {"from": "2026-11-01", "to": "2026-11-30"}}, "billed amount metric")]],
        "Billed in November 2026, incl. tax, per currency: as in the result above.",
    ),
    Question(
        "and in October?",
        [[Call("metrics.query", {"metric": "billed", "period": {"from": "2026-10-01", "to": "2026-10-31"}}, "billed amount metric")]],
        "Billed in October 2026: as in the result above, per currency.",
    ),
    Question(
        "Who are our top 5 customers by revenue this quarter?",
        [[Call("metrics.query", {"metric": "revenue", "group_by": ["customer"], "top": 5, "period": Q4}, "revenue by customer")]],
        "The top 5 customers by revenue (net of tax) in Q4 2026 are listed above.",
    ),
    Question(
        "show that as a chart",
        [[Call("display.chart", lambda m: {"result_id": last_result_id(m), "label": "customer", "values": ["revenue"]}, "chart")]],
        "Here is the chart of Q4 2026 revenue by customer.",
    ),
    Question(
        "Which customers owe us more than 500k and are over 60 days late?",
        [[
            Call("metrics.query", {"metric": "receivables_overdue_61_90", "group_by": ["customer"]}, "receivables overdue 61 to 90 days"),
            Call("metrics.query", {"metric": "receivables_overdue_over_90", "group_by": ["customer"]}, "receivables overdue over 90 days"),
        ]],
        "Customers more than 60 days late, as of 30 November 2026: see the two results above.",
    ),
    Question(
        "What are our overdue receivables by age?",
        [[Call("analytics.ageing", {"side": "receivable"}, "receivables ageing buckets")]],
        "Overdue receivables by age bucket as of 30 November 2026 are shown above.",
    ),
    Question(
        "Which items are below reorder level?",
        [[Call("metrics.query", {"metric": "items_below_reorder_level", "group_by": ["item", "warehouse"]}, "items below reorder level")]],
        "The items below their reorder level, per warehouse and unit, are listed above.",
    ),
    Question(
        "How much stock do we have per warehouse?",
        [[Call("metrics.query", {"metric": "stock_on_hand", "group_by": ["warehouse"]}, "stock on hand by warehouse")]],
        "Stock on hand per warehouse and unit of measure, as of today, is above.",
    ),
    Question(
        "What do we charge for SVC-CONSULT?",
        [[Call("prices.lookup", {"item": "SVC-CONSULT", "side": "selling"}, "item selling prices by price list",
               alternatives=(("item_price.list", {"filters": [{"field": "item", "op": "=", "value": "SVC-CONSULT"}]}),))]],
        "SVC-CONSULT's selling prices per price list, each in its currency, are above.",
    ),
    Question(
        "Show me the open sales orders",
        [[Call("sales_order.list", {"filters": [{"field": "status", "op": "in", "value": OPEN}], "limit": 20}, "sales orders list")]],
        "The open sales orders are listed above.",
    ),
    Question(
        "the first one in detail",
        [[Call("sales_order.get", lambda m: {"id": first_record_id(m)}, "sales order get")]],
        "The first open sales order in detail is above.",
    ),
    Question(
        "How are sales trending?",
        [[Call("analytics.trend", {"entity": "sales_invoice"}, "sales trend")]],
        "Sales by month for the twelve months to November 2026, with the trend, are above.",
    ),
    Question(
        "Purchases by supplier last quarter",
        [[Call("metrics.query", {"metric": "purchases", "group_by": ["supplier"], "period": Q3}, "purchases by supplier")]],
        "Purchases by supplier in Q3 2026 are listed above.",
    ),
    Question(
        "export that to Excel",
        [[Call("results.export", lambda m: {"result_id": last_result_id(m), "format": "xlsx"}, "export result to excel")]],
        "The purchases by supplier are exported to Excel.",
    ),
    Question(
        "How does a quotation become a sales order?",
        [[Call("knowledge.search", {"query": "quotation to sales order"}, "knowledge base search")]],
        "A quotation becomes a sales order when the customer accepts it (see the cited passage).",
        unless_context="Knowledge (cite",
    ),
]  # fmt: skip

_CHECK = "Check your answer: these figures do not appear in any tool result:"


class Replay(ChatModel):
    """Makes the calls each question's plan names, in rounds; records every request."""

    profile = ModelProfile(name="replay", context_window=128_000)

    def __init__(self, session: Sequence[Question]) -> None:
        self.plans = {q.text: q for q in session}
        self.requests: list[tuple[list[Message], list[dict[str, Any]]]] = []
        self.done: dict[str, int] = {}  # rounds made per question
        self.searched: set[tuple[str, str]] = set()
        self.failed: list[str] = []

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        self.requests.append((list(messages), list(tools)))
        last = messages[-1]
        if last.role == "user" and (last.content or "").startswith(_CHECK):
            flagged = (last.content or "")[len(_CHECK) :].split(". Correct")[0]
            answer = next(m.content or "" for m in reversed(messages) if m.role == "assistant")
            for figure in [f.strip() for f in flagged.split(",")]:
                answer = answer.replace(figure, "").replace("  ", " ")
            return Completion(answer, usage=Usage(), model="replay", finish_reason="stop")
        question = next(
            m.content or ""
            for m in reversed(messages)
            if m.role == "user" and (m.content or "") in self.plans
        )
        plan = self.plans[question]
        context = next(
            (
                m.content or ""
                for m in reversed(messages)
                if (m.content or "").startswith("<erp_agent_context>")
            ),
            "",
        )
        offered = {t["function"]["name"] for t in tools}
        done = self.done.get(question, 0)
        if done >= len(plan.rounds) or (plan.unless_context and plan.unless_context in context):
            return Completion(plan.answer, usage=Usage(), model="replay", finish_reason="stop")
        calls: list[ToolCall] = []
        searches: list[ToolCall] = []
        for n, call in enumerate(plan.rounds[done]):
            options = [(call.tool, call.args), *call.alternatives]
            chosen = next(((t, a) for t, a in options if t in offered), None)
            if chosen is None:
                if (question, call.search) not in self.searched and "tools.search" in offered:
                    self.searched.add((question, call.search))
                    searches.append(
                        _call(f"s{len(self.requests)}_{n}", "tools.search", {"query": call.search})
                    )
                else:
                    self.failed.append(f"{call.tool} for {question!r}")
                continue
            tool, args = chosen
            calls.append(
                _call(
                    f"c{len(self.requests)}_{n}", tool, args(messages) if callable(args) else args
                )
            )
        if searches:
            return Completion(None, searches, Usage(), "replay", "tool_calls")
        self.done[question] = done + 1
        if not calls:
            return Completion(plan.answer, usage=Usage(), model="replay", finish_reason="stop")
        return Completion(None, calls, Usage(), "replay", "tool_calls")


def _call(call_id: str, name: str, args: dict[str, Any]) -> ToolCall:
    return ToolCall(call_id, name, json.dumps(args))


def body(request: tuple[list[Message], list[dict[str, Any]]]) -> str:
    messages, tools = request
    return json.dumps(wire_messages(messages)) + json.dumps(wire_tools(tools))


def rendered(request: tuple[list[Message], list[dict[str, Any]]]) -> str:
    """The prompt a Qwen2.5 (Hermes) chat template makes of the request."""
    messages, tools = request
    wire = [dict(m) for m in wire_messages(messages)]
    first = str(wire[0]["content"]) if wire and wire[0]["role"] == "system" else ""
    schemas = "\n".join(json.dumps(t, ensure_ascii=False) for t in wire_tools(tools))
    out = [f"<|im_start|>system\n{first}\n\n# Tools\n<tools>\n{schemas}\n</tools><|im_end|>"]
    for message in wire[1:] if first else wire:
        text = str(message.get("content") or "")
        for call in message.get("tool_calls") or ():
            text += f"\n<tool_call>\n{json.dumps(call['function'])}\n</tool_call>"
        role = "user" if message["role"] == "tool" else message["role"]
        out.append(f"<|im_start|>{role}\n{text}<|im_end|>")
    return "\n".join(out) + "\n<|im_start|>assistant\n"


def shared(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


@dataclass
class Report:
    questions: int
    requests: int
    prompt_tokens: int
    first_request_tokens: int
    share: float  # of every request after the first, the unchanged prefix (token-weighted)
    lowest: float
    later_rounds: float  # the same over each question's later rounds (its first left out)
    failed: list[str] = field(default_factory=list)
    per_request: list[tuple[int, float]] = field(default_factory=list)
    tools: list[int] = field(default_factory=list)  # tools offered per request
    appended: list[tuple[int, list[str]]] = field(default_factory=list)  # request, tools added


async def run(url: str, user: str, data_dir: Path) -> Report:
    data_dir.mkdir(parents=True, exist_ok=True)
    runtime = await Runtime.create(
        Settings(erp_url=url, data_dir=str(data_dir)), store=MemoryStore()
    )
    await asyncio.to_thread(runtime.knowledge.index_path, packaged_root())
    session = await runtime.sign_in(user, "demo")
    model = Replay(SESSION)
    engine = runtime.engine(model)
    conversation: str | None = None
    for question in SESSION:
        response = await engine.run_turn(session, question.text, conversation_id=conversation)
        conversation = response.conversation_id
    await runtime.aclose()
    texts = [rendered(r) for r in model.requests]
    sizes = [math.ceil(len(body(r)) / 4) for r in model.requests]
    kept = [shared(a, b) for a, b in pairwise(texts)]
    shares = [k / len(t) for k, t in zip(kept, texts[1:], strict=True)]
    # A question's first round: its request ends with the question itself.
    later = [
        i
        for i, (messages, _) in enumerate(model.requests[1:])
        if not (messages[-1].role == "user" and (messages[-1].content or "") in model.plans)
    ]
    return Report(
        questions=len(SESSION),
        requests=len(model.requests),
        prompt_tokens=sum(sizes),
        first_request_tokens=sizes[0],
        share=sum(kept) / sum(len(t) for t in texts[1:]),
        lowest=min(shares),
        later_rounds=sum(kept[i] for i in later) / sum(len(texts[i + 1]) for i in later),
        failed=model.failed,
        per_request=[(s, round(sh, 3)) for s, sh in zip(sizes[1:], shares, strict=True)],
        tools=[len(r[1]) for r in model.requests],
        appended=[
            (i + 1, [t["function"]["name"] for t in b[1][len(a[1]) :]])
            for i, (a, b) in enumerate(pairwise(model.requests))
            if len(b[1]) > len(a[1])
        ],
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--user", default="accounts.manager@demo.local")
    parser.add_argument("--scale", type=float, default=0.1)
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-session-") as tmp:
        path = Path(tmp) / "demo.sqlite"
        seed(path, today=TODAY, scale=args.scale)
        with running(ErpSettings(db_path=str(path), today=TODAY)) as erp:
            report = asyncio.run(run(erp.url, args.user, Path(tmp) / "agent"))
    n = report.questions
    print(f"{n}-question session with follow-ups, as {args.user}:")
    print(f"  model calls: {report.requests} ({report.requests / n:.1f} per question)")
    print(
        f"  prompt tokens: {report.prompt_tokens:,} ({report.prompt_tokens / n:,.0f} per answered question)"
    )
    print(f"  first request: ~{report.first_request_tokens:,} tokens")
    met = "met" if report.later_rounds >= GOAL_SHARE else "NOT met"
    print(
        "  unchanged prefix of the request before, over each question's rounds after its first: "
        f"{report.later_rounds:.1%}; goal ≥ {GOAL_SHARE:.0%}: {met}"
    )
    print(
        f"  the same over every request after the session's first: {report.share:.1%} (lowest "
        f"{report.lowest:.1%}; a question that needs a tool the conversation does not have yet "
        "appends it, and everything after the tools array is read again)"
    )
    for at, names in report.appended:
        print(f"  request {at + 1} appended {', '.join(names)}")
    for failure in report.failed:
        print(f"  could not call: {failure}")
    if args.json:
        Path(args.json).write_text(json.dumps(report.__dict__, indent=1))


if __name__ == "__main__":
    main()
