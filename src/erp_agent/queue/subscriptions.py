"""Subscriptions on the queue: Celery beat (``erp-agent worker --beat``) sends one tick every
``ERP_AGENT_SUBSCRIPTIONS_TICK_SECONDS``; any worker runs it: every subscription due (each
claimed in the store, so it runs once however many workers look) and every delivery whose
backoff has passed. Ticks never overlap (the job's lock); a tick's message expires after one
interval, so ticks missed while every worker was busy do not pile up. Without a queue the web
server ticks itself (``keep_ticking``)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from erp_agent.config import Settings
from erp_agent.coordination.job_lock import held
from erp_agent.subscriptions.runner import SubscriptionRunner

if TYPE_CHECKING:
    from erp_agent.runtime import Runtime

RUN_SUBSCRIPTIONS = "erp_agent.run_subscriptions"
LEASE_SECONDS = 900.0  # a tick's lock, should its worker die mid-tick
log = logging.getLogger(__name__)


def subscription_schedule(settings: Settings) -> dict[str, dict[str, Any]]:
    every = settings.subscriptions.tick_seconds
    if every <= 0:
        return {}
    return {"subscriptions": {"task": RUN_SUBSCRIPTIONS, "schedule": every,
                              "options": {"expires": every}}}  # fmt: skip


async def run_subscriptions(runtime: Runtime) -> dict[str, Any]:
    """One tick: due subscriptions run, due deliveries retried."""
    if runtime.subscriptions is None:
        return {"skipped": "subscriptions need the agent's SQL store"}
    folder = Path(runtime.settings.data_dir) / "locks"
    async with held(
        "subscriptions", redis=runtime.redis, folder=folder, lease_seconds=LEASE_SECONDS
    ) as mine:
        if not mine:
            return {"skipped": "another tick is running"}
        report: dict[str, Any] = await SubscriptionRunner(runtime.subscriptions).tick()
        return report


async def keep_ticking(runtime: Runtime) -> None:
    """The web server's own ticks, for a deployment without a queue."""
    every = runtime.settings.subscriptions.tick_seconds
    if every <= 0 or runtime.subscriptions is None or runtime.settings.queue_url:
        return
    while True:
        await asyncio.sleep(every)
        try:
            await run_subscriptions(runtime)
        except Exception:  # a store or ERP hiccup: the next tick tries again
            log.warning("a subscriptions tick failed; the next one tries again", exc_info=True)
