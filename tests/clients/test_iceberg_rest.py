"""The Iceberg REST catalog (``serve --rest-port``) through pyiceberg's ``RestCatalog`` (from
PyPI) against our server started as users start it (the console script, the catalog in a
process of its own), and the same tables through pyiceberg's ``HiveCatalog`` on the Thrift
port: one store, both protocols."""

from __future__ import annotations

import select
import subprocess
import sys
import time
import urllib.error
import urllib.parse
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
    ForbiddenError,
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
from support.rest_catalog import Both, ready  # noqa: E402

from metastore_server.sasl_client import SaslLogin, open_sasl_client  # noqa: E402
from metastore_server.thrift_api import hms, make_client  # noqa: E402

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Both]:
    rest_port = free_port(LOOPBACK)
    server = OurServer(tmp_path_factory.mktemp("rest"), extra_args=["--rest-port", str(rest_port)])
    with server:
        yield ready(Both(server, rest_port), 200)


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
    status, body = both.http("POST", "/v1/namespaces/fails/properties",
                             {"removals": ["a"], "updates": {"a": "1"}})  # fmt: skip
    assert (status, body["error"]["type"]) == (422, "UnprocessableEntityException")
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


WRITER = """
import sys, time
import pyarrow as pa
from pyiceberg.catalog.hive import HiveCatalog
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import CommitFailedException

kind, uri, warehouse, number, appends = sys.argv[1:3] + [sys.argv[3], int(sys.argv[4]),
                                                         int(sys.argv[5])]
if kind == "rest":
    cat = RestCatalog("rest", uri=uri)
else:
    cat = HiveCatalog("hive", uri=uri, warehouse=warehouse, **{
        "lock-check-min-wait-time": "0.01", "lock-check-max-wait-time": "0.2",
        "lock-check-retries": "100"})
schema = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])
for step in range(appends):
    for attempt in range(200):
        try:
            rows = pa.Table.from_pylist([{"id": number * 1000 + step, "name": kind}],
                                        schema=schema)
            cat.load_table("race.t").append(rows)
            break
        except CommitFailedException:
            time.sleep(0.02)
    else:
        sys.exit(f"{kind} writer {number} step {step} never committed")
"""


def test_rest_and_hive_catalog_commits_racing_lose_no_snapshot(both: Both, tmp_path: Path) -> None:
    """Two processes append through REST and two through HiveCatalog (Thrift), 25 times each,
    to one table at once: every commit is made under the table's HMS lock, so all 100
    snapshots and rows are there, and no lock is left."""
    both.rest_catalog().create_namespace("race")
    both.rest_catalog().create_table("race.t", schema=SCHEMA)
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    appends = 25
    writers = [("rest", both.uri), ("hive", both.thrift), ("rest", both.uri),
               ("hive", both.thrift)]  # fmt: skip
    processes = [
        subprocess.Popen(
            [sys.executable, str(script), kind, uri, f"file://{tmp_path}", str(n), str(appends)],
            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )  # fmt: skip
        for n, (kind, uri) in enumerate(writers)
    ]
    outputs = [p.communicate(timeout=600)[0].decode(errors="replace") for p in processes]
    assert [p.returncode for p in processes] == [0] * len(writers), outputs
    table = both.rest_catalog().load_table("race.t")
    assert len(table.snapshots()) == len(writers) * appends
    assert ids(table) == sorted(n * 1000 + s for n in range(len(writers)) for s in range(appends))
    client = make_client(LOOPBACK, both.server.port)
    try:
        assert client.show_locks(hms.ShowLocksRequest(dbname="race")).locks == []
    finally:
        client.close()


def _table_change(table: Any, requirements: list[Any], key: str) -> dict[str, Any]:
    return {"identifier": {"namespace": list(table.name()[:-1]), "name": table.name()[-1]},
            "requirements": requirements,
            "updates": [{"action": "set-properties", "updates": {key: "yes"}}]}  # fmt: skip


