"""A judge behind any OpenAI-compatible chat-completions endpoint (vLLM, Ollama, llama.cpp
server, hosted APIs), over the standard library's http.client.

Each pair's prompt is one user message; the grade is read from the answer's final-score line
(see prompt.parse_grade). Requests run on a bounded thread pool, `concurrency` at a time.
429, 5xx, connection errors and timeouts are retried with exponential backoff (or the
server's Retry-After); any other 4xx fails the pair at once. The API key is read from the
environment variable `api_key_env` when a request is sent: it is never kept on the backend,
and it is cut out of every error, answer and log line.
"""

from __future__ import annotations

import http.client
import json
import logging
import math
import os
import random
import threading
import time
import urllib.parse
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, as_completed, wait
from email.utils import parsedate_to_datetime
from typing import Any

from pooling.judges.backends.base import (
    FAILED,
    OK,
    Ask,
    JudgeError,
    Pair,
    Reply,
    Verdict,
    at_least,
    failed,
    ok,
    require,
)
from pooling.judges.backends.prompt import (
    DEFAULT_MAX_GRADE,
    DEFAULT_PROMPT,
    check_template,
    parse_grade,
    render,
)

log = logging.getLogger(__name__)

MAX_WAIT = 120.0  # longest pause between attempts, whatever Retry-After asks
_REDACTED = "[redacted]"


