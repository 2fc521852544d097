"""The ``erp_grants`` table: what the ERP granted a user at sign-in, reused for a short time.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "erp_grants",
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("user", sa.String(), nullable=False),
        sa.Column("grants", sa.JSON(), nullable=False),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name="pk_erp_grants"),
    )
    op.create_index("ix_erp_grants_user", "erp_grants", ["user"])
    op.create_index("ix_erp_grants_checked_at", "erp_grants", ["checked_at"])


def downgrade() -> None:
    op.drop_table("erp_grants")
