"""A proposal's projection: what the ERP computed its submit or cancel will post (ledger
entries, stock movements, payment schedule) or what blocks it, for the record's version the
proposal carries (``gateway/projection.py``); every confirm surface shows it.

Revision ID: 0013
Revises: 0012
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("proposals", sa.Column("projection", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("proposals") as batch:
        batch.drop_column("projection")
