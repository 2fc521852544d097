"""Delta sync of ERP records into the index as fact cards.

Per entity: read changes since the stored ``modified`` watermark with a service credential,
render cards, and commit upserts, deletions (tombstones and cancelled documents) and the next
watermark in ONE index transaction. A crash anywhere before that commit leaves the old
watermark, so the next run re-reads the same changes; upserts by source key make the re-read
harmless. Nothing is lost and nothing is duplicated.

Cards are written keyword-only: search finds them as soon as the commit lands, and their vectors
are added afterwards by ``Backfill`` (at the end of ``sync`` by default, or in the background by
the server). A card whose checksum is unchanged is neither written nor embedded again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from erp_agent.catalog import Catalog, EntityKind
from erp_agent.connectors.base import Connector
from erp_agent.connectors.credentials import Credential
from erp_agent.retrieval.backfill import Backfill, Progress
from erp_agent.retrieval.cards import card_key, is_cancelled, render_card
from erp_agent.retrieval.documents import Batch
from erp_agent.retrieval.embeddings import Embedder
from erp_agent.retrieval.index import Index

log = logging.getLogger(__name__)

BATCH = 2000  # records per ERP page and per index transaction
# Entities synced at once: while the ERP answers one entity's read, another's cards are written.
# A sync where nothing changed is then a few concurrent round trips per entity, not their sum.
CONCURRENCY = 4

OnBatch = Callable[[str, int], None]  # (entity, records handled in this batch)


def watermark_name(entity: str) -> str:
    return f"watermark:{entity}"


def _at_mark_name(entity: str) -> str:
    """State entry: the ids whose ``modified`` equals the watermark, already indexed."""
    return f"watermark_ids:{entity}"


@dataclass
class EntityReport:
    entity: str
    upserted: int = 0
    deleted: int = 0
    batches: int = 0
    watermark: str | None = None


@dataclass
class SyncReport:
    entities: list[EntityReport] = field(default_factory=list)

    @property
    def upserted(self) -> int:
        return sum(e.upserted for e in self.entities)

    @property
    def deleted(self) -> int:
        return sum(e.deleted for e in self.entities)


def syncable(catalog: Catalog) -> list[str]:
    """Entities worth a card: masters and transactions (ledger rows are reports' business)."""
    return [e.name for e in catalog.entities.values() if e.kind is not EntityKind.LEDGER]


class RecordSync:
    """Keeps the cards of one tenant's ERP in step with the ERP."""

    def __init__(
        self,
        connector: Connector,
        catalog: Catalog,
        index: Index,
        embedder: Embedder | None,
        credential: Credential,
        *,
        tenant: str = "default",
        batch_size: int = BATCH,
        status: Progress | None = None,
        on_changed: Callable[[str, list[str]], Awaitable[object]] | None = None,
    ) -> None:
        self.connector = connector
        self.catalog = catalog
        self.index = index
        self.embedder = embedder
        self.credential = credential
        self.tenant = tenant
        self.batch_size = batch_size
        self.status = status or Progress()
        # Told (tenant, [entity]) when records of an entity changed: e.g. the response cache
        # drops the answers that read it.
        self.on_changed = on_changed

    async def _restricted(self, entity: str) -> frozenset[str]:
        """Canonical fields of ``entity`` the ERP's meta puts behind a permlevel above 0."""
        fields = await self.connector.describe(self.credential, entity)
        return frozenset(f.name for f in fields if f.permlevel > 0)

    async def sync(
        self,
        entities: Sequence[str] | None = None,
        *,
        full: bool = False,
        progress: OnBatch | None = None,
        embed: bool = True,
    ) -> SyncReport:
        """Every entity keyword-ready first; then, with ``embed``, the vectors of whatever is
        still pending (without it, ``backfill`` or the server's background job adds them)."""
        report = SyncReport()
        names = list(entities or syncable(self.catalog))
        phase = self.status.start("sync", len(names), "entities")
        gate = asyncio.Semaphore(CONCURRENCY)

        async def one(entity: str) -> EntityReport:
            async with gate:
                done = await self.sync_entity(entity, full=full, progress=progress)
            self.status.advance(phase, 1, entity)
            return done

        tasks = [asyncio.ensure_future(one(entity)) for entity in names]
        try:
            report.entities.extend(await asyncio.gather(*tasks))
        except BaseException:
            for task in tasks:  # one entity failed: stop the others (their watermarks hold)
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            self.status.finish(phase)
        if embed:
            await self.backfill()
        return report

    async def backfill(self) -> int:
        """Embed every card still without a vector; returns how many were embedded."""
        if self.embedder is None:
            return 0
        job = Backfill(self.index, self.embedder, tenant=self.tenant, progress=self.status)
        return await asyncio.to_thread(job.run)

    async def sync_entity(
        self, entity: str, *, full: bool = False, progress: OnBatch | None = None
    ) -> EntityReport:
        """Bring one entity up to date; ``full`` re-reads everything and drops cards whose
        record no longer exists (deletions older than the ERP's tombstones)."""
        spec = self.catalog.entity(entity)
        name = watermark_name(entity)
        # Fields behind a permission level (salary figures, costs, margins) never reach a card:
        # the sync reads as a service user, and a card's text is what search ranks on.
        restricted = await self._restricted(entity)
        policy = ",".join(sorted(restricted))
        if self.index.state(self.tenant, _policy_name(entity)) != policy:
            full = True  # cards written under another field policy are all rewritten
        mark = None if full else self.index.state(self.tenant, name)
        # The watermark is the largest `modified` the ERP itself stamped on a record we read
        # (never this machine's clock), read again with ">=" so that a record saved in the same
        # instant as the last one read is not skipped; what was already indexed at exactly that
        # instant is recognised by id and not indexed twice.
        at_mark = set(json.loads(self.index.state(self.tenant, _at_mark_name(entity)) or "[]"))
        if mark is None:
            at_mark = set()
        report = EntityReport(entity, watermark=mark)
        seen: set[str] = set()
        limit = self.batch_size
        while True:
            changes = await self.connector.changes_since(self.credential, entity, mark, limit=limit)
            fresh = [
                r
                for r in changes.records
                if not (str(r.get("_modified")) == mark and str(r["id"]) in at_mark)
            ]
            live = [
                {k: v for k, v in r.items() if k not in restricted}
                for r in fresh
                if not is_cancelled(self.connector, entity, r)
            ]
            gone = [
                card_key(entity, str(r["id"]))
                for r in fresh
                if is_cancelled(self.connector, entity, r)
            ]
            gone += [card_key(entity, record_id) for record_id in changes.deleted]
            if gone:
                # A record deleted before it was ever indexed (the ERP keeps its tombstone) is
                # no change to the index: an unchanged resync still writes nothing.
                held = set(self.index.keys(self.tenant, parent=entity))
                gone = [k for k in gone if k in held]
            cards = [
                render_card(spec, r, tenant=self.tenant, connector=self.connector) for r in live
            ]
            seen.update(c.key for c in cards)
            batch = Batch(self.tenant, upserts=cards, deletes=gone)
            batch.state[_policy_name(entity)] = policy
            marked = at_mark
            if changes.watermark is not None:
                batch.state[name] = changes.watermark
                ids = {
                    str(r["id"])
                    for r in changes.records
                    if str(r.get("_modified")) == changes.watermark
                }
                at_mark = (at_mark | ids) if changes.watermark == mark else ids
                batch.state[_at_mark_name(entity)] = json.dumps(sorted(at_mark))
            unchanged = (
                not cards
                and not gone
                and not full
                and changes.watermark == mark
                and at_mark == marked
                and self.index.state(self.tenant, _policy_name(entity)) == policy
            )
            if not unchanged:  # (nothing new: no write at all)
                # One transaction: the cards, the deletions and the watermark that covers them.
                await asyncio.to_thread(self.index.commit, batch)
            if self.on_changed is not None and (fresh or changes.deleted):
                await self.on_changed(self.tenant, [entity])
            report.upserted += len(cards)
            report.deleted += len(gone)
            report.batches += 1
            report.watermark = changes.watermark
            if progress is not None:
                progress(entity, len(fresh) + len(changes.deleted))
            if changes.complete:
                break
            # Reads are ">= watermark": a page full of one timestamp would repeat forever.
            limit = limit * 2 if changes.watermark == mark else self.batch_size
            mark = changes.watermark
        if full:
            stale = sorted(set(self.index.keys(self.tenant, parent=entity)) - seen)
            if stale:
                await asyncio.to_thread(self.index.commit, Batch(self.tenant, deletes=stale))
                report.deleted += len(stale)
        return report


def _policy_name(entity: str) -> str:
    """State entry: the fields left out of this entity's cards when they were written."""
    return f"restricted_fields:{entity}"


async def run_periodically(
    sync: RecordSync,
    interval: float,
    *,
    entities: Sequence[str] | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """The embedded scheduler: sync, sleep, repeat until ``stop`` is set (or the task is
    cancelled). A failed round is logged and retried next round; the watermark makes that safe."""
    stop = stop or asyncio.Event()
    while not stop.is_set():
        try:
            report = await sync.sync(entities)
            log.info("sync: %d cards upserted, %d removed", report.upserted, report.deleted)
        except Exception:
            log.exception("sync round failed; retrying in %.0f s", interval)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=interval)


def start_sync_task(
    sync: RecordSync, interval: float = 300.0, *, entities: Sequence[str] | None = None
) -> tuple[asyncio.Task[None], asyncio.Event]:
    """Start the periodic sync on the running loop; set the event to stop it gracefully."""
    stop = asyncio.Event()
    task = asyncio.create_task(run_periodically(sync, interval, entities=entities, stop=stop))
    return task, stop
