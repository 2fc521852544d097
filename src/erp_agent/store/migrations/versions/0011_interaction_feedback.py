"""The interaction log keeps what each answer showed (``shown``: a proposal is an answer that
proposed a write) and the user's feedback on it (``rating``, ``comment``, ``rated_at``), so the
admin console can filter by either.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("interactions") as batch:
        batch.add_column(sa.Column("shown", sa.String(), nullable=False, server_default=""))
        batch.add_column(sa.Column("rating", sa.String(), nullable=True))
        batch.add_column(sa.Column("comment", sa.Text(), nullable=True))
        batch.add_column(sa.Column("rated_at", sa.DateTime(timezone=True), nullable=True))
        batch.create_index("ix_interactions_rated_at", ["rated_at"])


def downgrade() -> None:
    with op.batch_alter_table("interactions") as batch:
        batch.drop_index("ix_interactions_rated_at")
        batch.drop_column("rated_at")
        batch.drop_column("comment")
        batch.drop_column("rating")
        batch.drop_column("shown")
