"""Attacks on the Iceberg REST catalog's trust boundary, against the server started as users
start it (the console script, ``--rest-port``, ``--data-roots``): a caller may not choose code
the server runs (``py-io-impl`` and every other property naming an implementation), nor make
it write, read or delete files outside the table's own location and the data roots. Each
attack asserts the file system afterwards: the marker a payload would create is absent, and
the sentinel files outside are still there. The Thrift side's refusal of the same
properties is here too."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the 'rest' extra is not installed")
pytest.importorskip("pyiceberg.catalog.rest", reason="pyiceberg is not installed")
from support.net import LOOPBACK  # noqa: E402
from support.rest_attacks import SCHEMA, Setting, start  # noqa: E402
from support.rest_attacks import commit as _commit  # noqa: E402
from support.rest_attacks import create as _create  # noqa: E402
from support.rest_attacks import entries_under as _entries_under  # noqa: E402
from support.rest_attacks import files_under as _files_under  # noqa: E402
from support.rest_attacks import namespace as _namespace  # noqa: E402
from support.rest_attacks import secured as secured_setting  # noqa: E402
from support.rest_attacks import token as _token  # noqa: E402

from metastore_server.sasl_client import SaslLogin, open_sasl_client  # noqa: E402
from metastore_server.thrift_api import hms, make_client  # noqa: E402


@pytest.fixture(scope="module")
def setting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setting]:
    yield from start(tmp_path_factory.mktemp("rest-attack"))


def payload(marker: Path) -> dict[str, str]:
    """Properties that make pyiceberg's ``load_file_io`` run ``touch marker`` (Popen's
    arguments come from the properties mapping it is handed)."""
    return {"py-io-impl": "subprocess.Popen", "/bin/sh": "", "-c": "", f"touch {marker}": ""}


def test_no_property_chooses_code_the_server_loads(setting: Setting) -> None:
    both = setting.both
    _namespace(both, "code")
    bad = payload(setting.marker)
    status, body = _create(both, "code", "created", properties=bad)
    assert status == 400 and "py-io-impl" in body["error"]["message"], body
    for key in ("write.py-location-provider.impl", "io-impl", "s3.retry-strategy-impl",
                "py-catalog-impl", "client.factory", "WRITE.LOCATION-PROVIDER.IMPL"):
        status, body = _create(both, "code", "other", properties={key: "os.system"})
        assert status == 400 and key in body["error"]["message"], (key, body)
    assert _create(both, "code", "t")[0] == 200
    before = _files_under(setting.root)
    status, body = _commit(both, "code", "t", [{"action": "set-properties", "updates": bad}])
    assert status == 400 and body["error"]["type"] == "BadRequestException", body
    assert _files_under(setting.root) == before  # refused before any file was written
    status, body = both.http("POST", "/v1/namespaces", {"namespace": ["code2"], "properties": bad})
    assert status == 400, body
    status, body = both.http("POST", "/v1/namespaces/code/properties", {"updates": bad})
    assert status == 400, body
    # The table loads, commits and purges as before; no payload ran anywhere.
    assert _commit(both, "code", "t", [{"action": "set-properties",
                                        "updates": {"owner": "x"}}])[0] == 200  # fmt: skip
    assert both.http("DELETE", "/v1/namespaces/code/tables/t?purgeRequested=true")[0] == 204
    setting.untouched()


def test_a_table_carrying_a_code_property_is_opened_with_the_servers_own_file_io(
    setting: Setting,
) -> None:
    """A table whose current metadata file names code (written before these checks existed,
    or by hand) is loaded, committed to and purged without the property ever being read."""
    both = setting.both
    _namespace(both, "carried")
    status, created = _create(both, "carried", "t")
    assert status == 200
    metadata = created["metadata"]
    metadata["properties"].update(payload(setting.marker))
    folder = Path(metadata["location"].removeprefix("file:")) / "metadata"
    planted = folder / f"00001-{uuid.uuid4()}.metadata.json"
    planted.write_text(json.dumps(metadata))
    client = make_client(LOOPBACK, both.server.port)
    try:
        table = client.get_table("carried", "t")
        table.parameters["metadata_location"] = str(planted)  # only the pointer changes
        client.alter_table("carried", "t", table)
    finally:
        client.close()
    status, loaded = both.http("GET", "/v1/namespaces/carried/tables/t")
    assert status == 200 and loaded["metadata-location"] == str(planted)
    assert _commit(both, "carried", "t", [{"action": "set-properties",
                                           "updates": {"k": "v"}}])[0] == 200  # fmt: skip
    assert both.http("DELETE", "/v1/namespaces/carried/tables/t?purgeRequested=true")[0] == 204
    assert not planted.exists()
    setting.untouched()
    log = both.server.stdout_path.read_text() + both.server.stderr_path.read_text()
    assert "iceberg_code_properties_ignored" in log


def test_no_file_is_written_outside_the_table_or_the_roots(setting: Setting) -> None:
    both = setting.both
    _namespace(both, "files")
    outside = str(setting.outside / "t")
    status, body = _create(both, "files", "located", location=outside)
    assert status == 403 and "outside the data roots" in body["error"]["message"], body
    status, body = _create(both, "files", "located", location=f"file://{setting.outside}/t")
    assert status == 403, body
    status, body = _create(both, "files", "dots",
                           location=f"{setting.root}/files.db/../../../outside/t")  # fmt: skip
    assert status == 400 and "'..'" in body["error"]["message"], body
    status, body = _create(both, "files", "meta",
                           properties={"write.metadata.path": str(setting.outside)})  # fmt: skip
    assert status == 403, body
    for name in ("../../outside/x", "a/b", "..", "x y"):
        status, body = _create(both, "files", name)
        assert status == 400 and "not a valid object name" in body["error"]["message"], body
    assert _create(both, "files", "t")[0] == 200
    status, body = _commit(both, "files", "t", [{"action": "set-properties",
                                                 "updates": {"write.metadata.path":
                                                             str(setting.outside)}}])  # fmt: skip
    assert status == 403, body
    status, body = _commit(both, "files", "t", [{"action": "set-location",
                                                 "location": str(setting.outside)}])  # fmt: skip
    assert status == 403, body
    status, body = both.http("POST", "/v1/namespaces", {
        "namespace": ["elsewhere"], "properties": {"location": str(setting.outside / "ns")}})
    assert status == 403 and body["error"]["type"] == "ForbiddenException", body
    status, body = both.http("POST", "/v1/namespaces/files/properties",
                             {"updates": {"location": str(setting.outside / "ns")}})  # fmt: skip
    assert status == 403, body
    status, body = both.http("POST", "/v1/namespaces/files/views", {
        "name": "v", "schema": SCHEMA, "location": str(setting.outside / "v"),
        "view-version": {"version-id": 1, "schema-id": 0, "timestamp-ms": 1,
                         "summary": {}, "default-namespace": ["files"],
                         "representations": [{"type": "sql", "sql": "select 1",
                                              "dialect": "spark"}]}})  # fmt: skip
    assert status == 403, body
    setting.untouched()


def test_register_reads_nothing_outside_the_roots(setting: Setting) -> None:
    both = setting.both
    _namespace(both, "reg")
    status, body = both.http("POST", "/v1/namespaces/reg/register",
                             {"name": "r", "metadata-location": str(setting.sentinel)})  # fmt: skip
    assert status == 403 and "keep" not in json.dumps(body), body
    inside = setting.root / "not-metadata.json"
    inside.write_text('{"secret": "do not show"}')
    status, body = both.http("POST", "/v1/namespaces/reg/register",
                             {"name": "r", "metadata-location": str(inside)})  # fmt: skip
    assert status == 400 and "do not show" not in json.dumps(body), body
    # A metadata file naming a table location elsewhere than where the file lies.
    assert _create(both, "reg", "src")[0] == 200
    status, loaded = both.http("GET", "/v1/namespaces/reg/tables/src")
    metadata = loaded["metadata"]
    metadata["location"] = str(setting.root / "reg.db" / "someone-else")
    moved = setting.root / "reg.db" / "src" / "metadata" / f"00009-{uuid.uuid4()}.metadata.json"
    moved.write_text(json.dumps(metadata))
    status, body = both.http("POST", "/v1/namespaces/reg/register",
                             {"name": "r", "metadata-location": str(moved)})  # fmt: skip
    assert status == 400 and "not under its table's location" in body["error"]["message"], body
    setting.untouched()


def test_a_purge_deletes_nothing_outside_the_table(setting: Setting) -> None:
    """Statistics and manifest lists named outside the table's location are neither read nor
    deleted by a purge; the table's own files go."""
    both = setting.both
    _namespace(both, "purge")
    status, created = _create(both, "purge", "t")
    assert status == 200
    neighbour = setting.root / "purge.db" / "neighbour"
    neighbour.mkdir(parents=True)
    (neighbour / "data.parquet").write_text("someone else's")
    statistics = [str(setting.sentinel), str(neighbour / "data.parquet"),
                  f"{setting.root}/purge.db/t/../neighbour/data.parquet"]  # fmt: skip
    updates = [{"action": "add-snapshot", "snapshot": {
        "snapshot-id": 7, "timestamp-ms": 1, "manifest-list": str(setting.sentinel),
        "summary": {"operation": "append"}, "schema-id": 0}}]
    updates += [{"action": "set-statistics", "statistics": {
        "snapshot-id": 7 + i, "statistics-path": path, "file-size-in-bytes": 1,
        "file-footer-size-in-bytes": 1, "blob-metadata": []}} for i, path in enumerate(statistics)]
    status, body = _commit(both, "purge", "t", updates)
    assert status == 200, body
    table_dir = Path(created["metadata"]["location"].removeprefix("file:"))
    assert _files_under(table_dir)
    assert both.http("DELETE", "/v1/namespaces/purge/tables/t?purgeRequested=true")[0] == 204
    assert _files_under(table_dir) == []  # its own metadata files went
    assert (neighbour / "data.parquet").read_text() == "someone else's"
    setting.untouched()
    log = both.server.stdout_path.read_text() + both.server.stderr_path.read_text()
    assert "iceberg_purge_kept_outside" in log


