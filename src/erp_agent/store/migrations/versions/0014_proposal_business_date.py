"""A proposal's business date: the date pinned when it was prepared (an eval's day, a demo's
``--today``), so its confirm runs on that date rather than the confirming gateway's. Rows
stored before have none and keep the user's clock.

Revision ID: 0014
Revises: 0013
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("proposals", sa.Column("business_date", sa.Date(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("proposals") as batch:
        batch.drop_column("business_date")
