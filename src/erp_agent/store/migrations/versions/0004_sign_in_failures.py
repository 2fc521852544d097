"""The ``sign_in_failures`` table: failed sign-ins by account and client address (throttling).

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sign_in_failures",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_sign_in_failures"),
    )
    op.create_index("ix_sign_in_failures_at", "sign_in_failures", ["at"])
    op.create_index("ix_sign_in_failures_key_at", "sign_in_failures", ["key", "at"])


def downgrade() -> None:
    op.drop_table("sign_in_failures")
