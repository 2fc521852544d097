"""Proposal identity: the payload hash that binds a confirm to exactly what was shown."""

from __future__ import annotations

import hashlib
import json
import secrets
from typing import Any


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def payload_hash(tool: str, payload: Any) -> str:
    return hashlib.sha256(canonical_json({"tool": tool, "payload": payload}).encode()).hexdigest()


def args_digest(args: Any) -> str:
    """A short digest of arguments for the audit log (arguments themselves may be sensitive)."""
    return hashlib.sha256(canonical_json(args).encode()).hexdigest()[:16]


def new_proposal_id() -> str:
    return f"prop_{secrets.token_urlsafe(12)}"
