"""Cost and failure per answer, for administrators: each turn's model cost (tokens × the
configured price per model, cache reads at their own price), tool calls, latency and outcome
are in the interaction log; the admin view of cost per day, user, organisation and model, and
of the most frequent failed or declined questions, adds up exactly those rows; CSV exports."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from collections.abc import AsyncIterator, Sequence
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_doubles import build_app, client_for, sign_in

from conftest import DemoERP, raw
from erp_agent.config import ModelPrice, Settings
from erp_agent.costs.prices import PriceTable
from erp_agent.errors import ModelUnavailable
from erp_agent.models.base import ChatModel, Completion, Message, ModelProfile, ToolCall, Usage
from erp_agent.runtime import Runtime
from erp_agent.store.records import Interaction
from erp_agent.store.sql_store import open_store

pytestmark = pytest.mark.anyio
PRICES = {
    "gpt-test*": ModelPrice(prompt=2.5, cached=0.25, completion=10.0),
    "claude-test": ModelPrice(prompt=3.0, cached=0.3, cache_write=3.75, completion=15.0),
}
USAGE = Usage(prompt_tokens=1234, cached_tokens=1000, completion_tokens=57)


class PricedModel(ChatModel):
    """Answers every question in one call, reporting ``USAGE`` as gpt-test-mini; a question about
    a customer first reads ``customer`` (one outside a sales user's territory: the ERP refuses);
    "explode" fails."""

    def __init__(self, customer: str) -> None:
        self.profile = ModelProfile("gpt-test-mini")
        self.customer = customer

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        question = next(m.content for m in reversed(messages) if m.role == "user") or ""
        answered = any(m.role == "tool" for m in messages)
        if "explode" in question:
            raise ModelUnavailable("The provider is down.")
        if "customer record" in question and not answered:
            call = ToolCall("c1", "customer.get", json.dumps({"id": self.customer}))
            return Completion(None, [call], USAGE, "gpt-test-mini", "tool_calls")
        return Completion("Done.", [], USAGE, "gpt-test-mini", "stop")


@pytest.fixture
async def runtime(demo_erp: DemoERP, tmp_path: Path) -> AsyncIterator[Runtime]:
    store = open_store(f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite'}")
    settings = Settings(erp_url=demo_erp.url, data_dir=str(tmp_path), prices=PRICES)
    made = await Runtime.create(settings, store=store)
    yield made
    await made.aclose()


async def ask(client: httpx.AsyncClient, message: str) -> None:
    reply = await client.post("/api/chat", json={"message": message})
    assert reply.status_code == 200, reply.text


def expected_micros(row: Interaction) -> int:
    """The independent side: tokens × price, computed here from the log row."""
    price = PRICES["gpt-test*"]
    fresh = row.prompt_tokens - row.cached_tokens - row.cache_write_tokens
    total = (
        Decimal(fresh) * Decimal(str(price.prompt))
        + Decimal(row.cached_tokens) * Decimal(str(price.cached))
        + Decimal(row.completion_tokens) * Decimal(str(price.completion))
    )
    return int(total.quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


async def test_the_cost_view_is_the_interaction_logs_tokens_times_prices(
    runtime: Runtime, demo_erp: DemoERP, tmp_path: Path
) -> None:
    outside = raw(demo_erp, "select name from tabCustomer where territory != 'Nairobi' limit 1")
    customer = str(outside[0]["name"])
    harness = build_app(runtime, tmp_path, model=lambda rt: PricedModel(customer))
    second = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=harness.app), base_url="http://testserver"
    )
    async with client_for(harness.app) as admin, second as sales:
        await sign_in(admin, "admin@demo.local")
        await sign_in(sales, "sales@demo.local")
        await ask(admin, "What did we sell this month?")
        for _ in range(2):
            await ask(sales, "Show me the customer record")  # declined: the ERP refuses it
        await ask(sales, "Please explode")  # failed: the model is down
        await ask(sales, "Top customers?")
        # A turn of a model without a price: counted, not costed.
        await runtime.store.log_interaction(Interaction(
            turn_id="turn_unpriced", conversation_id="c", user="sales@demo.local", org="default",
            message="q", model="mystery-model", outcome="answered", prompt_tokens=500,
            completion_tokens=5, cost_micros=None,
        ))  # fmt: skip

        rows = await runtime.store.interactions(limit=100)
        priced = [r for r in rows if r.model == "gpt-test-mini"]
        assert len(priced) == 4
        assert all(r.cost_micros == expected_micros(r) for r in priced)
        assert {r.outcome for r in rows} >= {"answered", "refused"}
        refused = [r for r in rows if r.outcome == "refused"]
        assert len(refused) == 2
        assert all(r.tools == ["customer.get"] and r.latency_ms > 0 for r in refused)

        today = dt.datetime.now(dt.UTC).date().isoformat()
        by_day = (await admin.get(f"/api/admin/costs?group=day&since={today}&until={today}")).json()
        [day] = by_day["rows"]
        assert day["key"] == today
        assert day["turns"] == len(rows)
        assert day["cost_micros"] == sum(expected_micros(r) for r in priced)
        assert Decimal(day["cost"]) == Decimal(day["cost_micros"]) / 1_000_000
        assert day["unpriced_turns"] == 1 + sum(
            r.cost_micros is None for r in rows if r.model != "mystery-model"
        )
        assert day["prompt_tokens"] == sum(r.prompt_tokens for r in rows)
        assert day["cached_tokens"] == sum(r.cached_tokens for r in rows)
        assert day["tool_calls"] == sum(len(r.tools) for r in rows)
        assert by_day["total"]["cost_micros"] == day["cost_micros"]

        by_user = (await admin.get(f"/api/admin/costs?group=user&since={today}")).json()
        per_user = {r["key"]: r["cost_micros"] for r in by_user["rows"]}
        for user in ("admin@demo.local", "sales@demo.local"):
            assert per_user[user] == sum(expected_micros(r) for r in priced if r.user == user)
        by_org = (await admin.get(f"/api/admin/costs?group=org&since={today}")).json()
        assert [r["key"] for r in by_org["rows"]] == ["default"]

        exported = await admin.get(f"/api/admin/costs.csv?group=user&since={today}")
        assert exported.headers["content-type"].startswith("text/csv")
        table = list(csv.DictReader(io.StringIO(exported.text)))
        assert {r["key"]: Decimal(r["cost"]) for r in table if r["key"] != "total"} == {
            user: Decimal(micros) / 1_000_000 for user, micros in per_user.items()
        }

        failures = (await admin.get(f"/api/admin/failures?since={today}")).json()["questions"]
        assert failures[0]["question"] == "Show me the customer record"
        assert failures[0]["count"] == 2
        assert failures[0]["outcomes"] == {"refused": 2}
        failed_csv = await admin.get(f"/api/admin/failures.csv?since={today}")
        assert "Show me the customer record,2,1" in failed_csv.text

        # Administrators only.
        assert (await sales.get("/api/admin/costs")).status_code == 403


def test_prices_cache_reads_and_writes_at_their_own_price() -> None:
    table = PriceTable(PRICES)
    # Anthropic counts cache reads and writes inside prompt tokens (models/_anthropic_wire).
    assert table.cost_micros(
        "claude-test", prompt=10_000, cached=6_000, cache_write=3_000, completion=100
    ) == 1_000 * 3 + 6_000 * Decimal("0.3") + 3_000 * Decimal("3.75") + 100 * 15  # fmt: skip
    assert table.cost_micros("gpt-test-4", prompt=3, completion=1) == round(3 * 2.5 + 10)
    assert table.cost_micros("unknown", prompt=3, completion=1) is None
    assert table.cost_micros("unknown", prompt=0, completion=0) == 0
