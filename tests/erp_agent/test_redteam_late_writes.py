"""Red team: no duplicate writes, ever — a write the ERP receives after the agent stopped
waiting is not reported "not created", and nothing offers to write it again.

The reproduced failure: the ERP sat behind a proxy that delivered a write 10 s after the
agent's 6 s timeout. Reconciliation ran at once, found nothing yet, said "The ERP holds no such
record: it was not created. It is prepared again below", and confirming the retry made a second
invoice (2 of 2; the first proposal stayed ``failed`` although it was written).

Here a real HTTP proxy (``fault_proxy``, port 0) in front of a private copy of the demo ERP
holds every write and delivers it 5, 10 or 30 "seconds" after the agent's timeout — scaled by
SCALE so the test is fast, in the real order: sent → the agent gives up → delivered → the
agent's check. Every kind of write (create, update, submit, cancel, workflow action) and the
naming-series documents (Sales Invoice, Payment Entry, Journal Entry) runs through it; the
documents are counted from the ERP's own tables, never through the code under test, and the
user must have been told the truth at every step: "unknown — checking" while the write may
still arrive, a second confirm refused, then "done" with the document once it is found.

Also: the confirming worker dies (after answering, or in the middle of the request) and
another worker's sweep decides; a write that is lost on the way is offered again only after
the ERP proves it absent, and the retry writes it once; and the deliberately wrong design —
reconciling right after the timeout — is run through the same checks, which catch it.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import itertools
import shutil
import time
import urllib.parse
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from erp_edits import draft_invoice
from fault_proxy import FaultProxy, Write, fault_proxy
from sql_databases import MAPPING, seeded
from sql_databases import raw as sql_raw

from conftest import TEST_TODAY, DemoERP, raw
from demo_erp.context import Settings
from demo_erp.server import RunningServer, start_in_thread
from erp_agent.calls.outcome import Outcome, Status
from erp_agent.calls.session import Session
from erp_agent.catalog import load_catalog
from erp_agent.connectors.base import Record
from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.frappe.connector import ERPNextConnector
from erp_agent.connectors.profile import catalog_for
from erp_agent.connectors.sql.connector import SQLConnector
from erp_agent.connectors.sql.mapping import load_mapping
from erp_agent.errors import ErpUnavailable
from erp_agent.gateway.gateway import Gateway
from erp_agent.gateway.policy import load_policy
from erp_agent.gateway.proposals import proposal_view
from erp_agent.gateway.reconcile import InFlight
from erp_agent.gateway.signin import sign_in
from erp_agent.runtime import build_registry
from erp_agent.store.base import Store
from erp_agent.store.memory import MemoryStore
from erp_agent.store.records import Decision, Proposal, ProposalStatus
from erp_agent.store.sql_store import open_store
from erp_agent.tools.base import ToolRegistry
from erp_agent.tools.factories import catalog_tools

pytestmark = pytest.mark.anyio
CATALOG = load_catalog()
TOOLS = catalog_tools(CATALOG)

SCALE = 0.05  # test seconds per second of the incident
CLIENT_TIMEOUT = 1.0  # the agent's wait for one ERP call (ERP_AGENT_ERP_TIMEOUT)
PROXY_READ_TIMEOUT = 35 * SCALE  # the proxy holds a write at most this long past the timeout
GRACE = 20 * SCALE  # ERP_AGENT_ERP_WRITE_GRACE
CONFIRM_TIMEOUT = 3 * CLIENT_TIMEOUT  # a confirm's calls all end within it (a crash's bound)
RIGHT = InFlight(
    dt.timedelta(seconds=CLIENT_TIMEOUT),
    dt.timedelta(seconds=PROXY_READ_TIMEOUT),
    dt.timedelta(seconds=GRACE),
)
# The design of the incident: decide as soon as the write went unanswered.
WRONG = InFlight(dt.timedelta(seconds=CLIENT_TIMEOUT), dt.timedelta(0), dt.timedelta(0))
COMPANY = "Savanna Trading Ltd"
ACCOUNTS = "accounts.manager@demo.local"
STANDARD = {"name", "owner", "creation", "modified", "modified_by", "docstatus", "idx"}
CHILD_STANDARD = STANDARD | {"parent", "parenttype", "parentfield", "doctype"}


def late(seconds: float) -> float:
    """How long the proxy holds a write that arrives ``seconds`` after the agent's timeout."""
    assert seconds * SCALE <= PROXY_READ_TIMEOUT  # a real proxy gives up after its timeout
    return CLIENT_TIMEOUT + seconds * SCALE


