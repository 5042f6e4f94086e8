"""Sessions and CSRF tokens: signed cookies, so a server restart logs nobody out.

A session cookie holds (assessor_id, role, nonce, issued, active) signed with HMAC-SHA256
under a random key kept beside the store (`<store>.session-key`, mode 0600). A session ends
when it has been idle too long (`active` is renewed as it is used), at the latest after
`MAX_AGE_SECONDS`, and earlier when the server ends it (`pooling.web.session_book`: logged
out, or access revoked). The CSRF token of a session is derived from its nonce, so every
POST must carry a value only pages of that session know. The login form, used before any
session exists, is protected by a double-submit cookie instead.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SESSION_COOKIE = "pooling_session"
LOGIN_COOKIE = "pooling_login"
KEY_FILE_SUFFIX = ".session-key"
MAX_AGE_SECONDS = 14 * 24 * 3600  # a session's longest life, however busy
IDLE_SECONDS = 12 * 3600  # a session unused this long is over (`pooling serve --idle-hours`)
RENEW_SECONDS = 300  # `active` in a cookie may lag this much (or a tenth of the idle time)
# The session cookie's attributes wherever it is set: never readable by scripts, sent on
# top-level navigation from other sites (login links) but not on their POSTs.
SESSION_COOKIE_OPTIONS = {"httponly": True, "samesite": "lax", "path": "/"}


@dataclass(frozen=True)
class Session:
    """Who is logged in, the CSRF token every POST of theirs must carry, the session's id
    (the sha256 of its nonce) and when it began and was last renewed (Unix seconds)."""

    assessor_id: str
    role: str
    csrf: str
    session_id: str = ""
    issued: float = 0.0
    active: float = 0.0

    @property
    def is_organiser(self) -> bool:
        return self.role == "organiser"


class SessionSigner:
    """Issues, checks and renews session cookies and CSRF tokens with one secret key."""

    def __init__(self, key: bytes, *, idle_seconds: float = IDLE_SECONDS,
                 clock: Callable[[], float] = time.time):
        self._key = key
        self.idle_seconds = idle_seconds
        self.clock = clock

    @classmethod
    def for_store(cls, store_path: Path, **options: Any) -> SessionSigner:
        """The signer whose key lives beside the store (created on first use)."""
        return cls(_load_or_create_key(store_path.with_name(store_path.name + KEY_FILE_SUFFIX)),
                   **options)

    def derived_key(self, purpose: bytes) -> bytes:
        """A key of its own for another of the server's signatures (`purpose` names it), from
        the same secret: it survives a restart as the session key does, and a value signed
        for one purpose is never valid for another."""
        return hmac.new(self._key, b"derived:" + purpose, hashlib.sha256).digest()

    def issue(self, assessor_id: str, role: str, at: float | None = None) -> tuple[str, Session]:
        """A new session: the cookie value to set, and the session it stands for. at: when the
        token was checked (taken before the check, so a revocation that lands between the
        check and now still ends this session)."""
        now = round(self.clock() if at is None else at, 3)
        return self._cookie(assessor_id, role, secrets.token_urlsafe(16), now, now)

    def read(self, cookie: str | None) -> Session | None:
        """The session a cookie stands for, or None when it is missing, forged, idle too long
        or too old."""
        if not cookie or "." not in cookie:
            return None
        payload, sig = cookie.rsplit(".", 1)
        if not same_token(self._sign(payload), sig):
            return None
        try:
            assessor_id, role, nonce, issued, *rest = json.loads(_unb64(payload))
            active = float(rest[0]) if rest else float(issued)  # cookies from before renewal
            issued = float(issued)
        except (ValueError, TypeError):
            return None
        now = self.clock()
        if now - issued > MAX_AGE_SECONDS or now - active > self.idle_seconds:
            return None
        return Session(assessor_id, role, self._csrf(nonce), _session_id(nonce), issued, active)

    def renewal(self, cookie: str, session: Session) -> str | None:
        """The cookie with `active` set to now, when the one sent is due for renewal; else None."""
        now = round(self.clock(), 3)
        if now - session.active < min(RENEW_SECONDS, self.idle_seconds / 10):
            return None
        payload = cookie.rsplit(".", 1)[0]
        assessor_id, role, nonce, *_ = json.loads(_unb64(payload))
        return self._cookie(assessor_id, role, nonce, session.issued, now)[0]

    def _cookie(self, assessor_id: str, role: str, nonce: str, issued: float,
                active: float) -> tuple[str, Session]:
        payload = _b64(json.dumps([assessor_id, role, nonce, issued, active]).encode())
        return (f"{payload}.{self._sign(payload)}",
                Session(assessor_id, role, self._csrf(nonce), _session_id(nonce), issued, active))

    def _sign(self, payload: str) -> str:
        return _b64(hmac.new(self._key, payload.encode(), hashlib.sha256).digest())

    def _csrf(self, nonce: str) -> str:
        return _b64(hmac.new(self._key, b"csrf:" + nonce.encode(), hashlib.sha256).digest())


def _session_id(nonce: str) -> str:
    return hashlib.sha256(nonce.encode()).hexdigest()


def new_login_token() -> str:
    """The double-submit value for the login form (set as a cookie and a hidden field)."""
    return secrets.token_urlsafe(16)


def same_token(expected: str | None, given: str | None) -> bool:
    """Constant-time comparison; a missing value never matches."""
    # As bytes: compare_digest refuses str with characters beyond ASCII, which anyone can send.
    return bool(expected) and bool(given) and hmac.compare_digest(
        str(expected).encode("utf-8", "surrogatepass"), str(given).encode("utf-8", "surrogatepass"))


def _load_or_create_key(path: Path) -> bytes:
    try:
        key = path.read_bytes()
        if len(key) >= 32:
            return key
    except FileNotFoundError:
        pass
    key = secrets.token_bytes(32)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(key)
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(path)
    return key


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
