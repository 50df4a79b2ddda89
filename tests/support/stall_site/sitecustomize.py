"""Test fault: in a server process started with this folder on PYTHONPATH, ``get_database`` of
:data:`STALLING_NAME` holds the interpreter lock for two minutes (backtracking in C, as a call
stuck in native code would), so the call timeout and the worker supervision can be tested."""

from __future__ import annotations

import re
import time

from metastore_server.api.handler import MetastoreHandler

STALLING_NAME = "__hold_the_interpreter__"
_original = MetastoreHandler.get_database
_backtracking = re.compile(r"(a+)+b")


def _get_database(self: MetastoreHandler, name: str) -> object:
    if name == STALLING_NAME:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            _backtracking.match("a" * 26)  # seconds in C without a thread switch
    return _original(self, name)


MetastoreHandler.get_database = _get_database  # type: ignore[method-assign]
