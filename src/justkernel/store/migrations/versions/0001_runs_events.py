"""Runs and the append-only event log.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("read_only", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("last_seq", sa.Integer, nullable=False),
        sa.Column("meta", sa.JSON, nullable=False),
    )
    op.create_table(
        "events",
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(64), nullable=False),
        sa.Column("team", sa.String(64), nullable=True),
        sa.Column("ts", sa.String(40), nullable=False),
        sa.Column("schema_version", sa.Integer, nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("run_id", "seq", name="pk_events"),
    )
    op.create_index("ix_events_run_kind", "events", ["run_id", "kind"])


def downgrade() -> None:
    op.drop_index("ix_events_run_kind", table_name="events")
    op.drop_table("events")
    op.drop_table("runs")
