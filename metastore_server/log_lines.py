"""The console layout of log lines, made in one pass.

Every call writes an audit line, so the renderer is on every call's path. structlog's
``ConsoleRenderer`` builds each key=value pair through several small objects and string
buffers (some 40 us a line, a third of a small call's time); :func:`render_console` writes
the same layout directly:

``<timestamp> [<level padded to 9>] <event padded to 30> key=value ...`` with the other keys
sorted, a string value quoted (``repr``) only when it holds a space, tab, ``=``, a quote or a
line break, every other value as its ``repr``; then the stack and the exception text, each
on lines of their own.
"""

from __future__ import annotations

import sys
import traceback
from typing import Any

#: Width of the level inside its brackets: the longest level name ("exception").
_LEVEL_WIDTH = 9
#: Width the event name is padded to.
_EVENT_WIDTH = 30
_QUOTED = frozenset(" \t=\r\n\"'")
_RULE = "=" * 79


def _value(value: object) -> str:
    if type(value) is str:
        return repr(value) if _QUOTED.intersection(value) else value
    return repr(value)


def render_console(_logger: Any, _name: str, event_dict: dict[str, Any]) -> str:
    """The line of ``event_dict`` (structlog's final processor)."""
    stack = event_dict.pop("stack", None)
    exception = event_dict.pop("exception", None)
    exc_info = event_dict.pop("exc_info", None)
    head = []
    timestamp = event_dict.pop("timestamp", None)
    if timestamp is not None:
        head.append(str(timestamp))
    level = event_dict.pop("level", None)
    if level is not None:
        head.append(f"[{level:<{_LEVEL_WIDTH}}]")
    event = event_dict.pop("event", None)
    if event is not None:
        head.append(f"{event!s:<{_EVENT_WIDTH}}")
    for key in ("logger", "logger_name"):
        name = event_dict.pop(key, None)
        if name is not None:
            head.append(f"[{name}]")
    pairs = [f"{key}={_value(event_dict[key])}" for key in sorted(event_dict)]
    line = " ".join([*head, *pairs]).rstrip(" ")
    if stack is not None:
        line += "\n" + stack
        if exc_info or exception is not None:
            line += "\n\n" + _RULE + "\n"
    if exc_info:
        line += "\n" + "".join(traceback.format_exception(*_exc_info(exc_info))).rstrip("\n")
    elif exception is not None:
        line += "\n" + exception
    return line


def _exc_info(value: object) -> tuple[Any, Any, Any]:
    if isinstance(value, BaseException):
        return type(value), value, value.__traceback__
    if isinstance(value, tuple):
        return value
    return sys.exc_info()
