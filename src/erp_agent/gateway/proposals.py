"""Proposal identity: the payload hash that binds a confirm to exactly what was shown."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import secrets
from dataclasses import asdict
from typing import Any

from erp_agent.calls.outcome import ProposalView
from erp_agent.calls.session import CHANNEL_SESSION_PREFIX, RELAY_SESSION_PREFIX
from erp_agent.store.records import Proposal, ProposalStatus
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


_WORDS = {
    ProposalStatus.PENDING: "Waiting for your confirmation",
    ProposalStatus.EXECUTING: "Being written to the ERP",
    ProposalStatus.EXECUTED: "Written to the ERP",
    ProposalStatus.REJECTED: "Rejected: nothing was written",
    ProposalStatus.EXPIRED: "Expired: nothing was written",
    ProposalStatus.STALE: "Not written: the record changed after it was shown",
    ProposalStatus.SUPERSEDED: "Replaced by a newer proposal: nothing was written",
}


def status_words(proposal: Proposal) -> str:
    """The proposal's state as the user reads it, on every surface."""
    if proposal.status is ProposalStatus.CHECKING:
        until = (proposal.checkpoint or {}).get("settle_after")
        when = f" at {dt.datetime.fromisoformat(until):%H:%M:%S} UTC" if until else ""
        return (
            "Unknown — checking: the ERP did not answer this write; whether it was written is "
            f"asked of the ERP{when}, when the request can no longer arrive"
        )
    if proposal.status is ProposalStatus.FAILED:
        error = proposal.error or {}
        if error.get("interrupted") and error.get("written") is None:
            return "Unknown: the ERP could not tell whether it was written; check it there"
        return "Not written"
    return _WORDS.get(proposal.status, str(proposal.status))


def proposal_view(proposal: Proposal) -> ProposalView:
    """What the user is shown and confirms: exact values or diff, and the hash that binds them."""
    copied = asdict(proposal)  # the view's payload, diff and document are its own
    shown: ProposalView = {
        "id": proposal.id,
        "tool": proposal.tool,
        "summary": proposal.summary,
        "payload": copied["payload"],
        "payload_hash": proposal.payload_hash,
        "diff": copied["diff"],
        "document": copied["document"],
        "status": str(proposal.status),
        "expires_at": proposal.expires_at.isoformat(),
        "conversation_id": proposal.conversation_id,
        "base_modified": proposal.base_modified,
        "superseded_by": proposal.superseded_by,
        "status_text": status_words(proposal),
    }
    if proposal.warning:
        # The write came from content the agent read, not from the request: every confirm
        # surface shows this (``gateway/origin.py``).
        shown["unrequested"] = proposal.warning.copy()
    if proposal.projection:
        # What the ERP computed the change will post, for the version above
        # (``gateway/projection.py``): every confirm surface shows it.
        shown["projection"] = proposal.projection.copy()
    return shown


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
    if proposal.session_id != session_id and (
        not proposal.session_id.startswith(CHANNEL_SESSION_PREFIX)
        or session_id.startswith((CHANNEL_SESSION_PREFIX, RELAY_SESSION_PREFIX))
    ):
        # A channel without a confirm button (MCP, the OpenAI-compatible API) leaves its
        # proposals to the same user signed in to the web app, never to another API key or
        # the relay; any other session's stay its own.
        return "This proposal was made in another session; ask for it again here."
    if proposal.status is ProposalStatus.CHECKING:
        # Its write may still reach the ERP: confirming (or changing) it again could write twice.
        return f"{status_words(proposal)}. Nothing more was written now."
    if proposal.status is not ProposalStatus.PENDING:
        return f"This proposal is already {proposal.status}; nothing was written now."
    if action != "reject" and now >= proposal.expires_at:
        return f"This proposal expired at {proposal.expires_at:%H:%M UTC}; ask for it again."
    return None
