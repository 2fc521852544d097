"""Prometheus metrics, one registry per app (tests build many apps in one process); a
subscriber of the turns' event stream.

Several web workers (`erp-agent serve --workers N`) count in Prometheus' multiprocess mode: the
serve command points ``PROMETHEUS_MULTIPROC_DIR`` at a folder of its own before the workers
start, each worker's counters live in files there, and ``/metrics`` on any worker adds up every
worker's (dead ones' too, so counters never go back), so a scrape through the load balancer
sees the deployment's totals whichever worker answers it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

from erp_agent.events import Event, ModelCalled, ProposalDecided, ProposalMade, TurnFinished
from erp_agent.store.records import Decision

SHARED_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
_PROPOSAL_DECISIONS = frozenset({Decision.CONFIRMED, Decision.REJECTED, Decision.ERP_REFUSED})


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "erp_agent_http_requests",
            "HTTP requests by route and status.",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.turn_seconds = Histogram(
            "erp_agent_turn_seconds",
            "Wall time of one agent turn, by its outcome (answered, failed, refused, interrupted).",
            ["outcome"],
            buckets=(0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 40, 80, 160),
            registry=self.registry,
        )
        self.tool_calls = Counter(
            "erp_agent_tool_calls", "Tool calls made by turns.", ["tool"], registry=self.registry
        )
        self.tokens = Counter(
            "erp_agent_tokens", "Model tokens by kind.", ["kind"], registry=self.registry
        )
        self.model_seconds = Histogram(
            "erp_agent_model_call_seconds",
            "Wall time of one model call.",
            buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60),
            registry=self.registry,
        )
        self.proposals = Counter(
            "erp_agent_proposals",
            "Proposals made, confirmed and rejected.",
            ["decision"],
            registry=self.registry,
        )
        self.cache = Counter(
            "erp_agent_response_cache",
            "Response cache look-ups by kind (exact, semantic) and result (hit, miss).",
            ["kind", "result"],
            registry=self.registry,
        )

    def on_event(self, event: Event) -> None:
        if isinstance(event, TurnFinished):
            self.turn_seconds.labels(event.outcome).observe(event.latency_ms / 1000)
            for tool in event.tools:
                self.tool_calls.labels(tool).inc()
        elif isinstance(event, ModelCalled):
            self.model_seconds.observe(event.latency_ms / 1000)
            self.tokens.labels("prompt").inc(event.prompt_tokens)
            self.tokens.labels("cached").inc(event.cached_tokens)
            self.tokens.labels("completion").inc(event.completion_tokens)
        elif isinstance(event, ProposalMade):
            self.proposals.labels("made").inc()
        elif isinstance(event, ProposalDecided) and event.decision in _PROPOSAL_DECISIONS:
            # From any channel (web, API, MCP): the gateway publishes every decision.
            self.proposals.labels(str(event.decision)).inc()

    def render(self) -> bytes:
        if os.environ.get(SHARED_VARIABLE):  # every worker's counts, from the shared folder
            shared = CollectorRegistry()
            collector: Any = MultiProcessCollector  # registers itself; untyped upstream
            collector(shared)
            return generate_latest(shared)
        return generate_latest(self.registry)


def share_between_workers(folder: Path) -> None:
    """Before N workers start: count in ``folder`` (emptied first: a previous run's counts
    would be added to this one's). The workers inherit the variable and must import
    prometheus_client after it is set (uvicorn starts them as new interpreters)."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    os.environ[SHARED_VARIABLE] = str(folder)
