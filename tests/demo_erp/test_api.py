"""The demo ERP's REST API over real HTTP: envelopes, auth, filters, errors, permissions."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_fixtures import PASSWORD, build

from demo_erp import db
from demo_erp.context import ADMINISTRATOR, Settings, as_user
from demo_erp.server import RunningServer, start_in_thread

TODAY = "2026-11-30"


@pytest.fixture(scope="module")
def erp(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[RunningServer, RunningServer, dict[str, str]]]:
    """The same database served twice: imitating Frappe v15 and v16."""
    path: Path = tmp_path_factory.mktemp("api") / "erp.sqlite"
    conn = db.connect(path)
    db.create_schema(conn)
    import datetime as dt

    today = dt.date.fromisoformat(TODAY)
    names = build(as_user(conn, Settings(db_path=str(path), today=today), ADMINISTRATOR))
    conn.close()
    v15 = start_in_thread(Settings(db_path=str(path), version=15, today=today))
    v16 = start_in_thread(Settings(db_path=str(path), version=16, today=today))
    yield v15, v16, names
    v15.stop()
    v16.stop()


@pytest.fixture(scope="module")
def names(erp: tuple[RunningServer, RunningServer, dict[str, str]]) -> dict[str, str]:
    return erp[2]


def client(server: RunningServer, user: str | None = None) -> httpx.Client:
    """A client signed in with an API token (stateless), or a Guest one."""
    headers = {"Authorization": f"token key-{user}:secret-{user}"} if user else {}
    return httpx.Client(base_url=server.url, headers=headers, timeout=10)


@pytest.fixture(scope="module")
def v15(erp: tuple[RunningServer, RunningServer, dict[str, str]]) -> RunningServer:
    return erp[0]


@pytest.fixture(scope="module")
def v16(erp: tuple[RunningServer, RunningServer, dict[str, str]]) -> RunningServer:
    return erp[1]


@pytest.fixture(scope="module")
def admin(v15: RunningServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=v15.url, timeout=10) as c:
        r = c.post("/api/method/login", json={"usr": ADMINISTRATOR, "pwd": PASSWORD})
        assert r.status_code == 200
        yield c


def server_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m) for m in json.loads(body["_server_messages"])]


def q(**params: Any) -> dict[str, str]:
    return {k: json.dumps(v) if not isinstance(v, str) else v for k, v in params.items()}


# ------------------------------------------------------------------ authentication


def test_password_login_sets_sid_cookie_and_logout_ends_it(v15: RunningServer) -> None:
    with httpx.Client(base_url=v15.url) as c:
        r = c.post("/api/method/login", data={"usr": "acc@test.local", "pwd": PASSWORD})
        assert r.status_code == 200
        assert r.json() == {"message": "Logged In", "home_page": "/app", "full_name": "Acc"}
        assert "sid" in r.cookies
        assert c.get("/api/method/frappe.auth.get_logged_user").json() == {
            "message": "acc@test.local"
        }
        assert c.post("/api/method/logout").json() == {}
        after = c.get("/api/method/frappe.auth.get_logged_user")
        assert after.status_code == 403


def test_v16_home_page_is_desk(v16: RunningServer) -> None:
    r = httpx.post(f"{v16.url}/api/method/login", json={"usr": "acc@test.local", "pwd": PASSWORD})
    assert r.json()["home_page"] == "/desk"


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"usr": "acc@test.local", "pwd": "wrong"}, "Invalid login credentials"),
        ({"usr": "nobody@test.local", "pwd": "x"}, "Invalid login credentials"),
        ({"usr": "acc@test.local"}, "Incomplete login details"),
    ],
)
def test_failed_login_is_401_with_reason(
    v15: RunningServer, payload: dict[str, str], message: str
) -> None:
    r = httpx.post(f"{v15.url}/api/method/login", json=payload)
    assert r.status_code == 401
    assert r.json()["exc_type"] == "AuthenticationError"
    assert r.json()["message"] == message


def test_guest_gets_403_not_401(v15: RunningServer) -> None:
    with client(v15) as c:
        assert c.get("/api/method/ping").json() == {"message": "pong"}
        r = c.get("/api/method/frappe.auth.get_logged_user")
        assert r.status_code == 403
        assert r.json()["exc_type"] == "PermissionError"
        assert c.get("/api/resource/Sales Invoice").status_code == 403
    with httpx.Client(base_url=v15.url, cookies={"sid": "expired-sid"}) as stale_client:
        stale = stale_client.get("/api/method/frappe.auth.get_logged_user")
        assert stale.status_code == 403


def test_token_and_basic_auth(v15: RunningServer) -> None:
    import base64

    with client(v15, "acc@test.local") as c:
        assert (
            c.get("/api/method/frappe.auth.get_logged_user").json()["message"] == "acc@test.local"
        )
    basic = base64.b64encode(b"key-acc@test.local:secret-acc@test.local").decode()
    r = httpx.get(
        f"{v15.url}/api/method/frappe.auth.get_logged_user",
        headers={"Authorization": f"Basic {basic}"},
    )
    assert r.json()["message"] == "acc@test.local"
    bad = httpx.get(
        f"{v15.url}/api/method/ping", headers={"Authorization": "token key-acc@test.local:nope"}
    )
    assert bad.status_code == 401
    assert bad.json()["exc_type"] == "AuthenticationError"
    garbled = httpx.get(f"{v15.url}/api/method/ping", headers={"Authorization": "Basic %%%"})
    assert garbled.status_code == 400
    assert garbled.json()["exc_type"] == "InvalidAuthorizationToken"


def test_roles_of_a_user(v15: RunningServer) -> None:
    with client(v15, "sales@test.local") as c:
        roles = c.get(
            "/api/method/frappe.core.doctype.user.user.get_roles", params={"uid": "acc@test.local"}
        ).json()
    assert roles["message"] == sorted(["Accounts User", "All", "Guest", "Desk User"])


# ------------------------------------------------------------------ lists and filters


def names_of(r: httpx.Response) -> set[str]:
    assert r.status_code == 200, r.text
    return {row["name"] for row in r.json()["data"]}


def test_list_default_is_names_with_a_page_of_20(
    admin: httpx.Client, names: dict[str, str]
) -> None:
    r = admin.get("/api/resource/Sales Invoice")
    assert set(r.json()["data"][0]) == {"name"}
    assert names_of(r) == {names[f"inv{i}"] for i in range(4)}


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ([["customer", "=", "Gulf Traders"]], {0, 1}),
        ({"customer": "Acme Ltd"}, {2, 3}),
        ({"conversion_rate": [">", 0], "customer": ["like", "%gulf%"]}, {0, 1}),
        ([["Sales Invoice", "company", "!=", "Alpha Ltd"]], {3}),
        ([["customer", "in", ["Acme Ltd", "Nobody"]]], {2, 3}),
        ([["customer", "in", "Acme Ltd, Nobody"]], {2, 3}),
        ([["customer", "not in", ["Acme Ltd"]]], {0, 1}),
        ([["customer", "not like", "%acme%"]], {0, 1}),
        ([["posting_date", "between", ["2026-02-01", "2026-03-31"]]], {1, 2}),
        ([["posting_date", ">=", "2026-03-15"]], {2, 3}),
        ([["posting_date", "<", "2026-02-15"]], {0}),
        ([["posting_date", "<=", "2026-02-15"]], {0, 1}),
        ([["branch", "is", "set"]], {0, 1, 2}),
        ([["branch", "is", "not set"]], {3}),
        ([["posting_date", "timespan", "this year"]], {0, 1, 2, 3}),
        ([["posting_date", "timespan", "last year"]], set()),
        ([["posting_date", "previous", "1 year"]], {0, 1, 2, 3}),
        ([["Sales Invoice Item", "item_code", "=", "SKU-1"]], {0, 1, 2, 3}),
        ([["item_code", "=", "SKU-1"]], {0, 1, 2, 3}),
    ],
)
def test_filters(
    admin: httpx.Client, names: dict[str, str], filters: Any, expected: set[int]
) -> None:
    r = admin.get("/api/resource/Sales Invoice", params=q(filters=filters))
    assert names_of(r) == {names[f"inv{i}"] for i in expected}


def test_tree_operators(admin: httpx.Client) -> None:
    r = admin.get(
        "/api/resource/Customer",
        params=q(filters=[["territory", "descendants of", "All Territories"]]),
    )
    assert names_of(r) == {"Gulf Traders", "Acme Ltd"}
    r = admin.get("/api/resource/Territory", params=q(filters=[["name", "ancestors of", "North"]]))
    assert names_of(r) == {"All Territories"}


def test_or_filters_are_anded_with_filters(admin: httpx.Client, names: dict[str, str]) -> None:
    r = admin.get(
        "/api/resource/Sales Invoice",
        params=q(
            filters=[["company", "=", "Alpha Ltd"]],
            or_filters=[["branch", "=", "Mombasa"], ["customer", "=", "Acme Ltd"]],
        ),
    )
    assert names_of(r) == {names["inv1"], names["inv2"]}


def test_fields_order_and_paging(admin: httpx.Client, names: dict[str, str]) -> None:
    params = q(
        fields=["name", "posting_date"],
        order_by="posting_date asc",
        limit_start=1,
        limit_page_length=2,
    )
    rows = admin.get("/api/resource/Sales Invoice", params=params).json()["data"]
    assert [r["name"] for r in rows] == [names["inv1"], names["inv2"]]
    all_rows = admin.get("/api/resource/Sales Invoice", params=q(limit_page_length=0)).json()[
        "data"
    ]
    assert len(all_rows) == 4
    as_lists = admin.get(
        "/api/method/frappe.client.get_list",
        params=q(
            doctype="Sales Invoice",
            fields=["name", "customer"],
            as_dict=0,
            order_by="posting_date asc",
        ),
    ).json()["message"]
    assert as_lists[0] == [names["inv0"], "Gulf Traders"]


def test_v15_aggregates_as_strings(v15: RunningServer) -> None:
    with client(v15, "acc@test.local") as c:
        r = c.get(
            "/api/method/frappe.client.get_list",
            params=q(
                doctype="Sales Invoice",
                fields=["customer", "count(name) as n"],
                group_by="customer",
                order_by="customer asc",
            ),
        )
    assert r.json()["message"] == [
        {"customer": "Acme Ltd", "n": 1},
        {"customer": "Gulf Traders", "n": 2},
    ]


def test_v16_rejects_function_strings_and_accepts_dicts(v16: RunningServer) -> None:
    with client(v16, "acc@test.local") as c:
        r = c.get("/api/resource/Sales Invoice", params=q(fields=["sum(grand_total) as total"]))
        assert r.status_code == 417
        assert r.json()["exc_type"] == "ValidationError"
        assert server_messages(r.json())[-1]["message"] == (
            "SQL functions are not allowed as strings in SELECT: sum(grand_total) as total. "
            "Use dict syntax like {'COUNT': '*'} instead."
        )
        ok = c.get(
            "/api/resource/Sales Invoice",
            params=q(
                fields=["customer", {"COUNT": "*", "as": "n"}],
                group_by="customer",
                order_by="customer asc",
            ),
        )
    assert ok.json()["data"] == [
        {"customer": "Acme Ltd", "n": 1},
        {"customer": "Gulf Traders", "n": 2},
    ]


def test_v15_rejects_dict_fields(v15: RunningServer) -> None:
    with client(v15, "acc@test.local") as c:
        r = c.get("/api/resource/Sales Invoice", params=q(fields=[{"COUNT": "*", "as": "n"}]))
    assert r.status_code == 417


def test_blocked_sql_function(admin: httpx.Client) -> None:
    r = admin.get("/api/resource/Sales Invoice", params=q(fields=["concat(name, customer) as x"]))
    assert r.status_code == 417
    assert r.json()["exc_type"] == "DataError"
    assert (
        server_messages(r.json())[-1]["message"] == "Use of function concat in field is restricted"
    )


# ------------------------------------------------------------------ errors


def test_unknown_doctype_is_404(admin: httpx.Client) -> None:
    r = admin.get("/api/resource/No Such Thing")
    assert r.status_code == 404
    assert r.json()["exc_type"] == "DoesNotExistError"
    assert "exc" not in r.json()


def test_unknown_document_is_404_with_message(admin: httpx.Client) -> None:
    r = admin.get("/api/resource/Sales Invoice/ACC-SINV-2026-99999")
    assert r.status_code == 404
    assert server_messages(r.json())[0]["message"] == "Sales Invoice ACC-SINV-2026-99999 not found"


def test_unknown_field_and_operator_are_417(admin: httpx.Client) -> None:
    r = admin.get("/api/resource/Sales Invoice", params=q(fields=["nope"]))
    assert (r.status_code, r.json()["exc_type"]) == (417, "DataError")
    assert server_messages(r.json())[-1]["message"] == "Field not permitted in query: nope"
    r = admin.get("/api/resource/Sales Invoice", params=q(filters=[["nope", "=", 1]]))
    assert (r.status_code, r.json()["exc_type"]) == (417, "DataError")
    r = admin.get("/api/resource/Sales Invoice", params=q(filters=[["customer", "~", 1]]))
    assert (r.status_code, r.json()["exc_type"]) == (417, "ValidationError")
    assert server_messages(r.json())[-1]["message"].startswith("Operator must be one of =, !=")


def test_unknown_api_path_and_method(admin: httpx.Client) -> None:
    r = admin.get("/api/nothing/here")
    assert (r.status_code, r.json()) == (404, {"exc_type": "DoesNotExistError"})
    r = admin.get("/api/method/frappe.no.such.method")
    assert r.status_code == 417


def test_malformed_json_body(admin: httpx.Client) -> None:
    r = admin.post(
        "/api/resource/Customer", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert r.status_code == 500
    assert r.json()["exc_type"] == "JSONDecodeError"


def test_error_body_shape_has_traceback_and_double_encoded_messages(admin: httpx.Client) -> None:
    r = admin.post("/api/resource/Customer", json={"customer_type": "Company"})
    body = r.json()
    assert r.status_code == 417
    assert body["exc_type"] == "MandatoryError"
    assert body["exception"].startswith("frappe.exceptions.MandatoryError: [Customer,")
    assert isinstance(json.loads(body["exc"]), list)
    assert server_messages(body) == [
        {"message": "Error: Value missing for Customer: Customer Name", "title": "Message"},
        server_messages(body)[1],
    ]


def test_wrong_types_and_over_long_values(admin: httpx.Client) -> None:
    r = admin.post(
        "/api/resource/Customer", json={"customer_name": "X" * 141, "customer_group": "Commercial"}
    )
    assert (r.status_code, r.json()["exc_type"]) == (417, "CharacterLengthExceededError")
    r = admin.post(
        "/api/resource/Customer", json={"customer_name": "Typo Co", "credit_limit": "lots"}
    )
    assert r.status_code == 417
    r = admin.post(
        "/api/resource/Customer", json={"customer_name": "Typo Co", "customer_type": "Robot"}
    )
    assert r.status_code == 417
    assert "It should be one of" in server_messages(r.json())[-1]["message"]
    assert admin.get("/api/resource/Customer/Typo Co").status_code == 404


def test_failed_insert_writes_nothing(admin: httpx.Client) -> None:
    before = admin.get(
        "/api/method/frappe.client.get_count", params={"doctype": "Sales Invoice"}
    ).json()["message"]
    r = admin.post(
        "/api/resource/Sales Invoice",
        json={
            "customer": "Gulf Traders",
            "company": "Alpha Ltd",
            "posting_date": "2026-05-01",
            "items": [{"item_code": "NOPE", "qty": 1, "rate": 1}],
        },
    )
    assert (r.status_code, r.json()["exc_type"]) == (417, "LinkValidationError")
    assert server_messages(r.json())[-1]["message"] == "Could not find Row #1: Item Code: NOPE"
    after = admin.get(
        "/api/method/frappe.client.get_count", params={"doctype": "Sales Invoice"}
    ).json()["message"]
    assert after == before


# ------------------------------------------------------------------ documents


def test_v1_get_omits_nulls_but_client_get_keeps_them(
    admin: httpx.Client, names: dict[str, str]
) -> None:
    v1 = admin.get(f"/api/resource/Sales Invoice/{names['inv3']}").json()["data"]
    assert "branch" not in v1
    assert v1["items"][0]["item_code"] == "SKU-1"
    full = admin.get(
        "/api/method/frappe.client.get", params={"doctype": "Sales Invoice", "name": names["inv3"]}
    ).json()["message"]
    assert full["branch"] is None


def test_create_update_delete_lifecycle(admin: httpx.Client) -> None:
    r = admin.post(
        "/api/resource/Lead", json={"lead_name": "Jane Prospect", "company_name": "Prospects Ltd"}
    )
    assert r.status_code == 200, r.text
    lead = r.json()["data"]
    assert lead["name"].startswith("CRM-LEAD-")
    r = admin.put(f"/api/resource/Lead/{lead['name']}", json={"qualification_status": "Qualified"})
    updated = r.json()["data"]
    assert updated["qualification_status"] == "Qualified"
    assert updated["modified"] > lead["modified"]
    r = admin.delete(f"/api/resource/Lead/{lead['name']}")
    assert (r.status_code, r.json()) == (202, {"data": "ok"})
    deleted = admin.get(
        "/api/resource/Deleted Document",
        params=q(filters=[["deleted_name", "=", lead["name"]]], fields=["deleted_doctype", "data"]),
    ).json()["data"]
    assert deleted[0]["deleted_doctype"] == "Lead"
    assert json.loads(deleted[0]["data"])["lead_name"] == "Jane Prospect"


def test_docstatus_lifecycle(admin: httpx.Client) -> None:
    r = admin.post(
        "/api/resource/Leave Application",
        json={
            "employee": admin.get("/api/resource/Employee").json()["data"][0]["name"],
            "leave_type": "Casual",
            "from_date": "2026-12-01",
            "to_date": "2026-12-02",
            "posting_date": "2026-11-30",
            "company": "Alpha Ltd",
        },
    )
    # Leave Type "Casual" does not exist: a link error, nothing written.
    assert r.status_code == 417
    r = admin.post(
        "/api/resource/Journal Entry",
        json={"posting_date": "2026-11-30", "company": "Alpha Ltd", "accounts": []},
    )
    assert r.status_code == 417  # accounts are mandatory


def test_submit_cancel_and_edit_rules(admin: httpx.Client, names: dict[str, str]) -> None:
    name = names["inv2"]
    cancel_draft = admin.post(
        f"/api/resource/Sales Invoice/{name}", params={"run_method": "cancel"}
    )
    assert cancel_draft.status_code == 417
    assert cancel_draft.json()["exc_type"] == "DocstatusTransitionError"
    submitted = admin.post(f"/api/resource/Sales Invoice/{name}", params={"run_method": "submit"})
    assert submitted.status_code == 200, submitted.text
    assert submitted.json()["data"]["docstatus"] == 1
    edit = admin.put(f"/api/resource/Sales Invoice/{name}", json={"customer": "Gulf Traders"})
    assert (edit.status_code, edit.json()["exc_type"]) == (417, "UpdateAfterSubmitError")
    delete = admin.delete(f"/api/resource/Sales Invoice/{name}")
    assert delete.status_code == 417
    assert "Submitted Record cannot be deleted" in server_messages(delete.json())[-1]["message"]
    back = admin.put(f"/api/resource/Sales Invoice/{name}", json={"docstatus": 0})
    assert back.json()["exc_type"] == "DocstatusTransitionError"
    cancelled = admin.put(f"/api/resource/Sales Invoice/{name}", json={"docstatus": 2})
    assert cancelled.json()["data"]["docstatus"] == 2
    again = admin.put(f"/api/resource/Sales Invoice/{name}", json={"remarks": "x"})
    assert server_messages(again.json())[-1]["message"] == "Cannot edit cancelled document"


def test_client_save_detects_stale_modified(admin: httpx.Client) -> None:
    doc = admin.get(
        "/api/method/frappe.client.get", params={"doctype": "Customer", "name": "Acme Ltd"}
    ).json()["message"]
    fresh = admin.post("/api/method/frappe.client.save", json={"doc": {**doc, "mobile_no": "0700"}})
    assert fresh.status_code == 200, fresh.text
    stale = admin.post("/api/method/frappe.client.save", json={"doc": {**doc, "mobile_no": "0711"}})
    assert (stale.status_code, stale.json()["exc_type"]) == (417, "TimestampMismatchError")
    assert (
        "Document has been modified after you have opened it"
        in server_messages(stale.json())[-1]["message"]
    )


def test_client_methods(admin: httpx.Client, names: dict[str, str]) -> None:
    value = admin.get(
        "/api/method/frappe.client.get_value",
        params=q(
            doctype="Sales Invoice",
            fieldname=["customer", "branch"],
            filters={"name": names["inv0"]},
        ),
    ).json()["message"]
    assert value == {"customer": "Gulf Traders", "branch": "Kisumu"}
    inserted = admin.post(
        "/api/method/frappe.client.insert",
        json={"doc": {"doctype": "Lead", "lead_name": "Via Client"}},
    ).json()["message"]
    changed = admin.post(
        "/api/method/frappe.client.set_value",
        json={"doctype": "Lead", "name": inserted["name"], "fieldname": "status", "value": "Open"},
    ).json()["message"]
    assert changed["status"] == "Open"
    refused = admin.post(
        "/api/method/frappe.client.set_value",
        json={"doctype": "Lead", "name": inserted["name"], "fieldname": "owner", "value": "x"},
    )
    assert refused.status_code == 417
    assert (
        admin.post(
            "/api/method/frappe.client.delete", json={"doctype": "Lead", "name": inserted["name"]}
        ).json()
        == {}
    )
    wrong_verb = admin.get(
        "/api/method/frappe.client.insert", params=q(doc={"doctype": "Lead", "lead_name": "x"})
    )
    assert wrong_verb.status_code == 403


def test_meta_includes_custom_fields(admin: httpx.Client) -> None:
    r = admin.get(
        "/api/method/frappe.desk.form.load.getdoctype", params={"doctype": "Sales Invoice"}
    )
    body = r.json()
    assert "message" not in body
    docs = {d["name"]: d for d in body["docs"]}
    assert {"Sales Invoice", "Sales Invoice Item"} <= set(docs)
    branch = next(f for f in docs["Sales Invoice"]["fields"] if f["fieldname"] == "branch")
    assert branch["is_custom_field"] == 1
    v2 = admin.get("/api/v2/doctype/Sales Invoice/meta").json()["data"]
    assert v2["name"] == "Sales Invoice"
    assert v2["is_submittable"] == 1


# ------------------------------------------------------------------ permissions


def test_role_without_read_gets_403_with_frappe_messages(v15: RunningServer) -> None:
    with client(v15, "sales@test.local") as c:
        r = c.get("/api/resource/Salary Slip")
    body = r.json()
    assert r.status_code == 403
    assert body["exc_type"] == "PermissionError"
    assert body["_error_message"] == "No permission for Salary Slip"
    assert "does not have doctype access via role permission" in server_messages(body)[0]["message"]


def test_user_permissions_restrict_lists_gets_and_counts(
    v15: RunningServer, v16: RunningServer, names: dict[str, str]
) -> None:
    with client(v15, "kisumu@test.local") as c:
        listed = names_of(c.get("/api/resource/Sales Invoice"))
        assert listed == {
            names["inv0"],
            names["inv2"],
            names["inv3"],
        }  # inv3 has no branch: allowed
        assert c.get(f"/api/resource/Sales Invoice/{names['inv1']}").status_code == 403
        counted = c.get(
            "/api/method/frappe.desk.reportview.get_count", params={"doctype": "Sales Invoice"}
        )
        assert counted.json()["message"] == 3
        total = c.get(
            "/api/method/frappe.client.get_list",
            params=q(doctype="Sales Invoice", fields=["count(name) as n"]),
        ).json()["message"]
        assert total == [{"n": 3}]
        # v15's frappe.client.get_count is frappe.db.count: it ignores permissions (a real leak).
        leaky = c.get("/api/method/frappe.client.get_count", params={"doctype": "Sales Invoice"})
        assert leaky.json()["message"] == 4
    with client(v16, "kisumu@test.local") as c:
        assert (
            c.get(
                "/api/method/frappe.client.get_count", params={"doctype": "Sales Invoice"}
            ).json()["message"]
            == 3
        )
    with client(v15, "sales@test.local") as c:
        assert names_of(c.get("/api/resource/Customer")) == {"Gulf Traders"}


def test_company_restriction(v15: RunningServer, names: dict[str, str]) -> None:
    with client(v15, "acc@test.local") as c:
        assert names["inv3"] not in names_of(c.get("/api/resource/Sales Invoice"))


def test_field_level_salary_figures(v15: RunningServer, names: dict[str, str]) -> None:
    with client(v15, "hr@test.local") as c:
        emp = c.get(f"/api/resource/Employee/{names['employee']}").json()["data"]
        assert emp["ctc"] == 120000
    with client(v15, "stock@test.local") as c:
        emp = c.get(f"/api/resource/Employee/{names['employee']}").json()["data"]
        assert "ctc" not in emp
        rows = c.get("/api/resource/Employee", params=q(fields=["*"])).json()["data"]
        assert rows
        assert "ctc" not in rows[0]


def test_employee_sees_own_records_only(v15: RunningServer, names: dict[str, str]) -> None:
    with client(v15, "emp@test.local") as c:
        slips = names_of(c.get("/api/resource/Salary Slip"))
        assert slips == {names["slip"]}
        slip = c.get(f"/api/resource/Salary Slip/{names['slip']}").json()["data"]
        assert "gross_pay" in slip


def test_write_needs_the_right(v15: RunningServer) -> None:
    with client(v15, "stock@test.local") as c:
        r = c.post("/api/resource/Customer", json={"customer_name": "Sneaky"})
        assert r.status_code == 403
        assert c.get(
            "/api/method/frappe.client.has_permission",
            params={"doctype": "Customer", "perm_type": "create"},
        ).json() == {"message": {"has_permission": False}}
        assert c.get(
            "/api/method/frappe.client.has_permission",
            params={"doctype": "Item", "perm_type": "read"},
        ).json()["message"]["has_permission"]


def test_user_permission_map(v15: RunningServer) -> None:
    with client(v15, "kisumu@test.local") as c:
        r = c.get(
            "/api/method/frappe.core.doctype.user_permission.user_permission.get_user_permissions"
        )
    assert r.json()["message"] == {
        "Branch": [{"doc": "Kisumu", "applicable_for": None, "is_default": 0}]
    }


def _new_invoice(admin: httpx.Client) -> dict[str, Any]:
    body = {
        "customer": "Acme Ltd",
        "company": "Alpha Ltd",
        "branch": "Kisumu",
        "posting_date": TODAY,
        "due_date": "2026-12-30",
        "items": [{"item_code": "SKU-1", "qty": 2, "rate": 10}],
    }
    created = admin.post("/api/resource/Sales Invoice", json=body)
    assert created.status_code == 200, created.text
    data: dict[str, Any] = created.json()["data"]
    return data


def _refusal(reply: httpx.Response) -> tuple[int, str, str]:
    return reply.status_code, reply.json()["exc_type"], server_messages(reply.json())[-1]["message"]


def test_docstatus_transitions_are_refused_in_frappes_words(admin: httpx.Client) -> None:
    """Frappe's check_docstatus_transition: 0→2 and 1→0 are DocstatusTransitionErrors; any
    change to a cancelled document is 'Cannot edit cancelled document'."""
    doc = _new_invoice(admin)
    url = f"/api/resource/Sales Invoice/{doc['name']}"
    assert _refusal(admin.post(url, params={"run_method": "cancel"})) == (
        417, "DocstatusTransitionError", "Cannot change docstatus from 0 (Draft) to 2 (Cancelled)"
    )  # fmt: skip
    assert _refusal(admin.put(url, json={"docstatus": 2})) == (
        417, "DocstatusTransitionError", "Cannot change docstatus from 0 (Draft) to 2 (Cancelled)"
    )  # fmt: skip
    assert admin.post(url, params={"run_method": "submit"}).status_code == 200
    assert _refusal(admin.put(url, json={"docstatus": 0})) == (
        417, "DocstatusTransitionError", "Cannot change docstatus from 1 (Submitted) to 0 (Draft)"
    )  # fmt: skip
    assert admin.post(url, params={"run_method": "cancel"}).status_code == 200
    for again in (
        admin.post(url, params={"run_method": "cancel"}),
        admin.post(url, params={"run_method": "submit"}),
        admin.put(url, json={"docstatus": 1}),
    ):
        assert _refusal(again) == (417, "ValidationError", "Cannot edit cancelled document")


def test_submit_and_cancel_through_save_check_the_version(admin: httpx.Client) -> None:
    """PUT with docstatus and modified is Frappe's save: check_if_latest refuses a stale one
    and the document stays as it was."""
    doc = _new_invoice(admin)
    url = f"/api/resource/Sales Invoice/{doc['name']}"
    edited = admin.put(url, json={"remarks": "edited by someone else"}).json()["data"]
    stale = admin.put(url, json={"docstatus": 1, "modified": doc["modified"]})
    status, exc_type, message = _refusal(stale)
    assert (status, exc_type) == (417, "TimestampMismatchError")
    assert message.startswith("Error: Document has been modified after you have opened it")
    now = admin.get(url).json()["data"]
    assert (now["docstatus"], now["modified"]) == (0, edited["modified"])
    submitted = admin.put(url, json={"docstatus": 1, "modified": edited["modified"]})
    assert submitted.status_code == 200, submitted.text
    assert submitted.json()["data"]["docstatus"] == 1
    late = admin.put(url, json={"docstatus": 2, "modified": edited["modified"]})
    assert _refusal(late)[1] == "TimestampMismatchError"
    assert admin.get(url).json()["data"]["docstatus"] == 1
    fresh = submitted.json()["data"]["modified"]
    cancelled = admin.put(url, json={"docstatus": 2, "modified": fresh})
    assert cancelled.json()["data"]["docstatus"] == 2


def test_client_submit_checks_the_version_and_resubmit_is_an_update_after_submit(
    admin: httpx.Client,
) -> None:
    doc = _new_invoice(admin)
    submit = "/api/method/frappe.client.submit"
    admin.put(f"/api/resource/Sales Invoice/{doc['name']}", json={"remarks": "moved on"})
    stale = admin.post(submit, json={"doc": doc})
    assert _refusal(stale)[1] == "TimestampMismatchError"
    current = admin.get(f"/api/resource/Sales Invoice/{doc['name']}").json()["data"]
    first = admin.post(submit, json={"doc": current})
    assert first.status_code == 200, first.text
    assert first.json()["message"]["docstatus"] == 1
    # Frappe treats submit() of a submitted document as a save after submit: no error, the
    # document stays submitted and only ``modified`` moves on.
    again = admin.post(submit, json={"doc": first.json()["message"]})
    assert again.status_code == 200, again.text
    assert again.json()["message"]["docstatus"] == 1
    assert again.json()["message"]["modified"] > first.json()["message"]["modified"]
