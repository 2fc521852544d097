"""What a model is sent: the first request over the seed questions against the seed agent's
(``seed_first_requests.json``; goal: at most 0.30 of it at the median for the sales and the
admin user, with the answering tool offered for every question they may ask), the largest
first request as a self-hosted 8k model gets it, and how much of a follow-up turn's prompt is
an unchanged prefix of the previous turn's (what vLLM/llama.cpp prefix caching and providers'
prompt caching can reuse).

The offline planner drives real turns against the demo ERP, with the starter knowledge indexed
(the follow-ups are measured without it too); every model request is recorded as the
chat-completions body an OpenAI-compatible server receives, and rendered the way a
Qwen2.5/Hermes chat template lays it out (system, then the tools, then the messages) for the
prefix comparison. Tokens are estimated at 4 characters each (3 for the upper bound).

uv run python benchmarks/model_prompts.py [--ratios-only]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import math
import statistics
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from demo_erp.context import Settings as ErpSettings
from demo_erp.seed import seed
from demo_erp.server import running
from erp_agent.calls.session import Session
from erp_agent.config import Settings
from erp_agent.models._fit import fit
from erp_agent.models.base import Message, ModelProfile
from erp_agent.models.openai_compatible import wire_messages, wire_tools
from erp_agent.models.prefix import hermes_prompt, shared_prefix
from erp_agent.models.testing import Recording, ScriptedModel
from erp_agent.planner import OfflinePlanner
from erp_agent.retrieval.knowledge import packaged_root
from erp_agent.runtime import Runtime
from erp_agent.store.memory import MemoryStore

TODAY = dt.date(2026, 11, 30)
WINDOW = 8192
SEED = Path(__file__).with_name("seed_first_requests.json")
ROUTING_SET = Path(__file__).with_name("routing_set.yaml")
RATIO_GOAL = 0.30
RATIO_USERS = ("sales@demo.local", "admin@demo.local")
# The answering tool of seed questions worded differently from routing_set.yaml's.
NEEDS = {
    "Find Sales Invoice SI-00456 and tell me if it's been paid.": ["records.search"],
}
args_debug = False
# The example questions of each family users ask an ERP agent (counts, totals, top-N, trends,
# ageing, statements, stock, concentration, workflow, process knowledge, records, writes, ...).
SEED_QUESTIONS = [
    "Which customer invoices are overdue by more than 30 days?",
    "Who owes us more than $10,000 and is more than 60 days overdue?",
    "Find Sales Invoice SI-00456 and tell me if it's been paid.",
    "What's the status of PO PUR-ORD-2026-00087?",
    "How many open sales orders do we have?",
    "How many leave applications are pending?",
    "What did we bill the Nakuru branch in Q2?",
    "Revenue by month this year",
    "Purchases by supplier last quarter",
    "Show me the top 5 customers by revenue this quarter as a chart.",
    "How are sales trending?",
    "Compare this year's P&L with last year's",
    "Projected revenue next month",
    "What are our overdue receivables?",
    "Accounts payable ageing",
    "What's our P&L for this fiscal year, broken down monthly?",
    "Balance sheet as of last month end",
    "General ledger for account Debtors in March",
    "What's the current stock balance across all warehouses?",
    "Which items are below reorder level?",
    "How dependent are we on our top 3 customers?",
    "Any unusual invoices this month?",
    "Why can't I submit this purchase order?",
    "What is waiting for my approval?",
    "How does a quotation become a sales order?",
    "What happens when I cancel a submitted invoice?",
    "the invoice for the blue widgets we sent to Gulf Traders in August",
    "INV-2026-00873",
    "Create a quotation for Acme Ltd for 20 units of SKU-4410-BLK",
    "Approve PO PUR-ORD-2026-00087",
    "Mark this lead as qualified",
    "What is our headcount?",
    "What will the weather be?",
    "Show me Mombasa's invoices",
]
CONVERSATIONS = [
    ("Revenue by month this year", "and last year?"),
    ("How many open sales orders do we have?", "which customers are they for?"),
    ("What are our overdue receivables?", "show the top 5 as a chart"),
]


def body(request: tuple[list[Message], list[dict[str, Any]]]) -> dict[str, Any]:
    messages, tools = request
    return {"messages": wire_messages(messages), "tools": wire_tools(tools)}


def size(request: tuple[list[Message], list[dict[str, Any]]]) -> int:
    payload = body(request)
    return len(json.dumps(payload["messages"])) + len(json.dumps(payload["tools"]))


def rendered(request: tuple[list[Message], list[dict[str, Any]]]) -> str:
    return hermes_prompt(*request)


async def _runtime(url: str, data_dir: Path, knowledge: bool) -> Runtime:
    data_dir.mkdir(parents=True, exist_ok=True)
    runtime = await Runtime.create(
        Settings(erp_url=url, data_dir=str(data_dir)), store=MemoryStore()
    )
    if knowledge:
        await asyncio.to_thread(runtime.knowledge.index_path, packaged_root())
    return runtime


async def run(url: str, user: str, data_dir: Path) -> None:
    runtime = await _runtime(url, data_dir / "knowledge", knowledge=True)
    session = await runtime.sign_in(user, "demo")
    engine = runtime.engine
    firsts: list[tuple[int, str]] = []
    fitted: list[tuple[int, int, int, str]] = []
    for question in SEED_QUESTIONS:
        model = Recording(OfflinePlanner(runtime.catalog, runtime.connector.name), routed=True)
        await engine(model).run_turn(session, question)
        firsts.append((size(model.requests[0]), question))
        # The same question for a model with a small context: its prompt as the engine builds
        # it for that window (a smaller share of knowledge passages), then fitted.
        small = ScriptedModel(
            ScriptedModel.reply("ok"), profile=ModelProfile(name="small", context_window=WINDOW)
        )
        await engine(small).run_turn(session, question)
        messages, tools = list(small.requests[0].messages), list(small.requests[0].tools)
        kept = fit(tools, WINDOW)
        fitted.append((size((messages, kept)), len(kept), len(tools), question))
    firsts.sort(reverse=True)
    fitted.sort(reverse=True)
    print(f"first request over {len(SEED_QUESTIONS)} seed questions, as {user}:")
    for chars, question in firsts[:5]:
        print(
            f"  {chars:6d} chars  ~{math.ceil(chars / 4):5d} tokens (≤ {math.ceil(chars / 3):5d})"
            f"  {question}"
        )
    median = sorted(c for c, _ in firsts)[len(firsts) // 2]
    print(f"  median {median} chars ~{math.ceil(median / 4)} tokens")
    print(f"the same, as sent to a model with a {WINDOW}-token context (compact tool schemas):")
    for chars, kept, offered, question in fitted[:3]:
        print(
            f"  {chars:6d} chars  ~{math.ceil(chars / 4):5d} tokens  {kept}/{offered} tools  {question}"
        )
    print(
        f"  tools left off in {sum(1 for _, k, o, _ in fitted if k < o)} of {len(fitted)} questions"
    )
    await follow_ups(runtime, session, "with knowledge passages")
    await runtime.aclose()
    plain = await _runtime(url, data_dir / "plain", knowledge=False)
    await follow_ups(plain, await plain.sign_in(user, "demo"), "without knowledge passages")
    await plain.aclose()


def _needs() -> dict[str, list[str]]:
    data = yaml.safe_load(ROUTING_SET.read_text())
    return {**{c["q"]: c["needs"] for c in data["seed"]}, **NEEDS}


async def ratios(url: str, data_dir: Path) -> None:
    """The median first request per user against the seed agent's, and whether the answering
    tool of each question the user may ask was offered in it."""
    seed_sizes = json.loads(SEED.read_text())["users"]
    needs = _needs()
    runtime = await _runtime(url, data_dir / "ratios", knowledge=True)
    print(f"first request against the seed agent's (median over {len(SEED_QUESTIONS)} questions):")
    for user in RATIO_USERS:
        session = await runtime.sign_in(user, "demo")
        sizes, missed, permitted = [], [], 0
        for question in SEED_QUESTIONS:
            model = Recording(OfflinePlanner(runtime.catalog, runtime.connector.name), routed=True)
            await runtime.engine(model).run_turn(session, question)
            sizes.append(size(model.requests[0]))
            offered = {t["function"]["name"] for t in model.requests[0][1]}
            alternatives = needs.get(question, [])
            allowed = [
                a for a in alternatives if all(n in session.allowed_tools for n in a.split("+"))
            ]
            if not allowed:
                continue  # nothing answers it for this user: no tool to offer
            permitted += 1
            if not any(all(n in offered for n in a.split("+")) for a in allowed):
                missed.append(question)
        now = statistics.median(sizes)
        before = statistics.median(seed_sizes[user].values())
        met = "met" if now / before <= RATIO_GOAL and not missed else "NOT met"
        print(
            f"  {user}: {now:,.0f} chars (~{now / 4:,.0f} tokens) vs {before:,.0f} = "
            f"{now / before:.2f}x; answering tool offered for {permitted - len(missed)}/"
            f"{permitted} permitted questions; goal ≤ {RATIO_GOAL:.2f}x: {met}"
        )
        for question in missed:
            print(f"    not offered its answering tool: {question!r}")
    await runtime.aclose()


async def follow_ups(runtime: Runtime, session: Session, label: str) -> None:
    engine = runtime.engine
    print(
        "second turn: share of its first request that is an unchanged prefix of the first"
        f" turn's ({label})"
    )
    for one, two in CONVERSATIONS:
        model = Recording(OfflinePlanner(runtime.catalog, runtime.connector.name), routed=True)
        first = await engine(model).run_turn(session, one)
        turn_one = list(model.requests)
        await engine(model).run_turn(session, two, conversation_id=first.conversation_id)
        second = rendered(model.requests[len(turn_one)])
        vs_first = shared_prefix(rendered(turn_one[0]), second) / len(second)
        vs_last = shared_prefix(rendered(turn_one[-1]), second) / len(second)
        if args_debug:
            at = shared_prefix(rendered(turn_one[-1]), second)
            print("   turn 1:", repr(rendered(turn_one[-1])[at - 80 : at + 120]))
            print("   turn 2:", repr(second[at - 80 : at + 120]))
        # What the server is sent: turn 2's body begins with turn 1's last one, or the tools
        # array grew (the prefix then ends after turn 1's tools).
        before, after = body(turn_one[-1]), body(model.requests[len(turn_one)])
        added = len(after["tools"]) - len(before["tools"])
        starts = json.dumps(after["messages"][: len(before["messages"])]) == json.dumps(
            before["messages"]
        ) and json.dumps(after["tools"]) == json.dumps(before["tools"])
        how = "begins with turn 1's request" if starts else f"{added} tools added"
        print(
            f"  {vs_first:6.1%} of turn 1's first request, {vs_last:6.1%} of its last"
            f"  ({len(second)} chars, {how})  {one!r} → {two!r}"
        )


async def across_users(url: str, data_dir: Path, users: Sequence[str], question: str) -> None:
    prompts = []
    for user in users:
        runtime = await _runtime(url, data_dir, knowledge=False)
        session = await runtime.sign_in(user, "demo")
        model = Recording(ScriptedModel(ScriptedModel.reply("ok")))
        await runtime.engine(model).run_turn(session, question)
        prompts.append(rendered(model.requests[0]))
        await runtime.aclose()
    common = shared_prefix(prompts[0], prompts[1]) / len(prompts[1])
    print(
        f"two users of one role, same question: {common:.1%} shared prefix ({users[0]}, {users[1]})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--user", default="accounts.manager@demo.local")
    parser.add_argument("--scale", type=float, default=0.1)
    parser.add_argument("--ratios-only", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-prompts-") as tmp:
        path = Path(tmp) / "demo.sqlite"
        seed(path, today=TODAY, scale=args.scale)
        with running(ErpSettings(db_path=str(path), today=TODAY)) as erp:
            url = erp.url
            asyncio.run(ratios(url, Path(tmp)))
            if args.ratios_only:
                return
            asyncio.run(run(url, args.user, Path(tmp)))
            asyncio.run(
                across_users(
                    url,
                    Path(tmp) / "users",
                    ["kisumu.manager@demo.local", "mombasa.manager@demo.local"],
                    "Revenue by month",
                )
            )


if __name__ == "__main__":
    main()
