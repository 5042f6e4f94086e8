"""Stable pseudonyms for the people who judged: the same person has the same pseudonym in
every release of a store, and nothing in a release leads back to them.

A pseudonym is an HMAC-SHA256 of the assessor's id under a key kept in the store (made at
the first release, never released). Without the key, a guessed name cannot be checked
against a pseudonym; with the store, the organiser can still tell who is who. Automatic
judges are not people: they keep their names and are described by backend, model and prompt
hash.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from pooling.store.core import Store

KEY = "release_pseudonym_key"  # the store_meta row holding the key
PREFIX = "assessor-"


def pseudonym_key(store: Store) -> bytes:
    """The store's pseudonym key, made (and kept) on first use."""
    row = store.one("pseudonym key", "SELECT value FROM store_meta WHERE key = ?", [KEY])
    if row is None:
        with store.transaction():
            store.sql("make pseudonym key", "INSERT OR IGNORE INTO store_meta VALUES (?, ?)",
                      [KEY, secrets.token_hex(32)])
        row = store.one("pseudonym key", "SELECT value FROM store_meta WHERE key = ?", [KEY])
    assert row is not None
    return bytes.fromhex(row[0])


def pseudonym(key: bytes, assessor_id: str) -> str:
    """`assessor-` and 16 hex digits of HMAC-SHA256(key, assessor_id)."""
    return PREFIX + hmac.new(key, assessor_id.encode("utf-8"), hashlib.sha256).hexdigest()[:16]


def released_names(store: Store) -> dict[str, str]:
    """assessor_id -> the name it has in a release: a pseudonym for a person, its own id for
    an automatic judge. Every assessor that judged or is registered is listed."""
    key = pseudonym_key(store)
    rows = store.sql("assessor kinds",
                     "SELECT assessor_id, coalesce(kind, 'person') FROM assessors UNION "
                     "SELECT DISTINCT assessor_id, 'person' FROM judgments WHERE assessor_id "
                     "NOT IN (SELECT assessor_id FROM assessors)").fetchall()
    return {a: (a if kind == "model" else pseudonym(key, a)) for a, kind in rows}
