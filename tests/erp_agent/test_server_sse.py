"""The chat stream over real HTTP (uvicorn on a loopback port): events arrive while the turn runs."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_doubles import SALES_BY_CUSTOMER, LiveServer, serve_in_thread

DELAY = 0.4  # seconds per model call


@pytest.fixture
def live(demo_erp: Any, tmp_path: Path) -> Iterator[LiveServer]:
    server = serve_in_thread(demo_erp.url, tmp_path, delay=DELAY)
    yield server
    server.stop()


@contextmanager
def signed_in_client(url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=url, timeout=30) as client:
        yield _sign_in(client)


def _sign_in(client: httpx.Client) -> httpx.Client:
    csrf = client.get("/api/auth/csrf").json()["csrf"]
    answer = client.post(
        "/api/auth/sign-in",
        json={"user": "admin@demo.local", "password": "demo"},
        headers={"X-CSRF-Token": csrf},
    )
    client.headers["X-CSRF-Token"] = answer.json()["csrf"]
    return client


def test_progress_streams_before_the_response(live: LiveServer) -> None:
    with signed_in_client(live.url) as client:
        arrivals: list[tuple[float, str, dict[str, Any]]] = []
        started = time.monotonic()
        with client.stream("POST", "/api/chat", json={"message": SALES_BY_CUSTOMER}) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            assert response.headers["cache-control"] == "no-cache"
            event = ""
            for line in response.iter_lines():
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: "):
                    arrivals.append((time.monotonic() - started, event, json.loads(line[6:])))
    kinds = [kind for _, kind, _ in arrivals]
    assert kinds[0] == "progress"
    assert kinds[-1] == "response"
    first_progress, answered = arrivals[0][0], arrivals[-1][0]
    # Four model calls of DELAY each: the first event came well before the answer.
    assert answered - first_progress >= 3 * DELAY
    labels = [data.get("label") for _, kind, data in arrivals if kind == "progress"]
    assert "Thinking…" in labels
    assert "Running metrics.query…" in labels
    blocks = arrivals[-1][2]["blocks"]
    assert [b["type"] for b in blocks] == ["text", "table", "chart"]


def test_a_turn_finishes_and_is_stored_when_the_client_leaves(live: LiveServer) -> None:
    with signed_in_client(live.url) as client:
        with client.stream("POST", "/api/chat", json={"message": SALES_BY_CUSTOMER}) as response:
            for line in response.iter_lines():
                if line.startswith("event: progress"):
                    break  # the browser tab closes mid-turn
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            conversations = client.get("/api/conversations").json()
            if conversations:
                turns = client.get(f"/api/conversations/{conversations[0]['id']}").json()["turns"]
                if turns and turns[0]["response"]:
                    break
            time.sleep(0.2)
        assert turns[0]["status"] == "done"
        assert [b["type"] for b in turns[0]["response"]["blocks"]] == ["text", "table", "chart"]


def test_the_model_text_streams_as_delta_events_before_the_response(live: LiveServer) -> None:
    with signed_in_client(live.url) as client:
        seen: list[tuple[str, dict[str, Any]]] = []
        with client.stream("POST", "/api/chat", json={"message": SALES_BY_CUSTOMER}) as response:
            event = ""
            for line in response.iter_lines():
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: "):
                    seen.append((event, json.loads(line[6:])))
    kinds = [kind for kind, _ in seen]
    assert "delta" in kinds
    assert kinds.index("delta") < kinds.index("response")
    streamed = "".join(data["text"] for kind, data in seen if kind == "delta").strip()
    final = seen[-1][1]["blocks"][0]["markdown"]
    assert streamed  # the answer's words arrived before the structured response
    assert streamed.split()[:3] == final.split()[:3]
