"""The web app's small parts: highlighting that escapes everything, signed sessions."""

from __future__ import annotations

from markupsafe import Markup

from pooling.web.handout_proof import HandoutProof
from pooling.web.highlight import highlight, query_terms
from pooling.web.sessions import SessionSigner, same_token


def test_highlight_escapes_every_character_and_marks_whole_words():
    text = 'Solar <b>panels</b> & "solarium" <script>alert(1)</script>'
    out = highlight(text, query_terms("solar panels"))
    assert isinstance(out, Markup)
    assert str(out) == ('<mark>Solar</mark> &lt;b&gt;<mark>panels</mark>&lt;/b&gt; &amp; '
                        '&#34;solarium&#34; &lt;script&gt;alert(1)&lt;/script&gt;')


def test_terms_never_match_inside_the_entities_escaping_makes():
    assert str(highlight("fish & chips < 5", ["amp", "lt"])) == "fish &amp; chips &lt; 5"
    assert str(highlight("AT&T", query_terms("t"))) == "AT&amp;T"  # one letter is no query term
    assert query_terms("The cost of a wind turbine", None) == ["turbine", "cost", "wind"]


def test_session_cookies_are_signed_and_carry_their_csrf_token(tmp_path):
    signer = SessionSigner.for_store(tmp_path / "c.duckdb")
    cookie, session = signer.issue("ann", "assessor")
    assert signer.read(cookie) == session
    again = SessionSigner.for_store(tmp_path / "c.duckdb")  # a restarted server: same key
    assert again.read(cookie) == session
    assert (tmp_path / "c.duckdb.session-key").stat().st_mode & 0o777 == 0o600
    payload, sig = cookie.rsplit(".", 1)
    forged = payload.replace(payload[:8], "W1wib3Ji") + "." + sig
    assert signer.read(forged) is None
    assert SessionSigner(b"k" * 32).read(cookie) is None
    assert signer.read("garbage") is None and signer.read(None) is None
    _, other = signer.issue("ann", "assessor")
    assert other.csrf != session.csrf  # one token per session
    assert same_token(session.csrf, session.csrf) and not same_token(session.csrf, None)


def test_a_handout_token_names_its_round_worker_topic_and_document_and_outlives_a_restart(
        tmp_path):
    def proof() -> HandoutProof:
        signer = SessionSigner.for_store(tmp_path / "c.duckdb")
        return HandoutProof(signer.derived_key(HandoutProof.PURPOSE))

    handed = ("c", "ann", "7", "d1")
    token = proof().token(*handed)
    assert proof().proves(token, *handed)  # a restarted server reads the tokens it issued
    for i, other in enumerate(("c2", "bob", "8", "d2")):  # any other field: another token
        changed = list(handed)
        changed[i] = other
        assert not proof().proves(token, *changed)
    # ids that would join alike under a naive separator stay apart
    assert proof().token("c", "a", "b\"", "d") != proof().token("c", "a", "b", "\"d")
    assert not HandoutProof(b"k" * 32).proves(token, *handed)  # another server's key
    assert not HandoutProof().proves(token, *handed)  # a key of another process's own
    for sent in (None, "", 7, ["x"], token + "=", token[:-1], "é" * 43, "\ud800" * 43, token * 3):
        assert not proof().proves(sent, *handed)
    signer = SessionSigner.for_store(tmp_path / "c.duckdb")  # the session key signs no token
    assert signer.derived_key(HandoutProof.PURPOSE) != signer.derived_key(b"another purpose")