def test_a_multi_table_transaction_is_all_or_nothing(both: Both) -> None:
    cat = both.rest_catalog()
    cat.create_namespace("multi")
    first = cat.create_table("multi.first", schema=SCHEMA)
    second = cat.create_table("multi.second", schema=SCHEMA)
    holds = [{"type": "assert-table-uuid", "uuid": str(second.metadata.table_uuid)}]
    fails = [{"type": "assert-table-uuid", "uuid": "00000000-0000-0000-0000-000000000000"}]
    files_before = set((Path(first.location().removeprefix("file:")) / "metadata").iterdir())

    status, body = both.http("POST", "/v1/transactions/commit", {"table-changes": [
        _table_change(first, [], "tx1"), _table_change(second, fails, "tx1")]})  # fmt: skip
    assert status == 409 and body["error"]["type"] == "CommitFailedException"
    assert "tx1" not in cat.load_table("multi.first").properties
    assert "tx1" not in cat.load_table("multi.second").properties
    assert set((Path(first.location().removeprefix("file:")) / "metadata").iterdir()) == (
        files_before)  # no file of the failed transaction left behind

    status, _ = both.http("POST", "/v1/transactions/commit", {"table-changes": [
        _table_change(first, [], "tx2"), _table_change(second, holds, "tx2")]})  # fmt: skip
    assert status == 204
    assert cat.load_table("multi.first").properties["tx2"] == "yes"
    assert cat.load_table("multi.second").properties["tx2"] == "yes"
    status, body = both.http("POST", "/v1/transactions/commit", {"table-changes": []})
    assert status == 400


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Both]:
    """Our server with --auth password (alice, bob) and --authorization privileges."""
    from metastore_server.server.passwords import hash_password

    work = tmp_path_factory.mktemp("rest-secured")
    passwords = work / "passwords"
    passwords.write_text(f"alice:{hash_password('wonderland')}\n"
                         f"bob:{hash_password('builder')}\n")  # fmt: skip
    rest_port = free_port(LOOPBACK)
    server = OurServer(work / "server", extra_args=[
        "--rest-port", str(rest_port), "--auth", "password", "--password-file", str(passwords),
        "--authorization", "privileges", "--admin-users", "alice",
        "--rest-oauth-tokens", "on"])  # fmt: skip
    with server:
        yield ready(Both(server, rest_port), 401)  # it answers, and asks who is calling


def test_credentials_are_required_and_checked_as_the_thrift_sides(secured: Both) -> None:
    status, body = secured.http("GET", "/v1/namespaces")
    assert status == 401 and body["error"]["type"] == "NotAuthorizedException"
    with pytest.raises(Exception, match="Unauthorized|401|invalid_client"):
        rest.RestCatalog("x", uri=secured.uri, credential="alice:wrong")

    alice = rest.RestCatalog("alice", uri=secured.uri, credential="alice:wonderland")
    alice.create_namespace("private")
    table = alice.create_table("private.t", schema=SCHEMA)
    table.append(rows((1, "a")))
    assert ids(alice.load_table("private.t")) == [1]
    basic = rest.RestCatalog("basic", uri=secured.uri, **{
        "auth": {"type": "basic", "basic": {"username": "alice", "password": "wonderland"}}})
    assert ("private", "t") in basic.list_tables("private")

    bob = rest.RestCatalog("bob", uri=secured.uri, credential="bob:builder")
    with pytest.raises(ForbiddenError):  # the authorizer: bob holds nothing on alice's table
        bob.load_table("private.t")

    status, issued = secured.token("client_credentials", "alice", "wonderland")
    assert status == 200 and issued["token_type"] == "bearer" and issued["expires_in"] > 0
    assert secured.token("client_credentials", "alice", "nope") == (
        401, {"error": "invalid_client", "error_description": "Unknown client or wrong secret"})
    assert secured.token("password", "alice", "wonderland")[0] == 400
    token = issued["access_token"]
    assert secured.http("GET", "/v1/namespaces", token=token)[0] == 200
    forged = token[:-2] + ("AA" if not token.endswith("AA") else "BB")
    status, body = secured.http("GET", "/v1/namespaces", token=forged)
    assert status == 401 and body["error"]["type"] == "NotAuthorizedException"

    client = open_sasl_client(LOOPBACK, secured.server.port,
                              SaslLogin("plain", user="alice", password="wonderland"))
    try:
        assert client.get_table("private", "t").owner == "alice"
        assert client.get_database("private").ownerName == "alice"
    finally:
        client.close()


