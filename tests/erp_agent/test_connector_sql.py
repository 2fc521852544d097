"""The sql connector on SQLite, MariaDB and PostgreSQL: figures equal independent SQL, writes as
confirmed proposals with optimistic concurrency, delta sync with deleted_at and tombstones, and
bad input (a broken mapping, a principal without scope, a database that is down) as one clear
message at start or at sign-in."""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import sqlalchemy as sa
import yaml
from sql_databases import DIALECTS, MAPPING, database, raw, seeded

from erp_agent.calls.outcome import Status
from erp_agent.catalog import load_catalog
from erp_agent.connectors.profile import catalog_for
from erp_agent.connectors.query import (
    AggregateRequest,
    DatePart,
    Filter,
    Func,
    GroupKey,
    Measure,
    Op,
)
from erp_agent.connectors.sql.connector import SQLConnector
from erp_agent.errors import (
    STALE_RECORD,
    ConfigError,
    ErpAuthenticationError,
    ErpRefusal,
    ErpUnavailable,
)
from erp_agent.gateway.gateway import Gateway
from erp_agent.gateway.policy import load_policy
from erp_agent.gateway.signin import sign_in
from erp_agent.runtime import build_registry
from erp_agent.store.memory import MemoryStore

pytestmark = pytest.mark.anyio


@pytest.fixture(params=DIALECTS)
async def shop(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[str, SQLConnector]]:
    with database(request.param, tmp_path) as url:
        seeded(url, per_branch=20)
        connector = SQLConnector(url, mapping=MAPPING)
        yield url, connector
        await connector.aclose()


async def test_revenue_by_month_equals_independent_sql(shop: tuple[str, SQLConnector]) -> None:
    url, c = shop
    cred = await c.login("owner@savanna.test", "demo")
    result = await c.aggregate(cred, "sales_invoice", AggregateRequest(
        (Measure(Func.SUM, "base_net_total"),),
        (GroupKey("branch"), GroupKey("date", DatePart.YEAR), GroupKey("date", DatePart.MONTH)),
        (Filter("docstatus", Op.EQ, 1),),
    ))  # fmt: skip
    got = {
        (r["branch"], r["year_date"], r["month_date"]): r["sum_base_net_total"] for r in result.rows
    }
    truth = {}
    for branch, issued, net in raw(url, "select branch_id, issued_on, net_amount from invoices "
                                        "where tenant_id = 'SAVANNA' and stage = 'posted' and deleted_at is null"):  # fmt: skip
        day = issued if isinstance(issued, dt.date) else dt.date.fromisoformat(str(issued))
        key = (branch, day.year, day.month)
        truth[key] = truth.get(key, 0.0) + float(net)
    assert got == pytest.approx(truth)
    assert result.record_count == raw(url, "select count(*) from invoices where tenant_id = 'SAVANNA' "
                                           "and stage = 'posted' and deleted_at is null")[0][0]  # fmt: skip


async def test_named_report_binds_scope_and_typed_params(shop: tuple[str, SQLConnector]) -> None:
    url, c = shop
    cred = await c.login("kisumu@savanna.test", "demo")
    report = await c.run_report(
        cred, "customer_balances", {"as_of_date": "2026-11-30", "min_outstanding": 0}
    )
    assert report.rows
    assert {r["branch"] for r in report.rows} == {"Kisumu"}
    truth = raw(url, "select sum(balance) from invoices where tenant_id = 'SAVANNA' and branch_id = 'Kisumu' "
                     "and stage = 'posted' and deleted_at is null and balance <> 0 and issued_on <= '2026-11-30'")  # fmt: skip
    assert sum(r["outstanding"] for r in report.rows) == pytest.approx(float(truth[0][0]))
    with pytest.raises(ErpRefusal, match="must be one of"):
        await c.run_report(
            cred, "customer_balances", {"overdue_basis": "due_on; drop table invoices"}
        )
    assert [col["fieldname"] for col in report.columns][:2] == ["party", "party_name"]


