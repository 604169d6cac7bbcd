"""An index for one team's events in order (the dashboard's per-team work log).

Revision ID: 0006
Revises: 0005
"""

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_events_run_team_seq", "events", ["run_id", "team", "seq"])


def downgrade() -> None:
    op.drop_index("ix_events_run_team_seq", table_name="events")
