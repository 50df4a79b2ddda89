"""Test fault: in a server process started with this folder on PYTHONPATH, ``get_database`` of
:data:`STALLING_NAME` holds the interpreter lock for two minutes (backtracking in C, as a call
stuck in native code would, letting other threads run only for a moment between stretches of a
second or more), so the call timeout and the worker supervision can be tested. With
``STALL_MARKER`` set, the stall first creates that file (a test knows when it has begun)."""

from __future__ import annotations

import functools
import os
import re
import time
from pathlib import Path

from metastore_server.api.databases import DatabaseCalls

STALLING_NAME = "__hold_the_interpreter__"
_original = DatabaseCalls.get_database
_backtracking = re.compile(r"(a+)+b")


@functools.wraps(_original)  # its declaration too: still the Thrift method
def _get_database(self: DatabaseCalls, name: str) -> object:
    if name == STALLING_NAME:
        if os.environ.get("STALL_MARKER"):
            Path(os.environ["STALL_MARKER"]).touch()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            _backtracking.match("a" * 26)  # seconds in C without a thread switch
    return _original(self, name)


# The handler's dispatch table binds the area's method when the server builds it (after this).
DatabaseCalls.get_database = _get_database  # type: ignore[method-assign]