# ------------------------------------------------------------------ the ERP, set up directly


@pytest.fixture(scope="module")
def erp(demo_erp: DemoERP, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoERP]:
    """A private copy of the seeded ERP: these tests create, submit, cancel and approve."""
    path = tmp_path_factory.mktemp("late-writes") / "demo.sqlite"
    shutil.copy(demo_erp.path, path)
    server: RunningServer = start_in_thread(Settings(db_path=str(path), today=TEST_TODAY))
    yield DemoERP(server.url, server.url, path)
    server.stop()


@contextlib.contextmanager
def erp_user(demo: DemoERP, user: str) -> Iterator[httpx.Client]:
    """Someone working in the ERP directly, not through the agent."""
    with httpx.Client(base_url=demo.url, timeout=30) as client:
        reply = client.post("/api/method/login", json={"usr": user, "pwd": "demo"})
        assert reply.status_code == 200, reply.text
        yield client


def submitted_invoice(demo: DemoERP) -> str:
    invoice = draft_invoice(demo)
    with erp_user(demo, "admin@demo.local") as admin:
        reply = admin.put(
            f"/api/resource/Sales Invoice/{invoice['name']}",
            json={"docstatus": 1, "modified": invoice["modified"]},
        )
        assert reply.status_code == 200, reply.text
    return str(invoice["name"])


def order_pending_approval(demo: DemoERP) -> str:
    """A Purchase Order that purchase@ keyed in and sent for approval (a manager approves)."""
    with erp_user(demo, "purchase@demo.local") as buyer:
        source = raw(demo, "select name from `tabPurchase Order` order by creation desc limit 1")
        doc = buyer.get(f"/api/resource/Purchase Order/{source[0]['name']}").json()["data"]
        skip = STANDARD | {"status", "workflow_state", "per_received", "per_billed",
                           "amended_from", "erp_agent_write_id"}  # fmt: skip
        body = {k: v for k, v in doc.items() if k not in skip and not isinstance(v, list)}
        body.update(transaction_date=TEST_TODAY.isoformat(), schedule_date="2026-12-10")
        body["items"] = [
            {**{k: v for k, v in row.items() if k not in CHILD_STANDARD},
             "schedule_date": "2026-12-10"}
            for row in doc["items"]
        ]  # fmt: skip
        made = buyer.post("/api/resource/Purchase Order", json=body)
        assert made.status_code == 200, made.text
        sent = buyer.post(
            "/api/method/frappe.model.workflow.apply_workflow",
            json={"doc": made.json()["data"], "action": "Submit for Approval"},
        )
        assert sent.status_code == 200, sent.text
        return str(made.json()["data"]["name"])


# ------------------------------------------------------------------ the cases


@dataclass
class Case:
    """One write: who asks for it, the tool and arguments, and how many times the ERP's own
    tables show it done (``times``: 1 is right, 2 is a duplicate, 0 is not written)."""

    label: str
    user: str
    tool: str
    args: dict[str, Any]
    times: Callable[[], int]
    write_path: str  # how the proxy's log names its write
    proposal: Proposal | None = None
    first: Outcome | None = None  # the confirm's answer
    again: Outcome | None = None  # a second click on confirm meanwhile
    shown_meanwhile: str = ""  # the proposal's state in words while its answer was missing
    final: Proposal | None = None
    retry: Outcome | None = None  # confirming a retry, when one was offered


_tags = itertools.count(1)


def _tag(group: str) -> str:
    return f"LATE-{group}-{next(_tags)}"


