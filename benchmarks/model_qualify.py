"""Qualify a model before trusting it: the shipped eval suites against any OpenAI-compatible
endpoint, with accuracy, groundedness, tokens and seconds per turn for each question family.

    uv run python benchmarks/model_qualify.py http://localhost:11434/v1 qwen2.5:7b
    uv run python benchmarks/model_qualify.py http://gpu:8000/v1 Qwen/Qwen3-32B --api-key-env VLLM_KEY

Without --erp-url a demo ERP is seeded and served for the run (figures are checked against its
REST API). ``--self-check`` serves the offline planner behind a local OpenAI-compatible endpoint
instead of URL MODEL: the whole path (HTTP, tool calls, quirk handling) without any weights.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import statistics
import tempfile
import time
from collections import defaultdict
from contextlib import ExitStack
from pathlib import Path

from demo_erp.context import Settings as ErpSettings
from demo_erp.seed import seed
from demo_erp.server import running
from erp_agent.config import ModelSettings, Settings
from erp_agent.evals import load_suites, run_suites
from erp_agent.evals.runner import CaseResult, EvalRun
from erp_agent.models.fake_server import FakeOpenAIServer, serving
from erp_agent.planner import OfflinePlanner
from erp_agent.retrieval.knowledge import packaged_root
from erp_agent.runtime import Runtime
from erp_agent.store.memory import MemoryStore

TODAY = dt.date(2026, 11, 30)
# Suites that score answers (the routing suite checks tool selection only, without a model).
DEFAULT_SUITES = [
    "aggregation_by_retrieval",
    "exact_identifier",
    "cross_tenant",
    "stale_record",
    "out_of_scope",
    "groundedness",
    "paraphrase",
]


async def qualify(
    erp_url: str, model: ModelSettings, suites: list[str], turn_seconds: float | None
) -> tuple[EvalRun, dict[str, list[float]]]:
    settings = Settings(erp_url=erp_url, reasoning_model=model)
    if turn_seconds:
        settings = settings.model_copy(
            update={"engine": settings.engine.model_copy(update={"turn_deadline": turn_seconds})}
        )
    runtime = await Runtime.create(settings, store=MemoryStore())
    usage: dict[str, list[float]] = defaultdict(list)
    runtime.models.on_usage = lambda event: usage["completion"].append(
        event.usage.completion_tokens
    )
    # Process questions are answered from the starter knowledge base, as `erp-agent demo` has it.
    await asyncio.to_thread(runtime.knowledge.index_path, packaged_root())
    chat = runtime.models.model("reasoning", org="qualify")  # no fallback: the model alone
    try:
        # One question at a time: the seconds per turn are the model's, not a queue's.
        run = await run_suites(
            runtime, chat, load_suites(suites), password="demo", today=TODAY, concurrency=1
        )
    finally:
        await runtime.aclose()
    return run, usage


def report(run: EvalRun, seconds: float, completion: list[float]) -> None:
    cases = [c for s in run.suites for c in s.cases]
    by_family: dict[str, list[CaseResult]] = defaultdict(list)
    for case in cases:
        by_family[case.family or case.suite].append(case)
    print(f"model {run.model}: {len(cases)} cases in {seconds:.0f} s")
    header = f"{'family':34} {'cases':>5} {'accuracy':>8} {'grounded':>8} {'prompt tok/turn':>15} {'s/turn':>7}"
    print(header)
    print("-" * len(header))
    for family, group in sorted(by_family.items()):
        turns = sum(_turns(c) for c in group)
        print(
            f"{family[:34]:34} {len(group):5d} {_share(c.passed for c in group):8.2f} "
            f"{_share(c.grounded for c in group):8.2f} {sum(c.prompt_tokens for c in group) / turns:15.0f} "
            f"{sum(c.latency_ms for c in group) / 1000 / turns:7.2f}"
        )
    turns = sum(_turns(c) for c in cases)
    print("-" * len(header))
    print(
        f"{'all':34} {len(cases):5d} {_share(c.passed for c in cases):8.2f} "
        f"{_share(c.grounded for c in cases):8.2f} {sum(c.prompt_tokens for c in cases) / turns:15.0f} "
        f"{sum(c.latency_ms for c in cases) / 1000 / turns:7.2f}"
    )
    if completion:
        print(
            f"completion tokens per model call: mean {statistics.mean(completion):.0f}, "
            f"calls {len(completion)}"
        )
    errors = [c for c in cases if c.error]
    for case in errors[:10]:
        print(f"  error {case.suite}/{case.case}: {case.error}")


def _turns(case: CaseResult) -> int:
    return max(1, case.answer.count("\n---\n") + 1)


def _share(flags: object) -> float:
    values = list(flags)  # type: ignore[call-overload]
    return sum(1 for v in values if v) / len(values) if values else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("url", nargs="?", help="the endpoint, e.g. http://localhost:11434/v1")
    parser.add_argument("model", nargs="?", help="the model name the server serves")
    parser.add_argument("--api-key-env", help="variable holding the endpoint's key, if any")
    parser.add_argument("--erp-url", help="an ERP to run against (default: a seeded demo ERP)")
    parser.add_argument("--suite", action="append", help="suite name (repeatable)")
    parser.add_argument("--context-window", type=int, default=8192)
    parser.add_argument("--turn-seconds", type=float, help="turn deadline (default: 600)")
    parser.add_argument("--self-check", action="store_true", help="serve the offline planner")
    parser.add_argument("--scale", type=float, default=0.1, help="demo data volume")
    args = parser.parse_args()
    if not args.self_check and not (args.url and args.model):
        parser.error("give URL MODEL, or --self-check")
    with ExitStack() as stack:
        url, name = args.url, args.model
        if args.self_check:
            server = FakeOpenAIServer(
                api_key="no-key",
                context_limit=args.context_window,
                responder=serving(OfflinePlanner()),
            )
            url, name = stack.enter_context(server.running()), "offline-planner-over-http"
        erp_url = args.erp_url
        if erp_url is None:
            path = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "demo.sqlite"
            seed(path, today=TODAY, scale=args.scale)
            erp_url = stack.enter_context(running(ErpSettings(db_path=str(path), today=TODAY))).url
        table = {"model": f"openai-compatible:{name}", "base_url": url}
        table |= {"context_window": args.context_window}
        if args.api_key_env:
            table["api_key_env"] = args.api_key_env
        model = ModelSettings.model_validate(table)
        started = time.perf_counter()
        run, usage = asyncio.run(
            qualify(erp_url, model, args.suite or DEFAULT_SUITES, args.turn_seconds)
        )
        report(run, time.perf_counter() - started, usage["completion"])


if __name__ == "__main__":
    main()
