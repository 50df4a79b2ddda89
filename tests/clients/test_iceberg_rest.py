"""The Iceberg REST catalog (``serve --rest-port``) through pyiceberg's ``RestCatalog`` (from
PyPI) against our server started as users start it (the console script, the catalog in a
process of its own), and the same tables through pyiceberg's ``HiveCatalog`` on the Thrift
port: one store, both protocols."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pa = pytest.importorskip("pyarrow", reason="pyiceberg's writes need pyarrow")
pytest.importorskip("starlette", reason="the 'rest' extra is not installed")
rest = pytest.importorskip("pyiceberg.catalog.rest", reason="pyiceberg is not installed")
hive = pytest.importorskip("pyiceberg.catalog.hive", reason="pyiceberg[hive] is not installed")
from pyiceberg.exceptions import (  # noqa: E402
    CommitFailedException,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
)
from pyiceberg.table.update import AssertRefSnapshotId, SetPropertiesUpdate  # noqa: E402
from pyiceberg.transforms import DayTransform  # noqa: E402
from pyiceberg.types import DoubleType, TimestampType  # noqa: E402
from support.net import LOOPBACK, free_port  # noqa: E402
from support.our_server import OurServer  # noqa: E402

from metastore_server.thrift_api import hms, make_client  # noqa: E402

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])


class Both:
    """Our server with its REST catalog: the REST URI and the Thrift endpoint."""

    def __init__(self, server: OurServer, rest_port: int) -> None:
        self.server = server
        self.uri = f"http://{LOOPBACK}:{rest_port}"
        self.thrift = f"thrift://{LOOPBACK}:{server.port}"

    def rest_catalog(self) -> Any:
        return rest.RestCatalog("rest", uri=self.uri)

    def hive_catalog(self, warehouse: Path) -> Any:
        return hive.HiveCatalog("hive", uri=self.thrift, warehouse=f"file://{warehouse}", **{
            "lock-check-min-wait-time": "0.01", "lock-check-max-wait-time": "0.2",
            "lock-check-retries": "100"})  # fmt: skip

    def http(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """A raw request: status and decoded JSON body (None when empty)."""
        data = None if body is None else (body if isinstance(body, bytes) else
                                          json.dumps(body).encode())  # fmt: skip
        request = urllib.request.Request(self.uri + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                text = answer.read()
                return answer.status, json.loads(text) if text else None
        except urllib.error.HTTPError as error:
            text = error.read()
            return error.code, json.loads(text) if text else None


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Both]:
    rest_port = free_port(LOOPBACK)
    server = OurServer(tmp_path_factory.mktemp("rest"), extra_args=["--rest-port", str(rest_port)])
    with server:
        running = Both(server, rest_port)
        deadline = time.monotonic() + 60
        while True:
            try:
                if running.http("GET", "/v1/config")[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "the REST catalog did not start"
            time.sleep(0.1)
        yield running


def rows(*pairs: tuple[int, str]) -> Any:
    return pa.Table.from_pylist([{"id": i, "name": n} for i, n in pairs], schema=SCHEMA)


def ids(table: Any) -> list[int]:
    return sorted(table.scan().to_arrow().column("id").to_pylist())


def test_a_whole_table_cycle_through_rest(both: Both) -> None:
    cat = both.rest_catalog()
    cat.create_namespace("cycle", {"owner": "data-team", "comment": "the cycle"})
    assert ("cycle",) in cat.list_namespaces()
    props = cat.load_namespace_properties("cycle")
    assert props["owner"] == "data-team" and props["comment"] == "the cycle"
    assert props["location"].endswith("/cycle.db")
    summary = cat.update_namespace_properties("cycle", removals={"owner", "nope"},
                                              updates={"team": "x"})  # fmt: skip
    assert (summary.removed, summary.updated, summary.missing) == (["owner"], ["team"], ["nope"])

    table = cat.create_table("cycle.events", schema=SCHEMA)
    table.append(rows((1, "a"), (2, "b")))
    table.append(rows((3, "c")))
    table = cat.load_table("cycle.events")
    assert ids(table) == [1, 2, 3] and len(table.snapshots()) == 2

    with table.update_schema() as update:
        update.add_column("score", DoubleType())
        update.add_column("at", TimestampType())
    with table.update_spec() as spec:
        spec.add_field("at", DayTransform(), "at_day")
    with table.transaction() as transaction:
        transaction.set_properties(owner="data-team")
    table = cat.load_table("cycle.events")
    assert [f.name for f in table.schema().fields] == ["id", "name", "score", "at"]
    assert [f.name for f in table.spec().fields] == ["at_day"]
    assert table.properties["owner"] == "data-team"
    assert ids(table) == [1, 2, 3]

    cat.rename_table("cycle.events", "cycle.events_v2")
    assert cat.list_tables("cycle") == [("cycle", "events_v2")]
    assert not cat.table_exists("cycle.events") and cat.table_exists("cycle.events_v2")
    location = cat.load_table("cycle.events_v2").metadata_location
    cat.drop_table("cycle.events_v2")
    assert cat.list_tables("cycle") == []
    assert Path(location.removeprefix("file:")).exists()  # a drop keeps the files

    registered = cat.register_table("cycle.again", location)
    assert ids(registered) == [1, 2, 3]
    data = [Path(t.file.file_path.removeprefix("file:")) for t in registered.scan().plan_files()]
    cat.purge_table("cycle.again")
    assert not any(p.exists() for p in data) and not Path(location.removeprefix("file:")).exists()
    cat.drop_namespace("cycle")
    assert ("cycle",) not in cat.list_namespaces()


def test_a_staged_create_is_made_by_its_commit(both: Both) -> None:
    cat = both.rest_catalog()
    cat.create_namespace("staged")
    transaction = cat.create_table_transaction("staged.t", schema=SCHEMA)
    assert not cat.table_exists("staged.t")  # nothing kept before the commit
    transaction.append(rows((7, "x")))
    transaction.commit_transaction()
    assert ids(cat.load_table("staged.t")) == [7]


def test_the_failures_are_the_specs(both: Both) -> None:
    cat = both.rest_catalog()
    cat.create_namespace("fails")
    with pytest.raises(NamespaceAlreadyExistsError):
        cat.create_namespace("fails")
    with pytest.raises(NoSuchNamespaceError):
        cat.load_namespace_properties("missing_ns")
    with pytest.raises(NoSuchNamespaceError):
        cat.create_table("missing_ns.t", schema=SCHEMA)
    with pytest.raises(NoSuchTableError):
        cat.load_table("fails.missing")
    table = cat.create_table("fails.t", schema=SCHEMA)
    with pytest.raises(TableAlreadyExistsError):
        cat.create_table("fails.t", schema=SCHEMA)
    with pytest.raises(NamespaceNotEmptyError):
        cat.drop_namespace("fails")

    stale = cat.load_table("fails.t")
    table.append(rows((1, "a")))
    # Its main branch moved on meanwhile: answered 409, which pyiceberg retries on the
    # table as it is now. Nothing is lost.
    stale.append(rows((2, "b")))
    assert ids(cat.load_table("fails.t")) == [1, 2]
    stale_ref = {"requirements": [{"type": "assert-ref-snapshot-id", "ref": "main",
                                   "snapshot-id": None}],
                 "updates": [{"action": "set-properties", "updates": {"k": "v"}}]}  # fmt: skip
    status, body = both.http("POST", "/v1/namespaces/fails/tables/t", stale_ref)
    assert status == 409 and body["error"]["type"] == "CommitFailedException"
    with pytest.raises(CommitFailedException):  # the same through the client
        cat.commit_table(cat.load_table("fails.t"), (AssertRefSnapshotId(ref="main"),),
                         (SetPropertiesUpdate(updates={"k": "v"}),))  # fmt: skip

    uuid = str(table.metadata.table_uuid)
    wrong = {"requirements": [{"type": "assert-table-uuid",
                               "uuid": "00000000-0000-0000-0000-000000000000"}],
             "updates": [{"action": "set-properties", "updates": {"k": "v"}}]}  # fmt: skip
    status, body = both.http("POST", "/v1/namespaces/fails/tables/t", wrong)
    assert status == 409 and body["error"]["type"] == "CommitFailedException"
    assert uuid in body["error"]["message"] or "UUID" in body["error"]["message"]
    unknown = {"requirements": [], "updates": [{"action": "no-such-update"}]}
    status, body = both.http("POST", "/v1/namespaces/fails/tables/t", unknown)
    assert status == 400 and set(body["error"]) == {"message", "type", "code"}
    status, body = both.http("POST", "/v1/namespaces/fails/tables/t", b"{not json")
    assert status == 400 and body["error"]["code"] == 400
    status, body = both.http("GET", "/v1/namespaces/fails/tables/gone")
    assert (status, body["error"]["type"]) == (404, "NoSuchTableException")
    status, body = both.http("GET", "/v1/namespaces/a%1Fb")
    assert status == 400 and "nested" in body["error"]["message"]
    status, body = both.http("GET", "/v1/nowhere")
    assert status == 404 and body["error"]["code"] == 404
    assert "k" not in cat.load_table("fails.t").properties


def test_one_table_through_both_protocols(both: Both, tmp_path: Path) -> None:
    """Made through REST, appended through HiveCatalog (Thrift), read through REST; and the
    reverse; both see the same tables, and the Thrift API lists them."""
    rest_cat, hive_cat = both.rest_catalog(), both.hive_catalog(tmp_path)
    rest_cat.create_namespace("mixed")
    rest_cat.create_table("mixed.from_rest", schema=SCHEMA).append(rows((1, "rest")))
    hive_cat.load_table("mixed.from_rest").append(rows((2, "hive")))
    assert ids(rest_cat.load_table("mixed.from_rest")) == [1, 2]

    hive_cat.create_table("mixed.from_hive", schema=SCHEMA).append(rows((3, "hive")))
    rest_cat.load_table("mixed.from_hive").append(rows((4, "rest")))
    assert ids(hive_cat.load_table("mixed.from_hive")) == [3, 4]
    assert sorted(rest_cat.list_tables("mixed")) == [("mixed", "from_hive"), ("mixed", "from_rest")]

    client = make_client(LOOPBACK, both.server.port)
    try:
        assert sorted(client.get_all_tables("mixed")) == ["from_hive", "from_rest"]
        table = client.get_table("mixed", "from_rest")
        assert table.parameters["table_type"] == "ICEBERG"
        assert table.parameters["metadata_location"] == rest_cat.load_table(
            "mixed.from_rest").metadata_location  # fmt: skip
        assert client.show_locks(hms.ShowLocksRequest(dbname="mixed")).locks == []
    finally:
        client.close()
