"""A candidate's parent: the candidate of the same run it was derived from (the team's own
earlier one, or a public one it fetched and adopted), decided by the lab when it is frozen.
Existing candidates keep no parent (nullable): nothing recorded says where they came from.

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("candidates") as batch:
        batch.add_column(sa.Column("parent_id", sa.String(64), nullable=True))
        batch.add_column(sa.Column("parent_kind", sa.String(16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("candidates") as batch:
        batch.drop_column("parent_kind")
        batch.drop_column("parent_id")
