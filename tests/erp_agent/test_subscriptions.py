"""Questions that come back, end to end against the demo ERP over HTTP: a user subscribes (a
proposal they confirm) to a weekly digest and a threshold alert; the clock is advanced (an
injected clock, never a real wait); the runs happen as the user through the gateway, and the
email is found in a local SMTP server, the ToDo in the ERP's own database and the item in the
inbox — each with the figure, its definition and a link back to the question.

Bad input: a user who lost access gets nothing and the subscription says so; a subscription
whose question no longer reads (its customer deleted) is paused with a message and is not run
again; the mail server down means retries with backoff, then a notice in the inbox."""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.fernet import Fernet
from server_doubles import build_app, client_for
from server_doubles import sign_in as web_sign_in
from smtp_sink import Sink, smtp_sink

from conftest import DemoERP, raw
from demo_erp.seed import api_credentials
from erp_agent.calls.outcome import Status
from erp_agent.calls.session import Session
from erp_agent.config import Settings, SmtpSettings, SubscriptionSettings
from erp_agent.connectors.credentials import Credential
from erp_agent.gateway.signin import session_for
from erp_agent.queue.subscriptions import run_subscriptions
from erp_agent.runtime import Runtime
from erp_agent.store.sql_store import open_store
from erp_agent.subscriptions.models import DeliveryStatus, Outcome
from erp_agent.subscriptions.models import Status as SubStatus
from erp_agent.subscriptions.runner import SubscriptionRunner

pytestmark = pytest.mark.anyio
TZ = "Africa/Nairobi"  # UTC+3, no daylight saving
SUNDAY_NOON = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.UTC)
MONDAY_8_NAIROBI = dt.datetime(2026, 11, 30, 5, 0, tzinfo=dt.UTC)


class Clock:
    def __init__(self, now: dt.datetime) -> None:
        self.now = now

    def __call__(self) -> dt.datetime:
        return self.now

    def at(self, when: dt.datetime) -> dt.datetime:
        self.now = when
        return when


@dataclass
class World:
    rt: Runtime
    sink: Sink
    clock: Clock
    runner: SubscriptionRunner
    demo: DemoERP

    async def tick(self, when: dt.datetime) -> dict[str, int]:
        return await self.runner.tick(self.clock.at(when))


