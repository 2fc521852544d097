"""One contract every connector keeps, run against each: the shipped FakeConnector, ERPNext over
the demo ERP (real HTTP), the sql connector on SQLite, MariaDB and PostgreSQL (real servers), and
Tryton (a real trytond from PyPI, over JSON-RPC).

Each subject names a user, an entity with a scope field (a branch; Tryton's company), and a user
limited to one value of it; the checks are the same for all.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sql_databases import MAPPING, database, seeded
from tryton_fixtures import PASSWORD as TRYTON_PASSWORD
from tryton_fixtures import Tryton, tryton  # noqa: F401 - the session's trytond fixture

from conftest import DemoERP
from erp_agent.connectors.base import Capability, CapabilityMissing, Connector
from erp_agent.connectors.fake import FakeConnector, FakeUser, matches
from erp_agent.connectors.query import (
    AggregateRequest,
    DatePart,
    Filter,
    Func,
    GroupKey,
    Measure,
    Op,
)
from erp_agent.errors import CatalogError, ErpAuthenticationError, ErpRefusal

pytestmark = pytest.mark.anyio


@dataclass
class Subject:
    connector: Connector
    user: str
    password: str
    entity: str = "sales_invoice"
    scoped_user: str | None = None  # sees only ``scoped_branch``
    scoped_branch: str | None = None
    sync_user: str | None = None  # the user delta sync runs as (default: ``user``)
    scope: str = "branch"  # the field a scoped user is limited on
    others: tuple[str, ...] = ("Mombasa", "Nairobi", "Eldoret", "Nakuru")  # values they cannot see


def _fake() -> FakeConnector:
    rows = [
        {"id": f"INV-{i:03d}", "customer": f"C{i % 4}", "branch": ("Kisumu", "Mombasa")[i % 2],
         "date": f"2026-{1 + i % 12:02d}-{1 + i % 27:02d}", "total": 100.0 + i, "docstatus": i % 3}
        for i in range(40)
    ]  # fmt: skip
    users = {
        "all@fake": FakeUser("pw", ("Accounts Manager",)),
        "kisumu@fake": FakeUser("pw", ("Accounts User",), {"branch": frozenset({"Kisumu"})}),
    }
    return FakeConnector({"sales_invoice": rows}, users)


@pytest.fixture(params=["fake", "erpnext", "sqlite", "mariadb", "postgres", "tryton"])
async def subject(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Subject]:
    kind = request.param
    if kind == "tryton":
        from erp_agent.connectors.tryton.connector import TrytonConnector

        erp: Tryton = request.getfixturevalue("tryton")
        tryton = TrytonConnector(erp.url, database=erp.database)
        yield Subject(tryton, "accountant", TRYTON_PASSWORD, scoped_user="sales_us",
                      scoped_branch="Acme US Inc.", scope="company", others=("Acme EU GmbH",))  # fmt: skip
        await tryton.aclose()
        return
    if kind == "fake":
        yield Subject(_fake(), "all@fake", "pw", scoped_user="kisumu@fake", scoped_branch="Kisumu")
        return
    if kind == "erpnext":
        from erp_agent.connectors.frappe.connector import ERPNextConnector

        demo: DemoERP = request.getfixturevalue("demo_erp")
        connector = ERPNextConnector(demo.url)
        yield Subject(connector, "accounts@demo.local", "demo",
                      scoped_user="kisumu.manager@demo.local", scoped_branch="Kisumu",
                      sync_user="admin@demo.local")  # fmt: skip
        await connector.aclose()
        return
    from erp_agent.connectors.sql.connector import SQLConnector

    with database(kind, tmp_path) as url:
        seeded(url, per_branch=12)
        sql = SQLConnector(url, mapping=MAPPING)
        yield Subject(sql, "owner@savanna.test", "demo",
                      scoped_user="kisumu@savanna.test", scoped_branch="Kisumu")  # fmt: skip
        await sql.aclose()


async def test_sign_in_and_roles(subject: Subject) -> None:
    c = subject.connector
    cred = await c.login(subject.user, subject.password)
    assert cred.user == subject.user
    assert await c.roles(cred)
    with pytest.raises(ErpAuthenticationError):
        await c.login(subject.user, "not-the-password")


async def test_list_pages_count_and_get_agree(subject: Subject) -> None:
    c = subject.connector
    cred = await c.login(subject.user, subject.password)
    everything = (
        await c.list(cred, subject.entity, fields=["id", subject.scope, "total"], limit=0)
    ).records
    assert len(everything) == await c.count(cred, subject.entity)
    ids = [r["id"] for r in everything]
    assert len(set(ids)) == len(ids)
    first = await c.list(cred, subject.entity, fields=["id"], order_by=[("id", "asc")], limit=5)
    second = await c.list(
        cred, subject.entity, fields=["id"], order_by=[("id", "asc")], start=5, limit=5
    )
    assert first.has_more == (len(ids) > 5)
    assert {r["id"] for r in first.records}.isdisjoint({r["id"] for r in second.records})
    assert [r["id"] for r in first.records] == sorted(ids)[:5]
    one = await c.get(cred, subject.entity, str(first.records[0]["id"]))
    assert one["id"] == first.records[0]["id"]
    with pytest.raises(ErpRefusal):
        await c.get(cred, subject.entity, "NO-SUCH-RECORD-0000")


async def test_filters_mean_what_the_contract_says(subject: Subject) -> None:
    c = subject.connector
    cred = await c.login(subject.user, subject.password)
    scope = subject.scope
    rows = (
        await c.list(cred, subject.entity, fields=["id", scope, "total", "date"], limit=0)
    ).records
    branch = str(rows[0][scope])
    pivot = sorted(float(r["total"]) for r in rows)[len(rows) // 2]
    for flt in [
        Filter(scope, Op.EQ, branch),
        Filter(scope, Op.NE, branch),
        Filter("total", Op.GE, pivot),
        Filter(scope, Op.IN, [branch]),
        Filter("id", Op.LIKE, f"%{str(rows[0]['id'])[-3:]}"),
        Filter("date", Op.BETWEEN, ["2026-01-01", "2026-06-30"]),
    ]:
        got = {
            r["id"]
            for r in (
                await c.list(cred, subject.entity, fields=["id"], filters=[flt], limit=0)
            ).records
        }
        want = {r["id"] for r in rows if matches(r, flt)}
        assert got == want, flt
        assert await c.count(cred, subject.entity, [flt]) == len(want)


async def test_aggregates_equal_the_rows(subject: Subject) -> None:
    c = subject.connector
    cred = await c.login(subject.user, subject.password)
    scope = subject.scope
    rows = (
        await c.list(cred, subject.entity, fields=["id", scope, "total", "date"], limit=0)
    ).records
    by_branch: dict[str, float] = defaultdict(float)
    by_month: dict[tuple[int, int], int] = defaultdict(int)
    for r in rows:
        by_branch[str(r[scope])] += float(r["total"])
        by_month[(int(str(r["date"])[:4]), int(str(r["date"])[5:7]))] += 1
    result = await c.aggregate(cred, subject.entity, AggregateRequest(
        (Measure(Func.SUM, "total"), Measure(Func.COUNT)), (GroupKey(scope),)))  # fmt: skip
    assert result.record_count == len(rows)
    assert {str(r[scope]): r["sum_total"] for r in result.rows} == pytest.approx(dict(by_branch))
    months = await c.aggregate(cred, subject.entity, AggregateRequest(
        (Measure(Func.COUNT),),
        (GroupKey("date", DatePart.YEAR), GroupKey("date", DatePart.MONTH))))  # fmt: skip
    assert {(r["year_date"], r["month_date"]): r["count_records"] for r in months.rows} == by_month


async def test_scoped_user_sees_only_their_branch(subject: Subject) -> None:
    assert subject.scoped_user is not None
    c = subject.connector
    cred = await c.login(subject.scoped_user, subject.password)
    scope = subject.scope
    rows = (await c.list(cred, subject.entity, fields=["id", scope], limit=0)).records
    # Records with no branch at all are not another branch's (ERPNext shows them to everyone).
    assert subject.scoped_branch in {r[scope] for r in rows}
    assert {r[scope] for r in rows} <= {subject.scoped_branch, None}
    other = Filter(scope, Op.IN, list(subject.others))
    assert await c.count(cred, subject.entity, [other]) == 0
    result = await c.aggregate(
        cred, subject.entity, AggregateRequest((Measure(Func.COUNT),), (GroupKey(scope),))
    )
    assert {r[scope] for r in result.rows} <= {subject.scoped_branch, None}


async def test_profile_is_what_the_connector_does(subject: Subject) -> None:
    c = subject.connector
    profile = c.profile
    assert profile.name == c.name
    assert {"list", "get", "count", "aggregate"} <= profile.operations(subject.entity)
    cred = await c.login(subject.user, subject.password)
    with pytest.raises(CatalogError):
        await c.count(cred, "no_such_entity")
    if profile.can(Capability.DELTA_SYNC):
        syncer = await c.login(subject.sync_user or subject.user, subject.password)
        changes = await c.changes_since(syncer, subject.entity, None, limit=100_000)
        assert len(changes.records) == await c.count(syncer, subject.entity)
        assert changes.complete
        assert changes.watermark
    else:
        with pytest.raises(CapabilityMissing):
            await c.changes_since(cred, subject.entity, None)
    if not profile.can(Capability.WORKFLOWS):
        with pytest.raises(CapabilityMissing):
            await c.workflow(cred, subject.entity)
    if not profile.can(Capability.LIFECYCLE):
        with pytest.raises(CapabilityMissing):
            await c.submit(cred, subject.entity, "X")
