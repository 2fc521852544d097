"""Proposals bound to the record's version, and what crash reconciliation needs.

``base_modified`` is the record's ``modified`` as read when the proposal was made; ``claimed_at``
and ``checkpoint`` let a confirm interrupted by a crash be reconciled; ``superseded_by`` names
the proposal that replaced a stale (or edited) one. ``conversation_id`` gets an index: a
conversation's proposals are looked up when it is resumed.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("proposals", sa.Column("base_modified", sa.String(), nullable=True))
    op.add_column("proposals", sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("proposals", sa.Column("checkpoint", sa.JSON(), nullable=True))
    op.add_column("proposals", sa.Column("superseded_by", sa.String(), nullable=True))
    op.create_index("ix_proposals_conversation_id", "proposals", ["conversation_id"])


def downgrade() -> None:
    op.drop_index("ix_proposals_conversation_id", table_name="proposals")
    with op.batch_alter_table("proposals") as batch:
        for column in ("superseded_by", "checkpoint", "claimed_at", "base_modified"):
            batch.drop_column(column)