def invoice_create(demo: DemoERP, group: str) -> Case:
    token = _tag(group)
    items = raw(demo, "select name from tabItem where is_sales_item = 1 order by name limit 1")
    args = {"customer": "Acme Ltd", "company": COMPANY, "date": TEST_TODAY.isoformat(),
            "items": [{"item": items[0]["name"], "qty": 1, "rate": 100.0}], "customer_po": token}  # fmt: skip
    return Case(
        "create Sales Invoice", ACCOUNTS, "sales_invoice.create", args,
        lambda: len(raw(demo, "select name from `tabSales Invoice` where po_no = ?", token)),
        "POST /api/resource/Sales Invoice",
    )  # fmt: skip


def payment_create(demo: DemoERP, group: str) -> Case:
    token = _tag(group)
    args = {"payment_type": "Receive", "date": TEST_TODAY.isoformat(), "company": COMPANY,
            "party_type": "customer", "party": "Acme Ltd", "paid_from": "Debtors - ST",
            "paid_to": "Bank - ST", "amount": 100.0, "reference_no": token,
            "reference_date": TEST_TODAY.isoformat()}  # fmt: skip
    return Case(
        "create Payment Entry", ACCOUNTS, "payment_entry.create", args,
        lambda: len(raw(demo, "select name from `tabPayment Entry` where reference_no = ?", token)),
        "POST /api/resource/Payment Entry",
    )  # fmt: skip


def journal_create(demo: DemoERP, group: str) -> Case:
    token = _tag(group)
    args = {"entry_type": "Journal Entry", "date": TEST_TODAY.isoformat(), "company": COMPANY,
            "accounts": [{"account": "Cash - ST", "debit": 50.0},
                         {"account": "Sales - ST", "credit": 50.0}], "cheque_no": token}  # fmt: skip
    return Case(
        "create Journal Entry", ACCOUNTS, "journal_entry.create", args,
        lambda: len(raw(demo, "select name from `tabJournal Entry` where cheque_no = ?", token)),
        "POST /api/resource/Journal Entry",
    )  # fmt: skip


_leads = itertools.count(0)


def lead_update(demo: DemoERP, group: str) -> Case:
    token = _tag(group)
    lead = raw(demo, "select name from tabLead order by name limit 1 offset ?", next(_leads))
    name = str(lead[0]["name"])

    def times() -> int:
        query = "select 1 from tabLead where name = ? and company_name = ?"
        return len(raw(demo, query, name, token))

    return Case(
        "update Lead", "admin@demo.local", "lead.update",
        {"id": name, "values": {"organization": token}}, times, f"PUT /api/resource/Lead/{name}",
    )  # fmt: skip


def _postings(demo: DemoERP, invoice: str, side: str) -> int:
    """Ledger postings of the invoice on its receivable account: one per submit (a debit),
    one per cancel (the reversing credit)."""
    rows = raw(
        demo,
        f"select count(*) from `tabGL Entry` g join `tabSales Invoice` s on s.name = g.voucher_no "
        f"where g.voucher_no = ? and g.account = s.debit_to and g.{side} > 0",
        invoice,
    )
    return int(rows[0][0])


def invoice_submit(demo: DemoERP, group: str) -> Case:
    invoice = str(draft_invoice(demo)["name"])
    return Case(
        "submit Sales Invoice", ACCOUNTS, "sales_invoice.submit", {"id": invoice},
        lambda: _postings(demo, invoice, "debit"), f"PUT /api/resource/Sales Invoice/{invoice}",
    )  # fmt: skip


def invoice_cancel(demo: DemoERP, group: str) -> Case:
    invoice = submitted_invoice(demo)
    return Case(
        "cancel Sales Invoice", ACCOUNTS, "sales_invoice.cancel", {"id": invoice},
        lambda: _postings(demo, invoice, "credit"), f"PUT /api/resource/Sales Invoice/{invoice}",
    )  # fmt: skip


def order_approve(demo: DemoERP, group: str) -> Case:
    order = order_pending_approval(demo)
    return Case(
        "approve Purchase Order (workflow)", "purchase.manager@demo.local",
        "purchase_order.workflow_action", {"id": order, "action": "Approve"},
        lambda: len(raw(demo, "select 1 from `tabPurchase Order` where name = ? and "
                              "workflow_state = 'Approved' and docstatus = 1", order)),
        "POST /api/method/frappe.model.workflow.apply_workflow",
    )  # fmt: skip


