"""Subscribers of every turn's event stream that the runtime attaches to each engine.

``InteractionLog``: one row per finished turn in the store (its true outcome, the provider's
token counts, the tools called): the admin console's log, the usage chart and the monthly
budgets all read these rows, so there is one record of what a turn did and cost.

``AuditLog``: one audit row per gateway decision (``Audited`` events: a call decided, a
proposal made, a proposal decided), whichever channel asked. It is the only writer of audit
rows. It is a required subscriber: ``publish`` returns only once the row is committed, and a
row that cannot be written fails the gateway call, so a write done in the ERP is on record
before anything else of the turn happens (a crash right after still leaves it audited).
"""

from __future__ import annotations

import datetime as dt

from erp_agent.costs.prices import PriceTable
from erp_agent.events.stream import Audited, Event, TurnFinished
from erp_agent.store.base import Store
from erp_agent.store.records import AuditEvent, Interaction


class InteractionLog:
    """``prices``: each turn's cost is computed once, at the price of the day it ran, and
    stored with it (costs/prices.py); without a table no turn has a cost."""

    def __init__(self, store: Store, prices: PriceTable | None = None) -> None:
        self.store = store
        self.prices = prices

    async def __call__(self, event: Event) -> None:
        if not isinstance(event, TurnFinished):
            return
        await self.store.log_interaction(
            Interaction(
                turn_id=event.turn_id,
                conversation_id=event.conversation_id,
                user=event.user,
                org=event.org,
                message=event.message,
                model=event.model,
                outcome=event.outcome,
                shown=event.shown,
                prompt_tokens=event.prompt_tokens,
                cached_tokens=event.cached_tokens,
                completion_tokens=event.completion_tokens,
                tools=list(event.tools),
                latency_ms=round(event.latency_ms, 1),
                at=dt.datetime.fromisoformat(event.at),
                cache_write_tokens=event.cache_write_tokens,
                cost_micros=self._cost(event),
            )
        )

    def _cost(self, event: TurnFinished) -> int | None:
        if self.prices is None:
            return None
        return self.prices.cost_micros(
            event.model,
            prompt=event.prompt_tokens,
            cached=event.cached_tokens,
            cache_write=event.cache_write_tokens,
            completion=event.completion_tokens,
        )


class AuditLog:
    required = True  # see the module's docstring: the audit is not best-effort

    def __init__(self, store: Store) -> None:
        self.store = store

    async def __call__(self, event: Event) -> None:
        if not isinstance(event, Audited):
            return
        await self.store.record_event(
            AuditEvent(
                user=event.user,
                session_id=event.session_id,
                org=event.org,
                tool=event.tool,
                args_digest=event.args_digest,
                decision=event.decision,
                reason=event.reason,
                latency_ms=event.latency_ms,
                proposal_id=event.proposal_id or None,
                at=dt.datetime.fromisoformat(event.at),
                turn_id=event.turn_id or None,
            )
        )
