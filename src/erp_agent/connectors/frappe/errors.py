"""Frappe error bodies → Refusal, with the ERP's own words kept verbatim (tags stripped)."""

from __future__ import annotations

import html
import json
import re
from typing import Any

from erp_agent.errors import STALE_RECORD, Refusal

_TAG = re.compile(r"<[^>]+>")


def strip_tags(text: str) -> str:
    return html.unescape(_TAG.sub("", text)).strip()


def _server_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    raw = body.get("_server_messages")
    if not isinstance(raw, str):
        return []
    try:
        items = json.loads(raw)
    except json.JSONDecodeError:
        return []
    out = []
    for item in items if isinstance(items, list) else []:
        try:
            decoded = json.loads(item) if isinstance(item, str) else item
        except json.JSONDecodeError:
            decoded = {"message": item}
        if isinstance(decoded, dict):
            out.append(decoded)
    return out


def refusal_from_response(status: int, body: Any, fallback: str = "") -> Refusal:
    """Build a Refusal from a Frappe error reply (v1 or v2 shape)."""
    if not isinstance(body, dict):
        return Refusal(fallback or f"HTTP {status}", "HTTPError", status)
    exc_type = str(body.get("exc_type") or "")
    texts: list[str] = []
    title = None
    for msg in _server_messages(body):
        text = strip_tags(str(msg.get("message", "")))
        if text and text not in texts:
            texts.append(text)
        if msg.get("raise_exception") and msg.get("title") not in (None, "Message"):
            title = str(msg["title"])
    for error in body.get("errors") or []:  # API v2
        if isinstance(error, dict):
            exc_type = exc_type or str(error.get("type", ""))
            if error.get("message"):
                texts.append(strip_tags(str(error["message"])))
    if not texts and body.get("_error_message"):
        texts.append(strip_tags(str(body["_error_message"])))
    if not texts and isinstance(body.get("message"), str):
        texts.append(strip_tags(body["message"]))  # login failures put the reason here
    if not texts and isinstance(body.get("exception"), str):
        texts.append(strip_tags(body["exception"].split(":", 1)[-1]))
    if not texts:
        texts.append(fallback or f"The ERP answered HTTP {status}")
    # What a desk user would see in the error dialog: every message, in order.
    return Refusal("\n".join(texts), exc_type or "HTTPError", status, texts, title)


def stale_refusal(current: str, seen: str) -> Refusal:
    """Frappe's own refusal of a write to a record changed since it was read (its
    ``check_if_latest`` wording), for the endpoints that reload the record before acting
    (delete, workflow actions) and so cannot check the version themselves."""
    message = (
        f"Error: Document has been modified after you have opened it ({current}, {seen}). "
        "Please refresh to get the latest document."
    )
    return Refusal(message, STALE_RECORD, 417, [message])
