"""``ErpApi`` over the ERP's REST API, signed in as the user: the executor outside a bench (a
sidecar, or the tests against the demo ERP). Stdlib only. Each method is the Frappe endpoint the
same call runs inside the ERP, so results come back exactly as the ERP returned them."""

from __future__ import annotations

import http.cookiejar
import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from erp_agent_plugin.executor import ErpError

# method -> (HTTP verb, Frappe method path); resource calls are built in ``call``.
RPC = {
    "get_list": ("POST", "frappe.client.get_list"),
    "get_count": ("POST", "frappe.desk.reportview.get_count"),
    "get_doc": ("POST", "frappe.client.get"),
    "get_value": ("POST", "frappe.client.get_value"),
    "run_report": ("POST", "frappe.desk.query_report.run"),
    "report_access": ("POST", "frappe.desk.query_report.get_script"),
    "get_transitions": ("POST", "frappe.model.workflow.get_transitions"),
    "apply_workflow": ("POST", "frappe.model.workflow.apply_workflow"),
    "has_permission": ("POST", "frappe.client.has_permission"),
    "get_roles": ("POST", "frappe.core.doctype.user.user.get_roles"),
    "get_versions": ("POST", "frappe.utils.change_log.get_versions"),
    "whoami": ("POST", "frappe.auth.get_logged_user"),
    "party_details": ("POST", "erpnext.accounts.party.get_party_details"),
    "item_details": ("POST", "erpnext.stock.get_item_details.get_item_details"),
    "taxes_and_charges": ("POST", "erpnext.controllers.accounts_controller.get_taxes_and_charges"),
    "payment_party_details": (
        "POST",
        "erpnext.accounts.doctype.payment_entry.payment_entry.get_party_details",
    ),
    "bank_cash_account": (
        "POST",
        "erpnext.accounts.doctype.journal_entry.journal_entry.get_default_bank_cash_account",
    ),
}


class RestApi:
    def __init__(self, base_url: str, user: str, password: str, timeout: float = 60.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )
        self._send("POST", "/api/method/login", {"usr": user, "pwd": password})

    def call(self, method: str, args: Mapping[str, Any]) -> Any:
        if method in RPC:
            verb, path = RPC[method]
            return self._send(verb, f"/api/method/{path}", args).get("message")
        doctype = urllib.parse.quote(str(args.get("doctype", "")))
        name = urllib.parse.quote(str(args.get("name", "")))
        if method == "insert":
            return self._send("POST", f"/api/resource/{doctype}", args["values"]).get("data")
        if method == "update":
            return self._send("PUT", f"/api/resource/{doctype}/{name}", args["values"]).get("data")
        if method == "run_doc_method":
            path = f"/api/resource/{doctype}/{name}?run_method={urllib.parse.quote(args['action'])}"
            return self._send("POST", path, {}).get("data")
        if method == "delete":
            return self._send("DELETE", f"/api/resource/{doctype}/{name}", None).get("message")
        if method == "get_meta":
            return self._send(
                "GET", f"/api/method/frappe.desk.form.load.getdoctype?doctype={doctype}", None
            ).get("docs")
        raise ErpError(f"No such call: {method}", "SpecRefused", 400)

    def _send(self, verb: str, path: str, body: Any) -> dict[str, Any]:
        data = None if body is None else json.dumps(dict(body), default=str).encode()
        request = urllib.request.Request(
            self.base_url + path, data=data, method=verb,
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )  # fmt: skip
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                return dict(json.loads(response.read() or b"{}"))
        except urllib.error.HTTPError as exc:
            raise _refusal(exc) from exc


def _refusal(exc: urllib.error.HTTPError) -> ErpError:
    try:
        body = json.loads(exc.read())
    except ValueError:
        body = {}
    messages: list[str] = []
    for raw in json.loads(body.get("_server_messages") or "[]") if isinstance(body, dict) else []:
        try:
            messages.append(str(json.loads(raw).get("message", raw)))
        except (ValueError, AttributeError):
            messages.append(str(raw))
    message = "\n".join(messages) or str(
        body.get("exception") or body.get("message") or f"HTTP {exc.code}"
    )
    return ErpError(message, str(body.get("exc_type") or "HTTPError"), exc.code)
