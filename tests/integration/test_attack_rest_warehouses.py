"""Warehouses of the Iceberg REST catalog (``/v1/{prefix}/...`` naming a catalog of the
metastore, ``/v1/config?warehouse=``) and their attacks, against the server started as users
start it: pyiceberg's ``warehouse=`` end to end in a second catalog, every route under a
prefix, what Thrift sees of it, unknown and malformed prefixes, and authorization per
catalog."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the 'rest' extra is not installed")
pytest.importorskip("pyiceberg.catalog.rest", reason="pyiceberg is not installed")
from support.rest_attacks import PASSWORDS, SCHEMA, Setting, files_under, start  # noqa: E402
from support.rest_attacks import token as _token  # noqa: E402
from support.rest_attacks import view as _view  # noqa: E402

from metastore_server.thrift_api import hms  # noqa: E402


@pytest.fixture(scope="module")
def setting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setting]:
    yield from start(tmp_path_factory.mktemp("rest-ware"))


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setting]:
    """``--auth password`` and ``--authorization privileges``; daemon is an admin (he makes
    the catalogs)."""
    from metastore_server.server.passwords import hash_password

    work = tmp_path_factory.mktemp("rest-ware-secured")
    passwords = work / "passwords"
    passwords.write_text("".join(f"{u}:{hash_password(p)}\n" for u, p in PASSWORDS.items()))
    yield from start(work, ["--auth", "password", "--password-file", str(passwords),
                            "--authorization", "privileges", "--admin-users", "daemon",
                            "--rest-oauth-tokens", "on"])  # fmt: skip


def make_catalog(setting: Setting, name: str, user: str = "") -> Path:
    """Create catalog ``name`` over Thrift, at a directory under the data root."""
    place = setting.root / f"{name}_catalog"
    with setting.thrift(user) as client:
        if name not in client.get_catalogs().names:
            client.create_catalog(hms.CreateCatalogRequest(catalog=hms.Catalog(
                name=name, description="a warehouse", locationUri=f"file:{place}")))
    return place


def test_config_names_the_prefix_of_a_known_warehouse(setting: Setting) -> None:
    both = setting.both
    place = make_catalog(setting, "lake")
    for warehouse in ("lake", "LAKE", f"file:{place}", f"file:{place}/", f"file://{place}"):
        status, config = both.http("GET", f"/v1/config?warehouse={warehouse}")
        assert status == 200 and config["overrides"] == {"prefix": "lake"}, (warehouse, config)
    assert both.http("GET", "/v1/config?warehouse=hive")[1]["overrides"] == {"prefix": "hive"}
    assert both.http("GET", "/v1/config")[1]["overrides"] == {}
    for unknown in ("nowhere", "namespaces", "%40lake%23x", "file:/elsewhere", "a%2Fb"):
        status, body = both.http("GET", f"/v1/config?warehouse={unknown}")
        assert status == 404 and body["error"]["type"] == "NoSuchWarehouseException", body
    setting.untouched()


def test_pyiceberg_with_a_warehouse_works_in_that_catalog(setting: Setting) -> None:
    """pyiceberg's ``warehouse=lake`` takes the prefix from the config: a table made, written
    and read there lives in catalog ``lake`` as Thrift sees it, not in ``hive``."""
    import pyarrow as pa
    from pyiceberg.catalog.rest import RestCatalog
    from pyiceberg.exceptions import NoSuchNamespaceError

    both = setting.both
    place = make_catalog(setting, "lake")
    lake = RestCatalog("lake", uri=both.uri, warehouse="lake")
    assert lake.properties["prefix"] == "lake"
    lake.create_namespace("sales", {"owner_team": "blue"})
    schema = pa.schema([pa.field("id", pa.int64())])
    table = lake.create_table("sales.orders", schema=schema)
    table.append(pa.table({"id": [1, 2]}, schema=schema))
    table = lake.load_table("sales.orders")
    table.append(pa.table({"id": [3]}, schema=schema))
    assert sorted(lake.load_table("sales.orders").scan().to_arrow()["id"].to_pylist()) == [1, 2, 3]
    assert lake.list_namespaces() == [("sales",)]
    assert lake.load_namespace_properties("sales")["owner_team"] == "blue"
    assert table.location().startswith(f"file:{place}/sales.db/")
    with setting.thrift() as client:
        got = client.get_table("@lake#sales", "orders")
        assert (got.catName, got.parameters["table_type"]) == ("lake", "ICEBERG")
        assert client.get_database("@lake#sales").catalogName == "lake"
        assert "sales" not in client.get_all_databases()
    hive = RestCatalog("hive", uri=both.uri)
    assert ("sales",) not in hive.list_namespaces()
    with pytest.raises(NoSuchNamespaceError):
        hive.load_namespace_properties("sales")
    lake.rename_table("sales.orders", "sales.orders2")
    assert lake.list_tables("sales") == [("sales", "orders2")]
    lake.drop_table("sales.orders2")
    lake.drop_namespace("sales")
    with setting.thrift() as client:
        assert client.get_databases("@lake#") == []
    setting.untouched()


def _routes(ns: str) -> list[tuple[str, str, Any, int]]:
    """Every catalog route, in an order that works in an empty catalog: method, path below
    the prefix, body, status."""
    table, view = f"namespaces/{ns}/tables/t", f"namespaces/{ns}/views/v"
    report = {"report-type": "commit-report", "table-name": "t", "snapshot-id": 1,
              "sequence-number": 1, "operation": "append", "metrics": {}}
    return [
        ("POST", "namespaces", {"namespace": [ns]}, 200),
        ("GET", "namespaces", None, 200),
        ("GET", f"namespaces/{ns}", None, 200),
        ("HEAD", f"namespaces/{ns}", None, 204),
        ("POST", f"namespaces/{ns}/properties", {"updates": {"a": "b"}}, 200),
        ("POST", f"namespaces/{ns}/tables", {"name": "t", "schema": SCHEMA}, 200),
        ("GET", f"namespaces/{ns}/tables", None, 200),
        ("GET", table, None, 200),
        ("HEAD", table, None, 204),
        ("POST", table, {"requirements": [], "updates": [
            {"action": "set-properties", "updates": {"k": "v"}}]}, 200),
        ("POST", "transactions/commit", {"table-changes": [{
            "identifier": {"namespace": [ns], "name": "t"}, "requirements": [],
            "updates": [{"action": "set-properties", "updates": {"k": "w"}}]}]}, 204),
        ("POST", table + "/metrics", report, 204),
        ("GET", table + "/metrics", None, 200),
        ("POST", "tables/rename", {"source": {"namespace": [ns], "name": "t"},
                                   "destination": {"namespace": [ns], "name": "t2"}}, 204),
        ("POST", f"namespaces/{ns}/tables/t2/unregister", None, 200),
        ("GET", f"namespaces/{ns}/views", None, 200),
        ("GET", view, None, 200),
        ("HEAD", view, None, 204),
        ("POST", view, {"updates": [{"action": "set-properties", "updates": {"x": "y"}}]}, 200),
        ("POST", "views/rename", {"source": {"namespace": [ns], "name": "v"},
                                  "destination": {"namespace": [ns], "name": "v2"}}, 204),
        ("DELETE", f"namespaces/{ns}/views/v2", None, 204),
    ]


def test_every_route_works_under_a_prefix_and_stays_in_its_catalog(setting: Setting) -> None:
    both = setting.both
    make_catalog(setting, "every")
    ns = "every_ns"
    for method, path, body, expected in _routes(ns):
        if path == f"namespaces/{ns}/views":
            assert _view(_Prefixed(both, "every"), ns, "v")[0] == 200
        status, answer = both.http(method, f"/v1/every/{path}", body)
        # a HEAD is answered by its GET route (Starlette's), as without a prefix: 200
        assert status == expected or (method, status) == ("HEAD", 200), (method, path, answer)
        if path.endswith("/unregister"):
            # the unregistered table is registered again, from the file the answer names
            status, again = both.http("POST", f"/v1/every/namespaces/{ns}/register", {
                "name": "back", "metadata-location": answer["metadata-location"]})
            assert status == 200, again
            status, again = both.http("POST", f"/v1/every/namespaces/{ns}/register-view", {
                "name": "vr", "metadata-location": answer["metadata-location"]})
            assert status == 400, again  # a table's metadata is no view's
    with setting.thrift() as client:
        assert client.get_table("@every#every_ns", "back").catName == "every"
        assert client.get_all_tables("@every#every_ns") == ["back"]
        with pytest.raises(hms.NoSuchObjectException):
            client.get_database("every_ns")  # not in hive
    assert both.http("GET", f"/v1/namespaces/{ns}")[0] == 404
    assert both.http("DELETE", f"/v1/every/namespaces/{ns}/tables/back")[0] == 204
    assert both.http("DELETE", f"/v1/every/namespaces/{ns}")[0] == 204
    setting.untouched()


class _Prefixed:
    """A ``Both`` whose raw requests go under a prefix."""

    def __init__(self, both: Any, prefix: str) -> None:
        self._both, self._prefix = both, prefix

    def http(self, method: str, path: str, body: Any = None, token: str = "") -> Any:
        return self._both.http(method, path.replace("/v1/", f"/v1/{self._prefix}/", 1), body,
                               token=token)  # fmt: skip


def test_unknown_and_malformed_prefixes_are_refused(setting: Setting) -> None:
    both = setting.both
    before = files_under(setting.root)
    for prefix in ("nowhere", "bad%20name", "namespaces%00", "..", "%2E%2E"):
        for method, path, body, _ in _routes("x"):
            status, answer = both.http(method, f"/v1/{prefix}/{path}", body)
            assert status in (404, 405), (prefix, method, path, answer)
            if answer is not None and status == 404:
                assert answer["error"]["code"] == 404
    # the default catalog by name and unprefixed are the same catalog
    assert both.http("POST", "/v1/namespaces", {"namespace": ["plain_ns"]})[0] == 200
    assert both.http("GET", "/v1/hive/namespaces/plain_ns")[0] == 200
    make_catalog(setting, "other")
    # a namespace naming another catalog is no way out of the path's one
    for ns in ("%40hive%23plain_ns", "%40other%23plain_ns"):
        status, answer = both.http("GET", f"/v1/other/namespaces/{ns}")
        assert status == 400, answer
        assert both.http("GET", f"/v1/namespaces/{ns}")[0] == 400
    assert files_under(setting.root) == before
    setting.untouched()


def test_authorization_applies_in_every_catalog(secured: Setting) -> None:
    """Catalog ``vault`` (made by the admin): alice's namespace and table there are hers;
    bob can neither read, change, drop, unregister, nor report on them, and her files stay."""
    both = secured.both
    make_catalog(secured, "vault", "daemon")
    alice, bob = _token(both, "alice"), _token(both, "bob")
    assert both.http("GET", "/v1/config?warehouse=vault")[0] == 401
    assert both.http("GET", "/v1/config?warehouse=vault", token=bob)[0] == 200
    assert both.http("GET", "/v1/vault/namespaces")[0] == 401
    assert both.http("POST", "/v1/vault/namespaces", {"namespace": ["a_ns"]}, token=alice)[0] == 200
    status, created = both.http("POST", "/v1/vault/namespaces/a_ns/tables",
                                {"name": "t", "schema": SCHEMA}, token=alice)  # fmt: skip
    assert status == 200, created
    table_dir = Path(created["metadata"]["location"].removeprefix("file:"))
    before = files_under(table_dir)
    base = "/v1/vault/namespaces/a_ns/tables/t"
    report = {"report-type": "commit-report", "table-name": "t", "snapshot-id": 1,
              "sequence-number": 1, "operation": "append", "metrics": {}}
    for method, path, body in (("GET", base, None),
                               ("POST", base, {"requirements": [], "updates": []}),
                               ("DELETE", base + "?purgeRequested=true", None),
                               ("POST", base + "/unregister", None),
                               ("POST", base + "/metrics", report),
                               ("GET", base + "/metrics", None)):  # fmt: skip
        status, answer = both.http(method, path, body, token=bob)
        assert status == 403, (method, path, answer)
    assert files_under(table_dir) == before
    assert both.http("GET", base, token=alice)[0] == 200
    with secured.thrift("alice") as client:
        assert client.get_table("@vault#a_ns", "t").owner == "alice"
    secured.untouched()
