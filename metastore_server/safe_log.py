"""A log that never fails a call: lines that cannot be written are counted, not raised.

structlog's ``PrintLogger`` raises whatever writing raises: with the log's disk full
(``ENOSPC``), a closed or broken pipe, the audit line of a call that has done its work would fail
the call, and the connection with it. :class:`DroppingLogger` writes each line the same way and
swallows the error, counting the line; the first line that can be written again is preceded by
one ``log_lines_dropped count=N`` line, in the log's format, so the gap is visible.
"""

from __future__ import annotations

import datetime
import json
import os
import threading
from typing import Any, TextIO


class _Dropped:
    """Lines not written since the last one that was (shared by every logger)."""

    def __init__(self) -> None:
        self.count = 0
        self.lock = threading.Lock()


_DROPPED = _Dropped()


def dropped_lines() -> int:
    """How many lines are waiting to be reported as dropped."""
    return _DROPPED.count


class DroppingLogger:
    """A structlog logger writing rendered lines to ``file``, dropping (and counting) those
    that cannot be written."""

    def __init__(self, file: TextIO, json_lines: bool = False) -> None:
        self._file = file
        self._json = json_lines

    def msg(self, message: str) -> None:
        with _DROPPED.lock:
            try:
                if _DROPPED.count:
                    self._write(self._notice(_DROPPED.count) + "\n")
                    _DROPPED.count = 0
                self._write(message + "\n")
            except (OSError, ValueError):  # disk full, closed or broken file: not the call's
                _DROPPED.count += 1

    def _write(self, text: str) -> None:
        """Write ``text`` whole to the file's descriptor (past its buffer, which would hide
        a failed write until later), or to the file object when it has none."""
        try:
            fd = self._file.fileno()
        except (AttributeError, OSError, ValueError):
            fd = None
        if fd is None:
            self._file.write(text)
            self._file.flush()
            return
        self._file.flush()  # what others wrote through the buffer goes first
        view = memoryview(text.encode("utf-8", "backslashreplace"))
        while view:
            view = view[os.write(fd, view) :]

    log = debug = info = warn = warning = error = critical = exception = fatal = failure = msg

    def _notice(self, count: int) -> str:
        now = datetime.datetime.now(datetime.UTC).isoformat().replace("+00:00", "Z")
        if self._json:
            return json.dumps({"count": count, "event": "log_lines_dropped",
                               "level": "warning", "timestamp": now})  # fmt: skip
        return f"{now} [warning  ] log_lines_dropped              count={count}"


class DroppingLoggerFactory:
    """structlog logger factory of :class:`DroppingLogger` on one file."""

    def __init__(self, file: TextIO, json_lines: bool = False) -> None:
        self._file = file
        self._json = json_lines

    def __call__(self, *args: Any) -> DroppingLogger:
        return DroppingLogger(self._file, self._json)
