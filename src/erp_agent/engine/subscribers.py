"""Subscribers of every turn's event stream that the runtime attaches to each engine.

``InteractionLog``: one row per finished turn in the store (its true outcome, the provider's
token counts, the tools called): the admin console's log, the usage chart and the monthly
budgets all read these rows, so there is one record of what a turn did and cost.
"""

from __future__ import annotations

import datetime as dt

from erp_agent.engine.events import Event, TurnFinished
from erp_agent.store.base import Store
from erp_agent.store.models import Interaction


class InteractionLog:
    def __init__(self, store: Store) -> None:
        self.store = store

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
                prompt_tokens=event.prompt_tokens,
                cached_tokens=event.cached_tokens,
                completion_tokens=event.completion_tokens,
                tools=list(event.tools),
                latency_ms=round(event.latency_ms, 1),
                at=dt.datetime.fromisoformat(event.at),
            )
        )
