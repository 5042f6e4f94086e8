"""Sessions and CSRF tokens: signed cookies, so a server restart logs nobody out.

A session cookie holds (assessor_id, role, nonce, issued) signed with HMAC-SHA256 under a
random key kept beside the store (`<store>.session-key`, mode 0600). The CSRF token of a
session is derived from its nonce, so every POST must carry a value only pages of that
session know. The login form, used before any session exists, is protected by a
double-submit cookie instead.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

SESSION_COOKIE = "pooling_session"
LOGIN_COOKIE = "pooling_login"
KEY_FILE_SUFFIX = ".session-key"
MAX_AGE_SECONDS = 14 * 24 * 3600


@dataclass(frozen=True)
class Session:
    """Who is logged in, and the CSRF token every POST of theirs must carry."""

    assessor_id: str
    role: str
    csrf: str

    @property
    def is_organiser(self) -> bool:
        return self.role == "organiser"


class SessionSigner:
    """Issues and checks session cookies and CSRF tokens with one secret key."""

    def __init__(self, key: bytes):
        self._key = key

    @classmethod
    def for_store(cls, store_path: Path) -> SessionSigner:
        """The signer whose key lives beside the store (created on first use)."""
        return cls(_load_or_create_key(store_path.with_name(store_path.name + KEY_FILE_SUFFIX)))

    def issue(self, assessor_id: str, role: str) -> tuple[str, Session]:
        """A new session: the cookie value to set, and the session it stands for."""
        nonce = secrets.token_urlsafe(16)
        payload = _b64(json.dumps([assessor_id, role, nonce, int(time.time())]).encode())
        return f"{payload}.{self._sign(payload)}", Session(assessor_id, role, self._csrf(nonce))

    def read(self, cookie: str | None) -> Session | None:
        """The session a cookie stands for, or None when it is missing, forged or expired."""
        if not cookie or "." not in cookie:
            return None
        payload, sig = cookie.rsplit(".", 1)
        if not hmac.compare_digest(sig, self._sign(payload)):
            return None
        try:
            assessor_id, role, nonce, issued = json.loads(_unb64(payload))
        except (ValueError, TypeError):
            return None
        if time.time() - issued > MAX_AGE_SECONDS:
            return None
        return Session(assessor_id, role, self._csrf(nonce))

    def _sign(self, payload: str) -> str:
        return _b64(hmac.new(self._key, payload.encode(), hashlib.sha256).digest())

    def _csrf(self, nonce: str) -> str:
        return _b64(hmac.new(self._key, b"csrf:" + nonce.encode(), hashlib.sha256).digest())


def new_login_token() -> str:
    """The double-submit value for the login form (set as a cookie and a hidden field)."""
    return secrets.token_urlsafe(16)


def same_token(expected: str | None, given: str | None) -> bool:
    """Constant-time comparison; a missing value never matches."""
    return bool(expected) and bool(given) and hmac.compare_digest(str(expected), str(given))


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
