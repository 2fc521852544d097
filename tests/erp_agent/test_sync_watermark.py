"""Delta sync never misses a change: the watermark is the largest `modified` the ERP stamped
(read again with ">=", ties recognised by id), seeded data is never stamped after the moment of
seeding, and `erp-agent sync` fills the index that `serve`/`demo` search."""

from __future__ import annotations

import asyncio
import datetime as dt
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from retrieval_fixtures import CountingEmbedder
from typer.testing import CliRunner

from demo_erp.context import Settings as ErpSettings
from demo_erp.seed import seed
from demo_erp.server import start_in_thread
from erp_agent.catalog import load_catalog
from erp_agent.cli import app as cli_app
from erp_agent.config import Settings
from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.frappe.connector import ERPNextConnector
from erp_agent.retrieval.index_sqlite import SQLiteIndex
from erp_agent.retrieval.sync import RecordSync, watermark_name
from erp_agent.runtime import Runtime
from erp_agent.store.memory import MemoryStore


def max_modified(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        tables = [
            row[0]
            for row in conn.execute("select name from sqlite_master where type = 'table'")
            if row[0].startswith("tab")
        ]
        found = []
        for table in tables:
            columns = {c[1] for c in conn.execute(f'pragma table_info("{table}")')}
            if "modified" in columns:
                (value,) = conn.execute(f'select max(modified) from "{table}"').fetchone()
                if value:
                    found.append(str(value))
        return max(found)
    finally:
        conn.close()


def test_seeded_data_is_never_stamped_after_the_seeding_moment(tmp_path: Path) -> None:
    """Seeding at 10:00 on the demo's today: the day's documents look entered before 10:00,
    not at random working hours up to 17:00 (which live edits at 10:05 would sort before)."""
    today = dt.date(2026, 3, 2)
    moment = dt.datetime(2026, 3, 2, 10, 0)
    path = tmp_path / "demo.sqlite"
    seed(path, today=today, scale=0.02, invoices=200, now=moment)
    assert max_modified(path) <= moment.strftime("%Y-%m-%d %H:%M:%S.%f")


@pytest.fixture(scope="module")
def live_erp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A demo ERP seeded for the real today, as `erp-agent demo` does on its first run."""
    path = tmp_path_factory.mktemp("live-erp") / "demo.sqlite"
    seed(path, scale=0.02)
    server = start_in_thread(ErpSettings(db_path=str(path)))
    yield server.url, path
    server.stop()


@pytest.fixture
async def erp(live_erp: tuple[str, Path]) -> AsyncIterator[tuple[ERPNextConnector, Credential]]:
    connector = ERPNextConnector(live_erp[0])
    yield connector, await connector.login("admin@demo.local", "demo")
    await connector.aclose()


def lead_names(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [r[0] for r in conn.execute('select name from "tabLead" order by name')]
    finally:
        conn.close()


@pytest.mark.anyio
async def test_an_edit_right_after_seeding_is_synced(
    erp: tuple[ERPNextConnector, Credential], live_erp: tuple[str, Path], tmp_path: Path
) -> None:
    connector, admin = erp
    index = SQLiteIndex(tmp_path / "i.sqlite")
    sync = RecordSync(connector, load_catalog(), index, CountingEmbedder(fast=True), admin)
    await sync.sync(["lead"])
    name = lead_names(live_erp[1])[0]
    async with httpx.AsyncClient(base_url=live_erp[0]) as client:
        await client.post("/api/method/login", json={"usr": "admin@demo.local", "pwd": "demo"})
        edited = await client.put(
            f"/api/resource/Lead/{name}",
            json={"company_name": "Watermark Probe Ltd"},
        )
        assert edited.status_code == 200, edited.text
    report = await sync.sync(["lead"])
    assert report.upserted == 1
    found = index.fetch("default", [f"lead:{name}"])
    assert found
    assert "Watermark Probe Ltd" in found[0].text
    index.close()


@pytest.mark.anyio
async def test_ties_on_the_watermark_are_read_and_indexed_once(
    erp: tuple[ERPNextConnector, Credential], live_erp: tuple[str, Path], tmp_path: Path
) -> None:
    """Three leads saved in the same instant, read one page at a time: none is skipped by the
    page boundary, and the next sync indexes nothing again."""
    connector, admin = erp
    names = lead_names(live_erp[1])[1:4]
    stamp = dt.datetime.now().strftime("%Y-%m-%d %H:%M:%S.%f")
    conn = sqlite3.connect(live_erp[1])
    with conn:
        conn.executemany(
            'update "tabLead" set modified = ? where name = ?', [(stamp, n) for n in names]
        )
    conn.close()
    index = SQLiteIndex(tmp_path / "i.sqlite")
    sync = RecordSync(
        connector, load_catalog(), index, CountingEmbedder(fast=True), admin, batch_size=1
    )
    first = await sync.sync(["lead"])
    assert {f"lead:{n}" for n in names} <= set(index.keys("default", parent="lead"))
    assert first.upserted == len(lead_names(live_erp[1]))  # each lead once, ties included
    assert index.state("default", watermark_name("lead")) == stamp
    again = await sync.sync(["lead"])
    assert again.upserted == 0
    index.close()


def test_sync_command_fills_the_index_the_server_searches(
    live_erp: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ERP_AGENT_DATA_DIR", str(data))
    monkeypatch.setenv("ERP_AGENT_ERP_URL", live_erp[0])
    monkeypatch.setenv("ERP_AGENT_SYNC_USER", "admin@demo.local")
    monkeypatch.setenv("ERP_AGENT_SYNC_PASSWORD", "demo")
    monkeypatch.setenv("ERP_AGENT_EMBEDDINGS", "none")
    monkeypatch.delenv("ERP_AGENT_INDEX_URL", raising=False)
    result = CliRunner().invoke(cli_app, ["sync", "--entity", "lead"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output

    async def watermark() -> str | None:
        settings = Settings(erp_url=live_erp[0], data_dir=str(data))
        runtime = await Runtime.create(settings, store=MemoryStore())
        try:
            return runtime.retriever.index.state("default", watermark_name("lead"))
        finally:
            await runtime.aclose()

    assert asyncio.run(watermark())
