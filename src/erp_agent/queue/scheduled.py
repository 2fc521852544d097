"""The scheduled jobs, on the same Celery queue as background turns: the delta sync of ERP
records into the search index (as the configured sync user) and the knowledge re-index.

Celery beat (``erp-agent worker --beat``) sends them at the intervals in the settings; any
worker runs them. Each is idempotent (the sync reads only records modified since its
watermark, the re-index skips unchanged documents) and never runs twice at once: a run that
finds the job's lock held by another does nothing. A job's message expires after one interval,
so runs missed while every worker was busy do not pile up.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from erp_agent.config import Settings
from erp_agent.coordination.job_lock import held
from erp_agent.errors import ConfigError
from erp_agent.retrieval.sync import RecordSync
from erp_agent.runtime import Runtime

SYNC_RECORDS = "erp_agent.sync_records"
REINDEX_KNOWLEDGE = "erp_agent.reindex_knowledge"
# How long a job's lock lasts if its worker dies mid-run; a longer run may overlap the next,
# which the jobs' idempotence makes harmless.
LEASE_SECONDS = 3600.0


def beat_schedule(settings: Settings) -> dict[str, dict[str, Any]]:
    """Celery beat's schedule from the settings; a job with interval 0 is not scheduled."""
    jobs = {
        "sync-records": (SYNC_RECORDS, settings.scheduled_sync_seconds),
        "reindex-knowledge": (REINDEX_KNOWLEDGE, settings.scheduled_knowledge_seconds),
    }
    return {
        name: {"task": task, "schedule": every, "options": {"expires": every}}
        for name, (task, every) in jobs.items()
        if every > 0
    }


def _locks(runtime: Runtime) -> Path:
    return Path(runtime.settings.data_dir) / "locks"


async def sync_records(runtime: Runtime) -> dict[str, Any]:
    """One delta sync of every syncable entity, as the sync user; what changed."""
    retrieval = runtime.settings.retrieval
    if not retrieval.sync_user or retrieval.sync_password is None:
        raise ConfigError(
            "The scheduled sync has no sync user: set ERP_AGENT_SYNC_USER and "
            "ERP_AGENT_SYNC_PASSWORD."
        )
    async with held(
        "sync-records", redis=runtime.redis, folder=_locks(runtime), lease_seconds=LEASE_SECONDS
    ) as mine:
        if not mine:
            return {"skipped": "another sync is running"}
        credential = await runtime.connector.login(
            retrieval.sync_user, retrieval.sync_password.get_secret_value()
        )
        runner = RecordSync(
            runtime.connector,
            runtime.catalog,
            runtime.retriever.index,
            runtime.retriever.embedder,
            credential,
            tenant=retrieval.index_tenant,
            status=runtime.index_progress,
            on_changed=_cache_invalidation(runtime),
        )
        # Keyword-ready at once; the web server's background job adds the vectors.
        report = await runner.sync(embed=False)
    return {
        "upserted": report.upserted,
        "deleted": report.deleted,
        "entities": {e.entity: e.upserted for e in report.entities if e.upserted},
    }


async def reindex_knowledge(runtime: Runtime) -> dict[str, Any]:
    """The knowledge base re-indexed: the packaged documents, uploads and the site's own."""
    from erp_agent.assembly import knowledge_admin

    async with held(
        "reindex-knowledge",
        redis=runtime.redis,
        folder=_locks(runtime),
        lease_seconds=LEASE_SECONDS,
    ) as mine:
        if not mine:
            return {"skipped": "another re-index is running"}
        return await knowledge_admin(runtime).reindex()


def _cache_invalidation(runtime: Runtime) -> Any:
    """With a shared response cache, changed records drop the answers that read them."""
    if runtime.redis is None or not runtime.settings.response_cache_seconds:
        return None
    from erp_agent.coordination.response_cache import ResponseCache

    return ResponseCache(runtime.redis).invalidate
