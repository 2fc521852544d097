"""The plugin's executor core: run the relay's call specifications as the user who asked, with
the ERP's own API, and send back the results exactly as the ERP returned them.

Plain Python behind a small interface (``ErpApi``): inside Frappe it is ``frappe_api.FrappeApi``
(frappe.get_list, get_doc, run report, apply_workflow in the user's session, so permissions,
user permissions and field restrictions apply natively and documents show the real user as
owner); outside a bench, ``rest_api.RestApi`` runs the same calls over the ERP's REST API as the
user (that is how it is tested, against the demo ERP).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from erp_agent_plugin.protocol import SpecRefused, check


class ErpError(Exception):
    """The ERP refused or failed a call: its own message, exception type and HTTP status."""

    def __init__(self, message: str, exc_type: str = "ValidationError", status: int = 417) -> None:
        super().__init__(message)
        self.message, self.exc_type, self.status = message, exc_type, status


class ErpApi(Protocol):
    """One method per allowed call method (``protocol.METHODS``), each taking its arguments
    by name and returning what the ERP returned; a refusal raises ErpError."""

    def call(self, method: str, args: Mapping[str, Any]) -> Any: ...


class Relay(Protocol):
    """The erp-agent relay endpoint: POST a JSON body to a path, get its JSON answer."""

    def post(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]: ...


def execute(spec: Any, api: ErpApi, *, writes_allowed: bool) -> dict[str, Any]:
    """One call spec → one result: ``{"id", "ok": true, "data"}`` or ``{"id", "ok": false,
    "error": {"message", "exc_type", "status"}}``. A spec off the allow-list is not run."""
    call_id = spec.get("id") if isinstance(spec, dict) else None
    try:
        checked = check(spec, writes_allowed=writes_allowed)
    except SpecRefused as exc:
        return _error(call_id, f"Refused by the ERP plugin: {exc}", "SpecRefused", 400)
    args = {k: v for k, v in checked.items() if k not in ("id", "method")}
    try:
        return {"id": call_id, "ok": True, "data": api.call(checked["method"], args)}
    except ErpError as exc:
        return _error(call_id, exc.message, exc.exc_type, exc.status)


def run_turn(
    relay: Relay,
    api: ErpApi,
    user: str,
    *,
    message: str | None = None,
    conversation_id: str | None = None,
    confirm: Mapping[str, str] | None = None,
    max_rounds: int = 500,
    on_calls: Callable[[list[dict[str, Any]]], None] | None = None,
) -> dict[str, Any]:
    """Drive one interaction to its end: a question (``message``), or the user's confirmation
    of a proposal (``confirm``: proposal_id and payload_hash). Writes are run only in a
    confirmation; a question's calls are reads, whatever the relay asks."""
    start: dict[str, Any] = {"user": user}
    if confirm is not None:
        start["confirm"] = dict(confirm)
    else:
        start["message"] = message
        if conversation_id:
            start["conversation_id"] = conversation_id
    reply = relay.post("/api/relay/turns", start)
    for _ in range(max_rounds):
        if reply.get("status") != "calls":
            return reply
        calls = list(reply.get("calls") or [])
        if on_calls is not None:
            on_calls(calls)
        results = [execute(spec, api, writes_allowed=confirm is not None) for spec in calls]
        reply = relay.post(
            f"/api/relay/turns/{reply['turn_id']}/results",
            {"user": user, "seq": reply["seq"], "results": results},
        )
    raise RuntimeError("the relay kept asking for calls; the interaction was stopped")


def _error(call_id: Any, message: str, exc_type: str, status: int) -> dict[str, Any]:
    return {
        "id": call_id,
        "ok": False,
        "error": {"message": message, "exc_type": exc_type, "status": status},
    }
