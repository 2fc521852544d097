"""The Store interface. Implementations: ``SQLStore`` (SQLite embedded by default, or
PostgreSQL) and ``MemoryStore`` (tests and throwaway runs)."""

from __future__ import annotations

import datetime as dt
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

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

SIGN_IN_FAILURES_KEPT = dt.timedelta(days=1)  # longer than any throttling window
GRANTS_KEPT = dt.timedelta(days=1)  # longer than any sensible ERP_AGENT_GRANTS_TTL


class Store(ABC):
    """Async persistence. Every method is one transaction."""

    @abstractmethod
    async def migrate(self) -> None:
        """Bring the schema to the latest version (idempotent)."""

    @abstractmethod
    async def close(self) -> None: ...

    # proposals
    @abstractmethod
    async def add_proposal(self, proposal: Proposal) -> None: ...

    @abstractmethod
    async def get_proposal(self, proposal_id: str) -> Proposal | None: ...

    @abstractmethod
    async def claim_proposal(self, proposal_id: str, *, at: dt.datetime | None = None) -> bool:
        """Atomically move a PENDING proposal to EXECUTING (``claimed_at`` = ``at``, default
        now). False if it was not pending: this is what makes a proposal single-use even with
        two confirms racing."""

    @abstractmethod
    async def set_checkpoint(self, proposal_id: str, checkpoint: dict[str, Any]) -> None:
        """Note what the confirm read just before writing (for crash reconciliation)."""

    @abstractmethod
    async def set_warning(self, proposal_id: str, warning: Unrequested) -> None:
        """Put a content warning on a proposal (one prepared again keeps its predecessor's)."""

    @abstractmethod
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
        """Set the final status. With ``expected``, only if the proposal is in that status
        (False otherwise): two reconcilers never both decide one proposal."""

    @abstractmethod
    async def list_proposals(
        self,
        *,
        user: str | None = None,
        status: ProposalStatus | None = None,
        conversation_id: str | None = None,
        limit: int = 100,
    ) -> list[Proposal]: ...

    # audit
    @abstractmethod
    async def record_event(self, event: AuditEvent) -> None: ...

    @abstractmethod
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
    ) -> list[AuditEvent]: ...

    # conversations and turns
    @abstractmethod
    async def create_conversation(
        self, conversation: Conversation, first_turn: Turn | None = None
    ) -> None:
        """Insert a conversation, and with it ``first_turn`` if given (one transaction: an
        answer served whole, e.g. from the response cache, needs no second)."""

    @abstractmethod
    async def get_conversation(self, conversation_id: str) -> Conversation | None: ...

    @abstractmethod
    async def list_conversations(self, user: str, *, limit: int = 50) -> list[Conversation]: ...

    @abstractmethod
    async def conversation_state(self, conversation_id: str) -> dict[str, Any]:
        """The conversation's state (``{}`` when none was saved)."""

    @abstractmethod
    async def save_conversation_state(self, conversation_id: str, state: Mapping[str, Any]) -> None:
        """Replace the conversation's state."""

    @abstractmethod
    async def save_turn(self, turn: Turn) -> None:
        """Insert or update a turn (its state is saved after every engine step)."""

    @abstractmethod
    async def get_turn(self, turn_id: str) -> Turn | None: ...

    @abstractmethod
    async def turns(self, conversation_id: str) -> Sequence[Turn]: ...

    @abstractmethod
    async def running_turns(self, *, updated_before: dt.datetime) -> list[Turn]:
        """Turns still ``running`` whose last step was saved before ``updated_before``."""

    # failed sign-ins (throttling)
    @abstractmethod
    async def add_sign_in_failure(self, keys: Sequence[str], at: dt.datetime) -> None:
        """Record one failed sign-in under each key; failures older than a day are dropped."""

    @abstractmethod
    async def sign_in_failures(self, key: str, since: dt.datetime) -> list[dt.datetime]:
        """When ``key`` failed at or after ``since``, oldest first."""

    @abstractmethod
    async def clear_sign_in_failures(self, key: str) -> None: ...

    # what the ERP granted a user at sign-in (reused for ERP_AGENT_GRANTS_TTL)
    @abstractmethod
    async def saved_grants(self, key: str, since: dt.datetime) -> dict[str, Any] | None:
        """The grants saved under ``key`` at or after ``since``; None when none are that fresh."""

    @abstractmethod
    async def save_grants(
        self, key: str, user: str, grants: dict[str, Any], at: dt.datetime
    ) -> None:
        """Replace the grants under ``key``; rows older than a day are dropped."""

    @abstractmethod
    async def forget_grants(self, user: str) -> None:
        """Drop every saved grant of ``user`` (sign-out, deletion of their data)."""

    # signed-in web sessions
    @abstractmethod
    async def save_web_session(self, row: WebSession) -> None: ...

    @abstractmethod
    async def web_session(self, token_hash: str) -> WebSession | None: ...

    @abstractmethod
    async def newest_web_session(
        self, *, session_id: str | None = None, user: str | None = None
    ) -> WebSession | None:
        """The newest web session with this gateway session id, or of this user."""

    @abstractmethod
    async def delete_web_session(self, token_hash: str) -> None: ...

    @abstractmethod
    async def purge_web_sessions(self, now: dt.datetime) -> None:
        """Drop the sessions that expired before ``now``."""

    @abstractmethod
    async def update_web_session_credential(self, token_hash: str, credential: bytes) -> None:
        """A renewed (OAuth refresh) or re-sealed (key rotation) credential of one session."""

    @abstractmethod
    async def web_session_credentials(self) -> list[tuple[str, bytes]]:
        """(token hash, sealed credential) of every web session, for re-sealing at start."""

    # retention and deletion (proposals and audit events are kept: the record of ERP changes)
    @abstractmethod
    async def delete_conversation(self, conversation_id: str) -> bool:
        """The conversation, its turns and state; False when there was none."""

    @abstractmethod
    async def delete_user_data(self, user: str) -> dict[str, int]:
        """Every conversation, interaction-log row and web session of ``user``; counts."""

    @abstractmethod
    async def purge_older_than(
        self,
        *,
        conversations_before: dt.datetime | None,
        interactions_before: dt.datetime | None,
    ) -> dict[str, int]:
        """Conversations last active, and log rows made, before the cutoffs; counts."""

    # admin settings
    @abstractmethod
    async def admin_settings(self) -> dict[str, Any]:
        """Every stored admin setting (key → JSON value)."""

    @abstractmethod
    async def set_admin_setting(self, key: str, value: Any) -> None: ...

    # the interaction log and usage
    @abstractmethod
    async def log_interaction(self, row: Interaction) -> None:
        """Record a finished turn once (a second record of the same turn is ignored)."""

    @abstractmethod
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
        """Newest first. ``outcome`` is the log's outcome (``models.RESULTS``: "proposal" for an
        answer that proposed a write, else the true outcome); ``since``/``until`` bound the
        turn's time (until exclusive); ``rated`` keeps turns with feedback, ``rating`` those
        with that thumb ("up" or "down")."""

    @abstractmethod
    async def rate_interaction(
        self, turn_id: str, rating: str, comment: str, at: dt.datetime
    ) -> bool:
        """Keep the user's feedback on a logged turn (replacing earlier feedback); False when
        the turn is not in the log."""

    @abstractmethod
    async def usage_by_day(self, since: dt.datetime) -> list[dict[str, Any]]:
        """Tokens and turns per organisation per UTC day: org, day, prompt, cached,
        completion, turns."""

    @abstractmethod
    async def month_tokens(self, org: str, now: dt.datetime) -> int:
        """Prompt + completion tokens ``org`` used in ``now``'s calendar month (UTC)."""

    # API keys (MCP, the OpenAI-compatible API, the relay)
    @abstractmethod
    async def add_api_key(self, key: ApiKey) -> None: ...

    @abstractmethod
    async def api_key_by_hash(self, key_hash: str) -> ApiKey | None:
        """The key with this hash, revoked or not (the caller checks ``revoked_at``)."""

    @abstractmethod
    async def list_api_keys(
        self, *, org: str | None = None, user: str | None = None
    ) -> list[ApiKey]:
        """Keys, newest first."""

    @abstractmethod
    async def revoke_api_key(self, key_id: str, at: dt.datetime) -> bool:
        """Revoke a key that is not revoked yet; False when there is none such."""

    @abstractmethod
    async def set_api_key_credentials(self, user: str, credential: str) -> None:
        """Give every active key of ``user`` this (encrypted) ERP credential: issuing a new
        ERP key pair ends the previous one."""
