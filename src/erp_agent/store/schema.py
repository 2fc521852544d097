"""Schema versions: Alembic driven from code (no alembic.ini), on a connection we already hold.

Alembic is imported only when a migration is due: a store already at the shipped head (every
start but the first after an upgrade) is checked with one query, which keeps `erp-agent ask`
from paying Alembic's import on every run.
"""

from __future__ import annotations

import functools
import re
from importlib import resources
from typing import TYPE_CHECKING

from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection

if TYPE_CHECKING:
    from alembic.config import Config

# The migration scripts ship inside the package; "package:folder" resolves wherever it is installed.
SCRIPT_LOCATION = "erp_agent.store:migrations"
VERSION_TABLE = "schema_version"


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic config for the store's migrations; with a connection, env.py runs on it.

    Developers write a new revision with, for example,
    ``command.revision(alembic_config(conn), "add x", autogenerate=True)`` on a migrated database.
    """
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", SCRIPT_LOCATION)
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str | None:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config()).get_current_head()


_REVISION = re.compile(r"^(down_revision|revision)\s*=\s*['\"]([^'\"]+)['\"]", re.MULTILINE)


@functools.cache
def shipped_head() -> str | None:
    """The head revision read from the migration scripts' text (no Alembic import); None when
    the scripts do not form one line of revisions (then Alembic decides)."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for script in (resources.files("erp_agent.store") / "migrations" / "versions").iterdir():
        if not script.name.endswith(".py"):
            continue
        found = dict(_REVISION.findall(script.read_text(encoding="utf-8")))
        if "revision" in found:
            revisions.add(found["revision"])
        if "down_revision" in found:
            parents.add(found["down_revision"])
    heads = revisions - parents
    return next(iter(heads)) if len(heads) == 1 else None


def current_revision(connection: Connection) -> str | None:
    if not inspect(connection).has_table(VERSION_TABLE):
        return None
    rows = connection.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalars().all()
    return str(rows[0]) if len(rows) == 1 else None


def load_migrations() -> None:
    """Import Alembic and read the migration scripts, before a migration takes the write lock:
    done under the lock, that cost (seconds on a loaded machine) is time other workers wait."""
    import alembic.command
    import alembic.runtime.migration  # noqa: F401
    from alembic.script import ScriptDirectory

    for _ in ScriptDirectory.from_config(alembic_config()).walk_revisions():
        pass


def upgrade_to_head(connection: Connection) -> None:
    """Apply every migration not yet applied (none if already at head), in the caller's
    transaction."""
    head = shipped_head()
    if head is not None and current_revision(connection) == head:
        return
    from alembic import command

    command.upgrade(alembic_config(connection), "head")