async def test_writes_are_confirmed_proposals_with_optimistic_concurrency(
    shop: tuple[str, SQLConnector],
) -> None:
    url, c = shop
    catalog = catalog_for(load_catalog(), c.profile, c.native_maps())
    registry = build_registry(catalog, profile=c.profile)
    gateway = Gateway(registry, MemoryStore(), c, catalog)
    owner = await sign_in(c, registry, load_policy(), "owner@savanna.test", "demo")
    viewer = await sign_in(c, registry, load_policy(), "kisumu@savanna.test", "demo")
    assert "customer.create" in owner.allowed_tools
    assert "customer.create" not in viewer.allowed_tools  # Accounts User may not write customers
    assert not any(
        n.endswith((".submit", ".cancel", ".delete", ".workflow")) for n in owner.allowed_tools
    )
    # Generated from the profile: nothing this system cannot do is even registered.
    names = registry.names()
    assert not [n for n in names if n.startswith(("workflow.", "documents."))]
    assert not [
        n for n in names if n.startswith(("purchase_invoice.", "employee.", "report.accounts"))
    ]
    assert "report.customer_balances" in names
    proposed = await gateway.call(owner, "customer.create", {
        "name": "Kondele Fundis", "customer_type": "Company", "branch": "Kisumu", "credit_limit": 1000})  # fmt: skip
    assert proposed.status is Status.PROPOSAL, proposed.message
    assert (
        raw(url, "select count(*) from customers where display_name = 'Kondele Fundis'")[0][0] == 0
    )
    done = await gateway.confirm(owner, str(proposed.proposal["id"]))  # type: ignore[index]
    assert done.ok, done.message
    row = raw(
        url,
        "select code, tenant_id, branch_id from customers where display_name = 'Kondele Fundis'",
    )
    assert [tuple(r) for r in row] == [(row[0][0], "SAVANNA", "Kisumu")]
    cred = await c.login("owner@savanna.test", "demo")
    seen = await c.version(cred, "customer", str(row[0][0]))
    assert seen is not None
    await c.update(cred, "customer", str(row[0][0]), {"credit_limit": 2000}, modified=seen.modified)
    with pytest.raises(ErpRefusal) as stale:
        await c.update(
            cred, "customer", str(row[0][0]), {"credit_limit": 3000}, modified=seen.modified
        )
    assert stale.value.refusal.exc_type == STALE_RECORD
    assert (
        float(raw(url, f"select credit_limit from customers where code = '{row[0][0]}'")[0][0])
        == 2000
    )
    lakeside = await c.login("owner@lakeside.test", "demo")
    with pytest.raises(ErpRefusal, match="branch Kisumu"):
        await c.create(lakeside, "customer", {"name": "x", "branch": "Kisumu"})


async def test_delta_sync_sees_changes_soft_deletes_and_tombstones(
    shop: tuple[str, SQLConnector],
) -> None:
    url, c = shop
    cred = await c.login("owner@savanna.test", "demo")
    first = await c.changes_since(cred, "customer", None)
    assert len(first.records) == await c.count(cred, "customer")
    later = dt.datetime(2030, 1, 1, 12, 0, 0, 123456)
    victim = str(first.records[0]["id"])
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(
            sa.text("update customers set deleted_at = :at, updated_at = :at where code = :c"),
            {"at": later, "c": victim},
        )
        conn.execute(sa.text("update customers set phone = '1', updated_at = :at where code = :c"),
                     {"at": later, "c": str(first.records[1]["id"])})  # fmt: skip
        stock = conn.execute(
            sa.text("select id from stock_levels where tenant_id = 'SAVANNA' limit 1")
        ).scalar()
        conn.execute(sa.text("delete from stock_levels where id = :i"), {"i": stock})
        conn.execute(sa.text("insert into tombstones (tenant_id, table_name, record_id, deleted_at) "
                             "values ('SAVANNA', 'stock_levels', :i, :at)"), {"i": stock, "at": later})  # fmt: skip
    engine.dispose()
    second = await c.changes_since(cred, "customer", first.watermark)
    # Records stamped exactly at the watermark are read again (">="); sync knows them by id.
    fresh = [r["id"] for r in second.records if str(r["_modified"]) != first.watermark]
    assert fresh == [first.records[1]["id"]]
    assert victim in second.deleted
    assert second.watermark is not None
    assert second.watermark >= "2030-01-01 12:00:00"
    gone = await c.changes_since(cred, "stock_balance", "2029-12-31 00:00:00")
    assert gone.deleted == [stock]
    other = await c.changes_since(
        await c.login("owner@lakeside.test", "demo"), "stock_balance", "2029-12-31 00:00:00"
    )
    assert other.deleted == []  # another tenant's tombstones are not theirs to see


