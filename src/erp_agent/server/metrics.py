"""Prometheus metrics, one registry per app (tests build many apps in one process)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from erp_agent.engine.response import TurnResponse


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
            "Wall time of one agent turn.",
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

    def observe_turn(self, response: TurnResponse, seconds: float) -> None:
        self.turn_seconds.labels(response.outcome).observe(seconds)
        for call in response.tools_called:
            self.tool_calls.labels(str(call.get("name", ""))).inc()
        usage = response.usage
        self.tokens.labels("prompt").inc(usage.prompt_tokens)
        self.tokens.labels("cached").inc(usage.cached_tokens)
        self.tokens.labels("completion").inc(usage.completion_tokens)

    def render(self) -> bytes:
        return generate_latest(self.registry)
