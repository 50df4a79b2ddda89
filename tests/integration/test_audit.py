"""The audit line of each call: who, what, how long, how many rows; for filter calls the plan
and the rows read against the rows returned."""

from __future__ import annotations

import pytest
import structlog
from structlog.testing import capture_logs

from metastore_server import audit
from metastore_server.thrift_api import hms

from .conftest import audit_lines, create_db, make_partition, make_table


@pytest.fixture(scope="module", autouse=True)
def table(running) -> None:
    connection = running.client()
    create_db(connection, "adb")
    connection.create_table(make_table("adb", "t", keys=[("ds", "string"), ("hr", "int")]))
    connection.add_partitions(
        [make_partition("adb", "t", [f"2024-01-0{d}", str(h)]) for d in range(1, 4) for h in (1, 2)]
    )
    connection.close()


@pytest.fixture(autouse=True)
def fresh_audit_logger(monkeypatch) -> None:
    """A logger that follows the configuration of the moment: an earlier configure_logging in
    this process may have cached the module's one, which capture_logs would then not see."""
    monkeypatch.setattr(audit, "_audit", structlog.get_logger("metastore.audit"))


def test_filter_call_line_has_plan_and_rows(client) -> None:
    with capture_logs() as logs:
        found = client.get_partitions_by_filter("adb", "t", 'ds = "2024-01-02"', -1)
        (line,) = audit_lines(logs, "get_partitions_by_filter", 1)
    assert len(found) == 2
    assert line["method"] == "get_partitions_by_filter"
    assert (line["db"], line["table"], line["outcome"], line["rows"]) == ("adb", "t", "ok", 2)
    assert (line["plan"], line["rows_scanned"], line["rows_matched"]) == ("1 scan", 2, 2)
    assert line["ms"] >= 0 and line["peer"].startswith("127.0.0.1:")


def test_skip_scan_and_errors_are_on_the_line(client) -> None:
    with capture_logs() as logs:
        client.get_partitions_by_filter("adb", "t", "hr = 2", -1)
        with pytest.raises(hms.MetaException):
            client.get_partitions_by_filter("adb", "t", "nokey = 1", -1)
        skip, refused = audit_lines(logs, "get_partitions_by_filter", 2)
    assert (skip["rows_scanned"], skip["rows_matched"], skip["seeks"]) == (3, 3, 3)
    assert refused["outcome"] == "MetaException"
    assert "not a partitioning key" in refused["error"]
