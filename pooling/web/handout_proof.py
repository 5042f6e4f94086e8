"""A crowd page's proof of what it handed out: a token the server signs and the answer brings.

A worker of a crowd round may answer only a document handed to them
(`pooling.crowds.queue_policy.may_answer`), and the judging server records every handout in
the store (`pooling.judging.handouts`) so that claims and that right survive a restart. The
record is written in the background (`pooling.web.judgment_writer.JudgmentWriter`: once no judgment
waits, within `HANDOUT_SECONDS` under load): a page is shown as soon as its document is
claimed in memory, and never waits for a commit. What a page shows
carries a token signed with a key of the server's over (round, worker, topic, document); the
page and the JSON API's `next` hand it out, and an answer that brings it back proves the
handout by itself, even when the server was killed before the record was stored. The key is
derived from the session key kept beside the store, so a restarted server still reads the
tokens it issued. Nobody can make a token for a document they were not shown, nor use
another worker's: the worker is signed in it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets

from pooling.web.sessions import same_token


class HandoutProof:
    """Issues and checks handout tokens with one key (module doc)."""

    PURPOSE = b"pooling: a crowd round's handout"

    def __init__(self, key: bytes | None = None):
        """key: a key of this purpose's own (`SessionSigner.derived_key(PURPOSE)`); None, a
        random one, so the tokens hold for this process only."""
        self._key = key if key is not None else secrets.token_bytes(32)

    def token(self, round_id: str, assessor_id: str, query_id: str, doc_id: str) -> str:
        """The token a page handing `doc_id` to `assessor_id` carries."""
        message = json.dumps([round_id, assessor_id, query_id, doc_id]).encode()
        digest = hmac.new(self._key, message, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()

    def proves(self, token: object, round_id: str, assessor_id: str, query_id: str,
               doc_id: str) -> bool:
        """Whether `token` (as sent: anything) is the one issued for this handout."""
        return isinstance(token, str) and len(token) <= 100 and same_token(
            self.token(round_id, assessor_id, query_id, doc_id), token)