def test_thrift_refuses_properties_naming_code(setting: Setting) -> None:
    client = make_client(LOOPBACK, setting.both.server.port)
    try:
        client.create_database(hms.Database(name="thrift_code", parameters={}))
        with pytest.raises(hms.InvalidObjectException, match="py-io-impl"):
            client.create_database(hms.Database(name="other", parameters={"py-io-impl": "x.Y"}))
        database = client.get_database("thrift_code")
        database.parameters = {"io-impl": "x.Y"}
        with pytest.raises(hms.MetaException, match="io-impl"):
            client.alter_database("thrift_code", database)
        table = _hive_table("thrift_code", "t", {"write.location-provider.impl": "x.Y"})
        with pytest.raises(hms.InvalidObjectException, match="location-provider"):
            client.create_table(table)
        client.create_table(_hive_table("thrift_code", "t", {"k": "v"}))
        table = client.get_table("thrift_code", "t")
        table.parameters["py-io-impl"] = "subprocess.Popen"
        with pytest.raises(hms.InvalidOperationException, match="py-io-impl"):
            client.alter_table("thrift_code", "t", table)
        assert "py-io-impl" not in client.get_table("thrift_code", "t").parameters
        assert client.get_all_databases().count("other") == 0
    finally:
        client.close()


def _hive_table(db: str, name: str, parameters: dict[str, str]) -> Any:
    return hms.Table(dbName=db, tableName=name, tableType="EXTERNAL_TABLE",
                     parameters=dict(parameters, EXTERNAL="TRUE"), partitionKeys=[],
                     sd=hms.StorageDescriptor(
                         cols=[hms.FieldSchema(name="c", type="int")],
                         serdeInfo=hms.SerDeInfo(parameters={}), parameters={}))  # fmt: skip


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setting]:
    """``--auth password`` (alice, bob) with ``--authorization privileges``."""
    yield from secured_setting(tmp_path_factory.mktemp("rest-attack-secured"))


