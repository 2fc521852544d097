"""Other people's Frappe clients, installed from PyPI and used unchanged, against the seeded
demo ERP over real HTTP: each through its own code paths — sign-in, list, read, insert, update,
a value, a method call, rename, delete — as it would run against a real Frappe site.

| client (PyPI) | speaks |
|---|---|
| ``frappe-client`` (``frappeclient.FrappeClient``) | the classic ``cmd=`` call at the site root (login, delete, rename, set_value, get_value), v1 resources, ``/api/method`` |
| ``frappe-connector`` (``FrappeConnector``) | ``cmd=`` (login, logout, delete, rename), v1 resources, ``/api/method`` |
| ``frappectl`` (``frappectl.client.FrappeClient``) | REST API v2 with an API key (documents, methods, meta, count, link search) |

Expected values come from the database rows. Each test writes only a customer it creates.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from frappe_connector import FrappeConnector
from frappe_connector import FrappeException as ConnectorError
from frappeclient import FrappeClient
from frappeclient.frappeclient import FrappeException
from frappectl.client import FrappeClient as FrappeCtl
from frappectl.errors import FrappeError as CtlError

from conftest import DemoERP, raw

ADMIN = "admin@demo.local"
TERRITORY = "Nairobi"


def nairobi(demo: DemoERP, limit: int = 5) -> list[str]:
    rows = raw(demo, 'select name from "tabCustomer" where territory = ? order by name limit ?', TERRITORY, limit)  # fmt: skip
    return [r["name"] for r in rows]


def party_balance(demo: DemoERP, party: str) -> float:
    rows = raw(demo, 'select debit_in_account_currency d, credit_in_account_currency c from "tabGL Entry" where party_type = ? and party = ? and is_cancelled = 0', "Customer", party)  # fmt: skip
    return round(sum(round(r["d"], 2) - round(r["c"], 2) for r in rows), 2)


def api_key(demo: DemoERP, user: str) -> tuple[str, str]:
    row = raw(demo, 'select u.api_key k, s.api_secret s from "tabUser" u join __ApiSecrets s on s.user = u.name where u.name = ?', user)[0]  # fmt: skip
    return str(row["k"]), str(row["s"])


@pytest.fixture
def gone(demo_erp: DemoERP) -> Iterator[list[str]]:
    """Customers a test created: removed afterwards even when the test fails half-way."""
    created: list[str] = []
    yield created
    with FrappeClient(demo_erp.url, ADMIN, "demo") as admin:
        for name in created:
            if raw(demo_erp, 'select 1 from "tabCustomer" where name = ?', name):
                admin.delete("Customer", name)


def test_frappe_client(demo_erp: DemoERP, gone: list[str]) -> None:
    client = FrappeClient(demo_erp.url, ADMIN, "demo")  # POST / with cmd=login
    listed = client.get_list("Customer", fields=["name", "territory"], filters=[["territory", "=", TERRITORY]], limit_page_length=5, order_by="name asc")  # fmt: skip
    assert [r["name"] for r in listed] == nairobi(demo_erp)
    assert {r["territory"] for r in listed} == {TERRITORY}
    assert len(client.get_list("Customer")) == 20  # its default: fields "*", the server's page
    first = nairobi(demo_erp, 1)[0]
    assert client.get_doc("Customer", first)["territory"] == TERRITORY
    gone += ["Third Party FC", "Third Party FC Renamed"]
    created = client.insert({"doctype": "Customer", "customer_name": "Third Party FC", "territory": TERRITORY})  # fmt: skip
    assert created["name"] == "Third Party FC"
    updated = client.update({**created, "mobile_no": "+254 700 000 001"})
    assert updated["mobile_no"] == "+254 700 000 001"
    assert client.get_value("Customer", "mobile_no", {"name": "Third Party FC"}) == {"mobile_no": "+254 700 000 001"}  # fmt: skip
    assert client.set_value("Customer", "Third Party FC", "tax_id", "P051")["tax_id"] == "P051"
    assert client.rename_doc("Customer", "Third Party FC", "Third Party FC Renamed") == "Third Party FC Renamed"  # fmt: skip
    assert client.get_api("frappe.auth.get_logged_user") == ADMIN
    found = client.get_api("frappe.desk.search.search_link", {"doctype": "Customer", "txt": "Third Party FC"})  # fmt: skip
    assert [r["value"] for r in found] == ["Third Party FC Renamed"]
    assert client.get_api("erpnext.accounts.utils.get_balance_on", {"party_type": "Customer", "party": first}) == party_balance(demo_erp, first)  # fmt: skip
    assert client.delete("Customer", "Third Party FC Renamed") is None  # POST / with cmd
    assert not raw(demo_erp, 'select 1 from "tabCustomer" where name = ?', "Third Party FC Renamed")
    client.logout()  # GET / with cmd=logout
    # An API key (its Basic header) works too, and a refusal surfaces as the client's error.
    key, secret = api_key(demo_erp, "sales@demo.local")
    sales = FrappeClient(demo_erp.url, api_key=key, api_secret=secret)
    assert sales.get_api("frappe.auth.get_logged_user") == "sales@demo.local"
    with pytest.raises(FrappeException, match="PermissionError"):
        sales.delete("Customer", first)


def test_frappe_connector(demo_erp: DemoERP, gone: list[str]) -> None:
    with FrappeConnector(demo_erp.url, username=ADMIN, password="demo") as client:
        listed = client.get_list("Customer", fields=["name"], filters={"territory": TERRITORY}, page_size=5, order_by="name asc")  # fmt: skip
        assert [r["name"] for r in listed] == nairobi(demo_erp)
        first = nairobi(demo_erp, 1)[0]
        assert client.get_doc("Customer", first)["name"] == first
        assert client.get_doc("Customer", filters={"name": first}, fields=["territory"]) == {"territory": TERRITORY}  # fmt: skip
        gone += ["Third Party FK", "Third Party FK Renamed"]
        created = client.create_doc({"doctype": "Customer", "customer_name": "Third Party FK", "territory": TERRITORY})  # fmt: skip
        assert created["customer_name"] == "Third Party FK"
        assert client.update_doc({**created, "mobile_no": "+254 700 000 002"})["mobile_no"] == "+254 700 000 002"  # fmt: skip
        value = client.get_api("frappe.client.get_value", {"doctype": "Customer", "fieldname": "mobile_no", "filters": {"name": "Third Party FK"}})  # fmt: skip
        assert value == {"mobile_no": "+254 700 000 002"}
        assert client.post_api("frappe.client.set_value", {"doctype": "Customer", "name": "Third Party FK", "fieldname": "tax_id", "value": "P052"})["tax_id"] == "P052"  # fmt: skip
        assert client.rename_doc("Customer", "Third Party FK", "Third Party FK Renamed") == "Third Party FK Renamed"  # fmt: skip
        found = client.get_api("frappe.desk.search.search_link", {"doctype": "Customer", "txt": "third party fk"})  # fmt: skip
        assert found == [{"value": "Third Party FK Renamed", "description": f"{TERRITORY}, +254 700 000 002, Third Party FK Renamed"}]  # fmt: skip
        assert client.get_api("erpnext.accounts.utils.get_balance_on", {"party_type": "Customer", "party": first}) == party_balance(demo_erp, first)  # fmt: skip
        assert client.delete_doc("Customer", "Third Party FK Renamed") == {}
        with pytest.raises(ConnectorError, match="Customer No Such Co not found"):
            client.get_doc("Customer", "No Such Co")
    # Closing signed out (cmd=logout): the session is gone.
    assert not raw(demo_erp, "select 1 from __Sessions where user = ? and sid = ?", ADMIN, client._session.cookies.get("sid") or "")  # fmt: skip


def test_frappectl(demo_erp: DemoERP, gone: list[str]) -> None:
    key, secret = api_key(demo_erp, ADMIN)
    with FrappeCtl(demo_erp.url, f"{key}:{secret}") as client:
        assert client.get_logged_user() == ADMIN
        rows, more = client.list_documents("Customer", fields=["name", "territory"], filters=[["territory", "=", TERRITORY]], order_by="name asc", limit=5)  # fmt: skip
        assert [r["name"] for r in rows] == nairobi(demo_erp)
        first = rows[0]["name"]
        assert client.get_document("Customer", first)["territory"] == TERRITORY
        gone += ["Third Party CTL", "Third Party CTL Renamed"]
        created = client.create_document("Customer", {"customer_name": "Third Party CTL", "territory": TERRITORY})  # fmt: skip
        assert created["name"] == "Third Party CTL"
        assert client.update_document("Customer", "Third Party CTL", {"mobile_no": "+254 700 000 003"})["mobile_no"] == "+254 700 000 003"  # fmt: skip
        assert client.get_meta("Customer")["name"] == "Customer"
        expected = raw(demo_erp, 'select count(*) n from "tabCustomer" where territory = ?', TERRITORY)[0]["n"]  # fmt: skip
        assert client.get_count("Customer", {"territory": TERRITORY}) == expected
        value = client.call_method("frappe.client.get_value", params={"doctype": "Customer", "fieldname": "mobile_no", "filters": {"name": "Third Party CTL"}}, http_method="GET")  # fmt: skip
        assert value == {"mobile_no": "+254 700 000 003"}
        assert "Sales Invoice" in client.list_doctypes(
            {"istable": 0}, 100
        )  # search_link on DocType
        assert client.call_method("erpnext.accounts.utils.get_balance_on", params={"party_type": "Customer", "party": first}, http_method="GET") == party_balance(demo_erp, first)  # fmt: skip
        renamed = client.call_method("frappe.client.rename_doc", params={"doctype": "Customer", "old_name": "Third Party CTL", "new_name": "Third Party CTL Renamed"})  # fmt: skip
        assert renamed == "Third Party CTL Renamed"
        assert client.delete_document("Customer", "Third Party CTL Renamed") == "ok"
        with pytest.raises(CtlError, match="Customer No Such Co not found") as missing:
            client.get_document("Customer", "No Such Co")
        assert missing.value.status_code == 404
    # Against v16 the list pages: one row more tells it that another page follows.
    with FrappeCtl(demo_erp.v16_url, f"{key}:{secret}") as v16:
        rows, more = v16.list_documents("Customer", limit=2)
        assert (len(rows), more) == (2, True)
