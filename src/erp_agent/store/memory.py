"""An in-memory Store: for tests and throwaway sessions. Same contract as the SQL store."""

from __future__ import annotations

import asyncio
import copy
import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from erp_agent.errors import StoreError
from erp_agent.store.base import GRANTS_KEPT, SIGN_IN_FAILURES_KEPT, Store
from erp_agent.store.records import (
    ApiKey,
    AuditEvent,
    Conversation,
    Decision,
    Interaction,
    Proposal,
    ProposalStatus,
    Turn,
    Unrequested,
    WebSession,
)


class MemoryStore(Store):
    def __init__(self) -> None:
        self._proposals: dict[str, Proposal] = {}
        self._events: list[AuditEvent] = []
        self._conversations: dict[str, Conversation] = {}
        self._turns: dict[str, Turn] = {}
        self._states: dict[str, dict[str, Any]] = {}
        self._sign_in_failures: list[tuple[str, dt.datetime]] = []
        self._grants: dict[str, tuple[str, dict[str, Any], dt.datetime]] = {}
        self._web_sessions: dict[str, WebSession] = {}
        self._settings: dict[str, Any] = {}
        self._interactions: dict[str, Interaction] = {}
        self._api_keys: dict[str, ApiKey] = {}
        self._lock = asyncio.Lock()

    async def migrate(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def add_proposal(self, proposal: Proposal) -> None:
        self._proposals[proposal.id] = copy.deepcopy(proposal)

    async def get_proposal(self, proposal_id: str) -> Proposal | None:
        found = self._proposals.get(proposal_id)
        return copy.deepcopy(found) if found else None

    async def claim_proposal(self, proposal_id: str, *, at: dt.datetime | None = None) -> bool:
        async with self._lock:
            found = self._proposals.get(proposal_id)
            if found is None or found.status is not ProposalStatus.PENDING:
                return False
            found.status = ProposalStatus.EXECUTING
            found.claimed_at = at or dt.datetime.now(dt.UTC)
            return True

    async def set_checkpoint(self, proposal_id: str, checkpoint: dict[str, Any]) -> None:
        found = self._proposals.get(proposal_id)
        if found is None:
            raise StoreError(f"There is no proposal {proposal_id}.")
        found.checkpoint = copy.deepcopy(checkpoint)

    async def set_warning(self, proposal_id: str, warning: Unrequested) -> None:
        found = self._proposals.get(proposal_id)
        if found is None:
            raise StoreError(f"There is no proposal {proposal_id}.")
        found.warning = copy.deepcopy(warning)

    async def finish_proposal(
        self,
        proposal_id: str,
        status: ProposalStatus,
        *,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        decided_at: dt.datetime | None = None,
        superseded_by: str | None = None,
        expected: ProposalStatus | None = None,
    ) -> bool:
        async with self._lock:
            found = self._proposals.get(proposal_id)
            if found is None:
                raise StoreError(f"There is no proposal {proposal_id} to finish.")
            if expected is not None and found.status is not expected:
                return False
            found.status = status
            found.result = copy.deepcopy(result)
            found.error = copy.deepcopy(error)
            found.decided_at = decided_at or dt.datetime.now(dt.UTC)
            found.superseded_by = superseded_by
            return True

    async def list_proposals(
        self,
        *,
        user: str | None = None,
        status: ProposalStatus | None = None,
        conversation_id: str | None = None,
        limit: int = 100,
    ) -> list[Proposal]:
        found = [
            copy.deepcopy(p)
            for p in self._proposals.values()
            if (user is None or p.user == user)
            and (status is None or p.status is status)
            and (conversation_id is None or p.conversation_id == conversation_id)
        ]
        return sorted(found, key=lambda p: p.created_at, reverse=True)[:limit]

    async def record_event(self, event: AuditEvent) -> None:
        event.id = len(self._events) + 1
        self._events.append(copy.deepcopy(event))

    async def events(
        self,
        *,
        user: str | None = None,
        tool: str | None = None,
        decision: Decision | None = None,
        since: dt.datetime | None = None,
        turn_id: str | None = None,
        proposal_id: str | None = None,
        limit: int = 100,
    ) -> list[AuditEvent]:
        found = [
            e
            for e in self._events
            if (user is None or e.user == user)
            and (turn_id is None or e.turn_id == turn_id)
            and (proposal_id is None or e.proposal_id == proposal_id)
            and (tool is None or e.tool == tool)
            and (decision is None or e.decision is decision)
            and (since is None or e.at >= since)
        ]
        return [copy.deepcopy(e) for e in reversed(found)][:limit]

    async def create_conversation(
        self, conversation: Conversation, first_turn: Turn | None = None
    ) -> None:
        self._conversations[conversation.id] = copy.deepcopy(conversation)
        if first_turn is not None:
            await self.save_turn(first_turn)

    async def get_conversation(self, conversation_id: str) -> Conversation | None:
        found = self._conversations.get(conversation_id)
        return copy.deepcopy(found) if found else None

    async def list_conversations(self, user: str, *, limit: int = 50) -> list[Conversation]:
        found = [c for c in self._conversations.values() if c.user == user]
        return [copy.deepcopy(c) for c in sorted(found, key=lambda c: c.updated_at, reverse=True)][
            :limit
        ]

    async def save_turn(self, turn: Turn) -> None:
        self._turns[turn.id] = copy.deepcopy(turn)
        conversation = self._conversations.get(turn.conversation_id)
        if conversation is not None and turn.updated_at > conversation.updated_at:
            conversation.updated_at = turn.updated_at

    async def get_turn(self, turn_id: str) -> Turn | None:
        found = self._turns.get(turn_id)
        return copy.deepcopy(found) if found else None

    async def conversation_state(self, conversation_id: str) -> dict[str, Any]:
        return copy.deepcopy(self._states.get(conversation_id, {}))

    async def save_conversation_state(self, conversation_id: str, state: Mapping[str, Any]) -> None:
        if conversation_id not in self._conversations:
            raise StoreError(f"There is no conversation {conversation_id} to keep state for.")
        self._states[conversation_id] = copy.deepcopy(dict(state))

    async def running_turns(self, *, updated_before: dt.datetime) -> list[Turn]:
        found = [
            t
            for t in self._turns.values()
            if t.status == "running" and t.updated_at < updated_before
        ]
        return [copy.deepcopy(t) for t in sorted(found, key=lambda t: t.updated_at)]

    async def turns(self, conversation_id: str) -> Sequence[Turn]:
        found = [t for t in self._turns.values() if t.conversation_id == conversation_id]
        return [copy.deepcopy(t) for t in sorted(found, key=lambda t: t.seq)]

    async def add_sign_in_failure(self, keys: Sequence[str], at: dt.datetime) -> None:
        kept = [(k, t) for k, t in self._sign_in_failures if t >= at - SIGN_IN_FAILURES_KEPT]
        self._sign_in_failures = [*kept, *((key, at) for key in keys)]

    async def sign_in_failures(self, key: str, since: dt.datetime) -> list[dt.datetime]:
        return sorted(t for k, t in self._sign_in_failures if k == key and t >= since)

    async def clear_sign_in_failures(self, key: str) -> None:
        self._sign_in_failures = [(k, t) for k, t in self._sign_in_failures if k != key]

    async def saved_grants(self, key: str, since: dt.datetime) -> dict[str, Any] | None:
        found = self._grants.get(key)
        return copy.deepcopy(found[1]) if found is not None and found[2] >= since else None

    async def save_grants(
        self, key: str, user: str, grants: dict[str, Any], at: dt.datetime
    ) -> None:
        self._grants = {k: v for k, v in self._grants.items() if v[2] >= at - GRANTS_KEPT}
        self._grants[key] = (user, copy.deepcopy(grants), at)

    async def forget_grants(self, user: str) -> None:
        self._grants = {k: v for k, v in self._grants.items() if v[0] != user}

    async def save_web_session(self, row: WebSession) -> None:
        if row.token_hash in self._web_sessions:
            raise StoreError("That web session exists already.")
        self._web_sessions[row.token_hash] = copy.deepcopy(row)

    async def web_session(self, token_hash: str) -> WebSession | None:
        found = self._web_sessions.get(token_hash)
        return copy.deepcopy(found) if found else None

    async def newest_web_session(
        self, *, session_id: str | None = None, user: str | None = None
    ) -> WebSession | None:
        found = [
            w
            for w in self._web_sessions.values()
            if (session_id is None or w.session_id == session_id)
            and (user is None or w.user == user)
        ]
        return copy.deepcopy(max(found, key=lambda w: w.expires_at)) if found else None

    async def delete_web_session(self, token_hash: str) -> None:
        self._web_sessions.pop(token_hash, None)

    async def purge_web_sessions(self, now: dt.datetime) -> None:
        self._web_sessions = {k: w for k, w in self._web_sessions.items() if w.expires_at >= now}

    def _drop_conversations(self, ids: list[str]) -> int:
        for cid in ids:
            self._conversations.pop(cid, None)
            self._states.pop(cid, None)
        self._turns = {k: t for k, t in self._turns.items() if t.conversation_id not in ids}
        for proposal in self._proposals.values():
            if proposal.conversation_id in ids:
                proposal.conversation_id = None
        return len(ids)

    async def delete_conversation(self, conversation_id: str) -> bool:
        found = conversation_id in self._conversations
        self._drop_conversations([conversation_id] if found else [])
        return found

    async def delete_user_data(self, user: str) -> dict[str, int]:
        ids = [c.id for c in self._conversations.values() if c.user == user]
        logged = [k for k, r in self._interactions.items() if r.user == user]
        sessions = [k for k, w in self._web_sessions.items() if w.user == user]
        for key in logged:
            del self._interactions[key]
        for key in sessions:
            del self._web_sessions[key]
        await self.forget_grants(user)
        return {
            "conversations": self._drop_conversations(ids),
            "interactions": len(logged),
            "sessions": len(sessions),
        }

    async def purge_older_than(
        self,
        *,
        conversations_before: dt.datetime | None,
        interactions_before: dt.datetime | None,
    ) -> dict[str, int]:
        ids = (
            [c.id for c in self._conversations.values() if c.updated_at < conversations_before]
            if conversations_before is not None
            else []
        )
        logged = (
            [k for k, r in self._interactions.items() if r.at < interactions_before]
            if interactions_before is not None
            else []
        )
        for key in logged:
            del self._interactions[key]
        return {"conversations": self._drop_conversations(ids), "interactions": len(logged)}

    async def update_web_session_credential(self, token_hash: str, credential: bytes) -> None:
        if token_hash in self._web_sessions:
            self._web_sessions[token_hash].credential = credential

    async def web_session_credentials(self) -> list[tuple[str, bytes]]:
        return [(k, w.credential) for k, w in self._web_sessions.items()]

    async def admin_settings(self) -> dict[str, Any]:
        return copy.deepcopy(self._settings)

    async def set_admin_setting(self, key: str, value: Any) -> None:
        self._settings[key] = copy.deepcopy(value)

    async def log_interaction(self, row: Interaction) -> None:
        self._interactions.setdefault(row.turn_id, copy.deepcopy(row))

    async def interactions(
        self,
        *,
        user: str | None = None,
        org: str | None = None,
        outcome: str | None = None,
        since: dt.datetime | None = None,
        until: dt.datetime | None = None,
        rated: bool = False,
        rating: str | None = None,
        limit: int = 100,
    ) -> list[Interaction]:
        found = [
            copy.deepcopy(i)
            for i in self._interactions.values()
            if (not user or i.user == user)
            and (not org or i.org == org)
            and (not outcome or i.result == outcome)
            and (since is None or i.at >= since)
            and (until is None or i.at < until)
            and (not rated or i.rating is not None)
            and (not rating or i.rating == rating)
        ]
        return sorted(found, key=lambda i: i.at, reverse=True)[:limit]

    async def rate_interaction(
        self, turn_id: str, rating: str, comment: str, at: dt.datetime
    ) -> bool:
        row = self._interactions.get(turn_id)
        if row is None:
            return False
        row.rating, row.comment, row.rated_at = rating, comment, at
        return True

    async def usage_by_day(self, since: dt.datetime) -> list[dict[str, Any]]:
        days: dict[tuple[str, str], dict[str, Any]] = {}
        for i in sorted(self._interactions.values(), key=lambda i: i.at):
            if i.at < since:
                continue
            key = (i.org, i.at.astimezone(dt.UTC).date().isoformat())
            row = days.setdefault(
                key,
                {
                    "org": key[0],
                    "day": key[1],
                    "prompt": 0,
                    "cached": 0,
                    "completion": 0,
                    "turns": 0,
                },
            )
            row["prompt"] += i.prompt_tokens
            row["cached"] += i.cached_tokens
            row["completion"] += i.completion_tokens
            row["turns"] += 1
        return sorted(days.values(), key=lambda r: (str(r["day"]), str(r["org"])))

    async def month_tokens(self, org: str, now: dt.datetime) -> int:
        now = now.astimezone(dt.UTC)
        return sum(
            i.prompt_tokens + i.completion_tokens
            for i in self._interactions.values()
            if i.org == org and (i.at.year, i.at.month) == (now.year, now.month)
        )

    async def add_api_key(self, key: ApiKey) -> None:
        self._api_keys[key.id] = copy.deepcopy(key)

    async def api_key_by_hash(self, key_hash: str) -> ApiKey | None:
        found = next((k for k in self._api_keys.values() if k.key_hash == key_hash), None)
        return copy.deepcopy(found)

    async def list_api_keys(
        self, *, org: str | None = None, user: str | None = None
    ) -> list[ApiKey]:
        keys = [
            copy.deepcopy(k)
            for k in self._api_keys.values()
            if (org is None or k.org == org) and (user is None or k.user == user)
        ]
        return sorted(keys, key=lambda k: (k.created_at, k.id), reverse=True)

    async def revoke_api_key(self, key_id: str, at: dt.datetime) -> bool:
        key = self._api_keys.get(key_id)
        if key is None or key.revoked_at is not None:
            return False
        key.revoked_at = at
        return True

    async def set_api_key_credentials(self, user: str, credential: str) -> None:
        for key in self._api_keys.values():
            if key.user == user and key.kind == "user" and key.revoked_at is None:
                key.credential = credential
