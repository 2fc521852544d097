"""Red team: the response cache never hands one user's answer to another.

Every demo user, plus users added with the same roles as a demo user but other User
Permissions (another branch, territory, company, employee), asks the seed questions in turn
through the server with the response cache on, once in one order and once in the reverse
order, so every user asks after every other user has asked the same words. The oracle is the
ERP's own answer to the receiving user, computed over REST as that user in the ERP's terms
(DocType, native field, docstatus): each answer must carry the receiver's figures and none of
another user's that differ from them. A second check shows the isolation is by construction:
any two users whose shared cache keys are equal get equal answers from the ERP for every
question, and a deliberately blind key (roles and tools only, as the cache once had) fails it.
"""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_doubles import build_app, client_for, sign_in, sse_events
from test_shared_redis import REDIS_URL

from conftest import TEST_TODAY
from demo_erp import auth, documents
from demo_erp.context import ADMINISTRATOR, as_user
from demo_erp.context import Settings as ErpSettings
from demo_erp.seed.users import DEMO_USERS
from erp_agent.calls.session import Session
from erp_agent.config import Settings
from erp_agent.connectors.scope import DataScope
from erp_agent.coordination.response_cache import CacheScopes, fingerprint
from erp_agent.evals.score import answer_text, figure_present
from erp_agent.evals.spec import Query
from erp_agent.evals.truth import ErpTruth
from erp_agent.planner import OfflinePlanner
from erp_agent.runtime import Runtime
from erp_agent.store.memory import MemoryStore

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

BRANCH_MANAGER = ("Sales Manager", "Sales User", "Accounts User", "Stock User", "Purchase User")


@dataclass(frozen=True)
class Added:
    email: str
    roles: tuple[str, ...]
    permissions: tuple[tuple[str, str], ...]
    employee: bool = False  # linked to an employee record of its own, as ERPNext links users


# Same roles as a demo user, other User Permissions; and one exact twin (equal scope: it may
# share answers with kisumu.manager, and must).
ADDED = (
    Added(
        "nakuru.manager@demo.local",
        BRANCH_MANAGER,
        (("Branch", "Nakuru"), ("Company", "Savanna Trading Ltd")),
    ),
    Added(
        "kisumu.deputy@demo.local",
        BRANCH_MANAGER,
        (("Branch", "Kisumu"), ("Company", "Savanna Trading Ltd")),
    ),
    Added("sales.coast@demo.local", ("Sales User",), (("Territory", "Coast"),)),
    Added("accounts.harbor@demo.local", ("Accounts User",), (("Company", "Harbor Goods Inc"),)),
    Added("employee.two@demo.local", ("Employee",), (), employee=True),
)
USERS = tuple(u.email for u in DEMO_USERS) + tuple(a.email for a in ADDED)

YEAR = ["posting_date", "between", ["{year_start}", "{year_end}"]]
LAST_MONTH = ["posting_date", "between", ["{prev_month_start}", "{prev_month_end}"]]


@dataclass(frozen=True)
class Probe:
    """A seed question with the ERP's answer in its own terms, computed as the asker: the
    figure and the documents behind it. ``stated``: the answer states the figure itself (the
    others are answered as lists, so only what must NOT be in them is checked)."""

    figures: Query
    documents: Query
    stated: bool = True


def query(**spec: Any) -> Query:
    return Query.model_validate(spec)


QUESTIONS: dict[str, Probe] = {
    "total sales this year": Probe(
        query(op="sum", doctype="Sales Invoice", field="base_net_total", docstatus=1,
              group_by=["company"], filters=[YEAR]),
        query(op="names", doctype="Sales Invoice", docstatus=1, filters=[YEAR]),
    ),
    "how many customers do we have": Probe(
        query(op="count", doctype="Customer", docstatus="any"),
        query(op="names", doctype="Customer", docstatus="any"),
    ),
    "how much do customers owe us": Probe(
        query(op="sum", doctype="Sales Invoice", field="outstanding_amount", docstatus=1,
              group_by=["currency"]),
        query(op="names", doctype="Sales Invoice", docstatus=1,
              filters=[["outstanding_amount", ">", 0]]),
        stated=False,
    ),
    "what was my net pay last month": Probe(
        query(op="sum", doctype="Salary Slip", field="net_pay", docstatus=1,
              group_by=["currency"], filters=[LAST_MONTH]),
        query(op="names", doctype="Salary Slip", docstatus=1, filters=[LAST_MONTH]),
        stated=False,
    ),
}  # fmt: skip