def test_metadata_and_data_on_s3(tmp_path: Path) -> None:
    """A namespace located on S3 (a real S3 API server, moto's): the catalog writes each
    commit's metadata file there with the server's S3 settings, which it hands to clients as
    defaults; the client writes and reads the data with its own keys."""
    pytest.importorskip("moto", reason="the S3 tests need moto[server]")
    from support.s3_server import MotoS3

    (tmp_path / "moto").mkdir()
    with MotoS3(tmp_path / "moto") as s3:
        rest_port = free_port(LOOPBACK)
        server = OurServer(tmp_path / "server", env=s3.admin.env(s3.url), extra_args=[
            "--rest-port", str(rest_port), "--s3-endpoint", s3.url,
            "--s3-region", "us-east-1"])  # fmt: skip
        with server:
            running = ready(Both(server, rest_port), 200)
            status, config = running.http("GET", "/v1/config")
            assert config["defaults"]["s3.endpoint"] == s3.url
            cat = rest.RestCatalog("s3", uri=running.uri, **{
                "s3.access-key-id": s3.admin.key, "s3.secret-access-key": s3.admin.secret})
            cat.create_namespace("lake", {"location": f"s3://{s3.bucket}/wh/lake.db"})
            table = cat.create_table("lake.events", schema=SCHEMA)
            assert table.location() == f"s3://{s3.bucket}/wh/lake.db/events"
            table.append(rows((1, "a")))
            table.append(rows((2, "b")))
            assert ids(cat.load_table("lake.events")) == [1, 2]
            keys = s3.keys("wh/lake.db/events/")
            metadata = [k for k in keys if k.endswith(".metadata.json")]
            assert [k.rsplit("/", 1)[1][:5] for k in sorted(metadata)] == ["00000", "00001",
                                                                            "00002"]
            assert any(k.endswith(".parquet") for k in keys)
            assert cat.load_table("lake.events").metadata_location == (
                f"s3://{s3.bucket}/{sorted(metadata)[-1]}")