def test_another_users_table_is_out_of_reach(secured: Setting) -> None:
    """bob may neither write alice's table's files (a refused commit writes no metadata file),
    nor make the server run code, nor purge her files through a table of his own."""
    both = secured.both
    alice, bob = _token(both, "alice"), _token(both, "bob")
    _namespace(both, "alice_ns", alice)
    status, created = _create(both, "alice_ns", "t", alice)
    assert status == 200, created
    table_dir = Path(created["metadata"]["location"].removeprefix("file:"))
    before = _entries_under(secured.root)
    bad = payload(secured.marker)
    for updates in ([{"action": "set-properties", "updates": {"k": "v"}}],
                    [{"action": "set-properties", "updates": bad}]):
        status, body = _commit(both, "alice_ns", "t", updates, bob)
        assert status in (400, 403), body
    assert _entries_under(secured.root) == before  # no file written for a refused commit
    assert both.http("DELETE", "/v1/namespaces/alice_ns/tables/t?purgeRequested=true",
                     token=bob)[0] == 403  # fmt: skip
    # bob registers alice's current metadata file as his own table, then purges it.
    _namespace(both, "bob_ns", bob)
    status, body = both.http("POST", "/v1/namespaces/bob_ns/register",
                             {"name": "mine", "metadata-location": created["metadata-location"]},
                             token=bob)  # fmt: skip
    assert status == 403 and "Permission denied" in body["error"]["message"], body
    status, body = _create(both, "bob_ns", "over", bob, location=str(table_dir))
    assert status == 403, body
    status, body = _create(both, "bob_ns", "inside", bob, location=f"{table_dir}/sub")
    assert status == 403, body
    assert [e for e in _entries_under(secured.root) if not e.startswith("bob_ns.db")] == before
    assert both.http("GET", "/v1/namespaces/alice_ns/tables/t", token=alice)[0] == 200
    secured.untouched()
    client = open_sasl_client(LOOPBACK, both.server.port,
                              SaslLogin("plain", user="alice", password="wonderland"))
    try:
        assert client.get_table("alice_ns", "t").owner == "alice"
    finally:
        client.close()


