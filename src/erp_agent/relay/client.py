"""A Frappe client that speaks the relay protocol instead of HTTP: every call the ERPNext
connector makes becomes a call specification for the plugin, answered with the ERP's own result.

Only the endpoints below can be expressed; anything else is refused here before it could be
sent (the plugin checks the same allow-list again before it runs anything).
"""

from __future__ import annotations

import contextvars
import urllib.parse
from collections.abc import Awaitable, Mapping
from typing import Any, Protocol

import httpx

from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.frappe.client import FrappeClient
from erp_agent.errors import ErpAuthenticationError, ErpRefusal, Refusal

# Frappe method path -> relay call method (the plugin's ``protocol.METHODS``)
PATHS = {
    "frappe.client.get_list": "get_list",
    "frappe.desk.reportview.get_count": "get_count",
    "frappe.client.get": "get_doc",
    "frappe.client.get_value": "get_value",
    "frappe.desk.query_report.run": "run_report",
    "frappe.desk.query_report.get_script": "report_access",
    "frappe.model.workflow.get_transitions": "get_transitions",
    "frappe.model.workflow.apply_workflow": "apply_workflow",
    "frappe.client.has_permission": "has_permission",
    "frappe.core.doctype.user.user.get_roles": "get_roles",
    "frappe.utils.change_log.get_versions": "get_versions",
    "frappe.auth.get_logged_user": "whoami",
    "frappe.desk.form.load.getdoctype": "get_meta",
    "erpnext.accounts.party.get_party_details": "party_details",
    "erpnext.stock.get_item_details.get_item_details": "item_details",
    "erpnext.controllers.accounts_controller.get_taxes_and_charges": "taxes_and_charges",
    "erpnext.accounts.doctype.payment_entry.payment_entry.get_party_details": (
        "payment_party_details"
    ),
    "erpnext.accounts.doctype.journal_entry.journal_entry.get_default_bank_cash_account": (
        "bank_cash_account"
    ),
}


class CallSink(Protocol):
    """The relay turn a call belongs to: it sends the spec and returns the plugin's result."""

    def call(self, spec: dict[str, Any]) -> Awaitable[dict[str, Any]]: ...


CURRENT: contextvars.ContextVar[CallSink] = contextvars.ContextVar("relay_turn")


class _NoNetwork(httpx.AsyncBaseTransport):
    """The relay has no ERP to connect to: any attempt is a bug, and fails loudly."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        raise RuntimeError(f"the relay tried to connect to {request.url}; it must never connect")


class RelayClient(FrappeClient):
    def __init__(self) -> None:
        super().__init__("http://relay.invalid", transport=_NoNetwork())

    async def request(
        self,
        method: str,
        path: str,
        cred: Credential | None,
        *,
        params: Mapping[str, Any] | None = None,
        json_body: Any = None,
        write: bool = False,
    ) -> Any:
        path, _, query = path.partition("?")
        args: dict[str, Any] = {**dict(urllib.parse.parse_qsl(query)), **dict(params or {})}
        if path.startswith("/api/method/"):
            endpoint = path.removeprefix("/api/method/")
            relay_method = PATHS.get(endpoint)
            if relay_method is None:
                raise ErpRefusal(
                    Refusal(f"The ERP plugin does not run {endpoint}.", "RelayNotAllowed", 403)
                )
            if isinstance(json_body, Mapping):
                args.update(json_body)
            data = await self._call(relay_method, args)
            return {"docs": data} if relay_method == "get_meta" else {"message": data}
        if not path.startswith("/api/resource/"):
            raise ErpRefusal(
                Refusal(f"The ERP plugin does not run {path}.", "RelayNotAllowed", 403)
            )
        parts = [urllib.parse.unquote(p) for p in path.removeprefix("/api/resource/").split("/")]
        doctype = parts[0]
        name: str | None = parts[1] if len(parts) > 1 else None
        if method == "POST" and name is None:
            spec = {"doctype": doctype, "values": dict(json_body or {})}
            return {"data": await self._call("insert", spec)}
        if method == "PUT" and name:
            spec = {"doctype": doctype, "name": name, "values": dict(json_body or {})}
            return {"data": await self._call("update", spec)}
        if method == "POST" and name and args.get("run_method"):
            spec = {"doctype": doctype, "name": name, "action": str(args["run_method"])}
            return {"data": await self._call("run_doc_method", spec)}
        if method == "DELETE" and name:
            return {"message": await self._call("delete", {"doctype": doctype, "name": name})}
        raise ErpRefusal(
            Refusal(f"The ERP plugin does not run {method} {path}.", "RelayNotAllowed", 403)
        )

    async def _call(self, method: str, args: Mapping[str, Any]) -> Any:
        spec = {"method": method, **{k: v for k, v in args.items() if v is not None}}
        result = await CURRENT.get().call(spec)
        if result.get("ok"):
            return result.get("data")
        raw = result.get("error")
        error: dict[str, Any] = raw if isinstance(raw, dict) else {}
        refusal = Refusal(
            str(error.get("message") or "The ERP refused."),
            str(error.get("exc_type") or "ValidationError"),
            int(error.get("status") or 417),
        )
        if refusal.status == 401:
            raise ErpAuthenticationError(refusal.message)
        raise ErpRefusal(refusal)
