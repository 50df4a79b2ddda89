"""The log never fails a call: lines that cannot be written are counted, then reported."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from metastore_server import safe_log
from metastore_server.safe_log import DroppingLogger

FULL = Path("/dev/full")  # every write: ENOSPC


@pytest.fixture(autouse=True)
def _nothing_dropped_before() -> None:
    DroppingLogger(io.StringIO()).info("reset")  # reports (and clears) any earlier count


@pytest.mark.skipif(not FULL.exists(), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("json_lines", [False, True])
def test_lines_that_cannot_be_written_are_counted_then_reported(json_lines: bool) -> None:
    full = FULL.open("w")
    broken = DroppingLogger(full, json_lines)
    for n in range(3):
        broken.info(f"line {n}")  # no exception: the call that logs goes on
    with contextlib.suppress(OSError):
        full.close()  # its buffer still cannot be written
    assert safe_log.dropped_lines() == 3
    out = io.StringIO()
    DroppingLogger(out, json_lines).info("back")
    first, second = out.getvalue().splitlines()
    if json_lines:
        assert json.loads(first)["event"] == "log_lines_dropped"
        assert json.loads(first)["count"] == 3
    else:
        assert "log_lines_dropped" in first and first.endswith("count=3")
    assert second == "back"
    assert safe_log.dropped_lines() == 0


def test_a_closed_log_drops_lines_too() -> None:
    out = io.StringIO()
    out.close()
    DroppingLogger(out).error("lost")
    assert safe_log.dropped_lines() == 1
    DroppingLogger(io.StringIO()).info("resets")
    assert safe_log.dropped_lines() == 0
