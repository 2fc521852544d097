"""The delta sync and the knowledge re-index as scheduled jobs on the queue: the schedule comes
from the settings (off at 0), each job runs the existing sync/index code as the sync user, is
idempotent and never runs twice at once; a real worker with --beat runs them on RabbitMQ."""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from cluster import REDIS_URL, Cluster
from pg_fixtures import pg_database

from conftest import DemoERP
from erp_agent.config import RetrievalSettings, Settings
from erp_agent.coordination.job_lock import held
from erp_agent.coordination.redis_link import RedisLink
from erp_agent.errors import ConfigError
from erp_agent.queue import scheduled
from erp_agent.retrieval.sync import watermark_name
from erp_agent.runtime import Runtime
from erp_agent.store.memory import MemoryStore

pytestmark = pytest.mark.anyio
TENANT = "default"


def settings_for(demo: DemoERP, data_dir: Path, **retrieval: object) -> Settings:
    chosen = {"embeddings": "none", "sync_user": "admin@demo.local", "sync_password": "demo"}
    return Settings(
        erp_url=demo.url,
        data_dir=str(data_dir),
        retrieval=RetrievalSettings(**(chosen | retrieval)),
    )


@pytest.fixture
async def runtime(demo_erp: DemoERP, tmp_path: Path) -> AsyncIterator[Runtime]:
    made = await Runtime.create(settings_for(demo_erp, tmp_path), store=MemoryStore())
    yield made
    made.retriever.index.close()
    await made.aclose()


def test_the_schedule_comes_from_the_settings_and_zero_is_off() -> None:
    assert scheduled.beat_schedule(Settings()) == {}
    both = scheduled.beat_schedule(
        Settings(scheduled_sync_seconds=300, scheduled_knowledge_seconds=3600)
    )
    assert both == {
        "sync-records": {
            "task": scheduled.SYNC_RECORDS,
            "schedule": 300,
            "options": {"expires": 300},
        },
        "reindex-knowledge": {
            "task": scheduled.REINDEX_KNOWLEDGE,
            "schedule": 3600,
            "options": {"expires": 3600},
        },
    }
    only_sync = scheduled.beat_schedule(Settings(scheduled_sync_seconds=60))
    assert list(only_sync) == ["sync-records"]


def erp_customers(demo: DemoERP) -> int:
    """How many customers the ERP itself holds (its REST API, as the sync user)."""
    with httpx.Client(base_url=demo.url, timeout=30) as erp:
        erp.post("/api/method/login", json={"usr": "admin@demo.local", "pwd": "demo"})
        reply = erp.get(
            "/api/method/frappe.client.get_count", params={"doctype": "Customer"}
        ).json()
    return int(reply["message"])


async def test_the_sync_job_fills_the_index_once_and_then_only_changes(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    index = runtime.retriever.index
    assert index.count(TENANT) == 0
    first = await scheduled.sync_records(runtime)
    assert first["upserted"] > 0
    assert index.count(TENANT) == first["upserted"]
    # Every customer of the ERP has its card, counted by the ERP itself.
    assert first["entities"]["customer"] == erp_customers(demo_erp)
    assert index.state(TENANT, watermark_name("customer"))
    again = await scheduled.sync_records(runtime)  # idempotent: nothing modified since
    assert again["upserted"] == 0
    assert index.count(TENANT) == first["upserted"]


async def test_a_sync_never_overlaps_another(runtime: Runtime) -> None:
    folder = Path(runtime.settings.data_dir) / "locks"
    async with held("sync-records", redis=None, folder=folder, lease_seconds=60) as mine:
        assert mine
        skipped = await scheduled.sync_records(runtime)
    assert skipped == {"skipped": "another sync is running"}
    assert runtime.retriever.index.count(TENANT) == 0


async def test_the_sync_job_needs_its_service_user(demo_erp: DemoERP, tmp_path: Path) -> None:
    settings = settings_for(demo_erp, tmp_path, sync_user=None, sync_password=None)
    made = await Runtime.create(settings, store=MemoryStore())
    try:
        with pytest.raises(ConfigError, match="ERP_AGENT_SYNC_USER"):
            await scheduled.sync_records(made)
    finally:
        made.retriever.index.close()
        await made.aclose()


async def test_the_knowledge_job_indexes_then_skips_what_is_unchanged(runtime: Runtime) -> None:
    first = await scheduled.reindex_knowledge(runtime)
    assert first["indexed"]
    assert first["chunks"] > 0
    again = await scheduled.reindex_knowledge(runtime)
    assert again["indexed"] == []
    assert again["unchanged"] == len(first["indexed"])


@pytest.mark.redis
async def test_the_redis_lock_is_one_holder_across_workers() -> None:
    prefix = f"erp-test-{uuid.uuid4().hex[:10]}"
    first, second = RedisLink(REDIS_URL, prefix=prefix), RedisLink(REDIS_URL, prefix=prefix)
    nowhere = Path("/nonexistent")  # the file fallback must not be used while Redis answers
    try:
        async with held("job", redis=first, folder=nowhere, lease_seconds=30) as mine:
            assert mine
            async with held("job", redis=second, folder=nowhere, lease_seconds=30) as theirs:
                assert not theirs
        async with held("job", redis=second, folder=nowhere, lease_seconds=30) as now_theirs:
            assert now_theirs  # released by its holder
        late = held("job", redis=first, folder=nowhere, lease_seconds=0.2)
        assert await late.__aenter__()
        await asyncio.sleep(0.4)  # the holder outlived its lease: another may run
        next_run = held("job", redis=second, folder=nowhere, lease_seconds=30)
        assert await next_run.__aenter__()
        await late.__aexit__(None, None, None)
        # The late holder's release left the next run's lock in place.
        assert await second.client.get(second.key("job", "job")) is not None
        await next_run.__aexit__(None, None, None)
        assert await second.client.get(second.key("job", "job")) is None
    finally:
        await first.aclose()
        await second.aclose()


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.slow
def test_a_worker_with_beat_runs_the_sync_on_schedule(demo_erp: DemoERP, tmp_path: Path) -> None:
    extra = {
        "ERP_AGENT_SCHEDULED_SYNC_SECONDS": "2",
        "ERP_AGENT_SYNC_USER": "admin@demo.local",
        "ERP_AGENT_SYNC_PASSWORD": "demo",
        "ERP_AGENT_EMBEDDINGS": "none",
    }
    with pg_database() as database_url:
        cluster = Cluster(demo_erp.url, database_url, tmp_path, extra=extra)
        try:
            cluster._start(["worker", "--beat", "--loglevel", "INFO"], "beat")
            deadline = time.monotonic() + 120
            runs: list[str] = []
            while time.monotonic() < deadline and len(runs) < 2:
                log = (tmp_path / "beat.log").read_text(errors="replace")
                runs = re.findall(
                    rf"{scheduled.SYNC_RECORDS}\[[^\]]+\] succeeded in [^:]+: (.*)", log
                )
                time.sleep(0.5)
            assert len(runs) >= 2, cluster.log("beat")
        finally:
            cluster.stop()
    upserted = [int(m) for m in re.findall(r"'upserted': (\d+)", " ".join(runs))]
    assert upserted[0] > 0  # the first run filled the index
    assert upserted[1] == 0  # the next found nothing modified since
