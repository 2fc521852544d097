"""Hosted mode: the ERP plugin's executor (plain Python, run against the demo ERP over its REST
API as the asking user) drives relay turns on the running server. A figure matches the ERP's
REST API, a branch manager is refused another branch's invoice, a write stays a proposal until
the user confirms it (then the document's owner is that user), the relay answers with no ERP
to connect to, and the protocol refuses replays, reorders, strangers and oversized results."""

from __future__ import annotations

import asyncio
import datetime as dt
import sqlite3
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest
from channel_fixtures import ADMIN, OwnERP, admin_client, agent, own_erp, rest_names, revenue
from server_doubles import LiveServer

from erp_agent.config import Settings
from erp_agent.evals.score import figure_present
from erp_agent.models.testing import ScriptedModel
from erp_agent.planner import OfflinePlanner
from erp_agent.relay.hub import RelayHub
from erp_agent.runtime import Runtime
from erp_agent.store.memory import MemoryStore

sys.path.insert(0, str(Path(__file__).parents[2] / "integrations" / "frappe" / "erp_agent_plugin"))
from erp_agent_plugin.executor import execute, run_turn
from erp_agent_plugin.protocol import SpecRefused, check
from erp_agent_plugin.relay_client import HttpRelay, assertion
from erp_agent_plugin.rest_api import RestApi

__all__ = ["agent", "own_erp"]
KISUMU = "kisumu.manager@demo.local"


def org_key(url: str, org: str = "default") -> str:
    """A relay key, issued as an administrator does: the organisation registered first."""
    client = admin_client(url)
    try:
        if org != "default":
            registered = client.post("/api/admin/organisations", json={"org": org})
            assert registered.status_code in (200, 409), registered.text
        reply = client.post("/api/admin/api-keys/org", json={"org": org, "label": "plugin"})
    finally:
        client.close()
    assert reply.status_code == 200, reply.text
    return str(reply.json()["key"])


@pytest.fixture(scope="module")
def relay(agent: LiveServer) -> HttpRelay:
    return HttpRelay(agent.url, org_key(agent.url))


def signed(body: dict[str, Any], key: str, org: str = "default", **options: Any) -> dict[str, Any]:
    """``body`` with the plugin's assertion of its user (as the plugin's HttpRelay adds it)."""
    return {**body, "assertion": assertion(key, org, str(body["user"]), **options)}


def _markdown(reply: Mapping[str, Any]) -> str:
    assert reply["status"] == "final", reply
    return str(reply["markdown"])


def test_a_figure_through_the_plugin_is_the_erps_own(relay: HttpRelay, own_erp: OwnERP) -> None:
    seen: list[dict[str, Any]] = []
    reply = run_turn(
        relay, RestApi(own_erp.url, ADMIN, "demo"), ADMIN,
        message="What was our revenue this year?", on_calls=seen.extend,
    )  # fmt: skip
    truth = revenue(own_erp.url, dt.date.today().year)
    text = _markdown(reply)
    assert all(figure_present(text, v) for v in truth), (truth, text[:800])
    assert {c["method"] for c in seen} >= {"get_roles", "has_permission", "get_list"}
    assert "/app/" not in text or "http" not in text.split("/app/")[0][-8:]  # links stay relative


def test_a_branch_manager_is_refused_another_branch_through_the_plugin(
    relay: HttpRelay, own_erp: OwnERP
) -> None:
    conn = sqlite3.connect(own_erp.path)
    (mombasa,) = conn.execute(
        "select name from `tabSales Invoice` where branch = 'Mombasa' and docstatus = 1 limit 1"
    ).fetchone()
    conn.close()
    reply = run_turn(
        relay, RestApi(own_erp.url, KISUMU, "demo"), KISUMU, message=f"Show me {mombasa}"
    )
    assert "does not have access to this document" in _markdown(reply)