async def test_field_and_entity_roles(shop: tuple[str, SQLConnector]) -> None:
    _, c = shop
    viewer = await c.login("viewer@savanna.test", "demo")  # Sales User only
    item = (await c.list(viewer, "item", limit=1)).records[0]
    assert "valuation_rate" not in item
    with pytest.raises(ErpRefusal, match="field valuation_rate"):
        await c.list(viewer, "item", filters=[Filter("valuation_rate", Op.GT, 0)])
    with pytest.raises(ErpRefusal, match="No permission to read Stock Balance"):
        await c.list(viewer, "stock_balance")
    assert (await c.access(viewer, "stock_balance"))["read"] is False


async def test_a_constant_field_reads_filters_and_groups_like_a_column(
    shop: tuple[str, SQLConnector],
) -> None:
    """``payment_type: {const: Receive}``: every payment reads Receive, a filter on it holds for
    every row or none, and it groups as one value; it is never written."""
    url, c = shop
    cred = await c.login("owner@savanna.test", "demo")
    live = "tenant_id = 'SAVANNA' and deleted_at is null"
    total = raw(url, f"select count(*), sum(amount) from payments where {live}")[0]
    page = await c.list(cred, "payment_entry", fields=["id", "payment_type"], limit=0)
    assert len(page.records) == total[0]
    assert {r["payment_type"] for r in page.records} == {"Receive"}
    assert (
        await c.count(cred, "payment_entry", [Filter("payment_type", Op.EQ, "Receive")]) == total[0]
    )
    assert await c.count(cred, "payment_entry", [Filter("payment_type", Op.EQ, "Pay")]) == 0
    assert await c.count(cred, "payment_entry", [Filter("payment_type", Op.IN, ["Pay", "Internal Transfer"])]) == 0  # fmt: skip
    result = await c.aggregate(cred, "payment_entry", AggregateRequest(
        (Measure(Func.SUM, "received_amount"),), (GroupKey("payment_type"),),
        (Filter("payment_type", Op.NE, "Pay"),),
    ))  # fmt: skip
    assert [(r["payment_type"], r["sum_received_amount"]) for r in result.rows] == [
        ("Receive", pytest.approx(float(total[1])))
    ]


def test_a_constant_names_no_column(tmp_path: Path) -> None:
    url = seeded(f"sqlite:///{tmp_path / 'shop.sqlite'}", per_branch=2)
    both = _mapping_with(
        tmp_path,
        {"entities.payment_entry.fields.payment_type": {"const": "Receive", "column": "method"}},
    )
    with pytest.raises(ConfigError, match="const"):
        SQLConnector(url, mapping=both)


# ------------------------------------------------------------------ bad input


def _mapping_with(tmp_path: Path, change: dict[str, object]) -> Path:
    data = yaml.safe_load(MAPPING.read_text())
    for path, value in change.items():
        node = data
        *head, last = path.split(".")
        for key in head:
            node = node[key]
        node[last] = value
    out = tmp_path / "mapping.yaml"
    out.write_text(yaml.safe_dump(data))
    return out