@dataclass(frozen=True)
class Truth:
    figures: frozenset[Decimal]
    documents: frozenset[str]


@pytest.fixture(scope="module")
def scoped_erp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A demo ERP of its own (users are added to it) at test scale, served over HTTP."""
    from demo_erp.seed import seed
    from demo_erp.server import start_in_thread

    path = tmp_path_factory.mktemp("scoped-erp") / "demo.sqlite"
    seed(path, today=TEST_TODAY, scale=0.1)
    settings = ErpSettings(db_path=str(path), today=TEST_TODAY)
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    ctx = as_user(conn, settings, ADMINISTRATOR)
    with documents.transaction(conn):
        for added in ADDED:
            documents.insert(
                ctx,
                "User",
                {
                    "email": added.email,
                    "first_name": added.email.split("@")[0],
                    "full_name": added.email.split("@")[0],
                    "user_type": "System User",
                    "roles": [{"role": r} for r in added.roles],
                },
            )
            for allow, value in added.permissions:
                documents.insert(
                    ctx,
                    "User Permission",
                    {"user": added.email, "allow": allow, "for_value": value},
                )
            if added.employee:
                # Another active employee of the demo employee's company, with slips of its own.
                row = conn.execute(
                    'select e.name from "tabEmployee" e where e.user_id is null and '
                    "e.status = 'Active' and exists (select 1 from \"tabSalary Slip\" s "
                    "where s.employee = e.name and s.docstatus = 1) order by e.name limit 1"
                ).fetchone()
                conn.execute(
                    'update "tabEmployee" set user_id = ? where name = ?',
                    (added.email, row["name"]),
                )
                documents.insert(
                    ctx,
                    "User Permission",
                    {"user": added.email, "allow": "Employee", "for_value": row["name"]},
                )
            auth.set_password(conn, added.email, "demo")
    conn.close()
    server = start_in_thread(settings)
    yield server.url
    server.stop()


@pytest.fixture(scope="module")
def truths(scoped_erp: str) -> dict[tuple[str, str], Truth]:
    """(user, question) → what the ERP gives that user (nothing, where it refuses them)."""

    async def compute() -> dict[tuple[str, str], Truth]:
        truth = ErpTruth(scoped_erp, "demo", TEST_TODAY)
        out: dict[tuple[str, str], Truth] = {}
        for user, (question, probe) in itertools.product(USERS, QUESTIONS.items()):
            try:
                figures = await truth.figures(user, probe.figures, None)
                names = await truth.figures(user, probe.documents, None)
            except Exception:  # the ERP refuses this user the DocType: nothing to see
                figures, names = [], []
            out[user, question] = Truth(
                frozenset(cents(v) for v in figures), frozenset(str(n) for n in names)
            )
        await truth.aclose()
        return out

    return asyncio.run(compute())


def cents(value: object) -> Decimal:
    return Decimal(str(value)).quantize(Decimal("0.01"))


async def ask(client: httpx.AsyncClient, message: str) -> dict[str, Any]:
    events = sse_events((await client.post("/api/chat", json={"message": message})).text)
    return next(data for name, data in events if name in ("response", "error"))  # type: ignore[no-any-return]


def forbidden(truths: dict[tuple[str, str], Truth], user: str, question: str) -> set[str]:
    """What another user's answer to the same words holds and this user's must not: their
    documents, and their figures (above 12: a small count also reads as a row number)."""
    mine = truths[user, question]
    out: set[str] = set()
    for other in USERS:
        theirs = truths[other, question]
        out |= set(theirs.documents - mine.documents)
        if not theirs.documents <= mine.documents:  # a figure of records this user can't see
            out |= {str(v) for v in theirs.figures - mine.figures if v > 12}
    return out


def leaks(answer: str, truths: dict[tuple[str, str], Truth], user: str, question: str) -> set[str]:
    return {token for token in forbidden(truths, user, question) if figure_present(answer, token)}


async def sessions(runtime: Runtime) -> dict[str, Session]:
    return {user: await runtime.sign_in(user, "demo") for user in USERS}


async def test_equal_cache_keys_mean_equal_answers_from_the_erp(
    scoped_erp: str, truths: dict[tuple[str, str], Truth], tmp_path: Path
) -> None:
    settings = Settings(erp_url=scoped_erp, data_dir=str(tmp_path))
    runtime = await Runtime.create(settings, store=MemoryStore())
    signed = await sessions(runtime)
    scopes = CacheScopes(runtime.connector)
    keys = {user: (await scopes.of(session)).shared for user, session in signed.items()}
    # The blind key the cache once had: organisation, roles, tools, read-only.
    blind = {user: fingerprint(session, DataScope()).shared for user, session in signed.items()}

    def broken_pairs(key: dict[str, str | None]) -> list[tuple[str, str, str]]:
        return [
            (a, b, q)
            for a, b in itertools.combinations(USERS, 2)
            if key[a] is not None and key[a] == key[b]
            for q in QUESTIONS
            if truths[a, q] != truths[b, q]
        ]

    assert broken_pairs(keys) == []
    # A wrong implementation fails this check: same roles, other branches, other figures.
    assert ("kisumu.manager@demo.local", "mombasa.manager@demo.local", "total sales this year") in broken_pairs(blind)  # fmt: skip
    assert len(broken_pairs(blind)) >= 10
    # Same roles and permissions: one key (the cache still serves the twin).
    assert keys["kisumu.manager@demo.local"] == keys["kisumu.deputy@demo.local"] is not None
    for a, b in [
        ("kisumu.manager@demo.local", "mombasa.manager@demo.local"),
        ("kisumu.manager@demo.local", "nakuru.manager@demo.local"),
        ("sales@demo.local", "sales.coast@demo.local"),
        ("accounts@demo.local", "accounts.harbor@demo.local"),
        ("employee@demo.local", "employee.two@demo.local"),
    ]:
        assert keys[a] != keys[b], (a, b)
    # An answer about the asker is never shared, whatever the scope.
    kisumu = signed["kisumu.manager@demo.local"]
    assert not await scopes.shareable(kisumu, "what was my net pay last month", ["salary_slip"])
    assert await scopes.shareable(kisumu, "total sales this year", ["sales_invoice"])
    await runtime.aclose()


async def run_matrix(
    erp_url: str, truths: dict[tuple[str, str], Truth], tmp_path: Path, order: list[str],
    *, redis_url: str | None = None,
) -> tuple[list[str], list[tuple[str, str, str]]]:  # fmt: skip
    """Every user asks every question, in ``order``, with the cache on; returns what went
    wrong, and the hits (receiver, question, kind)."""
    settings = Settings(
        erp_url=erp_url, data_dir=str(tmp_path), response_cache_seconds=600,
        redis_url=redis_url, redis_prefix=f"erp-test-{uuid.uuid4().hex[:10]}",
    )  # fmt: skip
    runtime = await Runtime.create(settings, store=MemoryStore())
    harness = build_app(
        runtime, tmp_path, model=lambda rt: OfflinePlanner(rt.catalog, rt.connector.name)
    )
    problems: list[str] = []
    hits: list[tuple[str, str, str]] = []
    async with client_for(harness.app):
        clients = {}
        for user in order:
            transport = httpx.ASGITransport(app=harness.app)
            clients[user] = httpx.AsyncClient(transport=transport, base_url="http://testserver")
            await sign_in(clients[user], user)
        for question, probe in QUESTIONS.items():
            for user in order:
                reply = await ask(clients[user], question)
                text = answer_text(reply.get("blocks", []))
                if "cached" in reply:
                    hits.append((user, question, reply["cached"]["kind"]))
                leaked = leaks(text, truths, user, question)
                if leaked:
                    problems.append(f"{user} / {question}: another user's {sorted(leaked)[:5]}")
                mine = truths[user, question]
                if (
                    probe.stated
                    and mine.figures
                    and "can't" not in text  # declined by the agent's own role policy
                    and not all(figure_present(text, v) for v in mine.figures)
                ):
                    problems.append(
                        f"{user} / {question}: not the ERP's {sorted(mine.figures)}: {text[:200]}"
                    )
        for client in clients.values():
            await client.aclose()
        if redis_url is not None and runtime.redis is not None:
            link = runtime.redis
            keys = [k async for k in link.client.scan_iter(f"{link.prefix}:*")]
            if keys:
                await link.client.delete(*keys)
    await harness.switch.aclose()
    await runtime.aclose()
    return problems, hits


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
async def test_every_user_after_every_other_gets_the_erps_answer_to_them(
    scoped_erp: str, truths: dict[tuple[str, str], Truth], tmp_path: Path, reverse: bool
) -> None:
    order = list(reversed(USERS)) if reverse else list(USERS)
    problems, hits = await run_matrix(scoped_erp, truths, tmp_path, order)
    assert problems == [], "\n".join(problems)
    # The cache still works where the scope is the same: the twin gets the first one's answer.
    receivers = {(user, question) for user, question, _ in hits}
    twin = "kisumu.manager@demo.local" if reverse else "kisumu.deputy@demo.local"
    assert (twin, "total sales this year") in receivers
    # Nobody's question about themselves is answered from someone else's.
    assert not any(question.startswith("what was my") for _, question, _ in hits)


@pytest.mark.redis
async def test_the_matrix_holds_with_the_cache_in_redis(
    scoped_erp: str, truths: dict[tuple[str, str], Truth], tmp_path: Path
) -> None:
    problems, hits = await run_matrix(
        scoped_erp, truths, tmp_path, list(USERS), redis_url=REDIS_URL
    )
    assert problems == [], "\n".join(problems)
    assert ("kisumu.deputy@demo.local", "total sales this year") in {(u, q) for u, q, _ in hits}


async def test_a_confirmed_write_drops_the_cached_answers_that_read_what_it_changed(
    scoped_erp: str, tmp_path: Path
) -> None:
    settings = Settings(erp_url=scoped_erp, data_dir=str(tmp_path), response_cache_seconds=600)
    runtime = await Runtime.create(settings, store=MemoryStore())
    harness = build_app(
        runtime, tmp_path, model=lambda rt: OfflinePlanner(rt.catalog, rt.connector.name)
    )
    question = "how many leads do we have"
    async with client_for(harness.app) as admin:
        await sign_in(admin, "admin@demo.local")
        before = await ask(admin, question)
        assert "cached" in await ask(admin, question)  # kept
        items = await ask(admin, "how many items do we have")
        made = await ask(admin, "create a lead for Jane Roe at Zebra Holdings")
        proposal = next(b for b in made["blocks"] if b["type"] == "proposal")
        url = f"/api/proposals/{proposal['id']}/confirm"
        assert (await admin.post(url, json={"payload_hash": proposal["payload_hash"]})).json()["ok"]
        after = await ask(admin, question)
        assert "cached" not in after  # the write dropped it: the ERP is asked again
        count = len(truth_rows(scoped_erp, "Lead"))
        assert figure_present(answer_text(after["blocks"]), count)
        assert not figure_present(answer_text(before["blocks"]), count)
        # An answer that read nothing the write touched is still served.
        assert "cached" in await ask(admin, "how many items do we have")
        assert "cached" not in items
    await harness.switch.aclose()
    await runtime.aclose()


def truth_rows(erp_url: str, doctype: str) -> list[dict[str, Any]]:
    """The ERP's own list, as the admin (the independent count)."""
    with httpx.Client(base_url=erp_url) as client:
        client.post("/api/method/login", data={"usr": "admin@demo.local", "pwd": "demo"})
        reply = client.get(f"/api/resource/{doctype}", params={"limit_page_length": 0})
        return list(reply.json()["data"])
