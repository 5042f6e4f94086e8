"""The background iterator that reads run files and stored runs ahead of the scan."""

from __future__ import annotations

import threading

import pytest

from pooling.evaluation.ahead import Ahead


def test_items_arrive_in_order_and_then_runs_once_the_producer_is_done():
    done = threading.Event()
    with Ahead(lambda: iter(range(50)), name="t", then=done.set) as ahead:
        assert list(ahead) == list(range(50))
    assert done.is_set()


def test_a_producer_error_is_raised_where_its_item_would_have_come():
    def produce():
        yield 1
        yield 2
        raise ValueError("bad piece")

    got = []
    with Ahead(produce, name="t") as ahead, pytest.raises(ValueError, match="bad piece"):
        for item in ahead:
            got.append(item)
    assert got == [1, 2]


def test_closing_early_stops_a_blocked_producer_and_skips_then():
    called = threading.Event()
    ahead = Ahead(lambda: iter(range(10_000)), name="t-early", then=called.set)
    assert next(iter(ahead)) == 0
    ahead.close()  # the producer is blocked on a full queue: close must not hang
    assert not [t for t in threading.enumerate() if t.name == "t-early"]
    assert not called.is_set()