def test_a_write_waits_for_the_users_confirmation_and_is_theirs(
    relay: HttpRelay, own_erp: OwnERP
) -> None:
    name = "Relay Prospect Wanjiru"
    api = RestApi(own_erp.url, "sales@demo.local", "demo")
    reply = run_turn(relay, api, "sales@demo.local", message=f"Create a lead called {name}")
    proposal = next(b for b in reply["response"]["blocks"] if b["type"] == "proposal")
    assert rest_names(own_erp.url, "Lead", [["lead_name", "=", name]]) == []
    # Another user of the organisation cannot confirm it.
    other = run_turn(
        relay, RestApi(own_erp.url, ADMIN, "demo"), ADMIN,
        confirm={"proposal_id": proposal["id"], "payload_hash": proposal["payload_hash"]},
    )  # fmt: skip
    assert not other["outcome"]["ok"]
    assert rest_names(own_erp.url, "Lead", [["lead_name", "=", name]]) == []
    done = run_turn(
        relay, api, "sales@demo.local",
        confirm={"proposal_id": proposal["id"], "payload_hash": proposal["payload_hash"]},
    )  # fmt: skip
    assert done["outcome"]["ok"], done
    (lead,) = rest_names(own_erp.url, "Lead", [["lead_name", "=", name]])
    owner = (
        sqlite3.connect(own_erp.path)
        .execute("select owner from `tabLead` where name = ?", (lead,))
        .fetchone()[0]
    )
    assert owner == "sales@demo.local"


