"""64-bit keys of (topic, doc_id) pairs, computed without hashing strings one by one.

Joining a 7M-line run to its qrels and finding duplicate documents are the evaluator's two
string-heavy steps. Both work on these keys instead: equal pairs always get equal keys, and
the rare different pairs that collide are told apart afterwards by comparing the strings
themselves, so the keys only ever make the work faster, never the answer different.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa

_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xFF51AFD7ED558CCD)
_M3 = np.uint64(0xC4CEB9FE1A85EC53)
_MASKS = np.array([(1 << (8 * i)) - 1 for i in range(9)], dtype=np.uint64)
_SLICE = 1 << 15


def pair_keys(
    doc_ids: pa.Array | pa.ChunkedArray,
    topics: np.ndarray,
    seed: int = 0,
    on_slice: Callable[[np.ndarray, int], None] | None = None,
) -> np.ndarray:
    """uint64 key per row from its doc_id bytes and its integer topic.

    `on_slice(keys, first_row)` sees each slice's keys while they are still in cache.
    """
    chunks = doc_ids.chunks if isinstance(doc_ids, pa.ChunkedArray) else [doc_ids]
    out = np.empty(len(doc_ids), np.uint64)
    # Slices of 32k rows keep every temporary in cache: 2-3x faster than whole chunks.
    start = 0
    for chunk in chunks:
        for i in range(0, len(chunk), _SLICE):
            piece = chunk.slice(i, _SLICE)
            keys = _chunk_keys(piece, topics[start : start + len(piece)], seed)
            out[start : start + len(piece)] = keys
            if on_slice is not None:
                on_slice(keys, start)
            start += len(piece)
    return out


def _chunk_keys(arr: pa.Array, topics: np.ndarray, seed: int) -> np.ndarray:
    if pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type):
        offset_type = np.int64
    else:
        offset_type = np.int32
    width = np.dtype(offset_type).itemsize
    offsets = np.frombuffer(
        arr.buffers()[1], dtype=offset_type, count=len(arr) + 1, offset=arr.offset * width
    ).astype(np.int64)
    first, last = int(offsets[0]), int(offsets[-1])
    offsets -= first  # only this slice's bytes are copied (with room to read 8 past the end)
    data_buf = arr.buffers()[2]
    padded = np.zeros(last - first + 16, np.uint8)
    if data_buf is not None and last > first:
        padded[: last - first] = np.frombuffer(data_buf, np.uint8, last - first, first)
    data = padded[: last - first]
    # An unaligned uint64 view: words[i] is the 8 bytes starting at byte i.
    words = np.ndarray(shape=(len(data) + 8,), dtype="<u8", buffer=padded, strides=(1,))
    start = offsets[:-1]
    length = offsets[1:] - start
    if len(length) and length.min() >= 8:
        head = words[start]
        tail = words[start + length - 8]
    else:
        mask = _MASKS[np.minimum(length, 8)]
        head = words[start] & mask
        tail = words[start + np.maximum(length - 8, 0)] & mask
    h = head * _M1
    h ^= tail
    h ^= length.astype(np.uint64) + np.uint64(seed) * _M3
    h *= _M2
    h ^= h >> np.uint64(31)
    longest = int(length.max()) if len(length) else 0
    for k in range(8, longest - 8, 8):  # middle bytes of ids longer than 16
        rows = np.flatnonzero(length > k + 8)
        h[rows] = (h[rows] ^ words[start[rows] + k]) * _M1
    h ^= topics.astype(np.uint64) * _M3
    h *= _M2
    h ^= h >> np.uint64(29)
    return h
