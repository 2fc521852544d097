"""The queue worker's side: one runtime per worker process (built on its first task, on one
event loop kept for the process's life), the task that runs a stored turn, and the scheduled
jobs (``queue/scheduled.py``: delta sync, knowledge re-index)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from erp_agent.queue import scheduled
from erp_agent.queue import subscriptions as subscription_jobs
from erp_agent.queue.celery_app import PING, RUN_TURN, celery
from erp_agent.server.state import ServerState

log = logging.getLogger(__name__)


class WorkerContext:
    def __init__(self) -> None:
        self.runner = asyncio.Runner()
        self.state: ServerState = self.runner.run(self._build())

    @staticmethod
    async def _build() -> ServerState:
        from erp_agent.assembly import assemble, configure, handed_over
        from erp_agent.server import settings_store

        model, base_url = handed_over()  # `erp-agent worker --model`
        state = (await assemble(configure(None, model, base_url), model)).state()
        await settings_store.load(state)  # the model an administrator chose, and the rest
        return state

    def run(self, coro_factory: Any) -> Any:
        return self.runner.run(coro_factory(self.state))


_context: list[WorkerContext] = []


def context() -> WorkerContext:
    if not _context:
        _context.append(WorkerContext())
    return _context[0]


@celery.task(name=RUN_TURN)  # type: ignore[untyped-decorator]
def run_turn(turn_id: str, session_id: str, message: str, conversation_id: str) -> str:
    from erp_agent.server import background, settings_store

    async def go(state: ServerState) -> str:
        await settings_store.sync(state)
        response = await background.execute(state, turn_id, session_id, message, conversation_id)
        return response.outcome if response is not None else "already finished"

    outcome: str = context().run(go)
    log.info("turn %s: %s", turn_id, outcome)
    return outcome


@celery.task(name=PING, bind=True)  # type: ignore[untyped-decorator]
def ping(task: Any, reply_to: str, token: str) -> None:
    """`erp-agent doctor` sent this through the turns' queue: the token goes back to the
    doctor's own queue (by its exchange, declared by the doctor), and no runtime is built."""
    with celery.producer_or_acquire() as producer:
        producer.publish(
            {"token": token, "worker": task.request.hostname},
            exchange=reply_to,
            routing_key=reply_to,
            serializer="json",
            declare=[],
        )


@celery.task(name=scheduled.SYNC_RECORDS)  # type: ignore[untyped-decorator]
def sync_records() -> dict[str, Any]:
    async def go(state: ServerState) -> dict[str, Any]:
        return await scheduled.sync_records(state.runtime)

    report: dict[str, Any] = context().run(go)
    log.info("scheduled sync: %s", report)
    return report


@celery.task(name=scheduled.REINDEX_KNOWLEDGE)  # type: ignore[untyped-decorator]
def reindex_knowledge() -> dict[str, Any]:
    async def go(state: ServerState) -> dict[str, Any]:
        return await scheduled.reindex_knowledge(state.runtime)

    report: dict[str, Any] = context().run(go)
    log.info("scheduled knowledge re-index: %s", report)
    return report


@celery.task(name=subscription_jobs.RUN_SUBSCRIPTIONS)  # type: ignore[untyped-decorator]
def run_subscriptions() -> dict[str, Any]:
    async def go(state: ServerState) -> dict[str, Any]:
        return await subscription_jobs.run_subscriptions(state.runtime)

    report: dict[str, Any] = context().run(go)
    log.info("subscriptions: %s", report)
    return report
