"""A judge that is any local program speaking JSON lines: one request line per pair on its
stdin, one reply line per request on its stdout, in order.

Request: {"query_id", "doc_id", "title", "description", "narrative", "doc_title", "doc_text"},
and "subtopic" (its number; its text is the description) in a subtopic round. A program
declared with needs=ids gets {"query_id", "doc_id"} (and "subtopic", "sample") only: it
reads the texts itself, so pairs whose document the store has no text for are sent too.
Reply: {"grade": int, "probability": float in [0, 1] (optional), "rationale": str
(optional)}; a reply may echo "query_id"/"doc_id", which must then match the request.
stdout carries replies only (log to stderr). The program is started on the first pair and
kept until `close()`; each reply may take up to `timeout` seconds (the first one includes
the program's start-up).

Failures: a reply whose grade, probability or rationale is wrong fails that pair only. A
crash, a line that is not a JSON object, a reply for another pair, or no reply within the
timeout fails the pair and means the program is out of step: it is stopped and the rest of
the batch goes to a restarted program. That happens once per batch; if the restarted
program breaks too, the remaining pairs are failed without being sent (fix the program and
judge them again). The pair that broke the program is not retried: it may be the cause.
"""

from __future__ import annotations

import json
import os
import queue
import shlex
import shutil
import subprocess
import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
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
    needs_of,
    ok,
    require,
)

_EOF = object()


class _Broken(Exception):
    """The program is out of step (crashed, hung, or printed something else than a reply)."""

    def __init__(self, message: str, line: str | None = None):
        super().__init__(message)
        self.line = line