EVERY_KIND = (invoice_create, payment_create, journal_create, lead_update, invoice_submit,
              invoice_cancel, order_approve)  # fmt: skip


# ------------------------------------------------------------------ two workers, one store


@dataclass
class Workers:
    """The worker that confirms (``a``) and another that runs the recovery sweep (``b``),
    sharing one store, both behind the proxy."""

    proxy: FaultProxy
    store: Store
    a: Gateway
    b: Gateway
    sessions: dict[str, Session] = field(default_factory=dict)
    connectors: list[ERPNextConnector] = field(default_factory=list)

    async def session(self, user: str) -> Session:
        if user not in self.sessions:
            erp = self.connectors[0]
            cred = await erp.login(user, "demo")
            self.sessions[user] = Session(
                id=f"late-{user}", user=user, credential=cred,
                roles=frozenset(await erp.roles(cred)),
                allowed_tools=frozenset(t.name for t in TOOLS),
            )  # fmt: skip
        return self.sessions[user]

    async def lookup(self, proposal: Proposal) -> Session | None:
        return self.sessions.get(proposal.user)


@contextlib.asynccontextmanager
async def workers(
    demo: DemoERP, hold: float | None, window: InFlight, tmp: Path
) -> AsyncIterator[Workers]:
    tmp.mkdir(parents=True, exist_ok=True)
    with fault_proxy(demo.url, hold) as proxy:
        store = open_store(f"sqlite+aiosqlite:///{tmp / 'store.sqlite'}")
        connectors = [
            ERPNextConnector(proxy.url, catalog=CATALOG, timeout=CLIENT_TIMEOUT) for _ in "ab"
        ]
        a, b = (
            Gateway(ToolRegistry(TOOLS), store, c, CATALOG, confirm_timeout=dt.timedelta(
                seconds=CONFIRM_TIMEOUT), in_flight=window)
            for c in connectors
        )  # fmt: skip
        try:
            await store.migrate()
            yield Workers(proxy, store, a, b, connectors=connectors)
        finally:
            await a.aclose()
            await b.aclose()
            for c in connectors:
                await c.aclose()
            await store.close()


async def propose(w: Workers, case: Case) -> None:
    me = await w.session(case.user)
    outcome = await w.a.call(me, case.tool, case.args)
    assert outcome.status is Status.PROPOSAL, (case.label, outcome.for_model())
    assert outcome.proposal is not None
    case.proposal = await w.store.get_proposal(outcome.proposal["id"])
    assert case.times() == 0, case.label


async def confirm(w: Workers, case: Case) -> None:
    """The user confirms, and — the answer not arriving — clicks confirm again."""
    assert case.proposal is not None
    me = await w.session(case.user)
    case.first = await w.a.confirm(me, case.proposal.id, case.proposal.payload_hash)
    stored = await w.store.get_proposal(case.proposal.id)
    assert stored is not None
    case.shown_meanwhile = proposal_view(stored)["status_text"]
    case.again = await w.a.confirm(me, case.proposal.id, case.proposal.payload_hash)


async def sweeping(w: Workers, cases: list[Case], deadline: float) -> None:
    """Worker b's recovery loop, until every proposal is decided."""
    while time.monotonic() < deadline:
        await w.b.sweep(w.lookup)
        pending = [
            c for c in cases
            if (p := await w.store.get_proposal(c.proposal.id if c.proposal else "")) is None
            or p.status in (ProposalStatus.EXECUTING, ProposalStatus.CHECKING)
        ]  # fmt: skip
        if not pending:
            return
        await asyncio.sleep(0.1)
    raise AssertionError("proposals still undecided: " + ", ".join(c.label for c in cases))


async def finish(w: Workers, cases: list[Case]) -> None:
    await asyncio.to_thread(w.proxy.wait_delivered, 30)
    for case in cases:
        assert case.proposal is not None
        case.final = await w.store.get_proposal(case.proposal.id)


