"""The lab board (messages and per-team deliveries), frozen candidates, official submissions.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "board_messages",
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("sender", sa.String(64), nullable=False),
        sa.Column("sender_message_id", sa.String(200), nullable=False),
        sa.Column("recipient", sa.String(64), nullable=False),
        sa.Column("type", sa.String(24), nullable=False),
        sa.Column("payload", sa.JSON, nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.PrimaryKeyConstraint("run_id", "id", name="pk_board_messages"),
        sa.UniqueConstraint("run_id", "sender", "sender_message_id", name="uq_board_sender_msg"),
    )
    op.create_table(
        "deliveries",
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("message_id", sa.String(64), nullable=False),
        sa.Column("team_id", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("delivered_by", sa.String(200), nullable=True),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("delivered_at", sa.String(40), nullable=True),
        sa.Column("acked_at", sa.String(40), nullable=True),
        sa.PrimaryKeyConstraint("run_id", "message_id", "team_id", name="pk_deliveries"),
    )
    op.create_table(
        "candidates",
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("team_id", sa.String(64), nullable=False),
        sa.Column("source_sha256", sa.String(64), nullable=False),
        sa.Column("archive_blob", sa.String(64), nullable=False),
        sa.Column("commit", sa.String(64), nullable=True),
        sa.Column("receipt_key", sa.String(64), nullable=False),
        sa.Column("cycles_sum", sa.BigInteger, nullable=True),
        sa.Column("local_passed", sa.Boolean, nullable=False),
        sa.Column("status", sa.String(24), nullable=False),
        sa.Column("review", sa.JSON, nullable=True),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("updated_at", sa.String(40), nullable=False),
        sa.PrimaryKeyConstraint("run_id", "id", name="pk_candidates"),
        sa.UniqueConstraint("run_id", "source_sha256", name="uq_candidates_source"),
    )
    op.create_table(
        "submissions",
        sa.Column("id", sa.String(100), nullable=False),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("candidate_id", sa.String(64), nullable=False),
        sa.Column("team_id", sa.String(64), nullable=False),
        sa.Column("source_sha256", sa.String(64), nullable=False),
        sa.Column("backend", sa.String(24), nullable=False),
        sa.Column("day", sa.String(10), nullable=False),
        sa.Column("status", sa.String(24), nullable=False),
        sa.Column("result", sa.JSON, nullable=True),
        sa.Column("submitted_at", sa.String(40), nullable=False),
        sa.Column("finished_at", sa.String(40), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_submissions"),
        sa.UniqueConstraint("source_sha256", "backend", name="uq_submissions_source"),
    )


def downgrade() -> None:
    op.drop_table("submissions")
    op.drop_table("candidates")
    op.drop_table("deliveries")
    op.drop_table("board_messages")
