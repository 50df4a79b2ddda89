"""A call's time limit as the store's requests see it (``storage.deadline``)."""

from __future__ import annotations

import threading

from metastore_server.storage import deadline


def test_no_limit_outside_a_call() -> None:
    assert deadline.remaining() is None and deadline.seconds() is None
    with deadline.for_call(0):
        assert deadline.remaining() is None


def test_a_call_gets_a_share_of_its_timeout_and_a_rollback_a_little_more() -> None:
    with deadline.for_call(10.0):
        left = deadline.remaining()
        assert left is not None and 7.5 < left <= 8.0
        assert deadline.seconds() == 8.0
        with deadline.grace():
            left = deadline.remaining()
            assert left is not None and 8.5 < left <= 9.0
        left = deadline.remaining()
        assert left is not None and left <= 8.0
    assert deadline.remaining() is None


def test_the_tighter_of_nested_limits_holds_and_threads_have_their_own() -> None:
    seen: list[float | None] = []
    with deadline.limit(1.0):
        with deadline.limit(5.0):
            left = deadline.remaining()
            assert left is not None and left <= 1.0
        with deadline.limit(0.5):
            left = deadline.remaining()
            assert left is not None and left <= 0.5
        other = threading.Thread(target=lambda: seen.append(deadline.remaining()))
        other.start()
        other.join()
    assert seen == [None]
