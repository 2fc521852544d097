"""Confirmation questions the MCP server asked, sealed so that only this server can have asked.

Over MCP 2026-07-28 a server asks the user by returning ``input_required`` with an opaque
``requestState``; the client asks its user and repeats the same ``tools/call`` with the answer
and the state. The state is the client's to hold, so it is never trusted as it comes back: it
is the server's own claim, encrypted and authenticated (Fernet, under a key derived from
``ERP_AGENT_SESSION_KEY``; without one, a key of this process), naming the proposal, its payload
hash, the session it was asked in and the call it answers, and it is worthless after the
proposal expires. A state that does not open, or names another session or another call, is
not an answer to anything this server asked: the call runs as if it carried none.

The payload hash travels only inside the sealed state; no client ever sees it, and knowing it
confirms nothing. Single use comes from the proposal: the gateway claims it once.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from erp_agent.calls.session import Session
from erp_agent.gateway.proposals import canonical_json

_INFO = b"erp-agent/mcp-elicitation/v1"
_VERSION = 1


@dataclass(frozen=True)
class Asked:
    """A confirmation this server asked for: the proposal and exactly what was shown."""

    proposal_id: str
    payload_hash: str
    warned: bool  # the question carried the proposal's content warning


def call_digest(name: str, arguments: Mapping[str, Any] | None) -> str:
    """The ``tools/call`` a question belongs to: the answer must repeat exactly this call."""
    text = canonical_json({"tool": name, "arguments": dict(arguments or {})})
    return hashlib.sha256(text.encode()).hexdigest()


class Elicitations:
    def __init__(self, secret: str | None = None) -> None:
        # The first of a rotation list seals; a rotation re-asks the questions then open.
        first = (secret or "").split(",")[0].strip()
        material = first.encode() if first else os.urandom(32)
        key = HKDF(algorithm=SHA256(), length=32, salt=None, info=_INFO).derive(material)
        self._fernet = Fernet(base64.urlsafe_b64encode(key))

    def issue(self, session: Session, proposal: Mapping[str, Any], call: str) -> str:
        expires = dt.datetime.fromisoformat(str(proposal["expires_at"]))
        claims = {
            "v": _VERSION,
            "p": proposal["id"],
            "h": proposal["payload_hash"],
            "s": session.id,
            "c": call,
            "w": bool(proposal.get("unrequested")),
            "exp": expires.timestamp(),
            "n": secrets.token_urlsafe(8),
        }
        return self._fernet.encrypt(json.dumps(claims).encode()).decode()

    def open(self, state: str, session: Session, call: str, now: dt.datetime) -> Asked | None:
        """The question ``state`` answers, if this server asked it in this session for this
        call and its proposal has not expired; None for anything else."""
        try:
            claims = json.loads(self._fernet.decrypt(state.encode()))
            proposal_id, payload_hash = str(claims["p"]), str(claims["h"])
            expires = float(claims["exp"])
        except (InvalidToken, ValueError, TypeError, KeyError):
            return None
        if claims.get("v") != _VERSION or claims.get("s") != session.id or claims.get("c") != call:
            return None
        if now.timestamp() >= expires:
            return None
        return Asked(proposal_id, payload_hash, bool(claims.get("w")))