def write_of(proxy: FaultProxy, case: Case) -> Write:
    found = [
        w for w in proxy.writes if f"{w.method} {urllib.parse.unquote(w.path)}" == case.write_path
    ]
    assert found, (case.label, [(w.method, w.path) for w in proxy.writes])
    return found[0]


async def told(store: Store, proposal_id: str) -> list[tuple[Decision, str]]:
    """What the user was told about the proposal, oldest first (the audit log)."""
    events = await store.events(proposal_id=proposal_id, limit=50)
    return [(e.decision, e.reason) for e in reversed(events)]


async def problems(w: Workers, case: Case) -> list[str]:
    """Everything untrue or duplicated about a write the ERP received (late)."""
    found = []
    times = case.times()
    if times != 1:
        found.append(f"the ERP shows it {times} times")
    final = case.final
    assert final is not None
    if final.status is not ProposalStatus.EXECUTED:
        said = (final.error or {}).get("message", "")
        found.append(f"it was written, the user was told {final.status}: {said}")
    if final.superseded_by is not None:
        found.append("a retry of a write that happened was offered")
    said = [reason for decision, reason in await told(w.store, final.id)
            if decision is Decision.CONFIRMED]  # fmt: skip
    if not any("Done:" in reason for reason in said):
        found.append("the user was never told it was done")
    write = write_of(w.proxy, case)
    if write.delivered is None or final.decided_at is None:
        found.append("never delivered or never decided")
    elif final.decided_at.timestamp() < write.delivered:
        found.append("decided before the write reached the ERP")
    else:  # the incident's order: the agent gave up first, the ERP got it after
        assert write.delivered - write.received >= CLIENT_TIMEOUT
    return found


def told_unknown_while_it_could_arrive(case: Case) -> None:
    assert case.first is not None
    assert case.again is not None
    assert case.first.status is Status.CHECKING, (case.label, case.first.for_model())
    assert "Unknown — checking" in case.first.message
    assert "will not be written twice" in case.first.message
    assert case.shown_meanwhile.startswith("Unknown — checking"), case.shown_meanwhile
    assert case.again.status is Status.REFUSED, case.again.for_model()
    assert "Nothing more was written" in case.again.message


# ------------------------------------------------------------------ the tests


async def run_late_group(
    demo: DemoERP, w: Workers, seconds_late: int, *, confirming_worker_dies: bool
) -> list[Case]:
    cases = [make(demo, f"{seconds_late}s") for make in EVERY_KIND]
    for case in cases:
        await propose(w, case)
    await asyncio.gather(*(confirm(w, c) for c in cases))
    if confirming_worker_dies:
        await w.a.aclose()  # its own checks die with it; worker b's sweep must decide
    await sweeping(w, cases, time.monotonic() + 30)
    await finish(w, cases)
    for case in cases:
        told_unknown_while_it_could_arrive(case)
        assert await problems(w, case) == [], case.label
        assert case.final is not None
        noted = case.final.checkpoint or {}
        assert case.final.decided_at is not None
        assert case.final.decided_at >= dt.datetime.fromisoformat(noted["settle_after"])
        if case.tool.endswith(".create"):
            assert noted["marker"] == case.final.id  # found by the marker it carried
    return cases


async def test_writes_delivered_5_10_30_s_late_are_found_once_and_reported_done(
    erp: DemoERP, tmp_path: Path
) -> None:
    async with contextlib.AsyncExitStack() as stack:
        late_by = {s: await stack.enter_async_context(
            workers(erp, late(s), RIGHT, tmp_path / str(s))) for s in (5, 10, 30)}  # fmt: skip
        groups = await asyncio.gather(
            *(run_late_group(erp, w, s, confirming_worker_dies=s == 30) for s, w in late_by.items())
        )
    kinds = {c.tool.rsplit(".", 1)[1] for cases in groups for c in cases}
    assert kinds == {"create", "update", "submit", "cancel", "workflow_action"}