def test_broken_mapping_is_one_clear_message_at_start(tmp_path: Path) -> None:
    url = seeded(f"sqlite:///{tmp_path / 'shop.sqlite'}", per_branch=2)
    broken = _mapping_with(tmp_path, {"entities.customer.table": "clients",
                                      "entities.item.fields.uom": "units_of_measure"})  # fmt: skip
    with pytest.raises(ConfigError, match="no table clients"):
        SQLConnector(url, mapping=broken)
    broken = _mapping_with(tmp_path, {"entities.item.fields.uom": "units_of_measure",
                                      "entities.sales_invoice.fields.due_date": "due"})  # fmt: skip
    with pytest.raises(ConfigError) as caught:
        SQLConnector(url, mapping=broken)
    assert "no column 'units_of_measure'" in str(caught.value)
    assert "no column 'due'" in str(caught.value)
    unscoped = _mapping_with(tmp_path, {"entities.item.scope": {}})
    with pytest.raises(ConfigError, match="tenant scope"):
        SQLConnector(url, mapping=unscoped)
    loose = _mapping_with(
        tmp_path,
        {"reports.customer_balances.sql": "select * from invoices where tenant_id = :tenant"},
    )
    with pytest.raises(ConfigError, match=":branches"):
        SQLConnector(url, mapping=loose)


async def test_principal_without_scope_and_database_down(tmp_path: Path) -> None:
    url = seeded(f"sqlite:///{tmp_path / 'shop.sqlite'}", per_branch=2)
    c = SQLConnector(url, mapping=MAPPING)
    with pytest.raises(ErpAuthenticationError, match="no scope"):
        await c.login("noscope@savanna.test", "demo")
    with pytest.raises(ErpAuthenticationError, match="invalid login"):
        await c.login("owner@savanna.test", "wrong")
    await c.aclose()
    with pytest.raises(ErpUnavailable, match="Cannot reach the database"):
        SQLConnector("postgresql+psycopg://nobody@127.0.0.1:1/none", mapping=MAPPING)


async def test_principals_from_a_file(tmp_path: Path) -> None:
    from erp_agent.connectors.sql.principals import hash_password

    url = seeded(f"sqlite:///{tmp_path / 'shop.sqlite'}", per_branch=3)
    (tmp_path / "people.yaml").write_text(yaml.safe_dump({"users": {
        "auditor@savanna.test": {"password_hash": hash_password("s3cret"), "tenant_id": "SAVANNA",
                                 "branches": "Mombasa", "roles": "Accounts User"},
    }}))  # fmt: skip
    mapping = _mapping_with(tmp_path, {"principals": {"file": "people.yaml"}})
    c = SQLConnector(url, mapping=mapping)
    cred = await c.login("auditor@savanna.test", "s3cret")
    assert await c.roles(cred) == ["Accounts User"]
    rows = (await c.list(cred, "sales_invoice", fields=["branch"], limit=0)).records
    assert {r["branch"] for r in rows} == {"Mombasa"}
    with pytest.raises(ErpAuthenticationError):
        await c.login("owner@savanna.test", "demo")  # the users table is not the source now
    await c.aclose()


async def test_sessions_are_signed_tokens_any_worker_with_the_key_accepts(tmp_path: Path) -> None:
    from erp_agent.connectors.credentials import Credential
    from erp_agent.errors import ErpSessionExpired

    url = seeded(f"sqlite:///{tmp_path / 'shop.sqlite'}", per_branch=2)
    one = SQLConnector(url, mapping=MAPPING, session_key="k" * 32)
    two = SQLConnector(url, mapping=MAPPING, session_key="k" * 32)
    other = SQLConnector(url, mapping=MAPPING, session_key="x" * 32)
    cred = await one.login("kisumu@savanna.test", "demo")
    assert await two.count(cred, "sales_invoice") == await one.count(cred, "sales_invoice")
    with pytest.raises(ErpSessionExpired):
        await other.count(cred, "sales_invoice")
    forged = Credential.session("owner@savanna.test", str(cred.sid))  # someone else's name
    with pytest.raises(ErpSessionExpired):
        await two.count(forged, "sales_invoice")
    with pytest.raises(ErpSessionExpired):
        await two.count(Credential.session("kisumu@savanna.test", "garbage.token"), "sales_invoice")
    for c in (one, two, other):
        await c.aclose()


async def test_an_api_key_sign_in_is_refused_in_words_not_a_crash(
    shop: tuple[str, SQLConnector],
) -> None:
    from erp_agent.connectors.credentials import Credential

    _, connector = shop
    with pytest.raises(ErpAuthenticationError, match="user and password only"):
        await connector.whoami(Credential.token("", "some-key", "some-secret"))
