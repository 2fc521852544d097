"""The terminal starts fast because commands are imported when they run (cli/_lazy.py).

Timing itself is measured by benchmarks/cli_start.py; these tests pin the structure that makes it
fast, which a loaded CI machine can check without flaking.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from erp_agent.cli import COMMANDS, app

# Heavy modules `erp-agent --help` must not import (each costs a noticeable part of a second).
NOT_FOR_HELP = (
    "erp_agent.runtime", "sqlalchemy", "pydantic", "httpx", "rich", "click", "demo_erp",
)  # fmt: skip
# Only an export, a migration, Redis, a PostgreSQL store or an embedding needs these; asking
# must not pay for them before it needs them.
NOT_FOR_ASK = (
    "openpyxl", "reportlab", "alembic", "redis", "sqlalchemy.dialects.postgresql", "numpy",
    "onnxruntime",
)  # fmt: skip

_PROBE = """
import json, sys
from typer.testing import CliRunner
from erp_agent.cli import app
argv = sys.argv[1:]
if argv[:1] == ["--load"]:
    from erp_agent.cli._lazy import LazyGroup
    import typer
    group = typer.main.get_group(app)
    assert isinstance(group, LazyGroup)
    group.get_command(None, argv[1])
else:
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, result.output
print(json.dumps(sorted(sys.modules)))
"""


def _modules_after(*argv: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, check=True
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


def _loaded(modules: set[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes))


def test_help_imports_no_command() -> None:
    modules = _modules_after("--help")
    assert _loaded(modules, NOT_FOR_HELP) == []
    assert not [m for m in modules if m.startswith("erp_agent.cli.") and m != "erp_agent.cli._lazy"]


def test_ask_does_not_import_export_libraries() -> None:
    modules = _modules_after("--load", "ask")
    assert "erp_agent.cli.ask" in modules
    assert _loaded(modules, NOT_FOR_ASK) == []


def test_help_lists_every_command_with_its_own_summary() -> None:
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in COMMANDS:
        assert command.name in result.output
        loaded = command.load()
        own = " ".join((loaded.help or "").split("\n\n")[0].split())
        assert own == command.short_help, f"{command.name}: update its summary in cli/__init__.py"


@pytest.mark.parametrize("name", [c.name for c in COMMANDS])
def test_each_command_answers_help(name: str) -> None:
    result = CliRunner().invoke(app, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output


def test_unknown_command_is_a_clear_error() -> None:
    result = CliRunner().invoke(app, ["no-such-command"])
    assert result.exit_code == 2
    assert "No such command" in result.output


_MIGRATE = """
import asyncio, sys
from erp_agent.store.sql_store import open_store
async def main():
    store = open_store("sqlite+aiosqlite:///" + sys.argv[1])
    await store.migrate()
    await store.close()
asyncio.run(main())
print("alembic" in sys.modules)
"""


def test_a_store_at_the_current_schema_starts_without_alembic(tmp_path: Path) -> None:
    def migrate() -> str:
        path = str(tmp_path / "store.sqlite")
        out = subprocess.run([sys.executable, "-c", _MIGRATE, path], capture_output=True,
                             text=True, check=True)  # fmt: skip
        return out.stdout.split()[-1]

    assert migrate() == "True"  # a new store is migrated by Alembic
    assert migrate() == "False"  # then every start checks the version with one query


def test_loading_a_command_keeps_the_collector_on_and_its_imports_out_of_it() -> None:
    probe = (
        "import gc, typer\n"
        "from erp_agent.cli import app\n"
        "typer.main.get_group(app).get_command(None, 'ask')\n"
        "print(gc.isenabled(), gc.get_freeze_count() > 10000)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True"]