@pytest.fixture
async def world(demo_erp: DemoERP, tmp_path: Path) -> AsyncIterator[World]:
    async with smtp_sink() as sink:
        settings = Settings(
            erp_url=demo_erp.url,
            data_dir=str(tmp_path),
            public_url="https://agent.example.com/agent",
            session_key=Fernet.generate_key().decode(),
            smtp=SmtpSettings(host=sink.host, port=sink.port, sender="agent@example.com"),
            subscriptions=SubscriptionSettings(delivery_attempts=3, retry_seconds=60),
        )
        store = open_store(f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite'}")
        rt = await Runtime.create(settings, store=store)
        assert rt.subscriptions is not None
        clock = Clock(SUNDAY_NOON)
        rt.subscriptions.clock = clock
        yield World(rt, sink, clock, SubscriptionRunner(rt.subscriptions), demo_erp)
        await rt.aclose()


async def api_key_session(rt: Runtime, user: str) -> Session:
    """The user signed in with their own ERP API key pair (kept for their subscriptions)."""
    cred = Credential.token(user, *api_credentials(42, user))
    return await session_for(rt.connector, rt.registry, rt.policy, cred)


async def subscribe(rt: Runtime, session: Session, args: dict[str, Any]) -> dict[str, Any]:
    """subscriptions.create is a write: a proposal first, written once the user confirms."""
    proposed = await rt.gateway.call(session, "subscriptions.create", args)
    assert proposed.status is Status.PROPOSAL, proposed.message
    assert proposed.proposal is not None
    confirmed = await rt.gateway.confirm(session, proposed.proposal["id"])
    assert confirmed.status is Status.OK, confirmed.message
    created: dict[str, Any] = confirmed.data["subscription"]
    return created


def lowest_stock(demo: DemoERP) -> tuple[str, Decimal]:
    row = raw(demo, "select item_code, sum(actual_qty) q from tabBin group by item_code "
                    "having q > 0 order by q limit 1")[0]  # fmt: skip
    return str(row["item_code"]), Decimal(str(row["q"]))


def todos(demo: DemoERP, user: str) -> list[str]:
    rows = raw(demo, "select description from tabToDo where allocated_to = ? and owner = ? "
                     "order by creation", user, user)  # fmt: skip
    return [str(r["description"]) for r in rows]


async def test_a_weekly_digest_and_a_threshold_alert_reach_email_the_erp_and_the_inbox(
    world: World,
) -> None:
    rt, sink, demo = world.rt, world.sink, world.demo
    user = "stock@demo.local"
    session = await api_key_session(rt, user)
    before = len(todos(demo, user))
    item, qty = lowest_stock(demo)
    threshold = int(qty) + 10  # "falls below": the stock is below it now
    channels = ["email", "erp", "inbox"]
    alert = await subscribe(rt, session, {
        "title": f"{item} below {threshold}",
        "question": f"Tell me when stock of {item} falls below {threshold}",
        "calls": [{"tool": "metrics.query", "args": {
            "metric": "stock_on_hand", "filters": [{"dimension": "item", "value": item}]}}],
        "condition": {"op": "<", "value": threshold}, "channels": channels, "timezone": TZ,
    })  # fmt: skip
    digest = await subscribe(rt, session, {
        "title": "Weekly stock value", "question": "What is our stock worth?",
        "calls": [{"tool": "metrics.query", "args": {"metric": "stock_value"}}],
        "schedule": "every Monday at 8", "channels": channels, "timezone": TZ,
    })  # fmt: skip
    assert digest["cron"] == "0 8 * * 1"
    assert alert["cron"] == "*/15 * * * *"
    assert alert["kind"] == "alert"
    assert digest["kind"] == "digest"

    # Nothing is due before its time.
    assert (await world.tick(SUNDAY_NOON + dt.timedelta(minutes=5)))["ran"] == 0
    assert sink.messages == []

    # The alert's first check: the stock is below the threshold, so it is delivered.
    assert (await world.tick(SUNDAY_NOON + dt.timedelta(minutes=15)))["ran"] == 1
    [mail] = sink.to(user)
    body = Sink.body(mail)
    assert f"{qty:,.0f}" in str(mail["Subject"])
    assert item in str(mail["Subject"])
    assert "Actual quantity in stock now" in body  # the metric's definition
    assert f"Item = {item}" in body
    assert "https://agent.example.com/agent/?ask=Tell+me+when+stock+of" in body
    [todo] = todos(demo, user)[before:]
    assert f"{qty:,.0f}" in todo
    assert "Actual quantity in stock now" in todo
    assert "?ask=" in todo

    # Still below at the next check: not delivered again (only when it becomes true).
    await world.tick(SUNDAY_NOON + dt.timedelta(minutes=30))
    assert len(sink.to(user)) == 1
    assert len(todos(demo, user)) == before + 1

    # Monday 08:00 in Nairobi: the digest, with the ERP's own figure.
    report = await world.tick(MONDAY_8_NAIROBI)
    assert report["ran"] == 2  # the digest, and the alert's check (quiet)
    digest_mail = sink.to(user)[-1]
    assert str(digest_mail["Subject"]).startswith("Weekly stock value:")
    truth = Decimal(str(raw(demo, "select sum(stock_value) v from tabBin")[0]["v"]))
    inbox = await rt.subscriptions.store.items(user)  # type: ignore[union-attr]
    shown = [i for i in inbox if i.subscription_id == digest["id"]]
    assert len(shown) == 1
    # One figure per company currency; together they are the ERP's whole stock value.
    total = sum(Decimal(f["value"]) for f in shown[0].data["figures"])
    assert abs(total - truth) < Decimal("0.01"), (total, truth)
    digest_body = Sink.body(digest_mail)
    assert "Bin stock_value" in digest_body
    assert "?ask=What+is+our+stock" in digest_body
    assert len(todos(demo, user)) == before + 2
    # Both runs went through the gateway as the user, each call audited.
    events = await rt.store.events(user=user, tool="metrics.query")
    assert {e.session_id for e in events} >= {f"sub_{alert['id']}", f"sub_{digest['id']}"}
    listed = await rt.gateway.call(session, "subscriptions.list", {})
    assert {s["id"] for s in listed.data["subscriptions"]} == {alert["id"], digest["id"]}
    assert (
        next(s for s in listed.data["subscriptions"] if s["id"] == digest["id"])["next_run"]
        == (MONDAY_8_NAIROBI + dt.timedelta(days=7)).isoformat()
    )


# ---------------------------------------------------------------------- helpers for bad input


@contextmanager
def erp_admin(demo: DemoERP) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=demo.url, timeout=30) as http:
        signed = http.post("/api/method/login", json={"usr": "admin@demo.local", "pwd": "demo"})
        assert signed.is_success
        yield http


