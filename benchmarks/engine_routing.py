"""Routing: does the first request offer the tool that answers the question? Needed-tool
recall over the seed questions and over wordings written apart from the routing code
(``routing_set.yaml``; goal ≥ 99%), then follow-ups routed as the engine routes them (against
the conversation's tools so far), with their recall and how many keep the tools array as it
was. Tokens are estimated (characters / 4) over the exact system prompt and tool schemas the
engine would send, as a System Manager (every tool permitted); no model is called.

    uv run python benchmarks/engine_routing.py [--show-misses]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import tempfile
from pathlib import Path
from typing import Any

import yaml

from erp_agent.calls.session import Session
from erp_agent.catalog import Catalog, load_catalog
from erp_agent.config import Settings
from erp_agent.connectors.credentials import Credential
from erp_agent.engine import prompt
from erp_agent.engine.routing import Route, Router
from erp_agent.retrieval.knowledge import KnowledgeBase
from erp_agent.retrieval.settings import make_retriever
from erp_agent.runtime import build_registry
from erp_agent.tools.base import ToolRegistry

SET = Path(__file__).with_name("routing_set.yaml")
GOAL = 0.99
TODAY = dt.date(2026, 11, 30)


def tokens(text: str) -> int:
    return len(text) // 4


def answered(offered: list[str], needs: list[str]) -> bool:
    """One of the alternatives is offered whole."""
    return any(all(n in offered for n in alt.split("+")) for alt in needs)


def request_tokens(route: Route, registry: ToolRegistry, session: Session) -> int:
    tools = [t for t in (registry.get(n) for n in route.offered) if t is not None]
    parts = prompt.build(session, TODAY)
    return tokens(parts.text) + tokens(json.dumps([t.schema(session) for t in tools]))


def recall(
    router: Router,
    registry: ToolRegistry,
    session: Session,
    cases: list[dict[str, Any]],
    label: str,
    show: bool,
) -> tuple[int, int]:
    hits, sizes = 0, []
    for case in cases:
        route = router.route(case["q"], session)
        sizes.append(request_tokens(route, registry, session))
        if answered(route.offered, case["needs"]):
            hits += 1
        elif show:
            print(f"    missed {case['needs']} for {case['q']!r}: offered {route.offered[6:]}")
    print(
        f"  {label}: needed-tool recall {hits}/{len(cases)} = {hits / len(cases):.1%}; "
        f"first request ~{statistics.median(sizes):,.0f} tokens at the median "
        f"(max {max(sizes):,})"
    )
    return hits, len(cases)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args()
    catalog = load_catalog()
    with tempfile.TemporaryDirectory(prefix="bench-routing-") as tmp:
        # The knowledge and record-search tools exist where a search index does.
        retriever = make_retriever(Settings(data_dir=tmp))
        registry = build_registry(
            catalog, retriever=retriever, knowledge=KnowledgeBase(retriever, "default")
        )
        run(catalog, registry, args.show_misses)
        retriever.index.close()


def run(catalog: Catalog, registry: ToolRegistry, show: bool) -> None:
    router = Router(catalog, registry, "erpnext")
    session = Session(
        "bench", "admin@demo.local", Credential.token("a", "k", "s"), frozenset({"System Manager"}),
        allowed_tools=frozenset(registry.names()), default_company="Savanna Trading Ltd",
    )  # fmt: skip
    data = yaml.safe_load(SET.read_text())
    print(
        f"tools registered: {len(registry)}; every request offers {len(router.route('hi', session).offered)} always"
    )
    seed_hits, seed_n = recall(router, registry, session, data["seed"], "seed questions", show)
    new_hits, new_n = recall(router, registry, session, data["unseen"], "unseen wordings", show)
    hits, n = seed_hits + new_hits, seed_n + new_n
    met = "met" if hits / n >= GOAL else "NOT met"
    print(f"  all {n}: needed-tool recall {hits / n:.1%}; goal ≥ {GOAL:.0%}: {met}")
    follow_ups(router, session, data["follow_ups"], show)


def follow_ups(router: Router, session: Session, cases: list[dict[str, Any]], show: bool) -> None:
    hits = same = 0
    for case in cases:
        before = router.route(case["first"], session)
        state = {"offered": before.offered, "modules": before.modules, "entities": before.entities}
        after = router.follow(router.route(case["then"], session), state, session, has_result=True)
        found = answered(after.offered, case["needs"])
        hits += found
        same += after.offered == before.offered
        if show and not found:
            print(f"    missed {case['needs']} for {case['first']!r} → {case['then']!r}")
    n = len(cases)
    print(
        f"  follow-ups: needed-tool recall {hits}/{n} = {hits / n:.0%}; tools array unchanged "
        f"{same}/{n} (the rest only append)"
    )


if __name__ == "__main__":
    main()
