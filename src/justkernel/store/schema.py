"""Table definitions (SQLAlchemy Core). Migrations in `migrations/versions/` create them.

Event payloads are stored as the exact JSON text that was appended, so an export and a
re-import reproduce every event byte for byte.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()

runs = Table(
    "runs",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("name", String(200), nullable=False),
    # live: a lab run; replay: an imported bundle; demo: the bundled recorded session.
    Column("mode", String(16), nullable=False, default="live"),
    Column("read_only", Boolean, nullable=False, default=False),
    Column("created_at", String(40), nullable=False),
    # The last sequence number handed out; incremented in the same transaction as the insert,
    # which is what keeps the per-run sequence gap-free under concurrent writers.
    Column("last_seq", Integer, nullable=False, default=0),
    Column("meta", JSON, nullable=False, default=dict),
)

events = Table(
    "events",
    metadata,
    Column("run_id", String(64), nullable=False),
    Column("seq", Integer, nullable=False),
    Column("kind", String(64), nullable=False),
    Column("team", String(64), nullable=True),
    Column("ts", String(40), nullable=False),
    Column("schema_version", Integer, nullable=False),
    Column("payload", Text, nullable=False),
    # set by writers whose work may be redone after a crash (a re-run tool call): the same key
    # in the same run is written once, so a resumed team leaves no duplicate event
    Column("dedup_key", String(200), nullable=True),
    PrimaryKeyConstraint("run_id", "seq", name="pk_events"),
)

teams = Table(
    "teams",
    metadata,
    Column("run_id", String(64), nullable=False),
    Column("id", String(64), nullable=False),  # stable: team-001, team-002, ...
    Column("number", Integer, nullable=False),
    Column("display_name", String(100), nullable=False),  # from the model: Qwen-001
    Column("model_preset", String(64), nullable=False),
    # idle | running | paused | awaiting_approval | done | exited
    Column("status", String(24), nullable=False),
    Column("status_reason", Text, nullable=True),
    Column("workspace", Text, nullable=False),
    Column("created_at", String(40), nullable=False),
    Column("exited_at", String(40), nullable=True),
    Column("config", JSON, nullable=False),
    PrimaryKeyConstraint("run_id", "id", name="pk_teams"),
)

experiments = Table(
    "experiments",
    metadata,
    Column("run_id", String(64), nullable=False),
    Column("team_id", String(64), nullable=False),
    Column("number", Integer, nullable=False),
    Column("plan", JSON, nullable=False),
    # planned | running | measured | failed (with the receipt's status in the plan's result)
    Column("status", String(24), nullable=False),
    Column("commit", String(64), nullable=True),
    Column("tree_sha256", String(64), nullable=True),
    Column("receipt_key", String(64), nullable=True),
    Column("cycles_sum", BigInteger, nullable=True),
    Column("created_at", String(40), nullable=False),
    Column("updated_at", String(40), nullable=False),
    PrimaryKeyConstraint("run_id", "team_id", "number", name="pk_experiments"),
)

board_messages = Table(
    "board_messages",
    metadata,
    Column("run_id", String(64), nullable=False),
    Column("id", String(64), nullable=False),
    Column("sender", String(64), nullable=False),  # a team id, "judger" or "lab"
    # the sender's own id for the message: a resend with the same id is the same message
    Column("sender_message_id", String(200), nullable=False),
    Column("recipient", String(64), nullable=False),  # a team id or "all"
    Column("type", String(24), nullable=False),  # message | candidate | experience | feedback
    Column("payload", JSON, nullable=False),
    Column("created_at", String(40), nullable=False),
    PrimaryKeyConstraint("run_id", "id", name="pk_board_messages"),
    UniqueConstraint("run_id", "sender", "sender_message_id", name="uq_board_sender_msg"),
)

deliveries = Table(
    "deliveries",
    metadata,
    Column("run_id", String(64), nullable=False),
    Column("message_id", String(64), nullable=False),
    Column("team_id", String(64), nullable=False),
    Column("status", String(16), nullable=False),  # pending | delivered | acked
    Column("delivered_by", String(200), nullable=True),  # the tool call that delivered it
    Column("created_at", String(40), nullable=False),
    Column("delivered_at", String(40), nullable=True),
    Column("acked_at", String(40), nullable=True),
    PrimaryKeyConstraint("run_id", "message_id", "team_id", name="pk_deliveries"),
)

candidates = Table(
    "candidates",
    metadata,
    Column("run_id", String(64), nullable=False),
    Column("id", String(64), nullable=False),
    Column("team_id", String(64), nullable=False),
    Column("source_sha256", String(64), nullable=False),  # the evaluator's source hash
    Column("archive_blob", String(64), nullable=False),  # frozen editable files (JSON) by SHA
    Column("commit", String(64), nullable=True),
    Column("receipt_key", String(64), nullable=False),
    Column("cycles_sum", BigInteger, nullable=True),
    Column("local_passed", Boolean, nullable=False),
    # frozen | under_review | rejected | nominated | submitted | official_pass | official_fail
    Column("status", String(24), nullable=False),
    Column("review", JSON, nullable=True),
    Column("created_at", String(40), nullable=False),
    Column("updated_at", String(40), nullable=False),
    # the candidate it was derived from (same run), decided by the lab when it was frozen
    Column("parent_id", String(64), nullable=True),
    Column("parent_kind", String(16), nullable=True),  # own | adopted
    PrimaryKeyConstraint("run_id", "id", name="pk_candidates"),
    UniqueConstraint("run_id", "source_sha256", name="uq_candidates_source"),
)

submissions = Table(
    "submissions",
    metadata,
    Column("id", String(100), nullable=False),
    Column("run_id", String(64), nullable=False),
    Column("candidate_id", String(64), nullable=False),
    Column("team_id", String(64), nullable=False),
    Column("source_sha256", String(64), nullable=False),
    Column("backend", String(24), nullable=False),
    Column("day", String(10), nullable=False),  # the quota day, Asia/Shanghai
    # submitting (reserved, maybe sent) | submitted | official_pass | official_fail | unknown
    Column("status", String(24), nullable=False),
    Column("result", JSON, nullable=True),
    Column("submitted_at", String(40), nullable=False),
    Column("finished_at", String(40), nullable=True),
    # sent with every try of this submission; stored before the first, so a re-send after a
    # crash is the same submission to the judge
    Column("idempotency_key", String(64), nullable=True),
    PrimaryKeyConstraint("id", name="pk_submissions"),
    # never the same frozen source twice to the same backend, in any run
    UniqueConstraint("source_sha256", "backend", name="uq_submissions_source"),
)

a2a_tokens = Table(
    "a2a_tokens",
    metadata,
    # SHA-256 of a team's A2A bearer token; the token itself is shown once and never stored
    Column("token_sha256", String(64), nullable=False),
    Column("run_id", String(64), nullable=False),
    Column("team_id", String(64), nullable=False),
    Column("created_at", String(40), nullable=False),
    Column("revoked_at", String(40), nullable=True),  # set when the team gets a new token
    PrimaryKeyConstraint("token_sha256", name="pk_a2a_tokens"),
)

# approval modes for a supervised team (issue #17, 4): a tool call waiting for a person, once
# per call (the id is derived from the call, so a resumed turn that asks again finds its row)
approval_requests = Table(
    "approval_requests",
    metadata,
    Column("id", String(64), nullable=False),
    Column("run_id", String(64), nullable=False),
    Column("team_id", String(64), nullable=False),
    Column("member", String(32), nullable=True),
    Column("tool", String(200), nullable=False),
    Column("kind", String(32), nullable=True),
    Column("args", JSON, nullable=False),  # scrubbed and clipped (core.approvals.card_args)
    Column("tool_call_id", String(200), nullable=False),
    Column("mode", String(16), nullable=False),
    Column("status", String(16), nullable=False),  # pending | approved | rejected
    Column("decided_by", String(100), nullable=True),
    Column("reason", Text, nullable=True),
    Column("remember", Boolean, nullable=False, default=False),
    Column("grant_id", String(64), nullable=True),
    Column("created_at", String(40), nullable=False),
    Column("decided_at", String(40), nullable=True),
    PrimaryKeyConstraint("id", name="pk_approval_requests"),
)

approval_grants = Table(
    "approval_grants",
    metadata,
    Column("id", String(64), nullable=False),
    Column("run_id", String(64), nullable=False),
    Column("team_id", String(64), nullable=False),
    Column("tool", String(200), nullable=False),
    Column("kind", String(32), nullable=True),  # null: any call of the tool
    Column("created_by", String(100), nullable=False),
    Column("created_at", String(40), nullable=False),
    Column("request_id", String(64), nullable=True),
    Column("revoked_by", String(100), nullable=True),
    Column("revoked_at", String(40), nullable=True),
    PrimaryKeyConstraint("id", name="pk_approval_grants"),
)

approval_modes = Table(
    "approval_modes",
    metadata,
    Column("run_id", String(64), nullable=False),
    Column("team_id", String(64), nullable=False),  # "*": the run's default for its teams
    Column("mode", String(16), nullable=False),  # read_only | ask | auto
    Column("updated_by", String(100), nullable=False),
    Column("updated_at", String(40), nullable=False),
    PrimaryKeyConstraint("run_id", "team_id", name="pk_approval_modes"),
)
