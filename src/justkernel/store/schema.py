"""Table definitions (SQLAlchemy Core). Migrations in `migrations/versions/` create them.

Event payloads are stored as the exact JSON text that was appended, so an export and a
re-import reproduce every event byte for byte.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
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
    PrimaryKeyConstraint("run_id", "seq", name="pk_events"),
)
