"""What the ERP grants a user is asked once and reused by that user's next sign-in with the same
roles (gateway/grants.py): never by another user, never past the TTL, never across a role
change, never after sign-out. Counted on a fake ERP that records each permission question."""

from __future__ import annotations

import builtins
import datetime as dt
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from erp_agent.catalog import load_catalog
from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.fake import FakeConnector, FakeUser
from erp_agent.connectors.profile import catalog_for
from erp_agent.gateway.grants import Grants, GrantsCache
from erp_agent.gateway.policy import load_policy
from erp_agent.gateway.signin import sign_in
from erp_agent.store import schema
from erp_agent.store.base import Store
from erp_agent.store.memory import MemoryStore
from erp_agent.store.sql_store import open_store
from erp_agent.tools.base import ToolRegistry
from erp_agent.tools.factories import catalog_tools

pytestmark = pytest.mark.anyio
POLICY = load_policy()
TTL = dt.timedelta(seconds=300)


class CountingERP(FakeConnector):
    """A fake ERP that counts permission questions and can refuse a user a doctype."""

    def __init__(self) -> None:
        users = {
            "ana@fake": FakeUser("pw", ("Accounts Manager",)),
            "ben@fake": FakeUser("pw", ("Accounts Manager",)),
        }
        super().__init__({"sales_invoice": [], "customer": []}, users)
        self.asked: builtins.list[str] = []
        self.refused: dict[str, set[str]] = {}

    async def access(self, cred: Credential, entity: str) -> dict[str, bool]:
        self.asked.append(cred.user)
        rights = await super().access(cred, entity)
        if entity in self.refused.get(cred.user, set()):
            return dict.fromkeys(rights, False)
        return rights


class Clock:
    def __init__(self) -> None:
        self.now = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)

    def __call__(self) -> dt.datetime:
        return self.now


async def _sign_in(erp: CountingERP, cache: GrantsCache, user: str) -> frozenset[str]:
    erp.asked.clear()
    # The tools of what this connector offers (as the runtime builds them).
    registry = ToolRegistry(catalog_tools(catalog_for(load_catalog(), erp.profile, None)))
    session = await sign_in(erp, registry, POLICY, user, "pw", grants=cache)
    return session.allowed_tools


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    if request.param == "memory":
        yield MemoryStore()
        return
    sql = open_store(f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite'}")
    await sql.migrate()
    try:
        yield sql
    finally:
        await sql.close()


async def test_a_second_sign_in_reuses_the_grants(store: Store) -> None:
    erp, clock = CountingERP(), Clock()
    cache = GrantsCache(store, "http://erp", TTL, clock)
    first = await _sign_in(erp, cache, "ana@fake")
    assert erp.asked
    assert "sales_invoice.list" in first
    again = await _sign_in(erp, cache, "ana@fake")
    assert erp.asked == []
    assert again == first


async def test_another_user_never_gets_the_first_users_grants(store: Store) -> None:
    erp, clock = CountingERP(), Clock()
    cache = GrantsCache(store, "http://erp", TTL, clock)
    erp.refused["ben@fake"] = {"customer"}
    ana = await _sign_in(erp, cache, "ana@fake")
    ben = await _sign_in(erp, cache, "ben@fake")  # the same roles, other rights
    assert set(erp.asked) == {"ben@fake"}
    assert "customer.list" in ana
    assert "customer.list" not in ben
    assert "sales_invoice.list" in ben


async def test_grants_expire_after_the_ttl(store: Store) -> None:
    erp, clock = CountingERP(), Clock()
    cache = GrantsCache(store, "http://erp", TTL, clock)
    await _sign_in(erp, cache, "ana@fake")
    erp.refused["ana@fake"] = {"customer"}  # a right withdrawn in the ERP, roles unchanged
    clock.now += TTL - dt.timedelta(seconds=1)
    assert "customer.list" in await _sign_in(erp, cache, "ana@fake")  # within the TTL
    clock.now += dt.timedelta(seconds=2)
    assert "customer.list" not in await _sign_in(erp, cache, "ana@fake")
    assert erp.asked


async def test_a_role_change_asks_the_erp_again_at_once(store: Store) -> None:
    erp, clock = CountingERP(), Clock()
    cache = GrantsCache(store, "http://erp", TTL, clock)
    await _sign_in(erp, cache, "ana@fake")
    erp.users["ana@fake"] = FakeUser("pw", ("Sales User",))
    erp.refused["ana@fake"] = {"customer"}
    tools = await _sign_in(erp, cache, "ana@fake")
    assert erp.asked
    assert "customer.list" not in tools


async def test_sign_out_and_a_zero_ttl_ask_again(store: Store) -> None:
    erp, clock = CountingERP(), Clock()
    cache = GrantsCache(store, "http://erp", TTL, clock)
    await _sign_in(erp, cache, "ana@fake")
    await cache.forget("ana@fake")
    await _sign_in(erp, cache, "ana@fake")
    assert erp.asked
    off = GrantsCache(store, "http://other-erp", dt.timedelta(0), clock)
    await _sign_in(erp, off, "ana@fake")
    await _sign_in(erp, off, "ana@fake")
    assert erp.asked


async def test_grants_of_one_erp_are_not_read_for_another(store: Store) -> None:
    clock = Clock()
    one = GrantsCache(store, "http://erp-one", TTL, clock)
    two = GrantsCache(store, "http://erp-two", TTL, clock)
    await one.put("ana@fake", ["Accounts Manager"], Grants({"customer": {"read": True}}))
    assert await two.get("ana@fake", ["Accounts Manager"]) is None
    assert await one.get("ben@fake", ["Accounts Manager"]) is None
    found = await one.get("ana@fake", ["Accounts Manager"])
    assert found is not None
    assert found.entities == {"customer": {"read": True}}


async def test_deleting_a_users_data_drops_their_grants(store: Store) -> None:
    cache = GrantsCache(store, "http://erp", TTL, Clock())
    await cache.put("ana@fake", [], Grants({"customer": {"read": True}}))
    await store.delete_user_data("ana@fake")
    assert await cache.get("ana@fake", []) is None


def test_the_shipped_head_is_alembics_head() -> None:
    # `migrate` skips Alembic when the store is at the head read from the scripts' text.
    assert schema.shipped_head() == schema.head_revision()


async def test_saved_grants_missing_a_right_are_asked_again(store: Store) -> None:
    # Saved by an older catalog that asked only whether customers can be read.
    erp, clock = CountingERP(), Clock()
    cache = GrantsCache(store, "http://erp", TTL, clock)
    await cache.put("ana@fake", ["Accounts Manager"], Grants({"customer": {"read": True}}))
    tools = await _sign_in(erp, cache, "ana@fake")
    assert erp.asked
    assert "sales_invoice.list" in tools
