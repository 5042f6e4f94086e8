"""Which sessions the server has ended: logged out, or begun before their person's access was
revoked (`pooling.judging.assessors.revoke`, or a new token issued).

Both facts live in the store, so they outlast a restart, and in memory, so checking a request's
session costs no SQL. The valid bearer tokens (by their hash) are kept beside them, so that a
JSON API request costs no SQL either; a revocation or a new token reloads them. The memory is loaded when the server starts, changed with each logout or
revocation made on the pages, and loaded again after an organiser's CLI session commits a
change (`pooling.web.store_api` calls `reload`).
"""

from __future__ import annotations

from datetime import UTC, timedelta

from pooling.judging.assessors import hash_token
from pooling.store.core import Store, utcnow
from pooling.web.gate import StoreGate
from pooling.web.sessions import MAX_AGE_SECONDS, Session


class SessionBook:
    """The ended sessions and every person's revocation time, as `is_over` asks them."""

    def __init__(self, gate: StoreGate):
        self.gate = gate
        self._ended: frozenset[str] = frozenset()
        self._revoked: dict[str, float] = {}
        self._tokens: dict[str, tuple[str, str]] = {}  # token sha256 -> (assessor_id, role)

    def load(self, store: Store) -> None:
        """Read both facts from the store (call it holding the store, e.g. `gate.run_sync`)."""
        ended = store.sql("ended sessions", "SELECT session_sha256 FROM ended_sessions").fetchall()
        revoked = store.sql("revocations", "SELECT assessor_id, revoked_at FROM assessors "
                                           "WHERE revoked_at IS NOT NULL").fetchall()
        tokens = store.sql("tokens", "SELECT token_sha256, assessor_id, role FROM assessors "
                                     "WHERE token_sha256 <> ''").fetchall()
        # Replaced whole, never changed in place: readers on the event loop need no lock.
        self._ended = frozenset(r[0] for r in ended)
        self._revoked = {a: at.replace(tzinfo=UTC).timestamp() for a, at in revoked}
        self._tokens = {h: (a, role) for h, a, role in tokens}

    def reload(self) -> None:
        """Load again after someone else (a CLI session on this server) changed the store."""
        self.gate.run_sync(self.load)

    def is_over(self, session: Session) -> bool:
        """Whether the server ended this session (its cookie may still be valid)."""
        return session.session_id in self._ended or self.revoked_since(session.assessor_id,
                                                                        session.issued)

    def token_owner(self, token: str) -> tuple[str, str] | None:
        """(assessor_id, role) of a valid bearer token as last loaded, or None (unknown here:
        ask the store, it may be newer than this book). A revoked or replaced token is gone
        from the book once the revocation is loaded, as a revoked session is."""
        return self._tokens.get(hash_token(token))

    def revoked_since(self, assessor_id: str, since: float) -> bool:
        """Whether the person's access was revoked at or after `since` (Unix seconds)."""
        revoked = self._revoked.get(assessor_id)
        return revoked is not None and revoked >= since

    def end(self, store: Store, session: Session) -> None:
        """Log a session out for good (call it holding the store); ended sessions older than a
        session can live are forgotten on the way."""
        now = utcnow()
        with store.transaction() as con:
            con.execute("DELETE FROM ended_sessions WHERE ended_at < ?",
                        [now - timedelta(seconds=MAX_AGE_SECONDS)])
            con.execute("INSERT OR IGNORE INTO ended_sessions VALUES (?, ?, ?)",
                        [session.session_id, session.assessor_id, now])
        self.load(store)
