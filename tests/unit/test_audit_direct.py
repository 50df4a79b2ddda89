"""The audit line written directly (``audit._DirectAudit``) is the line structlog's logger
chain writes for the same call, in both formats, with context variables bound or not; a
level above info writes none; a configuration other than ours (``capture_logs``) gets the
event through structlog as before."""

from __future__ import annotations

import io
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import structlog
from structlog.testing import capture_logs

from metastore_server import audit, safe_log

FIELDS = {"method": "get_table", "peer": "127.0.0.1:40000", "ms": 0.4567, "outcome": "ok",
          "user": "alice", "db": "sales db", "table": "t=1", "rows": 3, "error": None}  # fmt: skip
_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


@pytest.fixture
def log_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Path]]:
    """``log_file(level, fmt)``: logging configured onto a real file as sys.stderr (the logger
    writes to its descriptor; set in the test's own phase, as pytest sets sys.stderr for each
    phase); structlog's configuration restored afterwards."""
    saved = structlog.get_config()
    path = tmp_path / "stderr.log"
    with path.open("w", encoding="utf-8") as file:

        def configure(level: str = "info", fmt: str = "console") -> Path:
            monkeypatch.setattr(sys, "stderr", file)
            audit.configure_logging(level, fmt)
            return path

        monkeypatch.setattr(audit, "_direct", audit._direct)  # noqa: SLF001 - restored after
        yield configure
    structlog.configure(**saved)


def _call(**extras: object) -> None:
    fields = {k: v for k, v in FIELDS.items() if k != "error"}
    audit.audit_call(**fields, extras=extras or None)  # type: ignore[arg-type]


def _through_structlog(**extras: object) -> None:
    fields = {k: v for k, v in FIELDS.items() if k not in ("error",)}
    fields["ms"] = round(float(fields["ms"]), 3)  # type: ignore[arg-type]
    structlog.get_logger("metastore.audit").info("call", **fields, **extras)


def _lines(path: Path) -> list[str]:
    return [_STAMP.sub("<time>", line) for line in path.read_text("utf-8").splitlines()]


@pytest.mark.parametrize("fmt", ["console", "json"])
@pytest.mark.parametrize("bound", [False, True])
def test_direct_line_is_structlogs_line(
    log_file: Callable[..., Path], fmt: str, bound: bool
) -> None:
    stderr_file = log_file("info", fmt)
    if bound:
        structlog.contextvars.bind_contextvars(connection=7, db="bound first")
    try:
        _call(rows_scanned=12, reply_cache="hit")
        _through_structlog(rows_scanned=12, reply_cache="hit")
    finally:
        structlog.contextvars.clear_contextvars()
    direct, chained = _lines(stderr_file)
    assert direct == chained
    assert "<time>" in direct
    if fmt == "json":
        parsed = json.loads(direct.replace('"<time>"', '"t"'))
        assert parsed["event"] == "call" and parsed["level"] == "info"
        assert parsed["rows_scanned"] == 12 and parsed["ms"] == 0.457
        assert ("connection" in parsed) is bound


def test_level_above_info_writes_no_audit_line(log_file: Callable[..., Path]) -> None:
    stderr_file = log_file("warning")
    _call()
    structlog.get_logger("other").warning("kept_warning", a=1)
    lines = _lines(stderr_file)
    assert len(lines) == 1 and "kept_warning" in lines[0]


def test_another_configuration_gets_the_event_through_structlog(
    log_file: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    stderr_file = log_file("info")
    # The module's logger follows the configuration of the moment (an earlier call in this
    # process may have cached one, which capture_logs would not see).
    monkeypatch.setattr(audit, "_audit", structlog.get_logger("metastore.audit"))
    with capture_logs() as logs:
        _call(rows_scanned=1)
    assert stderr_file.read_text("utf-8") == ""
    assert logs == [{**{k: v for k, v in FIELDS.items() if k != "error"}, "ms": 0.457,
                     "rows_scanned": 1, "event": "call", "log_level": "info"}]  # fmt: skip


def test_unwritable_log_drops_the_line_not_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    saved = structlog.get_config()
    monkeypatch.setattr(audit, "_direct", audit._direct)  # noqa: SLF001 - restored after
    closed = io.StringIO()
    closed.close()
    monkeypatch.setattr(sys, "stderr", closed)
    try:
        audit.configure_logging("info")
        before = safe_log.dropped_lines()
        _call()  # no exception: counted as dropped
        assert safe_log.dropped_lines() == before + 1
    finally:
        safe_log._DROPPED.count = 0  # noqa: SLF001 - no notice for the next test's log
        structlog.configure(**saved)
