"""The ``results`` table: one row per stored tool result, owned by its user.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


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
