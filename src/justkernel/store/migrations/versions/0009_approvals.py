"""Approval modes for a supervised team (issue #17, 4): waiting tool calls, remembered grants
and each team's mode; a team's status grows to hold `awaiting_approval` (17 characters, past
the 16 PostgreSQL held; SQLite never checked the length).

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "approval_requests",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("team_id", sa.String(64), nullable=False),
        sa.Column("member", sa.String(32), nullable=True),
        sa.Column("tool", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(32), nullable=True),
        sa.Column("args", sa.JSON(), nullable=False),
        sa.Column("tool_call_id", sa.String(200), nullable=False),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("decided_by", sa.String(100), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("remember", sa.Boolean(), nullable=False),
        sa.Column("grant_id", sa.String(64), nullable=True),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("decided_at", sa.String(40), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_approval_requests"),
    )
    op.create_index("ix_approval_requests_run_status", "approval_requests", ["run_id", "status"])
    op.create_table(
        "approval_grants",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("team_id", sa.String(64), nullable=False),
        sa.Column("tool", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(32), nullable=True),
        sa.Column("created_by", sa.String(100), nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("request_id", sa.String(64), nullable=True),
        sa.Column("revoked_by", sa.String(100), nullable=True),
        sa.Column("revoked_at", sa.String(40), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_approval_grants"),
    )
    op.create_table(
        "approval_modes",
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("team_id", sa.String(64), nullable=False),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("updated_by", sa.String(100), nullable=False),
        sa.Column("updated_at", sa.String(40), nullable=False),
        sa.PrimaryKeyConstraint("run_id", "team_id", name="pk_approval_modes"),
    )
    if op.get_bind().dialect.name != "sqlite":  # SQLite's VARCHAR has no length to grow
        op.alter_column(
            "teams", "status", type_=sa.String(24), existing_type=sa.String(16), nullable=False
        )


def downgrade() -> None:
    op.drop_table("approval_modes")
    op.drop_table("approval_grants")
    op.drop_index("ix_approval_requests_run_status", table_name="approval_requests")
    op.drop_table("approval_requests")
