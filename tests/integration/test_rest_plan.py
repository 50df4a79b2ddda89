"""Server-side scan planning of the Iceberg REST catalog against the server started as users
start it: pyiceberg's own server planning mode (``scan-planning-mode=server``) and the spec's
endpoints sent raw plan the same files as pyiceberg planning on the client, and read the same
rows; large plans come in batches behind ``plan-tasks``, and a large snapshot is planned in
the background (``submitted``, then ``completed``)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the 'rest' extra is not installed")
pytest.importorskip("pyiceberg.catalog.rest", reason="pyiceberg is not installed")
import pyarrow as pa  # noqa: E402
from pyiceberg.catalog.rest import RestCatalog  # noqa: E402
from pyiceberg.expressions import (  # noqa: E402
    And,
    BooleanExpression,
    EqualTo,
    GreaterThanOrEqual,
    In,
    IsNull,
    LessThan,
    Not,
    NotNull,
    Or,
    StartsWith,
)
from pyiceberg.partitioning import PartitionField, PartitionSpec  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.table import IncrementalAppendScan  # noqa: E402
from pyiceberg.transforms import IdentityTransform  # noqa: E402
from pyiceberg.types import DateType, LongType, NestedField, StringType  # noqa: E402
from support.rest_attacks import Setting, start  # noqa: E402

SCHEMA = Schema(NestedField(1, "id", LongType()), NestedField(2, "region", StringType()),
                NestedField(3, "day", DateType()))  # fmt: skip
SPEC = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "region"))
ARROW = pa.schema([pa.field("id", pa.int64()), pa.field("region", pa.string()),
                   pa.field("day", pa.date32())])  # fmt: skip
PLAN = "/v1/namespaces/planned/tables/events/plan"


@pytest.fixture(scope="module")
def batched(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setting]:
    """Plans at once, two tasks an answer (more behind plan-task tokens)."""
    yield from start(tmp_path_factory.mktemp("rest-plan"), ["--rest-plan-batch", "2"], 200)


@pytest.fixture(scope="module")
def background(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setting]:
    """Plans in the background any snapshot of more than one data file."""
    yield from start(tmp_path_factory.mktemp("rest-plan-async"),
                     ["--rest-plan-async-files", "1", "--rest-plan-batch", "3"], 200)  # fmt: skip


def _events(setting: Setting) -> tuple[Any, list[int]]:
    """``planned.events``: four appends over three regions (partitioned by region), one with
    a null day; the table (client-planning catalog) and its snapshot ids. (A null partition
    value is sent as JSON null, which pyiceberg 0.12's server planning cannot read:
    ``test_null_partition_values_are_sent_as_null``.)"""
    catalog = RestCatalog("client", uri=setting.both.uri)
    catalog.create_namespace_if_not_exists("planned")
    if catalog.table_exists("planned.events"):
        table = catalog.load_table("planned.events")
        return table, [s.snapshot_id for s in table.snapshots()]
    table = catalog.create_table("planned.events", schema=SCHEMA, partition_spec=SPEC)
    import datetime as dt

    for round_ in range(4):
        rows = [(round_ * 100 + i, ["eu", "us", "apac"][i % 3],
                 dt.date(2024, 1, 1 + round_)) for i in range(9)]  # fmt: skip
        if round_ == 3:
            rows.append((999, "eu", None))
        table.append(pa.Table.from_pylist(
            [dict(zip(("id", "region", "day"), row, strict=True)) for row in rows], ARROW))
    table = catalog.load_table("planned.events")
    return table, [s.snapshot_id for s in table.snapshots()]


FILTERS: list[BooleanExpression] = [
    EqualTo("region", "eu"),
    In("region", {"us", "apac"}),
    And(GreaterThanOrEqual("id", 150), LessThan("id", 305)),
    Or(EqualTo("region", "eu"), GreaterThanOrEqual("day", "2024-01-03")),
    IsNull("day"),
    Not(NotNull("day")),
    IsNull("region"),
    StartsWith("region", "a"),
    EqualTo("id", 123456),  # no such row: no file
]


def _paths(tasks: Any) -> list[str]:
    return sorted(task.file.file_path for task in tasks)


def _rows(table: pa.Table) -> list[dict[str, Any]]:
    return sorted(table.to_pylist(), key=lambda row: (row["id"], str(row.get("region"))))


def _server_mode(setting: Setting) -> RestCatalog:
    return RestCatalog("server", uri=setting.both.uri, **{"scan-planning-mode": "server"})


def _plan_requests(setting: Setting) -> float:
    """How many planTableScan requests the catalog answered 200 (its metrics)."""
    import urllib.request

    with urllib.request.urlopen(setting.both.uri + "/metrics", timeout=30) as answer:
        text = answer.read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("metastore_rest_requests_total") and "/plan\"" in line
               and 'status="200"' in line)  # fmt: skip


def test_pyiceberg_server_planning_matches_client_planning(batched: Setting) -> None:
    local, snapshots = _events(batched)
    remote = _server_mode(batched).load_table("planned.events")
    assert remote.scan()._should_use_server_side_planning()
    assert not local.scan()._should_use_server_side_planning()
    before = _plan_requests(batched)
    scans = [{}, *({"row_filter": f} for f in FILTERS),
             {"selected_fields": ("id",)}, {"snapshot_id": snapshots[1]},
             {"snapshot_id": snapshots[0], "row_filter": EqualTo("region", "us")}]
    for kwargs in scans:
        mine, theirs = local.scan(**kwargs), remote.scan(**kwargs)
        assert _paths(theirs.plan_files()) == _paths(mine.plan_files()), kwargs
        assert _rows(theirs.to_arrow()) == _rows(mine.to_arrow()), kwargs
    assert len(_paths(local.scan().plan_files())) > 2  # more than a batch: plan-tasks used
    assert _plan_requests(batched) - before >= 2 * len(scans)  # planned by the server


def _collect(setting: Setting, answer: dict[str, Any], path: str = PLAN) -> list[dict[str, Any]]:
    """Every data file of a completed answer, plan-task batches fetched."""
    assert answer["status"] == "completed", answer
    files, pending = [], list(answer.get("plan-tasks", []))
    files += [task["data-file"] for task in answer.get("file-scan-tasks", [])]
    tasks_path = path.rsplit("/plan", 1)[0] + "/tasks"
    while pending:
        status, batch = setting.both.http("POST", tasks_path, {"plan-task": pending.pop()})
        assert status == 200, batch
        assert "status" not in batch
        files += [task["data-file"] for task in batch.get("file-scan-tasks", [])]
        pending += batch.get("plan-tasks", [])
    return files


def test_raw_requests_match_client_planning(batched: Setting) -> None:
    local, snapshots = _events(batched)
    both = batched.both
    for expression in [None, *FILTERS]:
        body = {} if expression is None else {"filter": expression.model_dump(mode="json")}
        status, answer = both.http("POST", PLAN, body)
        assert status == 200, (body, answer)
        got = _collect(batched, answer)
        expected = local.scan(row_filter=expression) if expression else local.scan()
        assert sorted(f["file-path"] for f in got) == _paths(expected.plan_files())
        assert sum(f["record-count"] for f in got) == sum(
            t.file.record_count for t in expected.plan_files())
    # The spec's form of the constant filters, and a time-travel scan.
    every = len(_paths(local.scan().plan_files()))
    assert every == 12  # four appends of three regions
    for constant, count in (({"type": "true"}, every), ({"type": "false"}, 0), (True, every)):
        status, answer = both.http("POST", PLAN, {"filter": constant})
        assert status == 200 and len(_collect(batched, answer)) == count, answer
    status, answer = both.http("POST", PLAN, {"snapshot-id": snapshots[0]})
    assert status == 200 and len(_collect(batched, answer)) == 3  # the first append: 3 regions


def test_null_partition_values_are_sent_as_null(batched: Setting) -> None:
    catalog = RestCatalog("client", uri=batched.both.uri)
    catalog.create_namespace_if_not_exists("planned")
    table = catalog.create_table("planned.nulls", schema=SCHEMA, partition_spec=SPEC)
    table.append(pa.Table.from_pylist([{"id": 1, "region": None, "day": None}], ARROW))
    status, answer = batched.both.http("POST", "/v1/namespaces/planned/tables/nulls/plan", {})
    assert status == 200, answer
    assert [task["data-file"]["partition"] for task in answer["file-scan-tasks"]] == [[None]]


def test_stats_fields_and_partition_values_are_sent(batched: Setting) -> None:
    _events(batched)
    status, answer = batched.both.http(
        "POST", PLAN, {"filter": {"type": "eq", "term": "region", "value": "eu"},
                       "stats-fields": ["id", "day"]})  # fmt: skip
    assert status == 200, answer
    files = _collect(batched, answer)
    assert {tuple(f["partition"]) for f in files} == {("eu",)}
    for data_file in files:
        assert data_file["content"] == "data" and data_file["file-format"] == "parquet"
        bounds = dict(zip(data_file["lower-bounds"]["keys"], data_file["lower-bounds"]["values"],
                          strict=True))  # fmt: skip
        assert set(bounds) == {1, 3} and bounds[3].startswith("2024-01-0")  # ids of id, day
        assert set(data_file["value-counts"]["keys"]) == {1, 3}
    status, plain = batched.both.http("POST", PLAN, {})
    assert status == 200 and "lower-bounds" not in plain["file-scan-tasks"][0]["data-file"]


def test_incremental_scans_plan_the_appends_between_two_snapshots(batched: Setting) -> None:
    local, snapshots = _events(batched)
    status, answer = batched.both.http("POST", PLAN, {"start-snapshot-id": snapshots[0],
                                                      "end-snapshot-id": snapshots[2]})
    assert status == 200, answer
    got = sorted(f["file-path"] for f in _collect(batched, answer))
    expected = IncrementalAppendScan(local.metadata, local.io, from_snapshot_id=snapshots[0],
                                     to_snapshot_id=snapshots[2])  # fmt: skip
    assert got == _paths(expected.plan_files()) and len(got) == 6  # two appends, 3 files each
    status, answer = batched.both.http("POST", PLAN, {"start-snapshot-id": snapshots[2],
                                                      "end-snapshot-id": snapshots[0]})
    assert status == 400 and answer["error"]["type"] == "BadRequestException", answer


def test_config_advertises_the_planning_endpoints(batched: Setting) -> None:
    status, config = batched.both.http("GET", "/v1/config")
    assert status == 200
    for endpoint in ("POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan",
                     "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}",
                     "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}",
                     "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/tasks"):
        assert endpoint in config["endpoints"]


def _wait_completed(setting: Setting, plan_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 120
    while True:
        status, answer = setting.both.http("GET", f"{PLAN}/{plan_id}")
        assert status == 200, answer
        if answer["status"] != "submitted":
            return answer
        assert time.monotonic() < deadline, "the background plan did not complete"
        time.sleep(0.05)


def test_large_snapshots_are_planned_in_the_background(background: Setting) -> None:
    local, _ = _events(background)
    both = background.both
    status, answer = both.http("POST", PLAN, {"filter": {"type": "not-eq", "term": "region",
                                                         "value": "us"}})  # fmt: skip
    assert status == 200 and answer["status"] == "submitted", answer
    assert "file-scan-tasks" not in answer and "plan-tasks" not in answer
    done = _wait_completed(background, answer["plan-id"])
    got = sorted(f["file-path"] for f in _collect(background, done))
    assert got == _paths(local.scan(row_filter=Not(EqualTo("region", "us"))).plan_files())
    assert len(got) > 3  # more than a batch: plan-tasks fetched
    # A cancelled plan answers "cancelled", its tasks gone.
    status, second = both.http("POST", PLAN, {"select": ["id"]})
    assert status == 200 and second["status"] in ("submitted", "completed"), second
    assert both.http("DELETE", f"{PLAN}/{second['plan-id']}")[0] == 204
    status, cancelled = both.http("GET", f"{PLAN}/{second['plan-id']}")
    assert (status, cancelled) == (200, {"status": "cancelled"})
    for token in second.get("plan-tasks", []):
        assert both.http("POST", PLAN.rsplit("/plan", 1)[0] + "/tasks",
                         {"plan-task": token})[0] == 404  # fmt: skip


def test_planning_is_served_under_a_prefix(batched: Setting) -> None:
    """``/v1/hive/...`` is the default catalog: the same plan there as unprefixed, its tasks
    fetched under the prefix; a catalog of no such name is a 404."""
    local, _ = _events(batched)
    prefixed = PLAN.replace("/v1/", "/v1/hive/", 1)
    status, answer = batched.both.http("POST", prefixed, {})
    assert status == 200, answer
    got = _collect(batched, answer, prefixed)
    assert sorted(f["file-path"] for f in got) == _paths(local.scan().plan_files())
    status, missing = batched.both.http("POST", PLAN.replace("/v1/", "/v1/nocatalog/", 1), {})
    assert status == 404 and missing["error"]["type"] == "NoSuchWarehouseException", missing