def new_erp_user(demo: DemoERP, *roles: str) -> str:
    """A user of the ERP's own, made for one test (its keys can be issued without touching
    the demo users' seeded ones)."""
    email = f"sub-{secrets.token_hex(4)}@demo.local"
    with erp_admin(demo) as http:
        made = http.post("/api/resource/User", json={
            "email": email, "first_name": "Subscriber", "roles": [{"role": r} for r in roles]})  # fmt: skip
        assert made.is_success, made.text
    return email


def set_roles(demo: DemoERP, user: str, *roles: str) -> None:
    with erp_admin(demo) as http:
        changed = http.put(
            f"/api/resource/User/{user}", json={"roles": [{"role": r} for r in roles]}
        )
        assert changed.is_success, changed.text


async def enabled_session(world: World, user: str) -> Session:
    """An administrator enables the user's subscriptions (the ERP issues their key pair);
    the user's session signed in with it."""
    rt = world.rt
    assert rt.subscriptions is not None
    admin = await rt.connector.login("admin@demo.local", "demo")
    await rt.subscriptions.enable_user(admin, "admin@demo.local", user)
    [credential] = await rt.subscriptions.credentials(user)
    return await session_for(rt.connector, rt.registry, rt.policy, credential)


STOCK_VALUE = [{"tool": "metrics.query", "args": {"metric": "stock_value"}}]


async def test_a_user_who_lost_access_gets_nothing_and_the_subscription_says_so(
    world: World,
) -> None:
    rt, sink = world.rt, world.sink
    user = new_erp_user(world.demo, "Stock User")
    session = await enabled_session(world, user)
    sub = await subscribe(rt, session, {
        "title": "Daily stock value", "question": "stock value", "calls": STOCK_VALUE,
        "schedule": "0 8 * * *", "channels": ["email", "inbox"], "timezone": "UTC"})  # fmt: skip
    first = dt.datetime(2026, 11, 30, 8, 0, tzinfo=dt.UTC)
    await world.tick(first)
    assert len(sink.to(user)) == 1

    set_roles(world.demo, user)  # the ERP takes the role away
    await world.tick(first + dt.timedelta(days=1))
    assert len(sink.to(user)) == 1  # nothing more was sent
    [listed] = (await rt.gateway.call(session, "subscriptions.list", {})).data["subscriptions"]
    assert listed["id"] == sub["id"]
    assert listed["status"] == "active"
    assert listed["last_outcome"] == Outcome.NO_ACCESS
    assert "no longer read" in listed["status_message"]
    inbox = await rt.subscriptions.store.items(user)  # type: ignore[union-attr]
    assert inbox[0].kind == "notice"
    assert "no longer read" in inbox[0].body

    set_roles(world.demo, user, "Stock User")  # and gives it back: delivered again
    rt.grants = None  # the ERP's grants are read afresh (they are kept for a few minutes)
    await world.tick(first + dt.timedelta(days=2))
    assert len(sink.to(user)) == 2


