"""Metrics reports (``POST .../tables/{table}/metrics``) kept and listed (``GET`` on the same
path), and their attacks, against the server started as users start it: checked as the
spec's ReportMetricsRequest (a malformed or oversized one is a 400 and nothing is kept),
the last ``KEEP`` of a table kept, gone with the table (dropped over REST or Thrift), and
only for a caller who may read the table."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the 'rest' extra is not installed")
pytest.importorskip("pyiceberg.catalog.rest", reason="pyiceberg is not installed")
from support.rest_attacks import Setting, start  # noqa: E402
from support.rest_attacks import create as _create  # noqa: E402
from support.rest_attacks import namespace as _namespace  # noqa: E402
from support.rest_attacks import secured as secured_setting  # noqa: E402
from support.rest_attacks import token as _token  # noqa: E402

from metastore_server.catalog.core.metrics_reports import KEEP  # noqa: E402
from metastore_server.rest.metrics_reports import MAX_REPORT_BYTES  # noqa: E402


@pytest.fixture(scope="module")
def setting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setting]:
    yield from start(tmp_path_factory.mktemp("rest-metrics"))


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setting]:
    yield from secured_setting(tmp_path_factory.mktemp("rest-metrics-secured"))


def scan_report(snapshot: int = 1, **extra: Any) -> dict[str, Any]:
    return {"report-type": "scan-report", "table-name": "lake.m.t", "snapshot-id": snapshot,
            "filter": True, "schema-id": 0, "projected-field-ids": [1],
            "projected-field-names": ["id"],
            "metrics": {"total-planning-duration": {"count": 1, "time-unit": "nanoseconds",
                                                    "total-duration": 2644235116},
                        "result-data-files": {"unit": "count", "value": 1}},
            **extra}  # fmt: skip


def commit_report(snapshot: int = 2) -> dict[str, Any]:
    return {"report-type": "commit-report", "table-name": "lake.m.t", "snapshot-id": snapshot,
            "sequence-number": 1, "operation": "append",
            "metrics": {"added-data-files": {"unit": "count", "value": 1}},
            "metadata": {"engine": "test"}}  # fmt: skip


def _listed(setting: Setting, path: str, token: str = "") -> list[dict[str, Any]]:
    status, answer = setting.both.http("GET", path, token=token)
    assert status == 200, answer
    return list(answer["reports"])


def test_reports_are_checked_kept_and_listed(setting: Setting) -> None:
    both = setting.both
    _namespace(both, "m")
    assert _create(both, "m", "t")[0] == 200
    path = "/v1/namespaces/m/tables/t/metrics"
    assert _listed(setting, path) == []
    assert both.http("POST", path, scan_report())[0] == 204
    assert both.http("POST", path, commit_report())[0] == 204
    listed = _listed(setting, path)
    assert [r["report"] for r in listed] == [commit_report(), scan_report()]  # newest first
    assert all(isinstance(r["received-ms"], int) for r in listed)
    assert [r["report"]["snapshot-id"] for r in _listed(setting, path + "?limit=1")] == [2]
    for limit in ("0", "-1", "x", str(KEEP + 1)):
        assert both.http("GET", f"{path}?limit={limit}")[0] == 400
    padding = "x" * MAX_REPORT_BYTES
    malformed: list[Any] = [
        b"not json", b"[" * 100_000, b"[" * 5_000, [], "text", None,
        {"report-type": "other-report"}, {"report-type": None},
        {k: v for k, v in scan_report().items() if k != "projected-field-ids"},
        {k: v for k, v in commit_report().items() if k != "operation"},
        scan_report(**{"snapshot-id": True}), scan_report(**{"snapshot-id": "1"}),
        scan_report(**{"projected-field-ids": ["1"]}), scan_report(filter="x"),
        scan_report(metrics={"m": {"unit": "count"}}), scan_report(metrics=[]),
        scan_report(metadata={"k": 1}), scan_report(metadata={"k": padding}),
    ]  # fmt: skip
    for body in malformed:
        status, answer = both.http("POST", path, body if body is not None else b"")
        assert status == 400, (str(body)[:80], answer)
        assert answer["error"]["type"] == "BadRequestException"
    assert len(_listed(setting, path)) == 2  # nothing kept of them
    assert both.http("POST", "/v1/namespaces/m/tables/none/metrics", scan_report())[0] == 404
    assert both.http("GET", "/v1/namespaces/m/tables/none/metrics")[0] == 404
    assert both.http("GET", "/v1/namespaces/none/tables/t/metrics")[0] == 404
    setting.untouched()


def test_a_table_keeps_its_last_reports(setting: Setting) -> None:
    both = setting.both
    _namespace(both, "m_bound")
    assert _create(both, "m_bound", "t")[0] == 200
    path = "/v1/namespaces/m_bound/tables/t/metrics"
    for snapshot in range(KEEP + 3):
        assert both.http("POST", path, scan_report(snapshot))[0] == 204
    listed = [r["report"]["snapshot-id"] for r in _listed(setting, path)]
    assert listed == list(reversed(range(3, KEEP + 3)))


def test_reports_go_with_their_table(setting: Setting) -> None:
    """Dropped over REST, over Thrift, or unregistered: a table made again under the same
    name has no reports; a renamed table keeps its own."""
    both = setting.both
    _namespace(both, "m_drop")
    path = "/v1/namespaces/m_drop/tables/t/metrics"
    drops = [lambda: both.http("DELETE", "/v1/namespaces/m_drop/tables/t")[0] == 204,
             lambda: both.http("POST", "/v1/namespaces/m_drop/tables/t/unregister")[0] == 200,
             lambda: _thrift_drop(setting, "m_drop", "t")]  # fmt: skip
    for drop in drops:
        assert _create(both, "m_drop", "t")[0] == 200
        assert _listed(setting, path) == []
        assert both.http("POST", path, scan_report())[0] == 204
        assert len(_listed(setting, path)) == 1
        assert drop()
    assert _create(both, "m_drop", "t")[0] == 200
    assert both.http("POST", path, commit_report())[0] == 204
    assert both.http("POST", "/v1/tables/rename", {
        "source": {"namespace": ["m_drop"], "name": "t"},
        "destination": {"namespace": ["m_drop"], "name": "renamed"}})[0] == 204
    renamed = _listed(setting, "/v1/namespaces/m_drop/tables/renamed/metrics")
    assert [r["report"] for r in renamed] == [commit_report()]


def _thrift_drop(setting: Setting, db: str, name: str) -> bool:
    with setting.thrift() as client:
        client.drop_table(db, name, False)
    return True


def test_only_a_reader_of_the_table_posts_or_lists(secured: Setting) -> None:
    both = secured.both
    alice, bob = _token(both, "alice"), _token(both, "bob")
    _namespace(both, "m_alice", alice)
    assert _create(both, "m_alice", "t", alice)[0] == 200
    path = "/v1/namespaces/m_alice/tables/t/metrics"
    assert both.http("POST", path, scan_report(), token=alice)[0] == 204
    assert both.http("POST", path, scan_report())[0] == 401
    assert both.http("GET", path)[0] == 401
    status, answer = both.http("POST", path, scan_report(7), token=bob)
    assert status == 403, answer
    status, answer = both.http("GET", path, token=bob)
    assert status == 403 and "snapshot" not in json.dumps(answer), answer
    assert [r["report"]["snapshot-id"] for r in _listed(secured, path, alice)] == [1]
    secured.untouched()
