"""Store migration 0002: the ``results`` table (one row per stored tool result, owned by its
user), written out in full so it keeps describing revision 0002 when the table changes later.

Until it is wired into ``erp_agent/store/migrations/versions/0002_results.py`` (which imports
``upgrade``/``downgrade`` from here and sets ``revision = "0002"``, ``down_revision = "0001"``),
nothing runs it; ``tests/erp_agent/test_results_store.py`` checks it builds ``tables.results``.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

REVISION = "0002"
DOWN_REVISION = "0001"


def upgrade() -> None:
    op.create_table(
        "results",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("user", sa.String(), nullable=False),
        sa.Column("tool", sa.String(), nullable=False),
        sa.Column("entity", sa.String(), nullable=True),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("total_rows", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_results"),
    )
    op.create_index("ix_results_user_created_at", "results", ["user", "created_at"])
    op.create_index("ix_results_created_at", "results", ["created_at"])


def downgrade() -> None:
    op.drop_table("results")