async def test_a_worker_that_dies_mid_request_is_settled_by_another_after_the_window(
    erp: DemoERP, tmp_path: Path
) -> None:
    """The confirming process dies while its request is held by the proxy (kill -9 mid-call:
    no answer, no "checking" noted); the proxy delivers it anyway. Another worker decides only
    once the request can no longer arrive — the crash bound noted before sending."""
    async with workers(erp, late(30), RIGHT, tmp_path) as w:
        case = invoice_create(erp, "crash")
        await propose(w, case)
        assert case.proposal is not None
        me = await w.session(case.user)
        confirming = asyncio.create_task(
            w.a.confirm(me, case.proposal.id, case.proposal.payload_hash)
        )
        while not w.proxy.writes:
            await asyncio.sleep(0.01)
        confirming.cancel()  # the process is gone mid-request
        with contextlib.suppress(asyncio.CancelledError):
            await confirming
        await w.a.aclose()
        stored = await w.store.get_proposal(case.proposal.id)
        assert stored is not None
        assert stored.status is ProposalStatus.EXECUTING
        again = await w.b.confirm(me, case.proposal.id, case.proposal.payload_hash)
        assert again.status is Status.REFUSED  # being confirmed: not a second write
        await sweeping(w, [case], time.monotonic() + 30)
        await finish(w, [case])
        assert await problems(w, case) == []
        assert case.final is not None
        assert case.final.decided_at is not None
        noted = case.final.checkpoint or {}
        sent = dt.datetime.fromisoformat(noted["sent_at"])
        assert case.final.decided_at - sent >= dt.timedelta(
            seconds=CONFIRM_TIMEOUT + PROXY_READ_TIMEOUT + GRACE
        )


async def test_a_write_lost_on_the_way_is_offered_again_only_once_proved_absent(
    erp: DemoERP, tmp_path: Path
) -> None:
    """The proxy loses the write: after the window the ERP proves it absent, the user is told
    so and offered the same change again, and confirming that writes it exactly once."""
    async with workers(erp, None, RIGHT, tmp_path) as w:
        cases = [invoice_create(erp, "lost"), invoice_submit(erp, "lost"),
                 order_approve(erp, "lost")]  # fmt: skip
        for case in cases:
            await propose(w, case)
        await asyncio.gather(*(confirm(w, c) for c in cases))
        await sweeping(w, cases, time.monotonic() + 30)
        await finish(w, cases)
        w.proxy.hold = 0.0  # the way to the ERP works again
        for case in cases:
            told_unknown_while_it_could_arrive(case)
            final = case.final
            assert final is not None
            assert final.status is ProposalStatus.FAILED
            error = final.error or {}
            assert error.get("written") is False
            assert "prepared again" in error["message"]
            assert ("it was not created" in error["message"]) or (
                "unchanged: nothing was written" in error["message"]
            ), error["message"]
            assert final.decided_at is not None
            assert final.decided_at >= dt.datetime.fromisoformat(
                (final.checkpoint or {})["settle_after"]
            )
            assert case.times() == 0
            retry = await w.store.get_proposal(str(final.superseded_by))
            assert retry is not None
            assert retry.status is ProposalStatus.PENDING
            me = await w.session(case.user)
            case.retry = await w.a.confirm(me, retry.id, retry.payload_hash)
            assert case.retry.status is Status.OK, (case.label, case.retry.for_model())
            assert case.times() == 1, case.label


async def test_the_wrong_design_reconciling_right_after_the_timeout_is_caught(
    erp: DemoERP, tmp_path: Path
) -> None:
    """The same checks on the incident's design (decide as soon as the answer is missing):
    every kind of write is reported not written although it was, and the user who confirms
    the retry they are offered gets a second invoice, payment and journal entry."""
    async with workers(erp, late(10), WRONG, tmp_path) as w:
        cases = [make(erp, "wrong") for make in EVERY_KIND]
        for case in cases:
            await propose(w, case)
        await asyncio.gather(*(confirm(w, c) for c in cases))

        async def confirm_the_retry(case: Case) -> None:
            assert case.first is not None
            if case.first.proposal is not None:  # "prepared again below": the user confirms
                me = await w.session(case.user)
                retry = case.first.proposal
                case.retry = await w.a.confirm(me, retry["id"], retry["payload_hash"])

        await asyncio.gather(*(confirm_the_retry(c) for c in cases))
        await finish(w, cases)
        found = {case.label: await problems(w, case) for case in cases}
    assert all(found.values()), found
    for case in cases:
        if case.tool.endswith(".create"):
            assert case.times() == 2, (case.label, found[case.label])  # the duplicate, 2 of 2


