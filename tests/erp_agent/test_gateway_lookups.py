"""Master-data name lookups (a list of customers, items… asking only id and title) are reused
within one signed-in session for the TTL (gateway/lookups.py): never by another user or another
session, never past the TTL, never after a write confirmed in the session; any other list call
always reaches the ERP."""

from __future__ import annotations

import builtins
import datetime as dt
from collections.abc import Sequence
from typing import Any

import pytest

from erp_agent.calls.outcome import Status
from erp_agent.calls.session import Session
from erp_agent.catalog import load_catalog
from erp_agent.connectors.base import Page
from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.fake import FakeConnector, FakeUser
from erp_agent.connectors.profile import catalog_for
from erp_agent.gateway.gateway import Gateway
from erp_agent.store.memory import MemoryStore
from erp_agent.tools.base import ToolRegistry
from erp_agent.tools.factories import catalog_tools

pytestmark = pytest.mark.anyio
TTL = dt.timedelta(seconds=120)
CUSTOMERS = [
    {"id": "CUST-1", "name": "Savanna Trading", "branch": "Kisumu"},
    {"id": "CUST-2", "name": "Savanna Foods", "branch": "Mombasa"},
]


class CountingERP(FakeConnector):
    def __init__(self) -> None:
        users = {
            "ana@fake": FakeUser("pw", ("Sales Manager",)),
            "kisumu@fake": FakeUser("pw", ("Sales Manager",), {"branch": frozenset({"Kisumu"})}),
        }
        super().__init__({"customer": CUSTOMERS}, users)
        self.lists: builtins.list[str] = []

    async def list(self, cred: Credential, entity: str, *args: Any, **kwargs: Any) -> Page:
        self.lists.append(cred.user)
        return await super().list(cred, entity, *args, **kwargs)


class Clock:
    now = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)

    def __call__(self) -> dt.datetime:
        return self.now


def _setup() -> tuple[CountingERP, Gateway, Clock]:
    erp, clock = CountingERP(), Clock()
    catalog = catalog_for(load_catalog(), erp.profile, None)
    registry = ToolRegistry(catalog_tools(catalog))
    gateway = Gateway(registry, MemoryStore(), erp, catalog, clock=clock, lookup_ttl=TTL)
    return erp, gateway, clock


async def _session(erp: CountingERP, gateway: Gateway, user: str, sid: str) -> Session:
    cred = await erp.login(user, "pw")
    return Session(sid, user, cred, frozenset(), allowed_tools=frozenset(gateway.registry.names()))


def _lookup(word: str = "Sav", fields: Sequence[str] = ("id", "name")) -> dict[str, Any]:
    flt = {"field": "name", "op": "like", "value": f"%{word}%"}
    return {"filters": [flt], "fields": list(fields), "limit": 50}


def _ids(data: Any) -> set[str]:
    return {str(r["id"]) for r in data["records"]}


async def test_a_session_reuses_its_own_lookup() -> None:
    erp, gateway, _ = _setup()
    ana = await _session(erp, gateway, "ana@fake", "s1")
    first = await gateway.call(ana, "customer.list", _lookup())
    second = await gateway.call(ana, "customer.list", _lookup())
    assert first.status is Status.OK
    assert second.data == first.data
    assert erp.lists == ["ana@fake"]
    await gateway.call(ana, "customer.list", _lookup("Foods"))  # other words: asked
    assert len(erp.lists) == 2


async def test_another_user_or_session_is_never_served_it() -> None:
    erp, gateway, _ = _setup()
    ana = await _session(erp, gateway, "ana@fake", "s1")
    kisumu = await _session(erp, gateway, "kisumu@fake", "s2")
    assert _ids((await gateway.call(ana, "customer.list", _lookup())).data) == {"CUST-1", "CUST-2"}
    # Kisumu may not see the Mombasa customer: asked as them, not served Ana's answer.
    assert _ids((await gateway.call(kisumu, "customer.list", _lookup())).data) == {"CUST-1"}
    same_id_other_user = Session("s1", "kisumu@fake", kisumu.credential, frozenset(),
                                 allowed_tools=kisumu.allowed_tools)  # fmt: skip
    assert _ids((await gateway.call(same_id_other_user, "customer.list", _lookup())).data) == {
        "CUST-1"
    }
    ana_again = await _session(erp, gateway, "ana@fake", "s3")
    await gateway.call(ana_again, "customer.list", _lookup())
    assert erp.lists == ["ana@fake", "kisumu@fake", "kisumu@fake", "ana@fake"]


async def test_the_lookup_expires() -> None:
    erp, gateway, clock = _setup()
    ana = await _session(erp, gateway, "ana@fake", "s1")
    await gateway.call(ana, "customer.list", _lookup())
    clock.now += TTL
    await gateway.call(ana, "customer.list", _lookup())
    assert len(erp.lists) == 2


async def test_a_write_in_the_session_drops_its_lookups() -> None:
    erp, gateway, _ = _setup()
    ana = await _session(erp, gateway, "ana@fake", "s1")
    await gateway.call(ana, "customer.list", _lookup())
    proposed = await gateway.call(
        ana, "customer.create", {"name": "Savanna Hides", "customer_type": "Company"}
    )
    assert proposed.status is Status.PROPOSAL, proposed.message
    assert proposed.proposal is not None
    done = await gateway.confirm(ana, str(proposed.proposal["id"]))
    assert done.status is Status.OK, done.message
    found = await gateway.call(ana, "customer.list", _lookup())
    assert "Savanna Hides" in {r["name"] for r in found.data["records"]}


async def test_other_lists_always_ask_the_erp() -> None:
    erp, gateway, _ = _setup()
    ana = await _session(erp, gateway, "ana@fake", "s1")
    wide = _lookup(fields=("id", "name", "branch"))
    await gateway.call(ana, "customer.list", wide)
    await gateway.call(ana, "customer.list", wide)
    plain: dict[str, Any] = {"filters": [], "limit": 10}
    await gateway.call(ana, "customer.list", plain)
    await gateway.call(ana, "customer.list", plain)
    assert len(erp.lists) == 4


async def test_no_reuse_without_a_ttl() -> None:
    erp, gateway, _ = _setup()
    gateway.lookups.ttl = dt.timedelta(0)
    ana = await _session(erp, gateway, "ana@fake", "s1")
    await gateway.call(ana, "customer.list", _lookup())
    await gateway.call(ana, "customer.list", _lookup())
    assert len(erp.lists) == 2
