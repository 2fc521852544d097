"""The web server's tables join the store: signed-in sessions, admin settings and the
interaction log (with token usage) live under the same migrations on SQLite or PostgreSQL, so
every worker reads the same rows. Audit events name the turn that made them.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_UTC = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("audit_events") as batch:
        batch.add_column(sa.Column("turn_id", sa.String(), nullable=True))
        batch.create_index("ix_audit_events_turn_id", ["turn_id"])
    op.create_table(
        "web_sessions",
        sa.Column("token_hash", sa.String(), nullable=False),
        sa.Column("session_id", sa.String(), nullable=False),
        sa.Column("user", sa.String(), nullable=False),
        sa.Column("org", sa.String(), nullable=False),
        sa.Column("roles", sa.JSON(), nullable=False),
        sa.Column("allowed_tools", sa.JSON(), nullable=False),
        sa.Column("csrf", sa.String(), nullable=False),
        sa.Column("credential", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", _UTC, nullable=False),
        sa.Column("expires_at", _UTC, nullable=False),
        sa.PrimaryKeyConstraint("token_hash", name="pk_web_sessions"),
    )
    for column in ("session_id", "user", "expires_at"):
        op.create_index(f"ix_web_sessions_{column}", "web_sessions", [column])
    op.create_table(
        "admin_settings",
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("value", sa.JSON(), nullable=False),
        sa.Column("updated_at", _UTC, nullable=False),
        sa.PrimaryKeyConstraint("key", name="pk_admin_settings"),
    )
    op.create_table(
        "interactions",
        sa.Column("turn_id", sa.String(), nullable=False),
        sa.Column("conversation_id", sa.String(), nullable=False),
        sa.Column("user", sa.String(), nullable=False),
        sa.Column("org", sa.String(), nullable=False),
        sa.Column("at", _UTC, nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("outcome", sa.String(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("cached_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("tools", sa.JSON(), nullable=False),
        sa.Column("latency_ms", sa.Double(), nullable=False),
        sa.PrimaryKeyConstraint("turn_id", name="pk_interactions"),
    )
    op.create_index("ix_interactions_user", "interactions", ["user"])
    op.create_index("ix_interactions_at", "interactions", ["at"])
    op.create_index("ix_interactions_org_at", "interactions", ["org", "at"])


def downgrade() -> None:
    op.drop_table("interactions")
    op.drop_table("admin_settings")
    op.drop_table("web_sessions")
    with op.batch_alter_table("audit_events") as batch:
        batch.drop_index("ix_audit_events_turn_id")
        batch.drop_column("turn_id")
