"""Per-team bearer tokens for the A2A endpoint.

A token is shown once, when it is issued, and only its SHA-256 is stored (table `a2a_tokens`
in the lab database), so neither the database, a log nor an export can give it back. Issuing a
new token for a team revokes the earlier ones: a leaked token is rotated with one command.
"""

from __future__ import annotations

import hashlib
import secrets

from sqlalchemy import Update, insert, select, update

from justkernel.core.records.tokens import TeamIdentity
from justkernel.store.database import Database
from justkernel.store.runs import utc_now_iso
from justkernel.store.schema import a2a_tokens

TOKEN_PREFIX = "jka2a_"  # recognisable in a secret scanner, and never a valid lab API token


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _revoke(run_id: str, team_id: str, now: str) -> Update:
    return (
        update(a2a_tokens)
        .where(
            a2a_tokens.c.run_id == run_id,
            a2a_tokens.c.team_id == team_id,
            a2a_tokens.c.revoked_at.is_(None),
        )
        .values(revoked_at=now)
    )


class TokenStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def issue(self, run_id: str, team_id: str) -> str:
        """A fresh token for the team (earlier ones stop working); returned only here."""
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        now = utc_now_iso()
        async with self._db.writer.begin() as conn:
            await conn.execute(_revoke(run_id, team_id, now))
            await conn.execute(
                insert(a2a_tokens).values(
                    token_sha256=token_digest(token),
                    run_id=run_id,
                    team_id=team_id,
                    created_at=now,
                    revoked_at=None,
                )
            )
        return token

    async def resolve(self, token: str) -> TeamIdentity | None:
        """The team a presented token speaks for, or None (unknown or revoked)."""
        if not token.startswith(TOKEN_PREFIX) or len(token) > 200:
            return None
        return await self._db.record(
            TeamIdentity,
            select(a2a_tokens.c.run_id, a2a_tokens.c.team_id).where(
                a2a_tokens.c.token_sha256 == token_digest(token),
                a2a_tokens.c.revoked_at.is_(None),
            ),
        )
