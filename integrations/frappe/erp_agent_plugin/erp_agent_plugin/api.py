"""Whitelisted methods the chat page calls. Each runs as ``frappe.session.user``; the relay key
stays on the server side of Frappe (a Password field of ERP Agent Settings)."""

from __future__ import annotations

from typing import Any

import frappe  # type: ignore[import-not-found]

from erp_agent_plugin.executor import run_turn
from erp_agent_plugin.frappe_api import FrappeApi
from erp_agent_plugin.relay_client import HttpRelay, RelayError


def _relay() -> HttpRelay:
    settings = frappe.get_single("ERP Agent Settings")
    if not settings.relay_url or not settings.get_password("organisation_key"):
        frappe.throw("ERP Agent is not set up: an administrator fills in ERP Agent Settings.")
    return HttpRelay(
        settings.relay_url,
        settings.get_password("organisation_key"),
        settings.organisation or "default",
    )


def can_use() -> bool:
    return frappe.session.user != "Guest"


@frappe.whitelist()
def ask(message: str, conversation_id: str | None = None) -> dict[str, Any]:
    """One question, answered by the agent; every ERP call it needs runs here as you."""
    try:
        return run_turn(
            _relay(),
            FrappeApi(),
            frappe.session.user,
            message=message,
            conversation_id=conversation_id,
        )
    except RelayError as exc:
        frappe.throw(str(exc))
        raise


@frappe.whitelist(methods=["POST"])
def confirm(proposal_id: str, payload_hash: str) -> dict[str, Any]:
    """Write exactly the proposal you were shown (its payload hash), as you."""
    try:
        return run_turn(
            _relay(),
            FrappeApi(),
            frappe.session.user,
            confirm={"proposal_id": proposal_id, "payload_hash": payload_hash},
        )
    except RelayError as exc:
        frappe.throw(str(exc))
        raise