def _os_users_missing() -> bool:
    import pwd

    try:
        pwd.getpwnam("daemon"), pwd.getpwnam("nobody")
    except KeyError:
        return True
    return False


@pytest.fixture(scope="module")
def storage_secured() -> Iterator[Setting]:
    """``--auth password`` with ``--authorization storage``, over directories every user of
    this machine may reach (pytest's own are closed to them)."""
    import os
    import shutil
    import tempfile

    if os.geteuid() != 0 or _os_users_missing():
        pytest.skip("needs root and the OS users daemon and nobody")
    work = Path(tempfile.mkdtemp(prefix="rest-attack-storage-"))
    os.chmod(work, 0o755)
    try:
        for running in secured_setting(work, "storage"):
            os.chmod(running.both.server.workdir, 0o755)  # the store's own directory is 0700
            os.chmod(running.root, 0o777)  # every user may make a namespace there
            yield running
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_storage_authorization_guards_the_rest_catalogs_files(storage_secured: Setting) -> None:
    """Under ``--authorization storage``, nobody (a user of this machine) may neither commit to,
    purge nor place a table in daemon's namespace directory: each is refused before any file
    is written, and daemon's files are all there."""
    import os
    import pwd

    both = storage_secured.both
    daemon, nobody = _token(both, "daemon"), _token(both, "nobody")
    _namespace(both, "daemon_ns", daemon)
    ns_dir = storage_secured.root / "daemon_ns.db"
    entry = pwd.getpwnam("daemon")
    os.chown(ns_dir, entry.pw_uid, entry.pw_gid)
    os.chmod(ns_dir, 0o755)
    status, created = _create(both, "daemon_ns", "t", daemon)
    assert status == 200, created
    table_dir = Path(created["metadata"]["location"].removeprefix("file:"))
    _namespace(both, "nobody_ns", nobody)
    before = _entries_under(storage_secured.root)
    status, body = _commit(both, "daemon_ns", "t",
                           [{"action": "set-properties", "updates": {"k": "v"}}], nobody)
    assert status == 403 and "Permission denied: user=nobody" in body["error"]["message"], body
    status, body = both.http("DELETE", "/v1/namespaces/daemon_ns/tables/t?purgeRequested=true",
                             token=nobody)  # fmt: skip
    assert status == 403, body
    status, body = _create(both, "nobody_ns", "over", nobody, location=f"{ns_dir}/over")
    assert status == 403, body
    assert _entries_under(storage_secured.root) == before  # not even a directory was made
    assert both.http("GET", "/v1/namespaces/daemon_ns/tables/t", token=daemon)[0] == 200
    assert table_dir.is_dir()
    storage_secured.untouched()
