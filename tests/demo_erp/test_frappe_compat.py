"""The parts of Frappe's API that other people's clients use and the demo ERP now serves, on the
seeded demo ERP over HTTP: REST API v2 (documents, methods, doctypes, its error shape), the
classic ``cmd=`` call at the site root, ``frappe.desk.search.search_link``,
``frappe.client.rename_doc`` and ``erpnext.accounts.utils.get_balance_on``.

Expected figures come from the database rows (``raw``), never from the code under test. Writes
touch only records these tests create, so the shared data set stays as seeded.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from conftest import DemoERP, raw

SAVANNA = "Savanna Trading Ltd"


@contextmanager
def signed_in(url: str, user: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=url, timeout=30) as client:
        reply = client.post("/api/method/login", json={"usr": user, "pwd": "demo"})
        assert reply.status_code == 200, reply.text
        yield client


@pytest.fixture(scope="module")
def admin(demo_erp: DemoERP) -> Iterator[httpx.Client]:
    with signed_in(demo_erp.url, "admin@demo.local") as client:
        yield client


@pytest.fixture(scope="module")
def sales(demo_erp: DemoERP) -> Iterator[httpx.Client]:
    with signed_in(demo_erp.url, "sales@demo.local") as client:
        yield client


def server_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m) for m in json.loads(body.get("_server_messages", "[]"))]


def balance(
    demo: DemoERP, where: str, *params: object, column: str = "in_account_currency"
) -> float:
    """Debit minus credit of the live ledger rows ``where`` says, each row rounded as stored."""
    debit, credit = (
        ("debit_in_account_currency", "credit_in_account_currency")
        if column == "in_account_currency"
        else ("debit", "credit")
    )
    rows = raw(demo, f'select {debit} d, {credit} c from "tabGL Entry" where is_cancelled = 0 and {where}', *params)  # fmt: skip
    return round(sum(round(r["d"] or 0, 2) - round(r["c"] or 0, 2) for r in rows), 2)


# ------------------------------------------------------------------ the classic cmd= call


def test_cmd_at_the_site_root_signs_in_calls_and_signs_out(demo_erp: DemoERP) -> None:
    with httpx.Client(base_url=demo_erp.url, timeout=30) as client:
        assert client.get("/", follow_redirects=False).headers["location"] == "/login"
        refused = client.post("/", data={"cmd": "login", "usr": "sales@demo.local", "pwd": "x"})
        assert refused.status_code == 401
        assert refused.json() == {"message": "Invalid login credentials", "exc_type": "AuthenticationError"}  # fmt: skip
        ok = client.post("/", data={"cmd": "login", "usr": "sales@demo.local", "pwd": "demo"})
        assert ok.json()["message"] == "Logged In"
        assert client.cookies.get("sid")
        me = client.get("/", params={"cmd": "frappe.auth.get_logged_user"})
        assert me.json() == {"message": "sales@demo.local"}
        # A write through cmd, with the user's own permissions: a sales user may not delete.
        denied = client.post("/", data={"cmd": "frappe.client.delete", "doctype": "Company", "name": SAVANNA})  # fmt: skip
        assert denied.status_code == 403
        assert denied.json()["exc_type"] == "PermissionError"
        assert client.get("/", params={"cmd": "logout"}).json() == {}
        after = client.get("/", params={"cmd": "frappe.auth.get_logged_user"})
        assert after.status_code == 403  # a Guest now


def test_cmd_deletes_a_document_the_user_may_delete(admin: httpx.Client) -> None:
    lead = admin.post("/api/resource/Lead", json={"lead_name": "Compat Cmd Delete"}).json()["data"]
    gone = admin.post("/", data={"cmd": "frappe.client.delete", "doctype": "Lead", "name": lead["name"]})  # fmt: skip
    assert gone.status_code == 200, gone.text
    assert gone.json() == {}
    assert admin.get(f"/api/resource/Lead/{lead['name']}").status_code == 404


# ------------------------------------------------------------------ REST API v2


def test_v2_documents_list_read_create_update_delete(
    admin: httpx.Client, demo_erp: DemoERP
) -> None:
    page = admin.get("/api/v2/document/Customer", params={"fields": '["name","territory"]', "limit": 3, "order_by": "name asc"})  # fmt: skip
    assert page.status_code == 200
    names = [
        r["name"] for r in raw(demo_erp, 'select name from "tabCustomer" order by name limit 3')
    ]
    assert [r["name"] for r in page.json()["data"]] == names
    assert "has_next_page" not in page.json()  # v15's v2 list is get_list with `limit`
    created = admin.post("/api/v2/document/Lead", json={"lead_name": "Compat V2 Lead"})
    assert created.status_code == 200, created.text
    doc = created.json()["data"]
    assert doc["lead_name"] == "Compat V2 Lead"
    read = admin.get(f"/api/v2/document/Lead/{doc['name']}/").json()["data"]
    assert read["email_id"] is None  # v2 keeps null fields; v1 leaves them out
    assert "email_id" not in admin.get(f"/api/resource/Lead/{doc['name']}").json()["data"]
    patched = admin.patch(f"/api/v2/document/Lead/{doc['name']}/", json={"company_name": "Compat Co"})  # fmt: skip
    assert patched.json()["data"]["company_name"] == "Compat Co"
    put = admin.put(f"/api/v2/document/Lead/{doc['name']}", json={"company_name": "Compat Co 2"})
    assert put.json()["data"]["company_name"] == "Compat Co 2"
    gone = admin.delete(f"/api/v2/document/Lead/{doc['name']}/")
    assert (gone.status_code, gone.json()) == (202, {"data": "ok"})
    missing = admin.get(f"/api/v2/document/Lead/{doc['name']}")
    assert missing.status_code == 404
    assert missing.json()["errors"][0] == {
        "type": "DoesNotExistError",
        "message": f"Lead {doc['name']} not found",
        "title": "Message",
        "indicator": "red",
    }


def test_v2_list_in_v16_pages_with_start_and_says_whether_more_follow(demo_erp: DemoERP) -> None:
    with signed_in(demo_erp.v16_url, "admin@demo.local") as client:
        names = [r["name"] for r in raw(demo_erp, 'select name from "tabCustomer" order by name')]
        first = client.get("/api/v2/document/Customer", params={"limit": 2, "order_by": "name asc"}).json()  # fmt: skip
        assert [r["name"] for r in first["data"]] == names[:2]
        assert first["has_next_page"] is True
        last = client.get("/api/v2/document/Customer", params={"start": len(names) - 1, "limit": 2, "order_by": "name asc"}).json()  # fmt: skip
        assert [r["name"] for r in last["data"]] == names[-1:]
        assert last["has_next_page"] is False


def test_v2_doctype_meta_and_count_as_the_user(sales: httpx.Client, demo_erp: DemoERP) -> None:
    meta = sales.get("/api/v2/doctype/Customer/meta").json()["data"]
    assert meta["name"] == "Customer"
    assert meta["allow_rename"] == 1
    count = sales.get("/api/v2/doctype/Customer/count").json()["data"]
    # The sales user is limited to one territory, and the count says so.
    expected = raw(demo_erp, 'select count(*) n from "tabCustomer" where territory = ?', "Nairobi")
    assert count == expected[0]["n"]
    filtered = sales.get("/api/v2/doctype/Customer/count", params={"filters": '{"customer_group": "Retail"}'})  # fmt: skip
    expected = raw(demo_erp, 'select count(*) n from "tabCustomer" where territory = ? and customer_group = ?', "Nairobi", "Retail")  # fmt: skip
    assert filtered.json()["data"] == expected[0]["n"]


def test_v2_methods_answer_under_data(sales: httpx.Client) -> None:
    assert sales.get("/api/v2/method/frappe.auth.get_logged_user").json() == {"data": "sales@demo.local"}  # fmt: skip
    roles = sales.get("/api/v2/method/User/get_roles", params={"uid": "sales@demo.local"})
    assert "Sales User" in roles.json()["data"]  # /method/<doctype>/<method>: its controller's
    unknown = sales.get("/api/v2/method/User/no_such_method")
    assert unknown.status_code == 417
    assert "Failed to get method" in unknown.json()["errors"][0]["message"]


def test_v2_document_methods_and_errors(admin: httpx.Client, demo_erp: DemoERP) -> None:
    lead = admin.post("/api/v2/document/Lead", json={"lead_name": "Compat Method"}).json()["data"]
    not_whitelisted = admin.post(f"/api/v2/document/Lead/{lead['name']}/method/db_set/")
    assert not_whitelisted.status_code == 403
    assert not_whitelisted.json()["errors"][0]["type"] == "PermissionError"
    # The route runs the method: a Lead cannot be submitted, and says so.
    submit = admin.post(f"/api/v2/document/Lead/{lead['name']}/method/submit/")
    assert submit.status_code == 417
    assert submit.json()["errors"][0]["message"] == (
        "Cannot submit Lead: it is not a submittable document type"
    )
    admin.delete(f"/api/v2/document/Lead/{lead['name']}")
    with httpx.Client(base_url=demo_erp.url, timeout=30) as guest:
        refused = guest.get("/api/v2/document/Customer")
        assert refused.status_code == 403
        body = refused.json()
        assert body["errors"][0]["type"] == "PermissionError"
        assert "exc_type" not in body
        assert "_server_messages" not in body
    unknown = admin.get("/api/v2/nothing/here")
    assert (unknown.status_code, unknown.json()) == (404, {"errors": [{"type": "DoesNotExistError"}]})  # fmt: skip


def test_v2_reads_as_the_user(sales: httpx.Client, demo_erp: DemoERP) -> None:
    outside = raw(
        demo_erp, 'select name from "tabCustomer" where territory != ? limit 1', "Nairobi"
    )
    refused = sales.get(f"/api/v2/document/Customer/{outside[0]['name']}")
    assert refused.status_code == 403
    rows = sales.get("/api/v2/document/Customer", params={"fields": '["territory"]', "limit": 500}).json()["data"]  # fmt: skip
    assert rows
    assert {r["territory"] for r in rows} == {"Nairobi"}


# ------------------------------------------------------------------ search_link


def test_search_link_matches_name_and_search_fields_nearest_first(admin: httpx.Client, demo_erp: DemoERP) -> None:  # fmt: skip
    found = admin.get("/api/method/frappe.desk.search.search_link", params={"doctype": "Customer", "txt": "trad", "page_length": 50}).json()["message"]  # fmt: skip
    expected = raw(demo_erp, 'select name, customer_group, territory, mobile_no from "tabCustomer" where (name like ? or customer_name like ? or customer_group like ? or territory like ? or mobile_no like ?) and coalesce(disabled, 0) != 1', *["%trad%"] * 5)  # fmt: skip
    assert {r["value"] for r in found} == {r["name"] for r in expected}
    positions = [r["value"].lower().find("trad") for r in found]
    hits = [p for p in positions if p >= 0]
    assert hits == sorted(hits)
    assert positions[: len(hits)] == hits
    first = next(r for r in expected if r["name"] == found[0]["value"])
    assert found[0]["description"].startswith(f"{first['customer_group']}, {first['territory']}")


def test_search_link_reads_as_the_user_and_pages(sales: httpx.Client, demo_erp: DemoERP) -> None:
    found = sales.get("/api/method/frappe.desk.search.search_link", params={"doctype": "Customer", "txt": "", "page_length": 500}).json()["message"]  # fmt: skip
    mine = raw(demo_erp, 'select name from "tabCustomer" where territory = ?', "Nairobi")
    assert {r["value"] for r in found} == {r["name"] for r in mine}
    two = sales.get("/api/method/frappe.desk.search.search_link", params={"doctype": "Customer", "txt": "", "page_length": 2}).json()["message"]  # fmt: skip
    assert len(two) == 2
    refused = sales.get("/api/method/frappe.desk.search.search_link", params={"doctype": "Salary Slip", "txt": "a"})  # fmt: skip
    assert refused.status_code == 403
    doctypes = sales.get("/api/method/frappe.desk.search.search_link", params={"doctype": "DocType", "txt": "sales inv"}).json()["message"]  # fmt: skip
    assert doctypes[0] == {"value": "Sales Invoice", "description": "Accounts"}


# ------------------------------------------------------------------ rename_doc


def _rename(client: httpx.Client, doctype: str, old: str, new: str, **extra: Any) -> httpx.Response:
    return client.post("/api/method/frappe.client.rename_doc", data={"doctype": doctype, "old_name": old, "new_name": new, **extra})  # fmt: skip


def test_rename_doc_moves_the_name_and_every_link(
    admin: httpx.Client, sales: httpx.Client, demo_erp: DemoERP
) -> None:
    admin.post("/api/resource/Customer", json={"customer_name": "Compat Rename Co", "territory": "Nairobi"}).raise_for_status()  # fmt: skip
    project = admin.post("/api/resource/Project", json={"project_name": "Compat Rename Project", "customer": "Compat Rename Co", "company": SAVANNA}).json()["data"]  # fmt: skip
    contact = admin.post("/api/resource/Contact", json={"first_name": "Ada", "link_doctype": "Customer", "link_name": "Compat Rename Co"}).json()["data"]  # fmt: skip
    try:
        reply = _rename(admin, "Customer", "Compat Rename Co", "Compat Renamed Co")
        assert reply.status_code == 200, reply.text
        assert reply.json()["message"] == "Compat Renamed Co"
        assert server_messages(reply.json())[0]["message"] == "Document renamed from <strong>Compat Rename Co</strong> to <strong>Compat Renamed Co</strong>"  # fmt: skip
        renamed = admin.get("/api/resource/Customer/Compat Renamed Co").json()["data"]
        assert renamed["customer_name"] == "Compat Renamed Co"  # the autoname field follows
        assert admin.get("/api/resource/Customer/Compat Rename Co").status_code == 404
        assert admin.get(f"/api/resource/Project/{project['name']}").json()["data"]["customer"] == "Compat Renamed Co"  # fmt: skip
        assert admin.get(f"/api/resource/Contact/{contact['name']}").json()["data"]["link_name"] == "Compat Renamed Co"  # fmt: skip
        # Frappe's refusals, in its words.
        taken = _rename(admin, "Customer", "Compat Renamed Co", "Acme Ltd")
        assert taken.status_code == 417
        assert server_messages(taken.json())[0]["message"] == "Another Customer with name Acme Ltd exists, select another name"  # fmt: skip
        assert _rename(admin, "Customer", "No Such Co", "X").json()["exception"].endswith("Can't rename No Such Co to X because No Such Co doesn't exist.")  # fmt: skip
        assert _rename(admin, "Customer", "Compat Renamed Co", "Compat Renamed Co").json()["exception"].endswith("No changes made because old and new name are the same.")  # fmt: skip
        assert "Sales Invoice not allowed to be renamed" in _rename(admin, "Sales Invoice", raw(demo_erp, 'select name from "tabSales Invoice" limit 1')[0]["name"], "SINV-X").text  # fmt: skip
        assert "Name cannot contain special characters" in _rename(admin, "Customer", "Compat Renamed Co", "A <b>").text  # fmt: skip
        outside = raw(demo_erp, 'select name from "tabCustomer" where territory != ? limit 1', "Nairobi")[0]["name"]  # fmt: skip
        denied = _rename(sales, "Customer", outside, "Compat Stolen Co")
        assert server_messages(denied.json())[0]["message"] == f"You need write permission on Customer {outside} to rename"  # fmt: skip
        assert admin.get("/api/method/frappe.client.rename_doc", params={"doctype": "Customer", "old_name": "a", "new_name": "b"}).status_code == 403  # POST or PUT only  # fmt: skip
    finally:
        admin.delete(f"/api/resource/Contact/{contact['name']}")
        admin.delete(f"/api/resource/Project/{project['name']}")
        admin.delete("/api/resource/Customer/Compat Renamed Co")


def test_rename_doc_merges_into_an_existing_document(admin: httpx.Client) -> None:
    for name in ("Compat Merge From", "Compat Merge Into"):
        admin.post("/api/resource/Customer", json={"customer_name": name}).raise_for_status()
    project = admin.post("/api/resource/Project", json={"project_name": "Compat Merge Project", "customer": "Compat Merge From", "company": SAVANNA}).json()["data"]  # fmt: skip
    try:
        assert "does not exist, select a new target to merge" in _rename(admin, "Customer", "Compat Merge From", "Nobody", merge=1).text  # fmt: skip
        merged = _rename(admin, "Customer", "Compat Merge From", "Compat Merge Into", merge=1)
        assert merged.json()["message"] == "Compat Merge Into", merged.text
        assert admin.get("/api/resource/Customer/Compat Merge From").status_code == 404
        assert admin.get(f"/api/resource/Project/{project['name']}").json()["data"]["customer"] == "Compat Merge Into"  # fmt: skip
    finally:
        admin.delete(f"/api/resource/Project/{project['name']}")
        admin.delete("/api/resource/Customer/Compat Merge Into")
        admin.delete("/api/resource/Customer/Compat Merge From")


# ------------------------------------------------------------------ get_balance_on


def _balance(client: httpx.Client, **args: Any) -> httpx.Response:
    return client.get("/api/method/erpnext.accounts.utils.get_balance_on", params=args)


def test_get_balance_on_a_party_an_account_and_a_group(admin: httpx.Client, demo_erp: DemoERP) -> None:  # fmt: skip
    party = raw(demo_erp, 'select party from "tabGL Entry" where party_type = ? and is_cancelled = 0 group by party order by count(*) desc limit 1', "Customer")[0]["party"]  # fmt: skip
    got = _balance(admin, party_type="Customer", party=party).json()["message"]
    assert got == balance(demo_erp, "party_type = ? and party = ?", "Customer", party)
    on = _balance(admin, party_type="Customer", party=party, date="2025-06-30").json()["message"]
    assert on == balance(demo_erp, "party_type = ? and party = ? and posting_date <= ?", "Customer", party, "2025-06-30")  # fmt: skip
    since = _balance(admin, party_type="Customer", party=party, start_date="2026-01-01").json()["message"]  # fmt: skip
    assert since == balance(demo_erp, "party_type = ? and party = ? and posting_date >= ?", "Customer", party, "2026-01-01")  # fmt: skip
    debtors = _balance(admin, account="Debtors - ST").json()["message"]
    assert debtors == balance(demo_erp, "account = ?", "Debtors - ST")
    # A group: every account below it, in company currency.
    group = raw(demo_erp, 'select lft, rgt from "tabAccount" where name = ?', "Current Assets - ST")[0]  # fmt: skip
    assets = _balance(admin, account="Current Assets - ST").json()["message"]
    assert assets == balance(demo_erp, 'account in (select name from "tabAccount" where lft >= ? and rgt <= ?)', group["lft"], group["rgt"], column="company")  # fmt: skip
    receivable = _balance(admin, account_type="Receivable", company=SAVANNA).json()["message"]
    assert receivable == balance(demo_erp, "account = ? and company = ?", "Debtors - ST", SAVANNA)
    assert _balance(admin, party_type="Customer", party=party, date="2020-01-01").json() == {"message": 0.0}  # before any fiscal year  # fmt: skip
    assert _balance(admin).json() == {}  # nothing asked: None, so no message


def test_get_balance_on_reads_as_the_user(demo_erp: DemoERP) -> None:
    harbor = raw(demo_erp, 'select party from "tabGL Entry" where party_type = ? and company = ? and is_cancelled = 0 group by party having sum(debit) != sum(credit) limit 1', "Customer", "Harbor Goods Inc")[0]["party"]  # fmt: skip
    with signed_in(demo_erp.url, "accounts@demo.local") as accounts:
        # Limited to Savanna: the other company's ledger rows are not counted, its accounts refused.
        assert _balance(accounts, party_type="Customer", party=harbor).json()["message"] == 0.0
        refused = _balance(accounts, account="Debtors - HG")
        assert refused.status_code == 403
        assert _balance(accounts, account="Debtors - ST").json()["message"] == balance(demo_erp, "account = ?", "Debtors - ST")  # fmt: skip
    with signed_in(demo_erp.url, "sales@demo.local") as sales:
        outside = raw(demo_erp, 'select name from "tabCustomer" where territory != ? limit 1', "Nairobi")[0]["name"]  # fmt: skip
        assert _balance(sales, party_type="Customer", party=outside).status_code == 403
