"""Defence in depth for the agents' checkpointer: no known secret value is written to it; and
its SQLite file's durability settings.

The source keeps secrets out of what the agents hold (a failed model call raises
`agents.errors.ModelCallFailed`, scrubbed, in place of the SDK's exception). This serializer
makes sure of it for every write, whatever a later layer might hold: each known secret value
(`settings.redaction`) is masked in the serialized bytes by as many `*` as it has bytes, so the
lengths inside the encoding (msgpack, JSON) stay right and the checkpoint still loads. It is
LangGraph's own serializer otherwise (a subclass, so its msgpack allowlist keeps working).
"""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from justkernel.settings.redaction import mask_bytes


class ScrubbingSerializer(JsonPlusSerializer):
    """LangGraph's serializer whose writes hold no known secret value."""

    def dumps_typed(self, obj: object) -> tuple[str, bytes]:
        kind, data = super().dumps_typed(obj)
        return kind, mask_bytes(data)


def scrub_checkpoints(saver: BaseCheckpointSaver[Any]) -> BaseCheckpointSaver[Any]:
    """`saver` writing through a `ScrubbingSerializer` (its default serializer replaced)."""
    if not isinstance(saver.serde, ScrubbingSerializer):
        saver.serde = ScrubbingSerializer()
    return saver


async def durable_enough(saver: AsyncSqliteSaver) -> None:
    """The checkpoint file as the lab's own database is kept (`store.database`): WAL with
    synchronous=NORMAL. Each step's checkpoint is still committed before the next step starts
    (the scheduler runs the graph with durability "sync"), and a committed transaction is in
    the WAL file, which survives the process being killed (kill -9); only a power loss or an OS
    crash may take back the last commits, the database intact. SQLite's default (FULL) paid an
    fsync per commit, several per agent step."""
    await saver.conn.execute("PRAGMA journal_mode=WAL")
    await saver.conn.execute("PRAGMA synchronous=NORMAL")
