"""The idempotency key a submission is sent with, stored before it is sent: a lab killed
between the judge's answer and its own record re-sends the same key after the restart.

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("idempotency_key", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.drop_column("idempotency_key")