async def test_a_question_that_no_longer_reads_is_paused_with_a_message_not_retried(
    world: World,
) -> None:
    rt = world.rt
    name = f"Short-lived Customer {secrets.token_hex(3)}"
    with erp_admin(world.demo) as http:
        made = http.post("/api/resource/Customer", json={
            "customer_name": name, "customer_type": "Company"})  # fmt: skip
        assert made.is_success, made.text
    session = await api_key_session(rt, "accounts.manager@demo.local")
    sub = await subscribe(rt, session, {
        "title": f"Revenue from {name}", "question": f"How much did {name} buy?",
        "calls": [{"tool": "metrics.query", "args": {
            "metric": "revenue", "filters": [{"dimension": "customer", "value": name}]}}],
        "schedule": "0 8 * * 1", "channels": ["inbox"], "timezone": TZ})  # fmt: skip
    assert (await world.tick(MONDAY_8_NAIROBI))["ran"] == 1
    with erp_admin(world.demo) as http:
        assert http.delete(f"/api/resource/Customer/{name}").is_success

    assert (await world.tick(MONDAY_8_NAIROBI + dt.timedelta(days=7)))["ran"] == 1
    assert rt.subscriptions is not None
    paused = await rt.subscriptions.store.get(sub["id"])
    assert paused is not None
    assert paused.status is SubStatus.PAUSED
    assert paused.last_outcome is Outcome.UNREADABLE
    assert name in paused.status_message
    assert "no longer exists" in paused.status_message
    [notice] = [i for i in await rt.subscriptions.store.items("accounts.manager@demo.local")
                if i.subscription_id == sub["id"] and i.kind == "notice"]  # fmt: skip
    assert "paused" in notice.title
    # Paused: the next Mondays run nothing, and nothing crashes.
    assert (await world.tick(MONDAY_8_NAIROBI + dt.timedelta(days=14)))["ran"] == 0


async def test_the_mail_server_down_is_retried_with_backoff_then_reported_in_the_inbox(
    world: World,
) -> None:
    rt, sink = world.rt, world.sink
    assert rt.subscriptions is not None
    user = "stock@demo.local"
    session = await api_key_session(rt, user)
    sub = await subscribe(rt, session, {
        "title": "Stock value by email", "question": "What is our stock worth?",
        "calls": STOCK_VALUE, "schedule": "0 8 * * 1", "channels": ["email"], "timezone": TZ})  # fmt: skip
    sink.down = True
    await world.tick(MONDAY_8_NAIROBI)
    [delivery] = await rt.subscriptions.store.deliveries(subscription_id=sub["id"])
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.PENDING, 1)
    assert "421" in (delivery.last_error or "")
    # Backoff: 60 s, then four times that.
    await world.tick(MONDAY_8_NAIROBI + dt.timedelta(seconds=59))
    assert sink.refused == 1
    await world.tick(MONDAY_8_NAIROBI + dt.timedelta(seconds=60))
    assert sink.refused == 2
    await world.tick(MONDAY_8_NAIROBI + dt.timedelta(seconds=60 + 239))
    assert sink.refused == 2
    await world.tick(MONDAY_8_NAIROBI + dt.timedelta(seconds=60 + 240))
    assert sink.refused == 3  # the third and last attempt (delivery_attempts = 3)
    [delivery] = await rt.subscriptions.store.deliveries(subscription_id=sub["id"])
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.FAILED, 3)
    sink.down = False
    await world.tick(MONDAY_8_NAIROBI + dt.timedelta(hours=1))
    assert sink.to(user) == []  # given up, not sent later
    [notice] = [i for i in await rt.subscriptions.store.items(user)
                if i.subscription_id == sub["id"]]  # fmt: skip
    assert notice.kind == "notice"
    assert "not delivered by email" in notice.title
    assert "after 3 attempt(s)" in notice.body
    assert "Stock value" in notice.body
    assert notice.data["link"].startswith("https://agent.example.com/agent/?ask=")


async def test_subscriptions_are_listed_paused_and_deleted_by_asking(world: World) -> None:
    rt = world.rt
    session = await api_key_session(rt, "stock@demo.local")
    digest = await subscribe(rt, session, {
        "title": "Stock value", "question": "stock value", "calls": STOCK_VALUE,
        "schedule": "every Monday at 8", "channels": ["inbox"], "timezone": TZ})  # fmt: skip
    alert = await subscribe(rt, session, {
        "title": "Stock value alert", "question": "tell me when stock value falls below 1",
        "calls": STOCK_VALUE, "condition": {"op": "<", "value": 1}, "channels": ["inbox"]})  # fmt: skip
    paused = await rt.gateway.call(
        session, "subscriptions.pause", {"subscription": "the Monday digest"}
    )
    assert paused.status is Status.OK, paused.message
    assert paused.data["subscription"]["id"] == digest["id"]
    listed = (await rt.gateway.call(session, "subscriptions.list", {})).data["subscriptions"]
    assert {s["id"]: s["status"] for s in listed} == {digest["id"]: "paused", alert["id"]: "active"}
    report = await world.tick(MONDAY_8_NAIROBI)
    assert report["ran"] == 1  # the alert only
    # Words that fit both ask which one is meant.
    both = await rt.gateway.call(session, "subscriptions.delete", {"subscription": "stock value"})
    assert both.status is Status.INVALID
    assert both.choices is not None
    assert {o["value"] for o in both.choices["options"]} == {digest["id"], alert["id"]}
    gone = await rt.gateway.call(session, "subscriptions.delete", {"subscription": "stock alert"})
    assert gone.status is Status.OK
    assert gone.data["deleted"] == alert["id"]
    resumed = await rt.gateway.call(session, "subscriptions.resume", {"subscription": digest["id"]})
    assert resumed.data["subscription"]["status"] == "active"
    # Another user's subscriptions are not theirs to find.
    other = await api_key_session(rt, "accounts@demo.local")
    mine = await rt.gateway.call(other, "subscriptions.pause", {"subscription": digest["id"]})
    assert mine.status is Status.INVALID


