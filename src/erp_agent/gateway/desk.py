"""What the gateway's proposal helpers (``reconcile.py``, ``revise.py``) use of the gateway:
its tools, store and clock, validation, a proposal's context, storing a new proposal and the
audited decision. ``gateway.Gateway`` is one; the helpers never import it (it imports them)."""

from __future__ import annotations

import datetime as dt
from typing import Any, Protocol

from erp_agent.calls.outcome import Outcome
from erp_agent.calls.session import Session
from erp_agent.catalog import Catalog
from erp_agent.store.base import Store
from erp_agent.store.records import Decision, Proposal, Unrequested
from erp_agent.tools.base import Change, Tool, ToolContext, ToolRegistry


class Desk(Protocol):
    """The part of ``gateway.Gateway`` a proposal's reconciliation and edit use."""

    @property
    def registry(self) -> ToolRegistry: ...

    @property
    def store(self) -> Store: ...

    @property
    def catalog(self) -> Catalog: ...

    def clock(self) -> dt.datetime: ...

    def validate(self, tool: Tool, args: Any) -> list[str]: ...

    def context_of(self, session: Session, proposal: Proposal) -> ToolContext: ...

    async def store_proposal(
        self,
        session: Session,
        tool: str,
        change: Change,
        conversation_id: str | None,
        warning: Unrequested | None = None,
        *,
        today: dt.date | None = None,
    ) -> Proposal: ...

    async def audit(
        self,
        session: Session,
        tool: str,
        digest: str,
        started: float,
        decision: Decision,
        outcome: Outcome,
        reason: str | None = None,
        proposal_id: str | None = None,
        action: str | None = None,
    ) -> Outcome: ...
