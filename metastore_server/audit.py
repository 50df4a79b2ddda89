"""Logging set-up and the audit line: one structured event per metastore call."""

from __future__ import annotations

import logging
import sys

import structlog

_configured = False


def configure_logging(level: str = "info", fmt: str = "console") -> None:
    """Configure structlog once: ISO timestamps, level, key=value (console) or JSON lines."""
    global _configured
    renderer = (
        structlog.processors.JSONRenderer()
        if fmt == "json"
        else structlog.dev.ConsoleRenderer(colors=False)
    )
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
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
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
    db: str | None = None,
    table: str | None = None,
    rows: int | None = None,
    error: str | None = None,
) -> None:
    """Emit the audit line of one call (method, db, table, peer, duration, result size, outcome)."""
    fields: dict[str, object] = {
        "method": method,
        "peer": peer,
        "ms": round(ms, 3),
        "outcome": outcome,
    }
    if db is not None:
        fields["db"] = db
    if table is not None:
        fields["table"] = table
    if rows is not None:
        fields["rows"] = rows
    if error is not None:
        fields["error"] = error
    _audit.info("call", **fields)
