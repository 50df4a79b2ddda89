"""Logging set-up and the audit line: one structured event per metastore call."""

from __future__ import annotations

import logging
import sys
from contextvars import ContextVar

import structlog

from metastore_server.log_lines import render_console
from metastore_server.safe_log import DroppingLoggerFactory

_configured = False
_call_extras: ContextVar[dict[str, object] | None] = ContextVar("call_extras", default=None)


class collecting_extras:  # noqa: N801 - used as a function: ``with collecting_extras() as x:``
    """Collect what the code serving one call adds to its audit line (see ``note``/``count``);
    a class, not a generator: it is entered on every call."""

    __slots__ = ("_extras", "_token")

    def __init__(self) -> None:
        self._extras: dict[str, object] = {}

    def __enter__(self) -> dict[str, object]:
        self._token = _call_extras.set(self._extras)
        return self._extras

    def __exit__(self, *_exc: object) -> None:
        _call_extras.reset(self._token)


def note(**fields: object) -> None:
    """Set fields of the current call's audit line (no-op outside a call)."""
    extras = _call_extras.get()
    if extras is not None:
        extras.update(fields)


#: Items a list field of an audit line shows; the rest are counted (``<name>_more``).
LIST_LIMIT = 20


def append(name: str, item: object) -> None:
    """Add ``item`` to the list field ``name`` of the current call's audit line (no-op
    outside a call); past ``LIST_LIMIT`` items only ``<name>_more`` counts them."""
    extras = _call_extras.get()
    if extras is None:
        return
    items = extras.setdefault(name, [])
    if not isinstance(items, list):
        return
    if len(items) < LIST_LIMIT:
        items.append(item)
    else:
        extras[f"{name}_more"] = int(extras.get(f"{name}_more", 0)) + 1  # type: ignore[call-overload]


def count(**amounts: int) -> None:
    """Add to counters of the current call's audit line, e.g. ``rows_scanned`` (no-op outside)."""
    extras = _call_extras.get()
    if extras is not None:
        for name, amount in amounts.items():
            extras[name] = int(extras.get(name, 0)) + amount  # type: ignore[call-overload]


def configure_logging(level: str = "info", fmt: str = "console") -> None:
    """Configure structlog once: ISO timestamps, level, key=value (console, the layout of
    structlog's console renderer without colours) or JSON lines."""
    global _configured
    renderer = structlog.processors.JSONRenderer() if fmt == "json" else render_console
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
        ),
        logger_factory=DroppingLoggerFactory(sys.stderr, json_lines=fmt == "json"),
        cache_logger_on_first_use=True,
    )
    _configured = True


_audit = structlog.get_logger("metastore.audit")


def audit_call(
    *,
    method: str,
    peer: str,
    ms: float,
    outcome: str,
    user: str | None = None,
    real_user: str | None = None,
    db: str | None = None,
    table: str | None = None,
    rows: int | None = None,
    error: str | None = None,
    extras: dict[str, object] | None = None,
) -> None:
    """Emit the audit line of one call (method, db, table, peer, duration, result size, outcome,
    and what the call added, such as rows scanned)."""
    fields: dict[str, object] = {
        "method": method,
        "peer": peer,
        "ms": round(ms, 3),
        "outcome": outcome,
    }
    if user is not None:
        fields["user"] = user
    if real_user is not None:
        fields["real_user"] = real_user
    if db is not None:
        fields["db"] = db
    if table is not None:
        fields["table"] = table
    if rows is not None:
        fields["rows"] = rows
    if error is not None:
        fields["error"] = error
    if extras:
        fields.update(extras)
    _audit.info("call", **fields)
