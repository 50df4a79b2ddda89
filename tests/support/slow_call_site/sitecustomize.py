"""Test fault: in a server process started with this folder on PYTHONPATH, ``get_database`` of
:data:`SLOW_NAME` is a call held in flight: it creates the file named by ``SLOW_CALL_MARKER``
(a test knows the call has begun), waits until the file named by ``SLOW_CALL_RELEASE`` exists
(at most a minute, sleeping: other threads run), then answers as ``get_database("default")``."""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path

from metastore_server.api.databases import DatabaseCalls

SLOW_NAME = "__call_held_in_flight__"
_original = DatabaseCalls.get_database


@functools.wraps(_original)  # its declaration too: still the Thrift method
def _get_database(self: DatabaseCalls, name: str) -> object:
    if name != SLOW_NAME:
        return _original(self, name)
    Path(os.environ["SLOW_CALL_MARKER"]).touch()
    release = Path(os.environ["SLOW_CALL_RELEASE"])
    deadline = time.monotonic() + 60
    while not release.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return _original(self, "default")


# The handler's dispatch table binds the area's method when the server builds it (after this).
DatabaseCalls.get_database = _get_database  # type: ignore[method-assign]