# ------------------------------------------------------------------ a bespoke SQL database


class LostAnswer(SQLConnector):
    """The database commits the create and the answer is lost on the way back (the
    connection drops at commit)."""

    async def create(
        self,
        cred: Credential,
        entity: str,
        values: Mapping[str, Any],
        *,
        marker: str | None = None,
    ) -> Record:
        await super().create(cred, entity, values, marker=marker)
        raise ErpUnavailable("The database connection dropped while committing")


async def sql_create_with_lost_answer(
    tmp: Path, marker_column: str | None
) -> tuple[str, Proposal, Outcome, Outcome, Proposal]:
    url = seeded(f"sqlite:///{tmp / 'shop.sqlite'}", per_branch=5)
    mapping = load_mapping(MAPPING)
    if marker_column is not None:  # the database keeps a column for the agent's write marker
        engine = sa.create_engine(url)
        with engine.begin() as conn:
            conn.execute(sa.text(f"alter table customers add column {marker_column} varchar(40)"))
        engine.dispose()
        spec = mapping.entities["customer"].model_copy(update={"marker": marker_column})
        mapping = mapping.model_copy(update={"entities": {**mapping.entities, "customer": spec}})
    connector = LostAnswer(url, mapping=mapping)
    catalog = catalog_for(load_catalog(), connector.profile, connector.native_maps())
    registry = build_registry(catalog, profile=connector.profile)
    window = InFlight(dt.timedelta(seconds=0.2), dt.timedelta(0), dt.timedelta(seconds=0.3))
    gateway = Gateway(registry, MemoryStore(), connector, catalog, in_flight=window)
    try:
        me = await sign_in(connector, registry, load_policy(), "owner@savanna.test", "demo")
        made = await gateway.call(me, "customer.create", {
            "name": "Lost Answer Traders", "customer_type": "Company", "branch": "Kisumu"})  # fmt: skip
        assert made.proposal is not None, made.for_model()
        proposal = await gateway.store.get_proposal(made.proposal["id"])
        assert proposal is not None
        first = await gateway.confirm(me, proposal.id, proposal.payload_hash)
        again = await gateway.confirm(me, proposal.id, proposal.payload_hash)
        for _ in range(100):
            final = await gateway.store.get_proposal(proposal.id)
            assert final is not None
            if final.status is not ProposalStatus.CHECKING:
                return url, proposal, first, again, final
            await asyncio.sleep(0.05)
        raise AssertionError("still checking")
    finally:
        await gateway.aclose()
        await connector.aclose()


async def test_on_a_sql_database_a_lost_create_is_found_by_its_marker_column(
    tmp_path: Path,
) -> None:
    url, proposal, first, again, final = await sql_create_with_lost_answer(tmp_path, "agent_write")
    assert first.status is Status.CHECKING
    assert again.status is Status.REFUSED
    assert final.status is ProposalStatus.EXECUTED, final.error
    rows = sql_raw(url, "select code, agent_write from customers "
                        "where display_name = 'Lost Answer Traders'")  # fmt: skip
    assert [r[1] for r in rows] == [proposal.id]  # once, carrying the confirm's marker
    assert final.result is not None
    assert final.result["id"] == rows[0][0]


async def test_on_a_sql_database_without_a_marker_a_lost_create_is_never_offered_again(
    tmp_path: Path,
) -> None:
    """The mapping keeps neither a marker nor who created a row and when: the agent cannot
    tell, says so, and offers nothing that could write it a second time."""
    url, _, first, _, final = await sql_create_with_lost_answer(tmp_path, None)
    assert first.status is Status.CHECKING
    assert final.status is ProposalStatus.FAILED
    error = final.error or {}
    assert error["written"] is None
    assert "keeps nothing a new Customer can be found by" in error["message"]
    assert final.superseded_by is None
    rows = sql_raw(url, "select code from customers where display_name = 'Lost Answer Traders'")
    assert len(rows) == 1
