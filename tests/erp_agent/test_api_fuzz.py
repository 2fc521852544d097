"""Bad input never becomes a 500: schemathesis drives every operation of the server's OpenAPI,
signed in as a demo user, with a fixed example budget; zero 5xx allowed. Plus the reproduced
cases: an integer-overflow `limit`, a lone surrogate in a chat message, a 1 MB filter value and a
5,000-value `in` list."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import requests
import schemathesis
import uvicorn
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from server_doubles import build_app, client_for, make_runtime, sign_in

from conftest import DemoERP
from demo_erp.server import free_port
from erp_agent.calls.outcome import Status
from erp_agent.runtime import Runtime

USER = "sales@demo.local"
EXAMPLES = 10  # per operation and mode: about 25 operations stay well under three minutes


@pytest.fixture(scope="module")
def served(demo_erp: DemoERP, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The real server over real HTTP (port 0), in a thread with its own event loop."""
    data = tmp_path_factory.mktemp("fuzz")
    port = free_port()
    ready = threading.Event()
    box: dict[str, Any] = {}

    async def main() -> None:
        runtime = await make_runtime(demo_erp.url, data)
        app = build_app(runtime, data).app
        server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
        )
        box["server"] = server
        task = asyncio.create_task(server.serve())
        while not server.started and not task.done():
            await asyncio.sleep(0.02)
        ready.set()
        await task
        await runtime.aclose()

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    assert ready.wait(30)
    yield f"http://127.0.0.1:{port}"
    box["server"].should_exit = True
    thread.join(timeout=15)


@pytest.fixture(scope="module")
def signed(served: str) -> Iterator[requests.Session]:
    session = requests.Session()
    csrf = session.get(f"{served}/api/auth/csrf").json()["csrf"]
    response = session.post(
        f"{served}/api/auth/sign-in",
        json={"user": USER, "password": "demo"},
        headers={"X-CSRF-Token": csrf},
    )
    assert response.status_code == 200, response.text
    session.headers["X-CSRF-Token"] = response.json()["csrf"]
    yield session
    session.close()


@pytest.fixture(scope="module")
def api_schema(served: str) -> Any:
    return schemathesis.openapi.from_url(f"{served}/openapi.json")


def test_no_operation_answers_5xx(api_schema: Any, signed: requests.Session) -> None:
    """Every operation, with valid (positive) and invalid (negative) inputs; any 5xx fails."""
    failures: list[str] = []
    operations = 0
    for found in api_schema.get_all_operations():
        operation = found.ok()
        if operation.path == "/api/auth/sign-out":
            continue  # would end the shared session for the examples after it
        operations += 1
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(
                max_examples=EXAMPLES,
                deadline=None,
                derandomize=True,  # the same examples every run: a failure reproduces
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            def check(case: Any) -> None:
                response = case.call(session=signed, timeout=60)
                if response.status_code >= 500:
                    failures.append(
                        f"{case.method} {case.formatted_path} {case.query or ''} → "
                        f"{response.status_code}: {response.text[:300]}"
                    )

            try:
                check()
            except Unsatisfiable:
                assert mode is GenerationMode.NEGATIVE  # nothing to get wrong in it
    assert operations >= 20
    assert not failures, "\n".join(failures[:20])


# ------------------------------------------------------------------ the reproduced cases


@pytest.fixture
async def client(demo_erp: DemoERP, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    runtime = await make_runtime(demo_erp.url, tmp_path)
    async with client_for(build_app(runtime, tmp_path).app) as client:
        await sign_in(client, USER)
        yield client
    await runtime.aclose()


@pytest.mark.anyio
async def test_an_overflowing_limit_is_a_validation_error(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/conversations", params={"limit": 2**70})
    assert response.status_code == 422
    assert (await client.get("/api/conversations", params={"limit": 5})).status_code == 200


@pytest.mark.anyio
async def test_a_lone_surrogate_is_refused_in_words(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/api/chat",
        content=b'{"message": "How many invoices \\ud800?"}',
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert "lone surrogate" in response.json()["detail"]
    assert response.json()["field"] == "message"
    assert (await client.get("/api/conversations")).json() == []  # nothing half-written


@pytest.fixture
async def session_and_runtime(
    demo_erp: DemoERP, tmp_path: Path
) -> AsyncIterator[tuple[Any, Runtime]]:
    runtime = await make_runtime(demo_erp.url, tmp_path)
    yield await runtime.sign_in("accounts@demo.local", "demo"), runtime
    await runtime.aclose()


@pytest.mark.anyio
async def test_a_megabyte_filter_value_is_an_error_the_model_can_correct(
    session_and_runtime: tuple[Any, Runtime],
) -> None:
    session, runtime = session_and_runtime
    args = {"filters": [{"field": "customer", "op": "=", "value": "x" * 1_000_000}]}
    outcome = await runtime.gateway.call(session, "sales_invoice.count", args)
    assert outcome.status is Status.INVALID
    assert "1,000,000 characters" in outcome.message


@pytest.mark.anyio
async def test_a_5000_value_in_list_is_sent_in_a_post_body_and_answers(
    session_and_runtime: tuple[Any, Runtime], demo_erp: DemoERP
) -> None:
    from conftest import raw

    session, runtime = session_and_runtime
    names = [r["name"] for r in raw(demo_erp, 'select name from "tabCustomer"')]
    values = [*names, *(f"No Such Customer {i}" for i in range(5000 - len(names)))]
    assert len(values) == 5000
    args = {"filters": [{"field": "customer", "op": "in", "value": values}]}
    outcome = await runtime.gateway.call(session, "sales_invoice.count", args)
    assert outcome.status is Status.OK, outcome.message
    # The ERP's own count over its REST API, as the same user: every customer is in the list,
    # and the count is of submitted invoices, as the tool's is by default.
    async with httpx.AsyncClient(base_url=demo_erp.url) as erp:
        reply = await erp.get(
            "/api/method/frappe.desk.reportview.get_count",
            params={"doctype": "Sales Invoice", "filters": '[["docstatus", "=", 1]]'},
            headers={"Cookie": f"sid={session.credential.sid}"},
        )
    assert outcome.data["count"] == reply.json()["message"] > 0
