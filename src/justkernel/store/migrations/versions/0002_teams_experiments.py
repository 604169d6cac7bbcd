"""Teams, their experiments, and idempotent events (a dedup key per event).

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "teams",
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("display_name", sa.String(100), nullable=False),
        sa.Column("model_preset", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("status_reason", sa.Text, nullable=True),
        sa.Column("workspace", sa.Text, nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("exited_at", sa.String(40), nullable=True),
        sa.Column("config", sa.JSON, nullable=False),
        sa.PrimaryKeyConstraint("run_id", "id", name="pk_teams"),
    )
    op.create_table(
        "experiments",
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("team_id", sa.String(64), nullable=False),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("plan", sa.JSON, nullable=False),
        sa.Column("status", sa.String(24), nullable=False),
        sa.Column("commit", sa.String(64), nullable=True),
        sa.Column("tree_sha256", sa.String(64), nullable=True),
        sa.Column("receipt_key", sa.String(64), nullable=True),
        sa.Column("cycles_sum", sa.BigInteger, nullable=True),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("updated_at", sa.String(40), nullable=False),
        sa.PrimaryKeyConstraint("run_id", "team_id", "number", name="pk_experiments"),
    )

    with op.batch_alter_table("events") as batch:
        batch.add_column(sa.Column("dedup_key", sa.String(200), nullable=True))
    op.create_index("ux_events_dedup", "events", ["run_id", "dedup_key"], unique=True)


def downgrade() -> None:
    op.drop_index("ux_events_dedup", table_name="events")
    with op.batch_alter_table("events") as batch:
        batch.drop_column("dedup_key")
    op.drop_table("experiments")
    op.drop_table("teams")