class InProcess:
    """The plugin's transport to a hub in this process (the relay with no server between)."""

    def __init__(self, hub: RelayHub, loop: asyncio.AbstractEventLoop) -> None:
        self.hub, self.loop = hub, loop

    def post(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        if path == "/api/relay/turns":
            work = self.hub.start("default", str(body["user"]), body)
        else:
            work = self.hub.resume("default", path.split("/")[-2], body)
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(timeout=120)


@pytest.mark.anyio
async def test_the_relay_needs_no_connection_to_the_erp(own_erp: OwnERP, tmp_path: Path) -> None:
    # The agent's own ERP address is a port nothing listens on: only the plugin reaches the ERP.
    dead = Settings(erp_url="http://127.0.0.1:9", data_dir=str(tmp_path))
    runtime = await Runtime.create(dead, store=MemoryStore())
    hub = RelayHub(runtime, lambda _: OfflinePlanner(runtime.catalog, runtime.connector.name))
    try:
        api = RestApi(own_erp.url, ADMIN, "demo")
        reply = await asyncio.to_thread(
            run_turn,
            InProcess(hub, asyncio.get_running_loop()),
            api,
            ADMIN,
            message="What was our revenue this year?",
        )
    finally:
        await hub.aclose()
        await runtime.aclose()
    truth = revenue(own_erp.url, dt.date.today().year)
    assert all(figure_present(_markdown(reply), v) for v in truth)
    assert hub.connector.base_url == ""


@pytest.mark.anyio
async def test_a_relay_turn_reads_the_sites_prompt_sections(
    own_erp: OwnERP, tmp_path: Path
) -> None:
    # The relay builds its loop as every channel does (Runtime.engine): a deployment's own
    # prompt sections reach the model on relay turns too.
    prompts = tmp_path / "site" / "prompts"
    prompts.mkdir(parents=True)
    (tmp_path / "site" / "catalog").mkdir()
    (prompts / "10-house-style.md").write_text("Savanna calls customers 'accounts'.", "utf-8")
    settings = Settings(
        erp_url="http://127.0.0.1:9", data_dir=str(tmp_path), site_dir=str(tmp_path / "site")
    )
    runtime = await Runtime.create(settings, store=MemoryStore())
    model = ScriptedModel(ScriptedModel.reply("Noted."))
    hub = RelayHub(runtime, lambda _: model)
    try:
        api = RestApi(own_erp.url, ADMIN, "demo")
        reply = await asyncio.to_thread(
            run_turn, InProcess(hub, asyncio.get_running_loop()), api, ADMIN, message="hello"
        )
    finally:
        await hub.aclose()
        await runtime.aclose()
    assert "Noted." in _markdown(reply)
    system = model.requests[0].messages[0].content or ""
    assert "Savanna calls customers 'accounts'." in system


def test_the_protocol_refuses_strangers_replays_reorders_and_oversized_results(
    agent: LiveServer, relay: HttpRelay
) -> None:
    key = relay.org_key
    stranger = org_key(agent.url, org="another-org")
    with httpx.Client(base_url=agent.url, timeout=60) as http:

        def post(path: str, body: dict[str, Any], with_key: str = key) -> httpx.Response:
            org = "another-org" if with_key == stranger else "default"
            return http.post(
                path,
                json=signed(body, with_key, org),
                headers={"Authorization": f"Bearer {with_key}"},
            )

        assert (
            post("/api/relay/turns", {"user": ADMIN, "message": "hi"}, "eak_bad").status_code == 401
        )
        first = post(
            "/api/relay/turns", {"user": ADMIN, "message": "What was our revenue this year?"}
        ).json()
        assert first["status"] == "calls"
        assert len(first["turn_id"]) > 30  # unguessable
        path = f"/api/relay/turns/{first['turn_id']}/results"
        answers = [{"id": c["id"], "ok": True, "data": []} for c in first["calls"]]
        body = {"user": ADMIN, "seq": first["seq"], "results": answers}
        assert post("/api/relay/turns/rt_unknown/results", body).status_code == 404
        assert post(path, body, stranger).status_code == 404  # another organisation
        assert post(path, {**body, "user": KISUMU}).status_code == 409  # another user
        assert post(path, {**body, "seq": first["seq"] + 1}).status_code == 409  # out of order
        wrong_id = [{"id": "c999", "ok": True, "data": []}]
        assert post(path, {**body, "results": wrong_id}).status_code == 409  # unknown call id
        if len(answers) > 1:
            assert post(path, {**body, "results": answers[:1]}).status_code == 409  # partial
        huge = [{**answers[0], "data": "x" * 5_100_000}, *answers[1:]]
        assert post(path, {**body, "results": huge}).status_code == 413
        assert post(path, body).status_code == 200  # the right answer is still taken
        replay = post(path, body)
        assert replay.status_code == 409
        assert "replay" in replay.json()["detail"] or "batch" in replay.json()["detail"]


def test_the_plugin_runs_only_allowed_calls() -> None:
    assert check({"id": "c1", "method": "get_list", "doctype": "Sales Invoice",
                  "fields": ["name", "sum(grand_total) as total", {"SUM": "net_total", "as": "net"}],
                  "filters": [["docstatus", "=", 1]], "order_by": "name asc"},
                 writes_allowed=False)  # fmt: skip
    refused = [
        {"id": "c1", "method": "frappe.db.sql", "query": "select 1"},
        {"id": "c1", "method": "get_list", "doctype": "Sales Invoice", "fields": ["name; drop table x"]},
        {"id": "c1", "method": "get_list", "doctype": "Sales Invoice", "order_by": "(select 1)"},
        {"id": "c1", "method": "get_list", "doctype": "Sales Invoice", "filters": [["name", "regexp", "x"]]},
        {"id": "c1", "method": "get_doc", "doctype": "../../etc/passwd", "name": "x"},
        {"id": "c1", "method": "get_doc", "doctype": "File", "name": "x", "path": "/etc/passwd"},
        {"id": "c1", "method": "run_doc_method", "doctype": "Sales Invoice", "name": "x", "action": "delete_all"},
        {"id": "c1", "method": "insert", "doctype": "Lead", "values": {"lead_name": "x"}},  # not in a confirmation
    ]  # fmt: skip
    for spec in refused:
        with pytest.raises(SpecRefused):
            check(spec, writes_allowed=False)

    class Nothing:
        def call(self, method: str, args: Mapping[str, Any]) -> Any:
            raise AssertionError("a refused call must not run")

    result = execute(refused[0], Nothing(), writes_allowed=False)
    assert result["ok"] is False
    assert "not allowed" in result["error"]["message"]


# ------------------------------------------------------------------ the relay's trust model


def test_an_org_key_is_issued_only_for_a_registered_organisation(agent: LiveServer) -> None:
    admin = admin_client(agent.url)
    try:
        unknown = admin.post("/api/admin/api-keys/org", json={"org": "nobody-registered"})
        assert unknown.status_code == 404
        assert "no organisation 'nobody-registered' registered" in unknown.json()["detail"]
        made = admin.post("/api/admin/organisations", json={"org": "acme-ltd", "label": "Acme"})
        assert made.status_code == 200, made.text
        assert admin.post("/api/admin/organisations", json={"org": "acme-ltd"}).status_code == 409
        assert admin.post("/api/admin/organisations", json={"org": "../x"}).status_code == 422
        listed = [o["org"] for o in admin.get("/api/admin/organisations").json()["organisations"]]
        assert {"default", "acme-ltd"} <= set(listed)
        issued = admin.post("/api/admin/api-keys/org", json={"org": "acme-ltd"})
        assert issued.status_code == 200
        assert issued.json()["org"] == "acme-ltd"
    finally:
        admin.close()
    # Not an administrator: neither list nor register.
    sales = admin_client(agent.url, "sales@demo.local")
    try:
        assert sales.post("/api/admin/organisations", json={"org": "mine"}).status_code == 403
    finally:
        sales.close()


def test_the_relay_acts_only_on_a_fresh_signed_first_use_assertion(
    agent: LiveServer, relay: HttpRelay
) -> None:
    key = relay.org_key
    start = {"user": ADMIN, "message": "hi"}
    with httpx.Client(base_url=agent.url, timeout=60) as http:

        def post(body: dict[str, Any], with_key: str = key) -> httpx.Response:
            return http.post(
                "/api/relay/turns", json=body, headers={"Authorization": f"Bearer {with_key}"}
            )

        def refused(body: dict[str, Any], words: str, with_key: str = key) -> None:
            reply = post(body, with_key)
            assert reply.status_code == 401, reply.text
            assert words in reply.json()["detail"], reply.json()

        refused(start, "carries no signed assertion")  # unsigned
        refused(signed(start, key, now=time.time() - 600), "more than 300 s")  # expired
        refused(signed(start, key, now=time.time() + 600), "ahead")  # from the future
        forged = signed(start, "eak_not_the_key")
        refused(forged, "does not verify")  # signed with another key
        refused({**signed(start, key), "user": KISUMU}, "names another user")  # user swapped
        refused(signed(start, key, org="another-org"), "for the organisation 'another-org'")
        fields = signed(start, key)
        del fields["assertion"]["nonce"]
        refused(fields, "needs org, user, ts")
        once = signed(start, key)
        assert post(once).status_code == 200  # a fresh, signed request is served…
        refused(once, "used before")  # …once
        # Results carry their own assertion, of the turn's user.
        first = post(signed({"user": ADMIN, "message": "What was our revenue this year?"}, key))
        turn = first.json()
        results = {
            "user": ADMIN,
            "seq": turn["seq"],
            "results": [{"id": c["id"], "ok": True, "data": []} for c in turn["calls"]],
        }
        path = f"/api/relay/turns/{turn['turn_id']}/results"
        headers = {"Authorization": f"Bearer {key}"}
        unsigned = http.post(path, json=results, headers=headers)
        assert unsigned.status_code == 401
        assert http.post(path, json=signed(results, key), headers=headers).status_code == 200


def test_the_plugin_signs_as_the_relay_verifies() -> None:
    """The plugin's stdlib signature and the relay's are the same function of the same inputs."""
    from erp_agent.channels.keys import key_hash
    from erp_agent.relay.assertions import sign

    made = assertion("eak_secret", "acme", "u@acme.example", now=1_764_540_000, nonce="n" * 20)
    assert made == {
        "org": "acme", "user": "u@acme.example", "ts": 1_764_540_000, "nonce": "n" * 20,
        "sig": sign(bytes.fromhex(key_hash("eak_secret")), "acme", "u@acme.example",
                    1_764_540_000, "n" * 20),
    }  # fmt: skip
