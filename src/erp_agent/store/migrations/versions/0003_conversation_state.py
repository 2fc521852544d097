"""The ``conversation_state`` table: what a conversation is about, so follow-ups edit it.

One row per conversation: the last structured query and its result, the documents mentioned and
a pending clarification (see ``erp_agent.engine.conversation``).

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "conversation_state",
        sa.Column("conversation_id", sa.String(), nullable=False),
        sa.Column("state", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name="fk_conversation_state_conversation_id_conversations",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("conversation_id", name="pk_conversation_state"),
    )


def downgrade() -> None:
    op.drop_table("conversation_state")
