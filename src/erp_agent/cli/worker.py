"""`erp-agent worker`: a queue worker running background turns and the scheduled jobs
(Celery, one task at a time per process: start several for more); with ``--beat`` it also
sends the scheduled jobs (run exactly one worker with ``--beat``)."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Annotated

import typer

from erp_agent.cli._common import console, fail, load_settings
from erp_agent.errors import ConfigError, ErpAgentError


def worker(
    model: Annotated[
        str | None,
        typer.Option("--model", help="offline, or provider:model (default: the configured one)."),
    ] = None,
    loglevel: Annotated[str, typer.Option("--loglevel", help="Celery's log level.")] = "INFO",
    beat: Annotated[
        bool,
        typer.Option(
            "--beat",
            help="Also run the scheduler (Celery beat) that sends the delta sync and the "
            "knowledge re-index at ERP_AGENT_SCHEDULED_SYNC_SECONDS and "
            "ERP_AGENT_SCHEDULED_KNOWLEDGE_SECONDS, and the subscriptions' tick at "
            "ERP_AGENT_SUBSCRIPTIONS_TICK_SECONDS; one worker of the deployment only.",
        ),
    ] = False,
) -> None:
    """Run background turns from the queue at ERP_AGENT_QUEUE_URL (Celery); start as many as
    you need."""
    try:
        settings = load_settings()
        if not settings.queue_url:
            raise ConfigError(
                "No queue is configured. Set ERP_AGENT_QUEUE_URL, e.g. "
                "amqp://guest:guest@127.0.0.1:5672// (RabbitMQ) or redis://127.0.0.1:6379/1."
            )
        from erp_agent.assembly import hand_over
        from erp_agent.queue import tasks  # noqa: F401 - registers the tasks the worker runs
        from erp_agent.queue.celery_app import configure
        from erp_agent.queue.scheduled import beat_schedule
        from erp_agent.queue.subscriptions import subscription_schedule

        schedule = {**beat_schedule(settings), **subscription_schedule(settings)} if beat else {}
        if beat and not schedule:
            raise ConfigError(
                "--beat has nothing to schedule: set ERP_AGENT_SCHEDULED_SYNC_SECONDS (e.g. 300) "
                "and/or ERP_AGENT_SCHEDULED_KNOWLEDGE_SECONDS (e.g. 3600)."
            )
        data_dir = Path(settings.data_dir)
        data_dir.mkdir(parents=True, exist_ok=True)
        app = configure(
            settings.queue_url,
            settings.queue_name,
            schedule=schedule,
            schedule_file=str(data_dir / "celerybeat-schedule"),
        )
        hand_over(model)
        queue = settings.queue_name
        console.print(f"erp-agent worker on queue [bold]{queue}[/] — model {model or 'configured'}")
        for name, entry in schedule.items():
            console.print(f"  scheduled: {name} every {entry['schedule']:g} s")
        # The solo pool: one turn at a time on this process's one event loop; scale by
        # starting more workers. A worker killed mid-turn leaves its turn to the others.
        app.worker_main(
            [
                "worker",
                "--pool=solo",
                f"--loglevel={loglevel}",
                "-Q",
                queue,
                "-n",
                f"erp-agent-{os.getpid()}@{socket.gethostname()}",
                "--without-gossip",
                "--without-mingle",
                *(["--beat"] if beat else []),
            ]
        )
    except ErpAgentError as exc:
        raise fail(exc) from exc
