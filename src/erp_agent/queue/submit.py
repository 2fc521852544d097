"""The web side of the queue: send a stored turn's id to the workers."""

from __future__ import annotations

import asyncio

from erp_agent.config import Settings
from erp_agent.queue.celery_app import RUN_TURN, configure


class TurnQueue:
    def __init__(self, broker_url: str, queue: str) -> None:
        self.app = configure(broker_url, queue)

    @classmethod
    def from_settings(cls, settings: Settings) -> TurnQueue | None:
        return cls(settings.queue_url, settings.queue_name) if settings.queue_url else None

    async def enqueue(
        self, turn_id: str, session_id: str, message: str, conversation_id: str
    ) -> None:
        # Celery's producer is synchronous: a thread keeps the event loop free.
        await asyncio.to_thread(
            self.app.send_task, RUN_TURN, args=[turn_id, session_id, message, conversation_id]
        )