async def test_a_reading_is_checked_as_the_user_before_it_is_proposed(world: World) -> None:
    rt = world.rt
    session = await api_key_session(rt, "sales@demo.local")
    bad = [
        ({"calls": [{"tool": "salary_slip.list", "args": {}}], "schedule": "0 8 * * 1"},
         "not available to you"),
        ({"calls": [{"tool": "metrics.query", "args": {"metric": "no_such_metric"}}],
          "schedule": "0 8 * * 1"}, "metric"),
        ({"calls": [{"tool": "sales_invoice.create", "args": {}}], "schedule": "0 8 * * 1"},
         "cannot be subscribed to"),
        ({"calls": STOCK_VALUE[:0] or [{"tool": "metrics.query", "args": {"metric": "revenue"}}]},
         "needs a schedule"),
        ({"calls": [{"tool": "metrics.query", "args": {"metric": "revenue"}}],
          "schedule": "whenever"}, "neither cron nor"),
    ]  # fmt: skip
    for args, words in bad:
        outcome = await rt.gateway.call(
            session, "subscriptions.create", {"title": "t", "question": "q", **args}
        )
        assert outcome.status is Status.INVALID, (args, outcome.status)
        assert words in outcome.message, (words, outcome.message)
    assert await rt.subscriptions.store.listing(user="sales@demo.local") == []  # type: ignore[union-attr]


async def test_the_queue_tick_fills_the_inbox_the_web_app_reads(
    world: World, tmp_path: Path
) -> None:
    rt = world.rt
    harness = build_app(rt, tmp_path)  # the server's vault seals credentials from here on
    session = await api_key_session(rt, "stock@demo.local")
    sub = await subscribe(rt, session, {
        "title": "Inbox stock value", "question": "What is our stock worth?", "calls": STOCK_VALUE,
        "schedule": "0 8 * * 1", "channels": ["inbox"], "timezone": TZ})  # fmt: skip
    assert (await run_subscriptions(rt))["ran"] == 0  # Sunday noon: not due
    world.clock.at(MONDAY_8_NAIROBI)
    assert (await run_subscriptions(rt))["ran"] == 1  # the task the queue's workers run
    async with client_for(harness.app) as web:
        await web_sign_in(web, "stock@demo.local")
        inbox = (await web.get("/api/inbox")).json()
        [item] = [i for i in inbox["items"] if i["subscription_id"] == sub["id"]]
        assert inbox["unread"] >= 1
        assert not item["read"]
        assert item["data"]["headline"]
        assert "Bin stock_value" in item["data"]["definition"]
        assert (
            item["data"]["link"]
            == "https://agent.example.com/agent/?ask=What+is+our+stock+worth%3F"
        )
        assert (await web.post(f"/api/inbox/{item['id']}/read")).status_code == 200
        assert item["id"] not in {
            i["id"] for i in (await web.get("/api/inbox?unread=true")).json()["items"]
        }
        mine = (await web.get("/api/subscriptions")).json()["subscriptions"]
        assert sub["id"] in {s["id"] for s in mine}
        paused = await web.post(f"/api/subscriptions/{sub['id']}/pause")
        assert paused.json()["subscription"]["status"] == "paused"
    async with client_for(build_app(rt, tmp_path).app) as sales:
        await web_sign_in(sales, "sales@demo.local")
        assert (await sales.post(f"/api/subscriptions/{sub['id']}/resume")).status_code == 404
        assert (await sales.post(f"/api/inbox/{item['id']}/read")).status_code == 404