def test_tls_with_the_servers_certificate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With --tls-cert/--tls-key the REST catalog speaks HTTPS only, with that certificate; a
    client that trusts it works, a plain HTTP request gets no answer."""
    from support.tls import make_certificate

    for name in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):  # requests prefers them to the
        monkeypatch.delenv(name, raising=False)  # client's own CA bundle

    cert, key = make_certificate(tmp_path)
    rest_port = free_port(LOOPBACK)
    server = OurServer(tmp_path / "server", extra_args=[
        "--rest-port", str(rest_port), "--tls-cert", str(cert), "--tls-key", str(key)])
    with server:
        uri = f"https://{LOOPBACK}:{rest_port}"
        catalog = None
        deadline = time.monotonic() + 60
        while catalog is None:
            try:
                catalog = rest.RestCatalog("tls", uri=uri, **{"ssl": {"cabundle": str(cert)}})
            except Exception:  # noqa: BLE001 - not listening yet
                assert time.monotonic() < deadline, "the REST catalog did not start"
                time.sleep(0.2)
        catalog.create_namespace("secure")
        catalog.create_table("secure.t", schema=SCHEMA).append(rows((1, "a")))
        assert ids(catalog.load_table("secure.t")) == [1]
        with pytest.raises((urllib.error.URLError, ConnectionError, OSError)):
            urllib.request.urlopen(f"http://{LOOPBACK}:{rest_port}/v1/config", timeout=10).read()


def test_views(both: Both) -> None:
    """Iceberg views: made and read through pyiceberg, replaced and renamed through the
    spec's endpoints, kept as HiveCatalog keeps them (a VIRTUAL_VIEW, table_type
    ICEBERG-VIEW), apart from the tables."""
    from pyiceberg.exceptions import NoSuchViewError
    from pyiceberg.view.metadata import SQLViewRepresentation, ViewRepresentation, ViewVersion

    cat = both.rest_catalog()
    cat.create_namespace("views")
    cat.create_table("views.t", schema=SCHEMA)
    sql = SQLViewRepresentation(type="sql", sql="SELECT id FROM views.t", dialect="spark")
    version = ViewVersion(version_id=1, schema_id=0, default_namespace=["views"],
                          representations=[ViewRepresentation(sql)])  # fmt: skip
    view = cat.create_view("views.v", schema=pa.schema([pa.field("id", pa.int64())]),
                           view_version=version)  # fmt: skip
    assert cat.list_views("views") == [("views", "v")]
    assert cat.list_tables("views") == [("views", "t")]
    assert cat.view_exists("views.v") and not cat.view_exists("views.t")
    assert cat.load_view("views.v").metadata.versions[0].representations[0].root.sql == (
        sql.sql)
    with pytest.raises(NoSuchTableError):
        cat.load_table("views.v")

    new_sql = {"type": "sql", "sql": "SELECT id, name FROM views.t", "dialect": "spark"}
    replace = {
        "requirements": [{"type": "assert-view-uuid", "uuid": view.metadata.view_uuid}],
        "updates": [
            {"action": "add-schema", "schema": {"type": "struct", "schema-id": 1, "fields": [
                {"id": 1, "name": "id", "type": "long", "required": False},
                {"id": 2, "name": "name", "type": "string", "required": False}]}},
            {"action": "add-view-version", "view-version": {
                "version-id": 2, "schema-id": 1, "timestamp-ms": 1, "summary": {},
                "representations": [new_sql], "default-namespace": ["views"]}},
            {"action": "set-current-view-version", "view-version-id": -1},
            {"action": "set-properties", "updates": {"owner": "team"}},
        ],
    }  # fmt: skip
    status, body = both.http("POST", "/v1/namespaces/views/views/v", replace)
    assert status == 200, body
    assert body["metadata"]["current-version-id"] == 2
    assert body["metadata"]["properties"]["owner"] == "team"
    assert body["metadata-location"].rsplit("/", 1)[1].startswith("00001-")
    stale = {**replace, "requirements": [{"type": "assert-view-uuid", "uuid": "other"}]}
    assert both.http("POST", "/v1/namespaces/views/views/v", stale)[0] == 409
    unknown = {"requirements": [], "updates": [{"action": "no-such-update"}]}
    assert both.http("POST", "/v1/namespaces/views/views/v", unknown)[0] == 400

    client = make_client(LOOPBACK, both.server.port)
    try:
        hive_view = client.get_table("views", "v")
        assert hive_view.tableType == "VIRTUAL_VIEW"
        assert hive_view.parameters["table_type"] == "ICEBERG-VIEW"
        assert hive_view.parameters["metadata_location"] == body["metadata-location"]
        assert hive_view.viewOriginalText == new_sql["sql"]
        assert [c.name for c in hive_view.sd.cols] == ["id", "name"]
    finally:
        client.close()

    status, _ = both.http("POST", "/v1/views/rename", {
        "source": {"namespace": ["views"], "name": "v"},
        "destination": {"namespace": ["views"], "name": "v2"}})  # fmt: skip
    assert status == 204
    assert cat.list_views("views") == [("views", "v2")]
    assert cat.load_view("views.v2").metadata.current_version_id == 2
    cat.drop_view("views.v2")
    assert cat.list_views("views") == []
    with pytest.raises(NoSuchViewError):
        cat.load_view("views.v2")
    status, body = both.http("GET", "/v1/namespaces/views/views/v2")
    assert (status, body["error"]["type"]) == (404, "NoSuchViewException")


def _raw(port: int, request: bytes) -> bytes:
    """Send ``request`` as it is on a new connection (kept open for writing: a client that
    stopped sending, not one that went away); what came back before the server closed it."""
    import socket

    with socket.create_connection((LOOPBACK, port), timeout=30) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def _slow_client(port: int) -> Any:
    """A connection that sent a request's headers and 10 of its 100 body bytes."""
    import socket

    sock = socket.create_connection((LOOPBACK, port), timeout=30)
    sock.sendall(b"POST /v1/namespaces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                 b"\r\nContent-Length: 100\r\n\r\n{\"namespac")  # fmt: skip
    return sock


def test_hostile_requests_get_errors_and_change_nothing(tmp_path: Path) -> None:
    """A body over --max-message-size (declared or sent), one that stalls past
    --message-timeout (other clients answered meanwhile), JSON nested past any sane depth,
    and bodies of the wrong shape get 4xx answers in the error model; the catalog goes on."""
    rest_port = free_port(LOOPBACK)
    server = OurServer(tmp_path / "server", extra_args=[
        "--rest-port", str(rest_port), "--max-message-size", "65536",
        "--message-timeout", "5"])  # fmt: skip
    with server:
        running = ready(Both(server, rest_port), 200)
        slow = _slow_client(rest_port)  # part of a body, then nothing
        for _ in range(5):  # others are answered meanwhile, not after it
            assert running.http("GET", "/v1/namespaces")[0] == 200
        assert select.select([slow], [], [], 0)[0] == []  # still waiting for its body
        answer = b""
        while chunk := slow.recv(65536):  # the server closes it after its answer
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 408") and b"RequestTimeoutException" in answer
        slow.close()
        claimed = _raw(rest_port, b"POST /v1/namespaces HTTP/1.1\r\nHost: x\r\n"
                                  b"Connection: close\r\nContent-Length: 99999999999\r\n\r\n{}")
        assert claimed.startswith(b"HTTP/1.1 413") and b"RequestTooLargeException" in claimed
        big = {"namespace": ["big"], "properties": {"k": "v" * 100_000}}
        status, body = running.http("POST", "/v1/namespaces", big)
        assert status == 413 and body["error"]["code"] == 413
        deep = b"[" * 100_000 + b"]" * 100_000
        status, body = running.http("POST", "/v1/namespaces", deep[:60_000])
        assert status == 400 and body["error"]["type"] == "BadRequestException"
        for bad in ([], {"namespace": "x"}, {"namespace": [1]}, {"namespace": ["a"],
                                                                  "properties": {"k": 1}}):
            status, body = running.http("POST", "/v1/namespaces", bad)
            assert status == 400 and set(body["error"]) == {"message", "type", "code"}, bad
        status, body = running.http("POST", "/v1/namespaces/default/tables",
                                    {"name": "t", "schema": {"type": "nope"}})  # fmt: skip
        assert status == 400
        status, body = running.http("GET", "/v1/namespaces")
        assert status == 200 and body["namespaces"] == [["default"]]  # nothing was made


def _rest_process(server: OurServer) -> int | None:
    """The pid of the server's REST catalog process (its child started with --rest-process),
    None when there is none."""
    assert server.process is not None
    tasks = Path(f"/proc/{server.process.pid}/task")
    for task in tasks.iterdir():
        for child in (task / "children").read_text().split():
            try:
                command = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"--rest-process" in command:
                return int(child)
    return None


def test_a_rest_process_that_dies_is_started_again(both: Both) -> None:
    """kill -9 of the REST catalog's process: the server starts another, which serves the
    same store; the Thrift side is not touched."""
    import os
    import signal

    first = _rest_process(both.server)
    assert first is not None
    os.kill(first, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while _rest_process(both.server) in (None, first):
        assert time.monotonic() < deadline, "no new REST catalog process"
        time.sleep(0.1)
    ready(both, 200)
    assert ("default",) in both.rest_catalog().list_namespaces()
    client = make_client(LOOPBACK, both.server.port)
    try:
        assert "default" in client.get_all_databases()
    finally:
        client.close()


def test_the_rest_benchmark_runs_and_prints_its_figures(tmp_path: Path) -> None:
    """tests/bench/rest_catalog.py end to end with a tiny run: every operation has figures
    for both targets. No timing is asserted."""
    import os

    bench = Path(__file__).resolve().parents[1] / "bench" / "rest_catalog.py"
    run = subprocess.run(
        [sys.executable, str(bench), "--repeat", "2", "--warmup", "0", "--snapshots", "1"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(bench.parents[2])},
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    rows = {line.split()[0]: line.split()[-4:] for line in run.stdout.splitlines()
            if line.startswith(("load_table", "commit", "load (wire)"))}  # fmt: skip
    assert set(rows) == {"load_table", "commit", "load"}
    assert all(float(f) > 0 for f in rows["load_table"] + rows["load"])
    assert all(isinstance(float(f), float) for f in rows["commit"])  # a difference of two
    assert "ours REST" in run.stdout and "ours HiveCatalog" in run.stdout


def test_a_transaction_that_loses_midway_moves_every_table_back(tmp_path: Path) -> None:
    """Another writer, taking no lock, moves the second table of a transaction after the
    first was moved (the test fault of tests/support/rest_race_site): 409, the first table
    points at its old metadata file again with its old previous one, no file of the
    transaction is left, and the other writer's change stands."""
    site = Path(__file__).resolve().parents[1] / "support" / "rest_race_site"
    rest_port = free_port(LOOPBACK)
    server = OurServer(tmp_path / "server", extra_args=["--rest-port", str(rest_port)],
                       env={"PYTHONPATH": str(site),
                            "METASTORE_TEST_REST_RACE": "raced.second"})  # fmt: skip
    with server:
        running = ready(Both(server, rest_port), 200)
        cat = running.rest_catalog()
        cat.create_namespace("raced")
        first = cat.create_table("raced.first", schema=SCHEMA)
        first.append(rows((1, "a")))
        second = cat.create_table("raced.second", schema=SCHEMA)
        second.append(rows((2, "b")))  # so that it has a previous metadata file
        client = make_client(LOOPBACK, server.port)
        try:
            before = client.get_table("raced", "first").parameters
            files = {p: set((Path(t.location().removeprefix("file:")) / "metadata").iterdir())
                     for p, t in (("first", cat.load_table("raced.first")),
                                  ("second", cat.load_table("raced.second")))}  # fmt: skip
            first, second = cat.load_table("raced.first"), cat.load_table("raced.second")
            status, body = running.http("POST", "/v1/transactions/commit", {"table-changes": [
                _table_change(first, [], "tx"), _table_change(second, [], "tx")]})  # fmt: skip
            assert status == 409 and body["error"]["type"] == "CommitFailedException", body
            after = client.get_table("raced", "first").parameters
            assert after["metadata_location"] == before["metadata_location"]
            assert after.get("previous_metadata_location") == before.get(
                "previous_metadata_location")  # fmt: skip
            assert "tx" not in after and "tx" not in cat.load_table("raced.first").properties
            raced = client.get_table("raced", "second").parameters
            assert raced["raced"] == "yes" and "tx" not in raced
        finally:
            client.close()
        for name, table in (("first", first), ("second", second)):
            left = set((Path(table.location().removeprefix("file:")) / "metadata").iterdir())
            assert left == files[name], name
