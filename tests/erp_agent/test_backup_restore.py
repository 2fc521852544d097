"""docs/deployment.md's backup and restore of the embedded store: an online SQLite backup taken
while the store is in use, restored into a fresh data directory, opens (migrations and all) with
every conversation, turn and proposal; and the documented metrics are every metric served."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from erp_agent.server.prometheus import Metrics
from erp_agent.store.records import Conversation, Proposal, Turn
from erp_agent.store.sql_store import open_store

pytestmark = pytest.mark.anyio
DOC = Path(__file__).resolve().parents[2] / "docs" / "deployment.md"


async def test_an_online_backup_restores_every_record(tmp_path: Path) -> None:
    live = tmp_path / "live" / "erp-agent.sqlite"
    live.parent.mkdir()
    store = open_store(f"sqlite+aiosqlite:///{live}")
    await store.migrate()
    for n in range(3):
        conversation = Conversation(f"conv_{n}", "sales@demo.local", "default", f"Question {n}")
        await store.create_conversation(conversation)
        await store.save_turn(Turn(f"turn_{n}", conversation.id, 1, f"How much {n}?"))
    proposal = Proposal(
        id="prop_1", user="sales@demo.local", session_id="sess_1", org="default",
        tool="lead.create", payload={"lead_name": "Jane"}, payload_hash="h",
        summary="Create lead Jane", conversation_id="conv_0",
    )  # fmt: skip
    await store.add_proposal(proposal)
    # The documented `sqlite3 FILE ".backup COPY"`, i.e. SQLite's online backup API, while the
    # store is open and writing.
    backup = tmp_path / "backup.sqlite"
    source = sqlite3.connect(live)
    with sqlite3.connect(backup) as target:
        source.backup(target)
    source.close()
    await store.save_turn(Turn("turn_late", "conv_0", 2, "after the backup"))
    await store.close()

    restored_path = tmp_path / "restored" / "erp-agent.sqlite"
    restored_path.parent.mkdir()
    restored_path.write_bytes(backup.read_bytes())
    restored = open_store(f"sqlite+aiosqlite:///{restored_path}")
    await restored.migrate()  # the server does this at start
    found = await restored.list_conversations("sales@demo.local")
    assert sorted(c.id for c in found) == ["conv_0", "conv_1", "conv_2"]
    assert [t.user_message for t in await restored.turns("conv_1")] == ["How much 1?"]
    assert [t.id for t in await restored.turns("conv_0")] == ["turn_0"]  # the later turn: not in it
    kept = await restored.get_proposal("prop_1")
    assert kept is not None
    assert kept.payload == {"lead_name": "Jane"}
    await restored.close()


def test_the_documented_metrics_are_every_metric_served() -> None:
    served = {m.name for m in Metrics().registry.collect()}
    documented = set(re.findall(r"\| `(erp_agent_[a-z_]+)` \|", DOC.read_text(encoding="utf-8")))
    assert served == documented, (served - documented, documented - served)


@pytest.mark.postgres
async def test_a_pg_dump_restores_every_record_into_an_empty_database() -> None:
    """The documented `pg_dump --format=custom` and `pg_restore --no-owner` of the scaled store."""
    import shutil
    import subprocess

    from pg_fixtures import pg_database
    from sqlalchemy.engine import make_url

    if shutil.which("pg_dump") is None:
        pytest.skip("pg_dump is not installed")

    def libpq(url: str) -> str:
        return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)

    with pg_database() as source_url, pg_database() as target_url:
        store = open_store(source_url)
        await store.migrate()
        conversation = Conversation("conv_pg", "sales@demo.local", "default", "Question")
        await store.create_conversation(conversation)
        await store.save_turn(Turn("turn_pg", conversation.id, 1, "How much was billed?"))
        await store.close()
        dump = subprocess.run(
            ["pg_dump", "--format=custom", libpq(source_url)],
            capture_output=True, check=True, timeout=120,
        )  # fmt: skip
        subprocess.run(
            ["pg_restore", "--no-owner", "-d", libpq(target_url)],
            input=dump.stdout, capture_output=True, check=True, timeout=120,
        )  # fmt: skip
        restored = open_store(target_url)
        await restored.migrate()  # nothing to do: the restored schema is current
        found = await restored.list_conversations("sales@demo.local")
        assert [c.id for c in found] == ["conv_pg"]
        assert [t.user_message for t in await restored.turns("conv_pg")] == ["How much was billed?"]
        await restored.close()
