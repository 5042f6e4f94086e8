"""Every JSON body the server reads, read one way: bounded in size and in nesting depth.

Python's json parser recurses once per level of nesting, so a body of 100,000 '[' exhausts
the stack; the depth is therefore measured on the raw bytes first, with a few passes of
`bytes.replace` and `bytes.translate` (about a tenth of what parsing the body costs).
"""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request

from pooling.formats.common import loads_strict

MAX_JSON_BYTES = 1_000_000
MAX_JSON_DEPTH = 32

_STRING = re.compile(rb'"[^"]*"')  # a string once escaped quotes are gone
_NOT_SYNTAX = bytes(sorted(set(range(256)) - set(b'"[]{}')))
_PARENS = bytes.maketrans(b"[]{}", b"()()")


class BodyRefused(HTTPException):
    """A request body the server does not read: too large (413), or not UTF-8 JSON, or
    nested too deeply (400). The detail says which limit, for the sender to fix."""


def json_depth(raw: bytes, limit: int) -> int | None:
    """How deeply arrays and objects nest in the JSON text `raw` (a scalar: 0), counted up
    to `limit + 1`; None when its brackets do not balance (it is not JSON; parsing says why).

    Brackets inside strings do not count: escaped backslashes and quotes are dropped, then
    everything but quotes and brackets, then the strings. Each pass of removing `()` then
    lowers every nesting by one level, so the number of passes is the depth.
    """
    text = raw.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _NOT_SYNTAX)
    # Most strings hold no bracket and are now `""`: dropping those first leaves the regex
    # little to do. Two strings side by side (a separator was dropped) merge, harmlessly.
    text = _STRING.sub(b"", text.replace(b'""', b"")).translate(_PARENS)
    for level in range(limit + 1):
        if not text:
            return level
        shorter = text.replace(b"()", b"")
        if shorter == text:
            return None
        text = shorter
    return limit + 1


async def read_json(request: Request, *, max_bytes: int = MAX_JSON_BYTES,
                    max_depth: int = MAX_JSON_DEPTH, empty: Any = ...) -> Any:
    """The request's body parsed as JSON, or `BodyRefused`; an empty body gives `empty` when
    one is given. The body is read no further than `max_bytes`."""
    raw = await _read_at_most(request, max_bytes)
    if not raw.strip() and empty is not ...:
        return empty
    return parse_json(raw, max_bytes=max_bytes, max_depth=max_depth)


def parse_json(raw: bytes, *, max_bytes: int = MAX_JSON_BYTES,
               max_depth: int = MAX_JSON_DEPTH) -> Any:
    """`raw` parsed as JSON within the limits, or `BodyRefused` saying which one it broke."""
    if len(raw) > max_bytes:
        raise BodyRefused(413, f"the request body is larger than {max_bytes:,} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BodyRefused(400, "the request body is not UTF-8 text") from exc
    depth = json_depth(raw, max_depth)
    if depth is not None and depth > max_depth:
        raise BodyRefused(400, f"the request body nests arrays and objects more than "
                               f"{max_depth} levels deep")
    try:
        return loads_strict(text)
    except json.JSONDecodeError as exc:
        raise BodyRefused(400, "the request body is not valid JSON") from exc
    except ValueError as exc:  # a key given twice: which value was meant is not known
        raise BodyRefused(400, f"the request body is refused: {exc}") from exc
    except RecursionError as exc:  # cannot happen after the depth check
        raise BodyRefused(400, "the request body is not valid JSON") from exc


async def _read_at_most(request: Request, max_bytes: int) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise BodyRefused(413, f"the request body is larger than {max_bytes:,} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise BodyRefused(413, f"the request body is larger than {max_bytes:,} bytes")
        chunks.append(chunk)
    return b"".join(chunks)
