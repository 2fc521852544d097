"""The ``api_keys`` table: bearer keys for MCP, the OpenAI-compatible API and the relay.

Only the SHA-256 of a key is kept; a user key carries the user's ERP credential encrypted.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("key_hash", sa.String(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("user", sa.String(), nullable=False),
        sa.Column("org", sa.String(), nullable=False),
        sa.Column("label", sa.Text(), nullable=False),
        sa.Column("credential", sa.Text(), nullable=True),
        sa.Column("created_by", sa.String(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_api_keys"),
        sa.UniqueConstraint("key_hash", name="uq_api_keys_key_hash"),
    )
    op.create_index("ix_api_keys_user", "api_keys", ["user"])
    op.create_index("ix_api_keys_org", "api_keys", ["org"])


def downgrade() -> None:
    op.drop_table("api_keys")
