"""Proposal identity: the payload hash that binds a confirm to exactly what was shown."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import secrets
from dataclasses import asdict
from typing import Any

from erp_agent.store.models import Proposal
from erp_agent.tools.base import BASE_MODIFIED


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def payload_hash(tool: str, payload: Any) -> str:
    return hashlib.sha256(canonical_json({"tool": tool, "payload": payload}).encode()).hexdigest()


def args_digest(args: Any) -> str:
    """A short digest of arguments for the audit log (arguments themselves may be sensitive)."""
    return hashlib.sha256(canonical_json(args).encode()).hexdigest()[:16]


def new_proposal_id() -> str:
    return f"prop_{secrets.token_urlsafe(12)}"


def fresh_arguments(payload: dict[str, Any]) -> dict[str, Any]:
    """The tool arguments that prepare the same change again (the payload less the version)."""
    return {k: v for k, v in payload.items() if k != BASE_MODIFIED}


def proposal_view(proposal: Proposal) -> dict[str, Any]:
    """What the user is shown and confirms: exact values or diff, and the hash that binds them."""
    view = asdict(proposal)
    for key in ("created_at", "expires_at", "decided_at"):
        value = view.get(key)
        view[key] = value.isoformat() if isinstance(value, dt.datetime) else value
    view["status"] = str(proposal.status)
    return {
        k: view[k]
        for k in (
            "id",
            "tool",
            "summary",
            "payload",
            "payload_hash",
            "diff",
            "document",
            "status",
            "expires_at",
            "conversation_id",
            "base_modified",
            "superseded_by",
        )
    }
