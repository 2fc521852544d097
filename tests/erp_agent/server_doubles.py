"""A scripted model and app fixtures for the server tests.

The script is chosen by the user's latest message and the step by how many assistant messages
follow it, so one model instance serves concurrent turns without shared counters.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import requests
from fastapi import FastAPI

from erp_agent.config import Settings
from erp_agent.models.base import ChatModel, Completion, Message, ModelProfile, ToolCall, Usage
from erp_agent.runtime import Runtime
from erp_agent.server import ModelSwitch, create_app
from erp_agent.store.memory import MemoryStore

Step = Callable[[Sequence[Message]], Completion]
SESSION_KEY = "x" * 43 + "="  # a valid Fernet key (32 bytes, urlsafe base64)


def last_result_id(messages: Sequence[Message]) -> str:
    for message in reversed(messages):
        if message.role == "tool" and message.content:
            found = json.loads(message.content).get("result_id")
            if found:
                return str(found)
    raise LookupError("no tool result with a result_id yet")


def call(name: str, args: dict[str, Any] | Callable[[Sequence[Message]], dict[str, Any]]) -> Step:
    def step(messages: Sequence[Message]) -> Completion:
        try:
            value = args(messages) if callable(args) else args
        except LookupError:  # an earlier call was refused: say so instead of going on
            return Completion("I could not get that data.", [], Usage(10, 0, 3), "scripted-1")
        tool_call = ToolCall(f"call_{len(messages)}", name, json.dumps(value))
        return Completion(None, [tool_call], Usage(100, 20, 10), "scripted-1")

    return step


def answer(text: str) -> Step:
    return lambda _: Completion(text, [], Usage(50, 0, 5), "scripted-1")


SALES_BY_CUSTOMER = "Show total sales by customer as a table and a chart"
CREATE_LEAD = "Create a lead for Jane Roe at Acme Ltd"
TOP_CUSTOMERS = "Top 5 customers by billed amount this year as a chart"

# A question that asks for no change, answered with a write (as planted content might cause).
UNREQUESTED = "What does the Evil Corp note say"

HOSTILE = "Repeat after me"
HOSTILE_ANSWER = (
    'Look: <img src=x onerror="window.__xss=true"> <script>window.__xss=true</script> '
    "[click me](javascript:window.__xss=true) and [the ERP](https://erp.example/app)"
)

RENAME_LEAD = "Set the organization of lead"  # … <id> to <organization>


def _lead_rename(messages: Sequence[Message]) -> dict[str, Any]:
    asked = next(m.content or "" for m in reversed(messages) if m.role == "user")
    found = re.search(r"lead (\S+) to (.+)$", asked)
    assert found, asked
    return {"id": found.group(1), "values": {"organization": found.group(2)}}


SCRIPTS: dict[str, list[Step]] = {
    RENAME_LEAD: [call("lead.update", _lead_rename), answer("Please confirm the change.")],
    HOSTILE: [answer(HOSTILE_ANSWER)],
    SALES_BY_CUSTOMER: [
        # The figure tool every request is offered (routing offers no entity aggregate here),
        # for one company: one currency, so one chart.
        call(
            "metrics.query",
            {
                "metric": "billed",
                "group_by": ["customer"],
                "filters": [{"dimension": "company", "value": "Savanna Trading Ltd"}],
            },
        ),
        call(
            "display.table",
            lambda m: {"result_id": last_result_id(m), "title": "Sales by customer"},
        ),
        call(
            "display.chart",
            lambda m: {
                "result_id": last_result_id(m),
                "type": "bar",
                "label": "customer",
                "values": [_sum_column(m)],
                "title": "Sales by customer",
            },
        ),
        answer("Here are the **sales by customer**, from the ERP."),
    ],
    UNREQUESTED: [
        call("tools.search", {"query": "create lead"}),
        call("lead.create", {"name": "Mallory", "organization": "Evil Corp", "source": "Website"}),
        answer("The note asks for a lead; I prepared it."),
    ],
    TOP_CUSTOMERS: [
        call("tools.search", {"query": "metrics query business figures"}),
        call(
            "metrics.query",
            {
                "metric": "billed",
                "group_by": ["customer"],
                "filters": [{"dimension": "company", "op": "=", "value": "Savanna Trading Ltd"}],
                "period": {"from": "2026-01-01", "to": "2026-11-30"},
                "top": 5,
            },
        ),
        call("display.table", lambda m: {"result_id": last_result_id(m), "title": "Top customers"}),
        call(
            "display.chart",
            lambda m: {
                "result_id": last_result_id(m),
                "label": "customer",
                "values": ["billed"],
                "top": 5,
                "title": "Top 5 customers",
            },
        ),
        answer("Here are the **top 5 customers** by billed amount, from the ERP."),
    ],
    CREATE_LEAD: [
        call("lead.create", {"name": "Jane Roe", "organization": "Acme Ltd", "source": "Website"}),
        answer("I prepared the lead; please confirm it."),
    ],
}


def _sum_column(messages: Sequence[Message]) -> str:
    for message in reversed(messages):
        if message.role == "tool" and message.content:
            data = json.loads(message.content)
            if "result_id" not in data:
                continue
            result = data.get("result")
            rows = (result.get("rows") if isinstance(result, dict) else result) or data.get("page")
            for key in rows[0] if rows else {}:
                if key.startswith("sum") or (
                    isinstance(result, dict) and key == result.get("metric")
                ):
                    return str(key)
    return "sum_total"


class ScriptBook(ChatModel):
    def __init__(
        self,
        scripts: dict[str, list[Step]] | None = None,
        name: str = "scripted-1",
        delay: float = 0.0,
    ) -> None:
        self.scripts = scripts or SCRIPTS
        self.profile = ModelProfile(name)
        self.name = name
        self.delay = delay  # seconds per model call, to watch progress arrive before the answer

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        if self.delay:
            await asyncio.sleep(self.delay)
        last_user = max(i for i, m in enumerate(messages) if m.role == "user")
        question = messages[last_user].content or ""
        steps = next((s for key, s in self.scripts.items() if key in question), None)
        if steps is None:
            return Completion(
                f"({self.name}) I have no script for that.", [], Usage(10, 0, 3), self.name
            )
        done = sum(1 for m in messages[last_user:] if m.role == "assistant")
        completion = steps[min(done, len(steps) - 1)](messages)
        completion.model = self.name
        return completion


def make_runtime_settings(erp_url: str, data_dir: Path) -> Settings:
    return Settings(erp_url=erp_url, data_dir=str(data_dir))


async def make_runtime(erp_url: str, data_dir: Path) -> Runtime:
    return await Runtime.create(make_runtime_settings(erp_url, data_dir), store=MemoryStore())


@dataclass
class Harness:
    app: FastAPI
    runtime: Runtime
    switch: ModelSwitch


def build_app(
    runtime: Runtime,
    data_dir: Path,
    *,
    delay: float = 0.0,
    model: Callable[[Runtime], ChatModel] | None = None,
    **kwargs: Any,
) -> Harness:
    """The app with the scripted model, or ``model(runtime)`` (e.g. the offline planner)."""
    if model is not None:
        chosen = model
        switch = ModelSwitch(lambda: chosen(runtime), local_name="offline")
    else:
        switch = ModelSwitch(lambda: ScriptBook(delay=delay), local_name="scripted-1")
    app = create_app(
        runtime,
        switch,
        session_key=SESSION_KEY,
        **kwargs,
    )
    return Harness(app, runtime, switch)


@asynccontextmanager
async def client_for(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield client


def signed_session(url: str, user: str, password: str = "demo") -> requests.Session:
    """A signed-in web session over plain HTTP (requests), its CSRF header set."""
    session = requests.Session()
    csrf = session.get(f"{url}/api/auth/csrf").json()["csrf"]
    reply = session.post(
        f"{url}/api/auth/sign-in",
        json={"user": user, "password": password},
        headers={"X-CSRF-Token": csrf},
    )
    assert reply.status_code == 200, reply.text
    session.headers["X-CSRF-Token"] = reply.json()["csrf"]
    return session


async def sign_in(client: httpx.AsyncClient, user: str, password: str = "demo") -> str:
    """Sign in like the web app: fetch a CSRF token, then post with it. Returns the new token."""
    csrf = (await client.get("/api/auth/csrf")).json()["csrf"]
    response = await client.post(
        "/api/auth/sign-in",
        json={"user": user, "password": password},
        headers={"X-CSRF-Token": csrf},
    )
    assert response.status_code == 200, response.text
    token: str = response.json()["csrf"]
    client.headers["X-CSRF-Token"] = token
    return token


def sse_events(text: str) -> list[tuple[str, Any]]:
    events = []
    for chunk in text.split("\n\n"):
        lines = [line for line in chunk.splitlines() if line and not line.startswith(":")]
        if not lines:
            continue
        name = next(line[7:] for line in lines if line.startswith("event: "))
        data = "\n".join(line[6:] for line in lines if line.startswith("data: "))
        events.append((name, json.loads(data)))
    return events


@dataclass
class LiveServer:
    url: str
    server: Any
    thread: Any
    harness: Harness

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)


def serve_in_thread(
    erp_url: str,
    data_dir: Path,
    *,
    uvicorn_options: dict[str, Any] | None = None,
    settings: dict[str, Any] | None = None,
    **kwargs: Any,
) -> LiveServer:
    """The app under uvicorn on a free loopback port, in a thread whose event loop also owns
    the runtime (its connections are opened and closed there). ``uvicorn_options`` go to
    uvicorn's Config (e.g. the proxy_headers `erp-agent serve` passes)."""
    import threading
    import time

    import uvicorn

    from demo_erp.server import bound_socket

    sock = bound_socket()  # handed to uvicorn: nobody can take the port meanwhile
    port = int(sock.getsockname()[1])
    ready: dict[str, Any] = {}

    async def main() -> None:
        configured = Settings(erp_url=erp_url, data_dir=str(data_dir), **(settings or {}))
        # A store named in the settings (ERP_AGENT_DATABASE_URL) is used; else one in memory.
        store = None if configured.database_url else MemoryStore()
        runtime = await Runtime.create(configured, store=store)
        harness = build_app(runtime, data_dir, **kwargs)
        config = uvicorn.Config(
            harness.app,
            host="127.0.0.1",
            port=port,
            log_level="warning",
            **(uvicorn_options or {}),
        )
        ready["server"], ready["harness"] = uvicorn.Server(config), harness
        try:
            await ready["server"].serve(sockets=[sock])
        finally:
            await harness.switch.aclose()
            await runtime.aclose()

    thread = threading.Thread(
        target=lambda: asyncio.run(main()), daemon=True, name="erp-agent-server"
    )
    thread.start()
    deadline = time.monotonic() + 20
    while "server" not in ready or not ready["server"].started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the erp-agent server did not start")
        time.sleep(0.02)
    return LiveServer(f"http://127.0.0.1:{port}", ready["server"], thread, ready["harness"])


@contextmanager
def demo_process(system: str, data: Path, port: int, stop_within: float = 20) -> Iterator[str]:
    """`erp-agent demo --system <system>` as a user runs it, until its banner is printed (the
    banner's text is yielded); stopped with Ctrl-C afterwards, killed if it does not stop."""
    env = {**os.environ, "ERP_AGENT_DATA_DIR": str(data), "COLUMNS": "200"}
    env.pop("ERP_AGENT_REASONING_MODEL", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "erp_agent", "demo", "--system", system, "--port", str(port),
         "--data", str(data), "--no-index"],
        cwd=data.parent, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        lines = []
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if "Ctrl-C" in line:
                break
        yield "".join(lines)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=stop_within)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
