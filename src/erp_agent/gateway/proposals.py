"""Proposal identity: the payload hash that binds a confirm to exactly what was shown."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import secrets
from dataclasses import asdict
from typing import Any

from erp_agent.gateway.session import CHANNEL_SESSION_PREFIX
from erp_agent.store.models import Proposal, ProposalStatus
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


def decision_refusal(
    proposal: Proposal | None, proposal_id: str, user: str, session_id: str, now: dt.datetime,
    action: str,
) -> str | None:  # fmt: skip
    """Why ``user`` may not ``action`` ("confirm", "edit" or "reject") the proposal now, or None.

    One rule for every decision: only its owner, in the session it was made in, while it is
    pending and (except to discard it) not expired."""
    if proposal is None:
        return f"There is no proposal {proposal_id}."
    if proposal.user != user:
        return f"This proposal belongs to another user; only they can {action} it."
    if proposal.session_id != session_id and not proposal.session_id.startswith(
        CHANNEL_SESSION_PREFIX
    ):
        # A channel without a confirm button (MCP, the OpenAI-compatible API) leaves its
        # proposals to the same user in the web app; any other session's stay its own.
        return "This proposal was made in another session; ask for it again here."
    if proposal.status is not ProposalStatus.PENDING:
        return f"This proposal is already {proposal.status}; nothing was written now."
    if action != "reject" and now >= proposal.expires_at:
        return f"This proposal expired at {proposal.expires_at:%H:%M UTC}; ask for it again."
    return None
