"""Per-team A2A bearer tokens (stored as SHA-256 only).

Revision ID: 0005
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "a2a_tokens",
        sa.Column("token_sha256", sa.String(64), nullable=False),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("team_id", sa.String(64), nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("revoked_at", sa.String(40), nullable=True),
        sa.PrimaryKeyConstraint("token_sha256", name="pk_a2a_tokens"),
    )


def downgrade() -> None:
    op.drop_table("a2a_tokens")
