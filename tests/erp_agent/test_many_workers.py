"""Many workers, one truth, as real processes: two web workers and queue workers on one
PostgreSQL database, one Redis and one RabbitMQ queue (docs/deployment.md's set-up). A
conversation started on one web worker continues on the other; an admin change made on one
applies on the other; a background turn runs on a queue worker and streams to a browser on
either web worker; a queue worker killed with kill -9 mid-turn is replaced and the turn
finishes without repeating its tool call; a turn that kills its worker every time is stopped
after three tries."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cluster import Cluster, sse
from pg_fixtures import pg_database

from conftest import DemoERP
from erp_agent.models.fake_server import FakeOpenAIServer, FakeReply

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]


@pytest.fixture(scope="module")
def model() -> Iterator[tuple[FakeOpenAIServer, str]]:
    server = FakeOpenAIServer(api_key="test-key", model="fake-model")
    with server.running() as url:
        yield server, url


@pytest.fixture
def cluster(
    demo_erp: DemoERP, tmp_path: Path, model: tuple[FakeOpenAIServer, str]
) -> Iterator[Cluster]:
    fake, url = model
    fake.reset()
    with pg_database() as database_url:
        made = Cluster(demo_erp.url, database_url, tmp_path, model_url=url)
        try:
            yield made
        finally:
            made.stop()


def wait_for(check: Any, what: str, seconds: float = 60) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def ask(client: httpx.Client, base: str, message: str, **extra: Any) -> dict[str, Any]:
    reply = client.post(f"{base}/api/chat", json={"message": message, **extra})
    assert reply.status_code == 200, reply.text
    return next(d for name, d in sse(reply.text) if name == "response")  # type: ignore[return-value]


def text_of(response: dict[str, Any]) -> str:
    return " ".join(b.get("markdown", "") for b in response["blocks"] if b["type"] == "text")


def test_a_conversation_and_admin_changes_span_web_workers(
    cluster: Cluster, model: tuple[FakeOpenAIServer, str]
) -> None:
    fake, _ = model
    a, b = cluster.web(), cluster.web()
    browser = cluster.signed_in(a)  # signed in on A; the same cookie on B
    fake.enqueue(FakeReply.text("First answer, from worker A."))
    first = ask(browser, a, "Hello, who are you?")
    fake.enqueue(FakeReply.text("Second answer, from worker B."))
    second = ask(browser, b, "And what can you do?", conversation_id=first["conversation_id"])
    assert second["conversation_id"] == first["conversation_id"]
    # B sent the model the conversation so far, which only A had seen.
    sent = [m.get("content") for m in fake.requests[-1].body["messages"]]
    assert any("First answer, from worker A." in str(c) for c in sent)
    conversation = browser.get(f"{b}/api/conversations/{first['conversation_id']}").json()
    assert len(conversation["turns"]) == 2
    # Both web workers logged their turn in the one interaction log (read before the budget
    # check below, whose retries run turns of their own until the new budget reaches B).
    logged = {first["turn_id"], second["turn_id"]}
    log = wait_for(
        lambda: (
            (got := browser.get(f"{a}/api/admin/log").json())
            and logged <= {r["turn_id"] for r in got}
            and got
        ),
        "both turns in the log",
        10,
    )
    assert {r["turn_id"] for r in log} == logged
    # An administrator's change on B applies on A within seconds.
    assert browser.get(f"{a}/api/admin/tenant").json()["read_only"] is False
    assert browser.put(f"{b}/api/admin/tenant", json={"read_only": True}).status_code == 200
    wait_for(lambda: browser.get(f"{a}/api/auth/me").json()["read_only"], "read-only on A", 10)
    budgets = browser.put(f"{a}/api/admin/budgets", json={"org": "default", "tokens": 1})
    assert budgets.status_code == 200
    over = wait_for(
        lambda: (
            (r := browser.post(f"{b}/api/chat", json={"message": "hi"})).status_code == 429 and r
        ),
        "the budget on B",
        10,
    )
    assert "1 tokens" in over.json()["detail"]


def test_a_background_turn_streams_to_either_web_worker(
    cluster: Cluster, model: tuple[FakeOpenAIServer, str]
) -> None:
    fake, _ = model
    a, b = cluster.web(), cluster.web()
    cluster.worker()
    browser = cluster.signed_in(a)
    fake.enqueue(FakeReply.slow(1.0, FakeReply.text("Answered on the queue.")))
    queued = browser.post(f"{a}/api/chat", json={"message": "Hello", "background": True})
    assert queued.status_code == 202, queued.text
    turn_id = queued.json()["turn_id"]
    stream = browser.get(f"{b}/api/turns/{turn_id}/events", timeout=90)
    events = sse(stream.text)
    kinds = [name for name, _ in events]
    assert "progress" in kinds
    assert kinds[-1] == "response"
    response: Any = events[-1][1]
    assert "Answered on the queue." in text_of(response)
    status = browser.get(f"{a}/api/turns/{turn_id}").json()
    assert (status["status"], status["attempts"]) == ("done", 1)


def test_a_worker_killed_mid_turn_is_replaced_and_nothing_runs_twice(
    cluster: Cluster, model: tuple[FakeOpenAIServer, str]
) -> None:
    fake, _ = model
    a = cluster.web()
    browser = cluster.signed_in(a)
    first = cluster.worker("worker-1")
    fake.enqueue(
        FakeReply.call("tools.search", {"query": "customers"}),
        FakeReply.slow(60, FakeReply.text("(never delivered)")),
    )
    queued = browser.post(f"{a}/api/chat", json={"message": "Find customers", "background": True})
    turn_id = queued.json()["turn_id"]
    # The tool has run and the model is being asked again: the worker dies now.
    wait_for(lambda: len(fake.requests) >= 2, "the second model call", 90)
    Cluster.kill(first)
    fake.enqueue(FakeReply.text("Found them, once."))
    cluster.worker("worker-2")
    done = wait_for(
        lambda: (s := browser.get(f"{a}/api/turns/{turn_id}").json())["status"] == "done" and s,
        "the turn to finish on the second worker",
        120,
    )
    assert done["attempts"] == 2
    assert "Found them, once." in text_of(done["response"])
    detail = browser.get(f"{a}/api/admin/log/{turn_id}").json()
    assert [e["tool"] for e in detail["events"]] == ["tools.search"]  # not run again
    assert detail["outcome"] == "answered"


def test_a_turn_that_kills_its_worker_every_time_is_stopped_after_three_tries(
    cluster: Cluster, model: tuple[FakeOpenAIServer, str]
) -> None:
    fake, _ = model
    a = cluster.web()
    browser = cluster.signed_in(a)
    queued = browser.post(f"{a}/api/chat", json={"message": "Poison", "background": True})
    turn_id = queued.json()["turn_id"]
    for attempt in (1, 2, 3):
        fake.enqueue(FakeReply.slow(60, FakeReply.text("(never delivered)")))
        seen = len(fake.requests)
        worker = cluster.worker(f"worker-{attempt}")
        wait_for(lambda n=seen: len(fake.requests) > n, f"try {attempt} to reach the model", 90)  # type: ignore[misc]
        Cluster.kill(worker)
    cluster.worker("worker-4")
    done = wait_for(
        lambda: (s := browser.get(f"{a}/api/turns/{turn_id}").json())["status"] == "failed" and s,
        "the poison turn to be stopped",
        90,
    )
    assert done["attempts"] == 3
    assert "stopped the server 3 times" in text_of(done["response"])


def test_serve_with_several_workers_on_one_port(cluster: Cluster) -> None:
    base = cluster.web(workers=2, model="offline")
    browser = cluster.signed_in(base)
    answers = {ask(browser, base, "How many customers do we have?")["turn_id"] for _ in range(4)}
    assert len(answers) == 4
    assert browser.get(f"{base}/healthz").json()["status"] == "ok"
