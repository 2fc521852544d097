"""Plans per organisation, each turn's cost in the interaction log, and subscriptions (with
the credential they run as, their deliveries and the web app's inbox).

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("interactions") as batch:
        batch.add_column(
            sa.Column("cache_write_tokens", sa.Integer(), nullable=False, server_default="0")
        )
        batch.add_column(sa.Column("cost_micros", sa.BigInteger(), nullable=True))
    op.create_table(
        "plans",
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("label", sa.Text(), nullable=False),
        sa.Column("definition", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_plans"),
    )
    op.create_table(
        "org_plans",
        sa.Column("org", sa.String(), nullable=False),
        sa.Column("plan", sa.String(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("org", name="pk_org_plans"),
    )
    op.create_table(
        "subscriptions",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("user", sa.String(), nullable=False),
        sa.Column("org", sa.String(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("reading", sa.JSON(), nullable=False),
        sa.Column("schedule", sa.String(), nullable=False),
        sa.Column("timezone", sa.String(), nullable=False),
        sa.Column("condition", sa.JSON(), nullable=True),
        sa.Column("channels", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("status_message", sa.Text(), nullable=False),
        sa.Column("conversation_id", sa.String(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("next_run_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_run_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_outcome", sa.String(), nullable=False),
        sa.Column("last_value", sa.JSON(), nullable=True),
        sa.Column("condition_met", sa.Boolean(), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_subscriptions"),
    )
    op.create_index("ix_subscriptions_user", "subscriptions", ["user"])
    op.create_index(
        "ix_subscriptions_status_next_run_at", "subscriptions", ["status", "next_run_at"]
    )
    op.create_table(
        "standing_credentials",
        sa.Column("user", sa.String(), nullable=False),
        sa.Column("credential", sa.Text(), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("created_by", sa.String(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("user", name="pk_standing_credentials"),
    )
    op.create_table(
        "deliveries",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("subscription_id", sa.String(), nullable=False),
        sa.Column("user", sa.String(), nullable=False),
        sa.Column("channel", sa.String(), nullable=False),
        sa.Column("message", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("reference", sa.String(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_deliveries"),
    )
    op.create_index("ix_deliveries_subscription_id", "deliveries", ["subscription_id"])
    op.create_index("ix_deliveries_user", "deliveries", ["user"])
    op.create_index(
        "ix_deliveries_status_next_attempt_at", "deliveries", ["status", "next_attempt_at"]
    )
    op.create_table(
        "inbox",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("user", sa.String(), nullable=False),
        sa.Column("subscription_id", sa.String(), nullable=True),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("read_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_inbox"),
    )
    op.create_index("ix_inbox_user_created_at", "inbox", ["user", "created_at"])


def downgrade() -> None:
    for table in (
        "inbox", "deliveries", "standing_credentials", "subscriptions", "org_plans", "plans"
    ):  # fmt: skip
        op.drop_table(table)
    with op.batch_alter_table("interactions") as batch:
        batch.drop_column("cost_micros")
        batch.drop_column("cache_write_tokens")
