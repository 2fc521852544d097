"""Schema versions: Alembic driven from code (no alembic.ini), on a connection we already hold."""

from __future__ import annotations

from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection

# The migration scripts ship inside the package; "package:folder" resolves wherever it is installed.
SCRIPT_LOCATION = "erp_agent.store:migrations"
VERSION_TABLE = "schema_version"


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic config for the store's migrations; with a connection, env.py runs on it.

    Developers write a new revision with, for example,
    ``command.revision(alembic_config(conn), "add x", autogenerate=True)`` on a migrated database.
    """
    config = Config()
    config.set_main_option("script_location", SCRIPT_LOCATION)
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def current_revision(connection: Connection) -> str | None:
    context = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
    return context.get_current_revision()


def upgrade_to_head(connection: Connection) -> None:
    """Apply every migration not yet applied (none if already at head), in the caller's
    transaction."""
    command.upgrade(alembic_config(connection), "head")
