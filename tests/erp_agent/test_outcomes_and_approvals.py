"""After a decision the outcome is a message in the conversation; edits make a new proposal the
ERP re-validated; approvals run end to end as the ERP allows (and are refused as it refuses).

Truth is read from the demo ERP's database or asked of its REST API directly as the user.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import DemoERP
from erp_agent.calls.outcome import Status
from erp_agent.calls.session import Session
from erp_agent.config import Settings
from erp_agent.planner.offline_model import OfflinePlanner
from erp_agent.runtime import Runtime
from erp_agent.store.records import ProposalStatus
from erp_agent.store.sql_store import open_store

pytestmark = pytest.mark.anyio
MANAGER, BUYER, SALES = "purchase.manager@demo.local", "purchase@demo.local", "sales@demo.local"


def sql(demo: DemoERP, query: str, *params: Any) -> list[tuple[Any, ...]]:
    with sqlite3.connect(demo.path) as conn:
        return list(conn.execute(query, params))


@pytest.fixture
async def runtime(demo_erp: DemoERP, tmp_path: Path) -> AsyncIterator[Runtime]:
    store = open_store(f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite'}")
    rt = await Runtime.create(Settings(erp_url=demo_erp.url), store=store)
    yield rt
    await rt.aclose()


async def ask(rt: Runtime, session: Session, text: str, conversation: str | None = None) -> Any:
    engine = rt.engine(OfflinePlanner(rt.catalog))
    return await engine.run_turn(session, text, conversation_id=conversation)


def proposal_of(response: Any) -> dict[str, Any]:
    return next(b for b in response.blocks if b["type"] == "proposal")


def _customer_item(demo: DemoERP) -> tuple[str, str, float]:
    [(customer, item, rate)] = sql(
        demo,
        "select c.name, ip.item_code, ip.price_list_rate from `tabItem Price` ip join "
        "tabCustomer c on c.default_price_list = ip.price_list join tabItem i on "
        "i.name = ip.item_code where c.territory = 'Nairobi' and i.is_stock_item = 1 "
        "order by c.name, ip.item_code limit 1",
    )
    return customer, item, rate


async def test_a_confirmed_quotation_is_a_linked_message_in_the_conversation(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    customer, item, rate = _customer_item(demo_erp)
    sales = await runtime.sign_in(SALES, "demo")
    first = await ask(
        runtime, sales, f"create a quotation for {customer} for 3 x {item} for Savanna Trading Ltd"
    )
    block = proposal_of(first)
    assert block["payload"]["items"][0]["rate"] == rate
    outcome = await runtime.gateway.confirm(sales, block["id"], block["payload_hash"])
    assert outcome.status is Status.OK
    quotation = outcome.data["id"]
    [(party, grand_total)] = sql(
        demo_erp, "select party_name, grand_total from tabQuotation where name = ?", quotation
    )
    assert party == customer
    url = f"{demo_erp.url}/app/quotation/{quotation}"
    assert outcome.conversation_message is not None
    assert f"[{quotation}]({url})" in outcome.conversation_message
    turns = await runtime.store.turns(first.conversation_id)
    assert turns[-1].state["kind"] == "outcome"
    assert turns[-1].state["outcome"] == {"entity": "quotation", "id": quotation, "url": url}
    state = await runtime.store.conversation_state(first.conversation_id)
    assert state["created"]["id"] == quotation
    # The next turn knows it: "submit it" is about the created quotation.
    follow = await ask(runtime, sales, "submit it", first.conversation_id)
    assert quotation in follow.blocks[0]["markdown"]
    # …and it becomes a proposal to submit that quotation (the tool found for the document,
    # though the words "submit it" name no record for routing to offer one).
    submit = proposal_of(follow)
    assert submit["tool"] == "quotation.submit", submit
    assert submit["payload"]["id"] == quotation
    # The link opens the document for this user (the desk page, signed in as them).
    async with httpx.AsyncClient(base_url=demo_erp.url) as erp:
        await erp.post("/api/method/login", json={"usr": SALES, "pwd": "demo"})
        page = await erp.get(f"/app/quotation/{quotation}")
    assert page.status_code == 200
    assert quotation in page.text
    assert f"{grand_total:,.2f}" in page.text


async def test_edits_make_a_new_validated_proposal_and_bad_edits_write_nothing(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    customer, item, rate = _customer_item(demo_erp)
    sales = await runtime.sign_in(SALES, "demo")
    first = proposal_of(
        await ask(
            runtime,
            sales,
            f"create a quotation for {customer} for 3 x {item} for Savanna Trading Ltd",
        )
    )
    gateway = runtime.gateway
    for bad in ({"lines": [{"index": 0, "qty": -3}]}, {"lines": [{"index": 0, "qty": "abc"}]},
                {"lines": [{"index": 4, "qty": 1}]}, {"date": "31/12/2026"},
                {"lines": [{"index": 0, "remove": True}]}):  # fmt: skip
        refused = await gateway.revise(sales, first["id"], bad)
        assert refused.status is Status.INVALID, bad
        assert refused.proposal is None
    still = await runtime.store.get_proposal(first["id"])
    assert still is not None
    assert still.status is ProposalStatus.PENDING
    edited = await gateway.revise(sales, first["id"], {"lines": [{"index": 0, "qty": "5"}]})
    assert edited.status is Status.PROPOSAL
    fresh = edited.proposal
    assert fresh is not None
    assert fresh["id"] != first["id"]
    assert fresh["payload_hash"] != first["payload_hash"]
    assert fresh["payload"]["items"][0]["qty"] == 5
    assert fresh["document"]["net_total"] == round(5 * rate, 2)
    old = await runtime.store.get_proposal(first["id"])
    assert old is not None
    assert old.status is ProposalStatus.SUPERSEDED
    stale = await gateway.confirm(sales, first["id"], first["payload_hash"])
    assert stale.status is Status.REFUSED
    again = await gateway.revise(sales, first["id"], {"lines": [{"index": 0, "qty": 2}]})
    assert again.status is Status.REFUSED
    done = await gateway.confirm(sales, fresh["id"], fresh["payload_hash"])
    [(qty,)] = sql(
        demo_erp, "select qty from `tabQuotation Item` where parent = ?", done.data["id"]
    )
    assert qty == 5  # exactly what the edited proposal showed
    after = await gateway.revise(sales, fresh["id"], {"lines": [{"index": 0, "qty": 9}]})
    assert after.status is Status.REFUSED
    assert "executed" in after.message


def _waiting_for(demo: DemoERP, user: str) -> set[str]:
    """Asked of the ERP directly: POs where get_transitions offers this user an action, less
    drafts (the workflow's first state: they wait for their author, not for an approval) and
    those they created where the transition forbids self-approval."""
    with httpx.Client(base_url=demo.url) as erp:
        erp.post("/api/method/login", json={"usr": "admin@demo.local", "pwd": "demo"})
        (workflow,) = erp.get("/api/resource/Workflow", params={
            "filters": json.dumps([["document_type", "=", "Purchase Order"], ["is_active", "=", 1]]),
        }).json()["data"]  # fmt: skip
        first = erp.get(f"/api/resource/Workflow/{workflow['name']}").json()["data"]["states"][0]
        erp.post("/api/method/login", json={"usr": user, "pwd": "demo"})
        listed = erp.get("/api/resource/Purchase Order", params={
            "fields": json.dumps(["name", "owner", "workflow_state"]), "limit_page_length": 0,
            "filters": json.dumps([["docstatus", "<", 2], ["workflow_state", "is", "set"]]),
        }).json()["data"]  # fmt: skip
        out = set()
        for row in listed:
            if row["workflow_state"] == first["state"]:
                continue
            doc = {"doctype": "Purchase Order", "name": row["name"]}
            transitions = erp.post(
                "/api/method/frappe.model.workflow.get_transitions", data={"doc": json.dumps(doc)}
            ).json()["message"]
            if any(t["allow_self_approval"] or row["owner"] != user for t in transitions):
                out.add(row["name"])
    return out


async def test_waiting_for_my_approval_is_what_the_erp_offers_this_user(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    manager = await runtime.sign_in(MANAGER, "demo")
    answer = await ask(runtime, manager, "what is waiting for my approval?")
    call = next(c for c in answer.tools_called if c["name"] == "workflow.pending")
    assert call["arguments"] == {}
    result = await runtime.gateway.call(manager, "workflow.pending", {})
    listed = {d["id"] for d in result.data["documents"]}
    assert listed == _waiting_for(demo_erp, MANAGER)
    assert listed
    text = answer.blocks[0]["markdown"]
    assert all(doc in text for doc in listed)
    buyer = await runtime.sign_in(BUYER, "demo")
    theirs = await runtime.gateway.call(buyer, "workflow.pending", {})
    assert {d["id"] for d in theirs.data["documents"]} == _waiting_for(demo_erp, BUYER)
    assert not listed & {d["id"] for d in theirs.data["documents"]} - _waiting_for(demo_erp, BUYER)


async def test_approve_as_manager_writes_and_is_refused_as_buyer_and_for_self_approval(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    pending = sql(
        demo_erp,
        "select name, owner from `tabPurchase Order` where workflow_state = 'Pending Approval' "
        "and docstatus = 0 order by name",
    )
    theirs = next(name for name, owner in pending if owner != MANAGER)
    buyer = await runtime.sign_in(BUYER, "demo")
    refused = await ask(runtime, buyer, f"approve {theirs}")
    assert not any(b["type"] == "proposal" for b in refused.blocks)
    assert "can't approve" in refused.blocks[0]["markdown"]
    manager = await runtime.sign_in(MANAGER, "demo")
    answer = await ask(runtime, manager, f"approve {theirs}")
    block = proposal_of(answer)
    assert block["payload"]["action"] == "Approve"
    assert [sql(demo_erp, "select workflow_state from `tabPurchase Order` where name = ?",
                theirs)[0][0]] == ["Pending Approval"]  # fmt: skip
    outcome = await runtime.gateway.confirm(manager, block["id"], block["payload_hash"])
    assert outcome.status is Status.OK
    [(state, docstatus)] = sql(
        demo_erp, "select workflow_state, docstatus from `tabPurchase Order` where name = ?", theirs
    )
    assert (state, docstatus) == ("Approved", 1)
    assert outcome.conversation_message is not None
    assert f"/app/purchase-order/{theirs}" in outcome.conversation_message
    # Self-approval: the manager's own order is offered Approve by the ERP, which then refuses.
    with httpx.Client(base_url=demo_erp.url) as erp:
        erp.post("/api/method/login", json={"usr": MANAGER, "pwd": "demo"})
        supplier, item = sql(
            demo_erp, "select supplier, i.item_code from `tabPurchase Order` p join "
            "`tabPurchase Order Item` i on i.parent = p.name where p.name = ?", theirs,
        )[0]  # fmt: skip
        [(company,)] = sql(
            demo_erp, "select company from `tabPurchase Order` where name = ?", theirs
        )
        own = erp.post("/api/resource/Purchase Order", json={
            "supplier": supplier, "company": company, "transaction_date": "2026-11-30",
            "schedule_date": "2026-12-10", "items": [{"item_code": item, "qty": 1, "rate": 10}],
        }).json()["data"]["name"]  # fmt: skip
        submitted = erp.post("/api/method/frappe.model.workflow.apply_workflow", data={
            "doc": json.dumps({"doctype": "Purchase Order", "name": own}),
            "action": "Submit for Approval"})  # fmt: skip
        assert submitted.status_code == 200, submitted.text
    mine = proposal_of(await ask(runtime, manager, f"approve {own}"))
    refusal = await runtime.gateway.confirm(manager, mine["id"], mine["payload_hash"])
    assert refusal.status is Status.ERP_REFUSED
    assert refusal.refusal is not None
    assert refusal.refusal["message"] == "Self approval is not allowed"
    assert refusal.conversation_message is not None
    assert "The ERP refused: Self approval is not allowed" in refusal.conversation_message
    [(still,)] = sql(demo_erp, "select workflow_state from `tabPurchase Order` where name = ?", own)
    assert still == "Pending Approval"


async def test_for_customer_x_quotes_that_customer_and_the_company_is_never_the_party(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    customer, item, _ = _customer_item(demo_erp)
    sales = await runtime.sign_in(SALES, "demo")
    answer = await ask(
        runtime,
        sales,
        f"create a quotation for customer {customer} for 3 x {item} for Savanna Trading Ltd",
    )
    called = [c["name"] for c in answer.tools_called]
    assert "customer.create" not in called
    assert proposal_of(answer)["payload"]["party"] == customer
    company_only = await ask(
        runtime, sales, f"create a quotation for Savanna Trading Ltd for 3 x {item}"
    )
    assert not any(b["type"] == "proposal" for b in company_only.blocks)
    assert all(
        c["arguments"].get("party") != "Savanna Trading Ltd"
        for c in company_only.tools_called
        if c["name"] == "quotation.create"
    )
