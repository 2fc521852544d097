"""The engine's CPU per model request: one chat-completions call with a turn's 26 tool schemas
and a ten-message history, sent the way the engine sends it (``OpenAICompatibleModel``, the
client's own ``post`` with a wire-shaped body) and, for comparison, through the SDK's typed
``chat.completions.create``, which walks every parameter against its type hints first.

Both go to the package's fake OpenAI server on loopback (in a thread); only this thread's CPU
is counted (``time.thread_time``), and the two ways alternate call by call, so a noisy machine
slows both alike and the ratio holds.

    uv run python benchmarks/model_request.py --calls 200
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import openai

from demo_erp.context import Settings as ErpSettings
from demo_erp.seed import seed
from demo_erp.server import running
from erp_agent.config import ModelSettings, Settings
from erp_agent.models.base import Message
from erp_agent.models.fake_server import FakeOpenAIServer, FakeReply
from erp_agent.models.openai_compatible import OpenAICompatibleModel, wire_messages, wire_tools
from erp_agent.runtime import Runtime
from erp_agent.store.memory import MemoryStore

TODAY = dt.date(2026, 11, 30)
TOOLS = 26


def history() -> list[Message]:
    turns = [
        ("How are sales this month?", "Sales this month are KES 3,264,284.75 over 41 invoices."),
        ("And last month?", "Last month: KES 2,902,118.40 over 37 invoices."),
        ("Which customers owe us most?", "Gulf Traders owes KES 3,244,895.43, the most."),
        ("Break that down by branch", "Nairobi 41 %, Mombasa 33 %, Kisumu 26 %."),
    ]
    messages = [Message("system", "You are the company's ERP assistant. " * 40)]
    for question, answer in turns:
        messages += [Message("user", question), Message("assistant", answer)]
    return [*messages, Message("user", "Show the top 5 as a chart.")]


async def measure(url: str, calls: int) -> None:
    runtime = await Runtime.create(Settings(erp_url=url), store=MemoryStore())
    tools = [tool.schema() for tool in list(runtime.registry)[:TOOLS]]
    await runtime.aclose()
    messages = history()
    server = FakeOpenAIServer(api_key="bench")
    server.enqueue(*[FakeReply.text("Done.") for _ in range(2 * calls + 2)])
    with server.running() as base:
        settings = ModelSettings(
            provider="openai", model="gpt-4o-mini", base_url=base, api_key="bench"
        )
        model = OpenAICompatibleModel(settings)
        sdk = openai.AsyncOpenAI(base_url=base, api_key="bench", max_retries=0)
        body_tools: Any = wire_tools(tools)
        body_messages = wire_messages(messages)

        async def engine() -> None:
            await model.complete(messages, tools)

        async def typed() -> None:
            await sdk.chat.completions.create(
                model="gpt-4o-mini", messages=body_messages, tools=body_tools
            )

        spent: dict[str, list[float]] = {"engine": [], "typed create": []}
        await engine(), await typed()  # warm: connections open, caches filled
        for _ in range(calls):
            for name, call in (("engine", engine), ("typed create", typed)):
                started = time.thread_time()
                await call()
                spent[name].append((time.thread_time() - started) * 1000)
        await model.aclose()
        await sdk.close()
    size = len(str(body_tools)) + len(str(body_messages))
    print(f"{calls} calls each, {len(tools)} tools, {len(messages)} messages (~{size:,} chars)")
    for name, samples in spent.items():
        print(
            f"  {name:<13} CPU per request: p50 {statistics.median(samples):6.2f} ms  "
            f"mean {statistics.fmean(samples):6.2f} ms"
        )
    ratio = statistics.median(spent["typed create"]) / statistics.median(spent["engine"])
    print(f"  the typed create costs {ratio:.1f}x the engine's request")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        db = Path(work) / "demo.sqlite"
        seed(db, today=TODAY, scale=0.02)
        with running(ErpSettings(db_path=str(db), today=TODAY)) as erp:
            asyncio.run(measure(erp.url, args.calls))


if __name__ == "__main__":
    main()
