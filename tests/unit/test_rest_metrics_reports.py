"""The checks of a metrics report (the spec's ReportMetricsRequest), and the arguments of a
call made in a catalog other than ``hive``: pure logic."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("starlette", reason="the 'rest' extra is not installed")
from metastore_server.rest.calls import in_catalog  # noqa: E402
from metastore_server.rest.errors import RestError  # noqa: E402
from metastore_server.rest.metrics_reports import MAX_REPORT_BYTES, checked  # noqa: E402
from metastore_server.thrift_api import hms  # noqa: E402

TIMER = {"time-unit": "nanoseconds", "count": 1, "total-duration": 5}
COMMIT = {"report-type": "commit-report", "table-name": "t", "snapshot-id": 1,
          "sequence-number": 1, "operation": "append",
          "metrics": {"a": {"unit": "count", "value": 1}, "b": TIMER}}  # fmt: skip


def _body(report: object) -> bytes:
    return json.dumps(report).encode()


def test_a_commit_report_is_taken_whole() -> None:
    assert checked(_body(COMMIT)) == COMMIT


@pytest.mark.parametrize("change", [
    {"report-type": "scan-report"},  # a scan report's fields missing
    {"sequence-number": False}, {"sequence-number": 1.5}, {"operation": 3},
    {"metrics": {"a": {"unit": "count", "value": "1"}}}, {"metrics": {"a": 1}},
    {"metadata": {"k": None}}, {"metadata": []},
])  # fmt: skip
def test_a_field_of_the_wrong_shape_is_a_400(change: dict[str, object]) -> None:
    with pytest.raises(RestError) as info:
        checked(_body({**COMMIT, **change}))
    assert info.value.code == 400


def test_a_report_over_the_limit_is_a_400_before_it_is_read() -> None:
    with pytest.raises(RestError) as info:
        checked(b" " * (MAX_REPORT_BYTES + 1))
    assert info.value.code == 400 and "at most" in info.value.message


def test_calls_in_another_catalog_name_it() -> None:
    table, db = hms.Table(dbName="d", tableName="t"), hms.Database(name="d")
    assert in_catalog("get_table", {"dbname": "d", "tbl_name": "t"}, "lake") == {
        "dbname": "@lake#d", "tbl_name": "t"}
    assert in_catalog("drop_table", {"dbname": "d", "name": "t"}, "lake")["name"] == "t"
    assert in_catalog("drop_database", {"name": "d"}, "lake")["name"] == "@lake#d"
    in_catalog("create_table", {"tbl": table}, "lake")
    in_catalog("create_database", {"database": db}, "lake")
    assert (table.catName, db.catalogName) == ("lake", "lake")
    same = {"dbname": "d"}
    assert in_catalog("get_table", same, "hive") == {"dbname": "d"}