class OpenAIChatBackend:
    """Grades pairs by asking a chat model; see the module docstring."""

    name = "openai"

    def __init__(
        self,
        prompt: str | None = None,
        *,
        base_url: str,
        model: str,
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = 4,
        timeout: float = 60.0,
        max_retries: int = 5,
        retry_wait: float = 1.0,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        max_grade: int = DEFAULT_MAX_GRADE,
        relevant_from: int = 1,
        logprobs: bool = True,
    ):
        require(self.name, "base_url", base_url, "base_url=http://127.0.0.1:8000/v1")
        require(self.name, "model", model, "model=Qwen/Qwen2.5-7B-Instruct")
        at_least(self.name, "concurrency", concurrency, 1)
        at_least(self.name, "timeout", timeout, 0, strict=True)
        at_least(self.name, "max_retries", max_retries, 0)
        at_least(self.name, "retry_wait", retry_wait, 0)
        at_least(self.name, "max_tokens", max_tokens, 1)
        at_least(self.name, "max_grade", max_grade, 1)
        self.template = DEFAULT_PROMPT if prompt is None else prompt
        check_template(self.template)
        url = urllib.parse.urlsplit(base_url.strip())
        try:
            url.port  # noqa: B018  (a bad port raises here, not at the first request)
        except ValueError:
            url = url._replace(netloc="")
        if url.scheme not in ("http", "https") or not url.hostname:
            raise JudgeError(f"base_url {_shown_url(url)!r} is not an http(s) URL; give one like "
                             "http://127.0.0.1:8000/v1 (the part before /chat/completions)")
        self.url = url
        self.where = f"{model} at {_shown_url(url)}"
        self.path = url.path.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key_env = api_key_env
        self.concurrency = concurrency
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_wait = retry_wait
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_grade = max_grade
        self.relevant_from = relevant_from
        self.logprobs = logprobs
        self._local = threading.local()
        self._connections: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    # -- the batch ---------------------------------------------------------------------------

    def judge(self, pairs: Sequence[Pair]) -> Iterator[Verdict]:
        """Verdicts in the order answers arrive. Closing the iterator early stops retries and
        waits for the requests in flight (at most one timeout)."""
        self._key()  # a key no HTTP header can carry is refused before any request
        stop = threading.Event()
        pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="judge-openai")
        pending: set[Future[Verdict]] = set()
        todo = iter(pairs)

        def fill() -> None:  # a short queue, so stopping early abandons little work
            for pair in todo:
                pending.add(pool.submit(self._judge_one, pair, stop))
                if len(pending) >= 2 * self.concurrency:
                    return

        try:
            fill()
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    pending.discard(future)
                    yield future.result()
                fill()
        finally:
            stop.set()
            pool.shutdown(wait=True, cancel_futures=True)

    def close(self) -> None:
        with self._lock:
            connections, self._connections = self._connections, []
        for connection in connections:
            connection.close()

    # -- one pair ----------------------------------------------------------------------------

    def _judge_one(self, pair: Pair, stop: threading.Event) -> Verdict:
        start = time.monotonic()
        data, problem = self._exchange(render(self.template, pair), stop, logprobs=True,
                                       what=f"judging {pair.query_id}/{pair.doc_id}")
        if data is None:
            return failed(pair, problem or "no answer", seconds=time.monotonic() - start)
        return self._verdict(pair, data, time.monotonic() - start)

    def ask(self, asks: Sequence[Ask]) -> Iterator[Reply]:
        """Replies to text requests in the order they arrive, `concurrency` in flight, with
        the retries and limits of `judge`."""
        self._key()
        stop = threading.Event()
        pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="ask-openai")
        try:
            futures = [pool.submit(self._ask_one, a, stop) for a in asks]
            for future in as_completed(futures):
                yield future.result()
        finally:
            stop.set()
            pool.shutdown(wait=True, cancel_futures=True)

    def _ask_one(self, ask: Ask, stop: threading.Event) -> Reply:
        start = time.monotonic()
        data, problem = self._exchange(ask.prompt, stop, logprobs=False,
                                       what=f"asking {ask.query_id}/{ask.key}")
        if data is None:
            return Reply(ask.query_id, ask.key, FAILED, None, problem,
                         seconds=time.monotonic() - start)
        try:
            reply = json.loads(data)
            content = _content(reply["choices"][0]["message"].get("content"))
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            return Reply(ask.query_id, ask.key, FAILED, None,
                         f"{self.where} answered HTTP 200 without a chat completion; check that "
                         "base_url points at an OpenAI-compatible /v1 endpoint",
                         seconds=time.monotonic() - start)
        usage = reply.get("usage") if isinstance(reply.get("usage"), dict) else {}
        return Reply(ask.query_id, ask.key, OK, self._redact(content), None,
                     _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")),
                     time.monotonic() - start)

    def _exchange(self, text: str, stop: threading.Event, *, logprobs: bool,
                  what: str) -> tuple[bytes | None, str | None]:
        """One prompt sent until the server answers 200 (the body), or why it gave up: the
        retries, backoff, Retry-After and logprobs fallback every request shares."""
        attempt = 0
        while True:
            asked_logprobs = logprobs and self.logprobs
            retry_after: float | None = None
            try:
                status, headers, data = self._post(self._body(text, asked_logprobs))
            except TimeoutError:
                problem = f"no answer within {self.timeout:g} s"
            except (OSError, http.client.HTTPException) as exc:
                problem = f"connection failed ({type(exc).__name__}: {self._redact(str(exc))})"
            else:
                if status == 200:
                    return data, None
                said = self._said(data)
                if status == 400 and asked_logprobs and "logprob" in said.lower():
                    self.logprobs = False  # this server refuses logprobs: ask without them
                    log.info("%s refuses logprobs; asking without them", self.where)
                    continue
                if status != 429 and status < 500:
                    return None, (f"{self.where} refused the request with HTTP {status} "
                                  f"({said}); {self._what_to_check(status)}")
                problem = f"HTTP {status} ({said})"
                retry_after = _retry_after(headers.get("Retry-After"))
            if attempt >= self.max_retries or stop.is_set():
                return None, (f"{self.where} gave no usable answer in {attempt + 1} attempt(s), "
                              f"the last {problem}; check that the server is up, or raise "
                              "timeout or max_retries")
            pause = (retry_after if retry_after is not None
                     else self.retry_wait * 2**attempt * random.uniform(1.0, 1.25))
            pause = min(pause, MAX_WAIT)
            attempt += 1
            log.debug("%s: %s; attempt %d in %.2f s", what, problem, attempt + 1, pause)
            if stop.wait(pause):
                return None, "judging stopped before the server answered"

    def _what_to_check(self, status: int) -> str:
        if status in (401, 403):
            return f"check the key in ${self.api_key_env}"
        if status in (404, 405):
            return "check base_url (it ends before /chat/completions) and the model name"
        if status == 413:
            return "the prompt is too long for the server; shorten the documents or the prompt"
        return "check the model name and the other parameters"

    def _body(self, text: str, logprobs: bool) -> bytes:
        body: dict[str, Any] = {"model": self.model, "temperature": self.temperature,
                                "messages": [{"role": "user", "content": text}]}
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = min(20, self.max_grade + 2)
        return json.dumps(body).encode("utf-8")

    def _verdict(self, pair: Pair, data: bytes, seconds: float) -> Verdict:
        try:
            reply = json.loads(data)
            choice = reply["choices"][0]
            content = _content(choice["message"].get("content"))
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            return failed(pair, f"{self.where} answered HTTP 200 without a chat completion; "
                          "check that base_url points at an OpenAI-compatible /v1 endpoint",
                          answer=self._redact(data.decode("utf-8", "replace"))[:2000],
                          seconds=seconds)
        usage = reply.get("usage") if isinstance(reply.get("usage"), dict) else {}
        tokens = {"prompt_tokens": _count(usage.get("prompt_tokens")),
                  "completion_tokens": _count(usage.get("completion_tokens"))}
        answer = self._redact(content)
        grade, problem = parse_grade(answer, self.max_grade)
        if grade is None:
            return failed(pair, f"{self.where}: {problem}; the prompt must ask for that line",
                          answer=answer, seconds=seconds, **tokens)
        probability = grade_probability(choice.get("logprobs"), grade, self.max_grade,
                                        self.relevant_from)
        return ok(pair, grade, probability=probability, answer=answer, seconds=seconds, **tokens)

    # -- HTTP --------------------------------------------------------------------------------

    def _post(self, body: bytes) -> tuple[int, http.client.HTTPMessage, bytes]:
        connection = self._connection()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = self._key()
        if key:
            headers["Authorization"] = "Bearer " + key
        try:
            connection.request("POST", self.path, body, headers)
            response = connection.getresponse()
            data = response.read()
        except BaseException:
            self._drop(connection)
            raise
        if response.will_close:
            self._drop(connection)
        return response.status, response.headers, data

    def _connection(self) -> http.client.HTTPConnection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            kind = (http.client.HTTPSConnection if self.url.scheme == "https"
                    else http.client.HTTPConnection)
            connection = kind(self.url.hostname, self.url.port, timeout=self.timeout)
            self._local.connection = connection
            with self._lock:
                self._connections.append(connection)
        return connection

    def _drop(self, connection: http.client.HTTPConnection) -> None:
        connection.close()
        self._local.connection = None
        with self._lock:
            if connection in self._connections:
                self._connections.remove(connection)

    def _key(self) -> str | None:
        """The key from the environment (None when unset: local servers need none)."""
        key = os.environ.get(self.api_key_env, "").strip()
        if key and not all(32 < ord(c) < 127 for c in key):
            raise JudgeError(f"the key in ${self.api_key_env} has characters an HTTP header "
                             "cannot carry (spaces, line breaks, non-ASCII); set it again")
        return key or None

    def _said(self, data: bytes) -> str:
        """The server's error message, short, on one line, without the key."""
        text = data.decode("utf-8", "replace")
        try:
            error = json.loads(text).get("error")
            text = error.get("message", text) if isinstance(error, dict) else str(error or text)
        except (ValueError, AttributeError):
            pass
        text = " ".join(self._redact(text).split())
        return (text[:200] + "...") if len(text) > 200 else (text or "no message")

    def _redact(self, text: str) -> str:
        key = os.environ.get(self.api_key_env, "").strip()
        return text.replace(key, _REDACTED) if key and len(key) >= 6 else text


