"""Alembic environment for the store. Run through ``erp_agent.store.schema``, never the CLI:
the caller hands over an open connection in ``config.attributes["connection"]``."""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from erp_agent.store.schema import VERSION_TABLE
from erp_agent.store.tables import metadata


def run_migrations(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        version_table=VERSION_TABLE,
        # SQLite cannot ALTER most things; batch mode rebuilds the table instead.
        render_as_batch=True,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


connection = context.config.attributes.get("connection")
if not isinstance(connection, Connection):
    raise RuntimeError(
        "The store's migrations run from Store.migrate() (or erp_agent.store.schema), which "
        "passes an open connection; the alembic command line is not set up for them."
    )
run_migrations(connection)