class _Process:
    """A running judge program, with threads draining its stdout (replies) and stderr."""

    def __init__(self, argv: list[str]):
        self.popen = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, encoding="utf-8", errors="replace", bufsize=1)
        self.replies: queue.Queue[Any] = queue.Queue()
        self.stderr: deque[str] = deque(maxlen=20)
        threading.Thread(target=self._drain_stdout, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _drain_stdout(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self.replies.put(line)
        self.replies.put(_EOF)

    def _drain_stderr(self) -> None:
        assert self.popen.stderr is not None
        for line in self.popen.stderr:
            if line.strip():
                self.stderr.append(line.rstrip())

    def send(self, line: str, timeout: float) -> str | None:
        """Write one request; why it could not be, or None. A long line fills the pipe and
        blocks until the program reads, so the write too waits `timeout` at most."""
        failures: list[OSError] = []

        def write() -> None:
            try:
                assert self.popen.stdin is not None
                self.popen.stdin.write(line)
                self.popen.stdin.flush()
            except OSError as exc:
                failures.append(exc)

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        writer.join(timeout)
        if writer.is_alive():
            self.popen.kill()  # unblocks the writer with a broken pipe
            return f"did not read the request within {timeout:g} s and was stopped"
        return f"stopped reading requests: {self.exit_note()}" if failures else None

    def exit_note(self) -> str:
        """How the program ended, with the last line it wrote to stderr."""
        try:
            code = self.popen.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        note = "it stopped replying" if code is None else f"it exited with code {code}"
        time.sleep(0.05)  # let the stderr thread catch the last lines
        return note + (f" (stderr: {self.stderr[-1][:200]})" if self.stderr else "")

    def stop(self, kill: bool) -> None:
        if self.popen.poll() is None:
            if not kill:
                try:
                    assert self.popen.stdin is not None
                    self.popen.stdin.close()
                    self.popen.wait(timeout=5)
                except (OSError, subprocess.TimeoutExpired):
                    pass
            if self.popen.poll() is None:
                self.popen.kill()
                self.popen.wait()
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass


class CommandBackend:
    """Grades pairs by asking a local program; see the module docstring."""

    name = "command"

    def __init__(self, *, command: str, timeout: float = 60.0, needs: str = "text"):
        require(self.name, "command", command, "command='python my_judge.py --model small'")
        at_least(self.name, "timeout", timeout, 0, strict=True)
        self.ids_only = needs_of(self.name, {"needs": needs}) == "ids"
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise JudgeError(f"cannot split the judge command {command!r} ({exc}); "
                             "check its quotes") from exc
        program = argv[0]
        found = shutil.which(program) if os.sep not in program else program
        if found is None or not (Path(found).is_file() and os.access(found, os.X_OK)):
            raise JudgeError(f"judge program {program!r} was not found or is not executable; "
                             "give its full path or put it on PATH")
        self.argv = argv
        shown = shlex.join([Path(program).name, *argv[1:]])
        self.program = shown if len(shown) <= 80 else shown[:77] + "..."
        self.timeout = timeout
        self._process: _Process | None = None

    def judge(self, pairs: Sequence[Pair]) -> Iterator[Verdict]:
        restarted = False
        gave_up: str | None = None
        for pair in pairs:
            if gave_up is not None:
                yield failed(pair, gave_up)
                continue
            start = time.monotonic()
            try:
                yield self._ask(pair, start)
            except _Broken as exc:
                self._stop(kill=True)
                yield failed(pair, str(exc), answer=exc.line, seconds=time.monotonic() - start)
                if restarted:
                    gave_up = (f"not sent: judge program {self.program!r} broke twice in this "
                               f"batch (last: {exc}); fix it and judge these pairs again")
                restarted = True

    def close(self) -> None:
        self._stop(kill=False)

    def _stop(self, kill: bool) -> None:
        if self._process is not None:
            self._process.stop(kill)
            self._process = None

    def _ask(self, pair: Pair, start: float) -> Verdict:
        request = pair.ids() if self.ids_only else pair.fields()
        line = self._exchange(request, "judge this pair again")
        return self._read(pair, line, time.monotonic() - start)

    def ask(self, asks: Sequence[Ask]) -> Iterator[Reply]:
        """Replies to text requests, in order: each request's `fields` as a JSON line, the
        program's reply line (a JSON object) as the text; a broken program is restarted once,
        as for pairs."""
        restarted = False
        gave_up: str | None = None
        for a in asks:
            if gave_up is not None:
                yield Reply(a.query_id, a.key, FAILED, None, gave_up)
                continue
            start = time.monotonic()
            try:
                line = self._exchange(dict(a.fields), "ask again")
            except _Broken as exc:
                self._stop(kill=True)
                yield Reply(a.query_id, a.key, FAILED, exc.line, str(exc),
                            seconds=time.monotonic() - start)
                if restarted:
                    gave_up = (f"not sent: judge program {self.program!r} broke twice in this "
                               f"batch (last: {exc}); fix it and ask again")
                restarted = True
                continue
            try:
                reply = json.loads(line)
            except ValueError:
                reply = None
            if not isinstance(reply, dict):
                self._stop(kill=True)
                yield Reply(a.query_id, a.key, FAILED, line,
                            f"judge program {self.program!r} printed a line that is not a JSON "
                            f"object ({line[:80]!r}); it must print one reply per request",
                            seconds=time.monotonic() - start)
                continue
            yield Reply(a.query_id, a.key, OK, line, None, seconds=time.monotonic() - start)

    def _exchange(self, request: Mapping[str, Any], again: str) -> str:
        """Send one JSON request line and read the reply line (`_Broken` when the program is
        out of step: it could not start, crashed, hung, or closed its output)."""
        if self._process is None:
            try:
                self._process = _Process(self.argv)
            except OSError as exc:
                raise _Broken(f"judge program {self.program!r} could not start "
                              f"({exc.strerror or exc}); check the command") from exc
        process = self._process
        deadline = time.monotonic() + self.timeout
        problem = process.send(json.dumps(request) + "\n", self.timeout)
        if problem is not None:
            raise _Broken(f"judge program {self.program!r} {problem}; fix it and {again}")
        try:
            line = process.replies.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise _Broken(f"judge program {self.program!r} did not reply within "
                          f"{self.timeout:g} s; it was stopped (raise timeout if it is just "
                          "slow)") from None
        if line is _EOF:
            raise _Broken(f"judge program {self.program!r} closed its output before replying: "
                          f"{process.exit_note()}; fix it and {again}")
        return line.rstrip("\n")

    def _read(self, pair: Pair, line: str, seconds: float) -> Verdict:
        me = f"judge program {self.program!r}"
        try:
            reply = json.loads(line)
        except ValueError:
            reply = None
        if not isinstance(reply, dict):
            raise _Broken(f"{me} printed a line that is not a JSON object ({line[:80]!r}); it "
                          "must print one reply per request and log to stderr", line)
        for key in ("query_id", "doc_id"):
            if key in reply and reply[key] != getattr(pair, key):
                raise _Broken(f"{me} replied for {key} {reply[key]!r} when asked about "
                              f"{getattr(pair, key)!r}; it must reply to each request in order", line)
        grade = reply.get("grade")
        if isinstance(grade, float) and grade.is_integer():
            grade = int(grade)
        problem = None
        if isinstance(grade, bool) or not isinstance(grade, int):
            problem = f"replied grade {grade!r}, not a whole number"
        probability = reply.get("probability")
        if problem is None and probability is not None and (
                isinstance(probability, bool) or not isinstance(probability, int | float)
                or not 0 <= probability <= 1):
            problem = f"replied probability {probability!r}, not a number in [0, 1]"
        rationale = reply.get("rationale")
        if problem is None and rationale is not None and not isinstance(rationale, str):
            problem = f"replied a rationale that is not text ({type(rationale).__name__})"
        if problem is not None:
            return failed(pair, f"{me} {problem}; fix the program's reply", answer=line,
                          seconds=seconds)
        return ok(pair, grade, probability=None if probability is None else float(probability),
                  answer=rationale, seconds=seconds)
