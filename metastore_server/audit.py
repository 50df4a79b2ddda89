"""Logging set-up and the audit line: one structured event per metastore call."""

from __future__ import annotations

import datetime
import logging
import sys
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, cast

import structlog
import structlog.contextvars

from metastore_server.log_lines import render_console
from metastore_server.metrics import record_call
from metastore_server.safe_log import DroppingLogger, DroppingLoggerFactory

_configured = False
#: A structlog renderer: (logger, method name, event dict) -> the line.
Render = Callable[[Any, str, dict[str, Any]], str]
#: The fields a call adds to its audit line (counters, lists, texts: any loggable value).
_call_extras: ContextVar[dict[str, Any] | None] = ContextVar("call_extras", default=None)


class collecting_extras:  # noqa: N801 - used as a function: ``with collecting_extras() as x:``
    """Collect what the code serving one call adds to its audit line (see ``note``/``count``);
    a class, not a generator: it is entered on every call."""

    __slots__ = ("_extras", "_token")

    def __init__(self) -> None:
        self._extras: dict[str, Any] = {}

    def __enter__(self) -> dict[str, Any]:
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
        extras[f"{name}_more"] = int(extras.get(f"{name}_more", 0)) + 1


def count(**amounts: int) -> None:
    """Add to counters of the current call's audit line, e.g. ``rows_scanned`` (no-op outside)."""
    extras = _call_extras.get()
    if extras is not None:
        for name, amount in amounts.items():
            extras[name] = int(extras.get(name, 0)) + amount


def configure_logging(level: str = "info", fmt: str = "console") -> None:
    """Configure structlog once: ISO timestamps, level, key=value (console, the layout of
    structlog's console renderer without colours) or JSON lines."""
    global _configured, _direct
    # JSONRenderer renders with json.dumps: text, not bytes.
    json_renderer = cast(Render, structlog.processors.JSONRenderer())
    renderer = json_renderer if fmt == "json" else render_console
    # structlog's processors and ours (typed with a dict, not structlog's MutableMapping).
    processors: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.format_exc_info,
        renderer,
    ]
    level_number = logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(level_number),
        logger_factory=DroppingLoggerFactory(sys.stderr, json_lines=fmt == "json"),
        cache_logger_on_first_use=True,
    )
    _direct = _DirectAudit(processors, renderer, DroppingLogger(sys.stderr, fmt == "json"),
                           level_number <= logging.INFO)  # fmt: skip
    _configured = True


class _DirectAudit:
    """The audit line made without structlog's logger chain, as that chain would make it
    (the same processors, in order, for an ``info`` event), while the configuration is the
    one ``configure_logging`` set: every call writes one, and the chain's generic steps
    (copying the context, looking up every context variable, the level's method) were a
    fifth of a small call's time."""

    __slots__ = ("processors", "chain", "render", "logger", "enabled")

    def __init__(
        self,
        processors: list[Any],
        render: Render,
        logger: DroppingLogger,
        enabled: bool,
    ) -> None:
        self.processors = processors
        #: The processors as configured (``capture_logs`` changes the list in place).
        self.chain = tuple(processors)
        self.render = render
        self.logger = logger
        self.enabled = enabled

    def current(self) -> bool:
        """Whether structlog still runs the configuration this was made for (a test's
        ``capture_logs``, or any later ``configure``, changes the processors)."""
        processors = structlog.get_config()["processors"]
        return processors is self.processors and tuple(processors) == self.chain

    def emit(self, event: dict[str, Any]) -> None:
        """Write the line of ``event`` (its fields; ``event``, level and time added here)."""
        if not self.enabled:
            return
        event["event"] = "call"
        if structlog.contextvars._CONTEXT_VARS:  # noqa: SLF001 - only once any was bound
            for key, value in structlog.contextvars.get_contextvars().items():
                event.setdefault(key, value)
        event["level"] = "info"
        now = datetime.datetime.now(datetime.UTC).isoformat()
        event["timestamp"] = now.replace("+00:00", "Z")
        self.logger.msg(self.render(None, "info", event))


_direct: _DirectAudit | None = None


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
    and what the call added, such as rows scanned), and note the call in the metrics."""
    record_call(method, ms, outcome)
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
    direct = _direct
    if direct is not None and direct.current():
        direct.emit(fields)
    else:
        _audit.info("call", **fields)