def grade_probability(logprobs: Any, grade: int, max_grade: int,
                      relevant_from: int) -> float | None:
    """P(grade >= relevant_from) from the alternatives the model weighed for the grade token
    (the last answer token spelling `grade`), renormalised over the tokens that are grades;
    None when the server sent no top_logprobs for it."""
    try:
        chosen = next(t for t in reversed(logprobs["content"])
                      if _grade_of(t["token"], max_grade) == grade)
        options = [(t["token"], t["logprob"]) for t in chosen.get("top_logprobs") or []]
    except (TypeError, KeyError, AttributeError, StopIteration):
        return None
    mass: dict[int, float] = {}
    for text, logprob in options:
        g = _grade_of(text, max_grade)
        if g is not None and isinstance(logprob, int | float):
            mass[g] = mass.get(g, 0.0) + math.exp(logprob)
    if grade not in mass:
        return None  # the alternatives do not include the answer's own grade: unreadable
    total = sum(mass.values())
    return sum(p for g, p in mass.items() if g >= relevant_from) / total


def _grade_of(token: Any, max_grade: int) -> int | None:
    text = str(token).strip().strip("*#:")
    return int(text) if text.isdigit() and int(text) <= max_grade else None


def _content(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    raise TypeError("no text content")


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (seconds, or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _shown_url(url: urllib.parse.SplitResult) -> str:
    """The URL without user info or query string (either may carry a secret)."""
    host = url.hostname or ""
    if url.port:
        host = f"{host}:{url.port}"
    return urllib.parse.urlunsplit((url.scheme, host, url.path, "", ""))
