"""Our console renderer of log lines (``log_lines.render_console``) writes exactly what
structlog's console renderer without colours writes, for every kind of value and field."""

from __future__ import annotations

import pytest
import structlog

from metastore_server.log_lines import render_console

EVENTS = [
    {"timestamp": "2026-11-28T16:08:01.948564Z", "level": "info", "event": "call",
     "method": "get_database", "peer": "127.0.0.1:5", "ms": 0.123, "db": "a b",
     "names": ["a", "b c"], "none": None, "quote": "it's", "eq": "é=", "f": 1.5, "b": True},
    {"timestamp": "t", "level": "warning", "event": "an_event_name_longer_than_thirty_chars",
     "empty": ""},
    {"level": "error", "event": "x", "exception": "Traceback...\nboom", "stack": "the stack"},
    {"event": "only"},
    {"timestamp": "t", "level": "info", "event": "e", "logger": "lg", "z": {"a": 1}, "a": b"by"},
    {"timestamp": "t", "level": "exception", "event": 5, "tab": "a\tb", "line": "a\nb"},
    {"timestamp": "t", "level": "info", "event": "e", "stack": "s"},
]  # fmt: skip


@pytest.mark.parametrize("event", EVENTS)
def test_the_same_line_as_structlog(event: dict) -> None:
    theirs = structlog.dev.ConsoleRenderer(colors=False)(None, "info", dict(event))
    assert render_console(None, "info", dict(event)) == theirs
