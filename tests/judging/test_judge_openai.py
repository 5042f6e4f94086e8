"""The `openai` judge against a real chat-completions server process on 127.0.0.1."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from pooling.judges.backends import DEFAULT_PROMPT, JudgeError, Pair, backend

SERVER = Path(__file__).with_name("chat_server.py")
KEY = "sk-test-5f0e1c2d9a8b7c6d"


class ChatServer:
    def __init__(self, process: subprocess.Popen, port: int):
        self.process = process
        self.base_url = f"http://127.0.0.1:{port}/v1"

    def stats(self) -> dict:
        with urllib.request.urlopen(self.base_url + "/stats", timeout=5) as response:
            return json.loads(response.read())


@pytest.fixture
def server():
    process = subprocess.Popen([sys.executable, str(SERVER)], stdout=subprocess.PIPE, text=True)
    try:
        yield ChatServer(process, int(process.stdout.readline()))
    finally:
        process.kill()
        process.wait()
        process.stdout.close()


def pair(doc_id: str, mode: str = "ok", delay: float = 0, **topic) -> Pair:
    return Pair(query_id="q1", doc_id=doc_id, title=topic.get("title", "wing flutter"),
                description=topic.get("description"), narrative=topic.get("narrative"),
                doc_title="A study", doc_text=f"doc_id={doc_id} mode={mode} delay={delay}")


def judge(server: ChatServer, pairs: list[Pair], **params):
    params = {"base_url": server.base_url, "model": "test-model", "retry_wait": 0.01, **params}
    judge = backend("openai", **params)
    try:
        return {v.doc_id: v for v in judge.judge(pairs)}
    finally:
        judge.close()


def test_grades_are_read_from_the_final_score_line_with_usage_and_probability(server):
    docs = ["d", "dd", "ddd", "dddd", "ddddd", "dddddd"]
    verdicts = judge(server, [pair(d) for d in docs])
    assert set(verdicts) == set(docs)
    for doc_id, verdict in verdicts.items():
        grade = len(doc_id) % 4
        assert (verdict.status, verdict.grade, verdict.error) == ("ok", grade, None)
        assert verdict.answer.endswith(f"##final score: {grade}")
        assert verdict.prompt_tokens == len(server.stats()["prompts"][doc_id].split())
        assert verdict.completion_tokens == 9
        # the server weighed the grade (0.7) against the next grade up, (grade + 1) % 4 (0.2)
        expected = {0: 0.2 / 0.9, 1: 1.0, 2: 1.0, 3: 0.7 / 0.9}[grade]
        assert verdict.probability == pytest.approx(expected)
        assert verdict.seconds > 0


def test_the_default_prompt_shows_the_topic_fields_it_has(server):
    judge(server, [pair("d1", description="flutter of thin wings", narrative=None)])
    prompt = server.stats()["prompts"]["d1"]
    assert "Query: wing flutter\nDescription: flutter of thin wings\nPassage: A study\n" in prompt
    assert "Narrative" not in prompt and "##final score: N" in prompt


def test_a_prompt_given_by_the_caller_replaces_the_default(server):
    prompt = "Topic {query_id}: {query}\nDocument {doc_id}: {doc_text}\nEnd with ##final score: N"
    verdicts = judge(server, [pair("d12")], prompt=prompt)
    assert verdicts["d12"].grade == 3
    assert server.stats()["prompts"]["d12"] == (
        "Topic q1: wing flutter\nDocument d12: doc_id=d12 mode=ok delay=0\n"
        "End with ##final score: N")


def test_an_unknown_placeholder_is_refused_before_any_request(server):
    with pytest.raises(JudgeError, match=r"\{passage_text\} \(line 2\)"):
        backend("openai", base_url=server.base_url, model="m",
                prompt="Query: {query}\nPassage: {passage_text}")
    assert server.stats()["requests"] == {}


def test_requests_in_flight_never_exceed_the_concurrency(server):
    docs = [f"d{i}" for i in range(12)]
    verdicts = judge(server, [pair(d, delay=0.3) for d in docs], concurrency=3)
    assert all(v.status == "ok" for v in verdicts.values()) and len(verdicts) == 12
    assert server.stats()["max_in_flight"] == 3


def test_a_429_is_retried_after_the_retry_after_it_gives(server):
    verdicts = judge(server, [pair("d429", mode="429")])
    assert (verdicts["d429"].status, verdicts["d429"].grade) == ("ok", 0)
    first, second = server.stats()["times"]["d429"]
    assert second - first >= 0.95  # Retry-After: 1, not retry_wait (0.01)


def test_a_500_is_retried_then_succeeds(server):
    verdicts = judge(server, [pair("d500", mode="500once")])
    assert (verdicts["d500"].status, verdicts["d500"].grade) == ("ok", 0)
    assert server.stats()["requests"]["d500"] == 2


def test_a_persistent_500_fails_the_pair_after_the_retries_saying_why(server):
    verdicts = judge(server, [pair("bad", mode="500always"), pair("good")], max_retries=2)
    bad = verdicts["bad"]
    assert (bad.status, bad.grade, bad.probability) == ("failed", None, None)
    assert "3 attempt(s)" in bad.error and "HTTP 500 (model crashed)" in bad.error
    assert "max_retries" in bad.error
    assert server.stats()["requests"]["bad"] == 3
    assert verdicts["good"].status == "ok"


def test_a_server_slower_than_the_timeout_is_retried_then_failed(server):
    start = time.monotonic()
    verdicts = judge(server, [pair("slow", mode="hang")], timeout=3, max_retries=1)
    assert verdicts["slow"].status == "failed"
    assert "no answer within 3 s" in verdicts["slow"].error
    assert "2 attempt(s)" in verdicts["slow"].error
    assert server.stats()["requests"]["slow"] == 2
    assert time.monotonic() - start < 100  # the 120 s hang was not waited out


def test_an_answer_without_a_grade_fails_with_its_text(server):
    verdicts = judge(server, [pair("odd", mode="malformed")])
    odd = verdicts["odd"]
    assert (odd.status, odd.grade) == ("failed", None)
    assert odd.answer == "I think it is quite relevant, really."
    assert "final score" in odd.error
    assert server.stats()["requests"]["odd"] == 1  # a readable reply is not asked again


def test_a_4xx_other_than_429_fails_the_pair_at_once(server):
    verdicts = judge(server, [pair("d401", mode="echo401")])
    assert verdicts["d401"].status == "failed" and "HTTP 401" in verdicts["d401"].error
    assert "check the key in $OPENAI_API_KEY" in verdicts["d401"].error
    assert server.stats()["requests"]["d401"] == 1


def test_a_server_refusing_logprobs_is_asked_again_without_them(server):
    verdicts = judge(server, [pair("dd", mode="nologprobs")])
    assert (verdicts["dd"].status, verdicts["dd"].grade, verdicts["dd"].probability) == (
        "ok", 2, None)
    assert server.stats()["requests"]["dd"] == 2
    assert server.stats()["logprobs_asked"]["dd"] is False


def test_a_200_that_is_not_a_chat_completion_fails_the_pair(server):
    verdicts = judge(server, [pair("html", mode="notjson")])
    assert verdicts["html"].status == "failed"
    assert verdicts["html"].answer == "<html>proxy login</html>"
    assert "OpenAI-compatible" in verdicts["html"].error


def test_the_key_is_sent_but_never_kept_shown_or_logged(server, monkeypatch, caplog):
    monkeypatch.setenv("JUDGE_TEST_KEY", KEY)
    caplog.set_level(logging.DEBUG)
    pairs = [pair("ok"), pair("crash", mode="500always"), pair("odd", mode="malformed"),
             pair("echo", mode="echo401"), pair("slow", mode="hang"), pair("html", mode="notjson")]
    judge_ = backend("openai", base_url=server.base_url, model="m", api_key_env="JUDGE_TEST_KEY",
                     timeout=3, max_retries=1, retry_wait=0.01)
    assert KEY not in repr(vars(judge_))
    verdicts = list(judge_.judge(pairs))
    judge_.close()
    assert server.stats()["authorization"] == [f"Bearer {KEY}"]
    assert {v.doc_id: v.status for v in verdicts} == {
        "ok": "ok", "crash": "failed", "odd": "failed", "echo": "failed", "slow": "failed",
        "html": "failed"}
    assert "[redacted]" in next(v.error for v in verdicts if v.doc_id == "echo")
    assert KEY not in repr(verdicts)
    assert "retry" in caplog.text.lower() or "attempt" in caplog.text  # retries were logged
    assert KEY not in caplog.text
    # a server that is down, and a key no header can carry: neither error shows the key
    down = backend("openai", base_url="http://127.0.0.1:1/v1", model="m",
                   api_key_env="JUDGE_TEST_KEY", max_retries=0)
    assert KEY not in repr(list(down.judge([pair("x")])))
    monkeypatch.setenv("JUDGE_TEST_KEY", KEY + "\n" + KEY)
    with pytest.raises(JudgeError) as raised:
        list(backend("openai", base_url=server.base_url, model="m",
                     api_key_env="JUDGE_TEST_KEY").judge([pair("x")]))
    assert "JUDGE_TEST_KEY" in str(raised.value) and KEY not in str(raised.value)


def test_no_authorization_header_is_sent_without_a_key(server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert judge(server, [pair("d")])["d"].status == "ok"
    assert server.stats()["authorization"] == [None]


def test_stopping_early_leaves_no_request_waiting(server):
    judge_ = backend("openai", base_url=server.base_url, model="m", concurrency=2)
    verdicts = judge_.judge([pair(f"d{i}", delay=0.2) for i in range(20)])
    first = next(verdicts)
    verdicts.close()
    judge_.close()
    assert first.status == "ok"
    assert sum(server.stats()["requests"].values()) <= 6  # not all 20


def test_the_default_prompt_asks_for_umbrela_grades():
    for text in ("0 = the passage has nothing to do with the query",
                 "3 = the passage is dedicated to the query and contains the exact answer",
                 "{topic}", "{passage}", "##final score: N"):
        assert text in DEFAULT_PROMPT
