"""The Celery application: one per process, configured from the settings at start."""

from __future__ import annotations

from typing import Any

from celery import Celery

RUN_TURN = "erp_agent.run_turn"
PING = "erp_agent.ping"  # `erp-agent doctor`: a worker takes work from the queue and answers
QUEUE = "erp-agent-turns"

celery = Celery("erp_agent")


def configure(
    broker_url: str,
    queue: str = QUEUE,
    *,
    schedule: dict[str, dict[str, Any]] | None = None,
    schedule_file: str | None = None,
) -> Celery:
    """``schedule``: Celery beat's entries (``queue.scheduled.beat_schedule``); their tasks
    go to the same queue as the turns (the default queue)."""
    celery.conf.update(
        beat_schedule=schedule or {},
        beat_schedule_filename=schedule_file or "celerybeat-schedule",
        broker_url=broker_url,
        task_routes={RUN_TURN: {"queue": queue}},
        # Acknowledged only once the turn is done: a worker that dies mid-turn (even kill -9)
        # leaves the message to the broker, which gives it to another worker.
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_default_queue=queue,
        task_serializer="json",
        accept_content=["json"],
        task_ignore_result=True,  # results live in the store, not in a Celery backend
        broker_connection_retry_on_startup=True,
        worker_hijack_root_logger=False,
        # Redis as a broker: an unacknowledged turn is handed out again after this long.
        broker_transport_options={"visibility_timeout": 900},
    )
    return celery
