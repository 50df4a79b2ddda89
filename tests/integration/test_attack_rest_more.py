"""More attacks on the Iceberg REST catalog's trust boundary (see ``test_attack_rest.py``),
against the server started as users start it. Each test asserts the file system afterwards.

A test here that fails is a bypass that was found; one that passes is an attack refused."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the 'rest' extra is not installed")
pytest.importorskip("pyiceberg.catalog.rest", reason="pyiceberg is not installed")
from support.rest_attacks import (  # noqa: E402
    SCHEMA,
    SPEC_AND_ORDER,
    VIEW_VERSION,
    Setting,
    start,
)
from support.rest_attacks import commit as _commit  # noqa: E402
from support.rest_attacks import create as _create  # noqa: E402
from support.rest_attacks import files_under as _files_under  # noqa: E402
from support.rest_attacks import local as _local  # noqa: E402
from support.rest_attacks import namespace as _namespace  # noqa: E402
from support.rest_attacks import secured as secured_setting  # noqa: E402
from support.rest_attacks import token as _token  # noqa: E402
from support.rest_attacks import view as _view  # noqa: E402

from metastore_server.thrift_api import hms  # noqa: E402


@pytest.fixture(scope="module")
def setting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setting]:
    yield from start(tmp_path_factory.mktemp("rest-attack-more"))


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setting]:
    """``--auth password`` (alice, bob) with ``--authorization privileges``."""
    yield from secured_setting(tmp_path_factory.mktemp("rest-attack-more-secured"))


def _point_metadata_at(client: Any, db: str, name: str, metadata_location: str) -> None:
    """Through Thrift, as the table's owner: only the table's metadata_location changes."""
    table = client.get_table(db, name)
    table.parameters["metadata_location"] = metadata_location
    client.alter_table(db, name, table)


def _grant_select(client: Any, db: str, name: str, to: str) -> None:
    ref = hms.HiveObjectRef(objectType=hms.HiveObjectType.TABLE, dbName=db, objectName=name)
    info = hms.PrivilegeGrantInfo(privilege="SELECT", createTime=0, grantor="ignored",
                                  grantorType=hms.PrincipalType.USER, grantOption=False)
    assert client.grant_privileges(hms.PrivilegeBag(privileges=[hms.HiveObjectPrivilege(
        hiveObject=ref, principalName=to, principalType=hms.PrincipalType.USER,
        grantInfo=info)]))  # fmt: skip


# --- cross-user reach under --auth password --authorization privileges ------------------------


def _alices_table(secured: Setting, ns: str) -> tuple[str, dict[str, Any], Path]:
    both = secured.both
    alice = _token(both, "alice")
    _namespace(both, ns, alice)
    status, created = _create(both, ns, "t", alice)
    assert status == 200, created
    status, committed = _commit(both, ns, "t", [{"action": "set-properties",
                                                 "updates": {"k": "v"}}], alice)  # fmt: skip
    assert status == 200, committed
    return alice, committed, _local(committed["metadata"]["location"])


def _with_data(secured: Setting, ns: str, token: str) -> None:
    """Rows appended to ``ns.t`` through pyiceberg's RestCatalog as the token's user: data
    files, a manifest and a manifest list under the table."""
    import pyarrow as pa
    from pyiceberg.catalog.rest import RestCatalog

    catalog = RestCatalog("rest", uri=secured.both.uri, token=token)
    table = catalog.load_table(f"{ns}.t")
    table.append(pa.table({"id": pa.array([1, 2], pa.int64())}))


def test_a_select_grantee_cannot_purge_the_owners_files_through_a_table_of_his_own(
    secured: Setting,
) -> None:
    """bob may read alice's table (SELECT), not delete it. He points a table of his own at
    her current metadata file (a Thrift alter of his table's ``metadata_location``: its HMS
    location stays his), then drops it through REST with a purge: the purge deletes the files
    under the location the *metadata file* names, which is hers."""
    both = secured.both
    alice, committed, table_dir = _alices_table(secured, "sel_alice")
    with secured.thrift("alice") as client:
        _grant_select(client, "sel_alice", "t", "bob")
    bob = _token(both, "bob")
    status, seen = both.http("GET", "/v1/namespaces/sel_alice/tables/t", token=bob)
    assert status == 200, seen  # bob may read it: SELECT
    before = _files_under(table_dir)
    assert len(before) == 2, before
    _namespace(both, "sel_bob", bob)
    assert _create(both, "sel_bob", "mine", bob)[0] == 200
    with secured.thrift("bob") as client:
        try:
            _point_metadata_at(client, "sel_bob", "mine", seen["metadata-location"])
            pointed = True
        except (hms.MetaException, hms.InvalidOperationException):
            pointed = False  # refused: the attack ends here
    if pointed:
        both.http("DELETE", "/v1/namespaces/sel_bob/tables/mine?purgeRequested=true", token=bob)
    assert _files_under(table_dir) == before, "bob's purge deleted alice's files"
    assert both.http("GET", "/v1/namespaces/sel_alice/tables/t", token=alice)[0] == 200
    secured.untouched()


def test_a_user_with_no_privilege_cannot_purge_another_users_table(secured: Setting) -> None:
    """bob has no privilege at all on alice's table. ``get_table_objects_by_name`` is open to
    every user (as listings are), and answers whole tables, their ``metadata_location``
    included; with that name the purge of a table of his own deletes alice's files."""
    both = secured.both
    alice, committed, table_dir = _alices_table(secured, "np_alice")
    _with_data(secured, "np_alice", alice)
    assert any(name.endswith(".parquet") for name in _files_under(table_dir))
    bob = _token(both, "bob")
    assert both.http("GET", "/v1/namespaces/np_alice/tables/t", token=bob)[0] == 403
    before = _files_under(table_dir)
    learned = None
    with secured.thrift("bob") as client:
        try:
            found = client.get_table_objects_by_name("np_alice", ["t"])
            learned = found[0].parameters.get("metadata_location") if found else None
        except hms.MetaException:
            pass
    if learned is not None:
        _namespace(both, "np_bob", bob)
        assert _create(both, "np_bob", "mine", bob)[0] == 200
        with secured.thrift("bob") as client:
            _point_metadata_at(client, "np_bob", "mine", learned)
        both.http("DELETE", "/v1/namespaces/np_bob/tables/mine?purgeRequested=true", token=bob)
    assert _files_under(table_dir) == before, (
        "bob's purge deleted alice's files (the name from get_table_objects_by_name)")
    # Listings are not filtered (as HMS's SQL-standard authorizer, docs/security.md): bob
    # learns the file's name, and the attack above was made with it.
    assert learned is not None
    secured.untouched()


def test_a_table_pointed_at_another_users_metadata_does_not_write_into_her_directory(
    secured: Setting,
) -> None:
    """The same pointer, then a commit: the new metadata file goes under the location the
    metadata names (hers), not under bob's table."""
    both = secured.both
    alice, committed, table_dir = _alices_table(secured, "wr_alice")
    before = _files_under(table_dir)
    bob = _token(both, "bob")
    _namespace(both, "wr_bob", bob)
    assert _create(both, "wr_bob", "mine", bob)[0] == 200
    with secured.thrift("bob") as client:
        _point_metadata_at(client, "wr_bob", "mine", committed["metadata-location"])
    status, body = _commit(both, "wr_bob", "mine", [{"action": "set-properties",
                                                     "updates": {"x": "y"}}], bob)  # fmt: skip
    assert _files_under(table_dir) == before, ("bob's commit wrote into alice's table", body)
    assert status == 403, body
    secured.untouched()


def test_a_user_cannot_read_another_users_table_metadata_through_a_table_of_his_own(
    secured: Setting,
) -> None:
    """bob has no privilege on alice's table but knows (or learns) its metadata file's name:
    pointing his own table at it shows him her schema, snapshots and properties."""
    both = secured.both
    alice, committed, table_dir = _alices_table(secured, "rd_alice")
    bob = _token(both, "bob")
    assert both.http("GET", "/v1/namespaces/rd_alice/tables/t", token=bob)[0] == 403
    _namespace(both, "rd_bob", bob)
    assert _create(both, "rd_bob", "mine", bob)[0] == 200
    with secured.thrift("bob") as client:
        _point_metadata_at(client, "rd_bob", "mine", committed["metadata-location"])
    status, body = both.http("GET", "/v1/namespaces/rd_bob/tables/mine", token=bob)
    assert status != 200 or body["metadata"]["properties"].get("k") != "v", (
        "bob read alice's table metadata through his own table")
    secured.untouched()


def test_a_view_cannot_be_placed_in_another_users_table_directory(secured: Setting) -> None:
    """A view's HMS object has no location (``sd.location`` is empty), so a rule about
    locations inside another user's objects sees none: bob's view, created in, or moved by
    ``set-location`` into, alice's table directory writes its metadata files there."""
    both = secured.both
    alice, committed, table_dir = _alices_table(secured, "vw_alice")
    before = _files_under(table_dir)
    bob = _token(both, "bob")
    _namespace(both, "vw_bob", bob)
    status, body = _view(both, "vw_bob", "v", bob, location=str(table_dir))
    created_inside = status == 200
    assert _view(both, "vw_bob", "w", bob)[0] == 200
    status, loaded = both.http("GET", "/v1/namespaces/vw_bob/views/w", token=bob)
    assert status == 200, loaded
    status, moved = both.http("POST", "/v1/namespaces/vw_bob/views/w", {
        "requirements": [], "updates": [{"action": "set-location", "location": str(table_dir)},
                                        {"action": "set-properties", "updates": {"a": "b"}}]},
        token=bob)  # fmt: skip
    assert _files_under(table_dir) == before, (
        "bob's view wrote into alice's table directory", created_inside, status, moved)
    secured.untouched()


# --- file-system reach under --auth none (--data-roots) --------------------------------------


def test_a_query_or_fragment_in_a_file_uri_does_not_lead_through_a_link(setting: Setting) -> None:
    """The boundary compares a ``file:`` URI's whole path (``.../link?x`` names no link, so
    nothing is resolved), while pyiceberg's FileIO drops the query and fragment
    (``urlparse``) and opens ``.../link``, following it: a metadata file outside the data roots
    is read through a link inside them."""
    both = setting.both
    _namespace(both, "qlink")
    status, created = _create(both, "qlink", "t")
    assert status == 200, created
    table_dir = _local(created["metadata"]["location"])
    # A table's metadata file lying outside the roots (another warehouse, say).
    elsewhere = setting.outside / "elsewhere"
    elsewhere.mkdir()
    foreign = dict(created["metadata"], location=f"file:{elsewhere}",
                   properties={"secret": "outside-the-roots"})  # fmt: skip
    (elsewhere / "v1.metadata.json").write_text(json.dumps(foreign))
    link = table_dir / "data" / "link.metadata.json"
    link.parent.mkdir()
    link.symlink_to(elsewhere / "v1.metadata.json")
    try:
        with setting.thrift() as client:
            for pointer in (f"file:{link}", f"file:{link}?x", f"file:{link}#x"):
                _point_metadata_at(client, "qlink", "t", pointer)
                status, body = both.http("GET", "/v1/namespaces/qlink/tables/t")
                assert "outside-the-roots" not in json.dumps(body), (pointer, status)
                assert status in (400, 403), (pointer, body)  # 400: '?', '#' refused
    finally:
        link.unlink()
        for p in elsewhere.iterdir():
            p.unlink()
        elsewhere.rmdir()
    setting.untouched()


def test_a_query_in_a_table_location_does_not_write_through_a_dangling_link(
    setting: Setting,
) -> None:
    """A dangling link inside the root names a file outside it. The boundary checks
    ``file:<link>?/metadata/...`` (no link on that path); pyiceberg writes ``<link>``."""
    both = setting.both
    _namespace(both, "qwrite")
    ns_dir = setting.root / "qwrite.db"
    ns_dir.mkdir(parents=True, exist_ok=True)
    link = ns_dir / "dangling"
    target = setting.outside / "written-through-link"
    link.symlink_to(target)
    try:
        for suffix in ("?", "#"):
            status, body = _create(both, "qwrite", f"t{len(suffix)}{ord(suffix)}",
                                   location=f"file:{link}{suffix}")  # fmt: skip
            assert not target.exists(), (suffix, status, body)
    finally:
        link.unlink()
        if target.exists():
            target.unlink()
    setting.untouched()


def test_a_metadata_load_error_repeats_nothing_of_the_file(setting: Setting) -> None:
    """A ``.gz.metadata.json`` name makes pyiceberg gunzip the file; gzip's error names the
    file's first two bytes and the load's 500 repeats it. With a query (``?x.gz.metadata.json``)
    any file may be given the name, in the roots or, through a link, outside them."""
    both = setting.both
    _namespace(both, "gz")
    status, created = _create(both, "gz", "t")
    assert status == 200, created
    table_dir = _local(created["metadata"]["location"])
    secret = setting.root / "gz.db" / "secret.txt"
    secret.write_text("Q7 the launch code")
    try:
        with setting.thrift() as client:
            for pointer in (f"file:{secret}?.gz.metadata.json",
                            f"file:{table_dir}/../secret.txt.gz.metadata.json"):
                try:
                    _point_metadata_at(client, "gz", "t", pointer)
                except hms.InvalidOperationException:
                    continue
                status, body = both.http("GET", "/v1/namespaces/gz/tables/t")
                assert "Q7" not in json.dumps(body), (pointer, status, body)
    finally:
        secret.unlink()
    setting.untouched()


def _tab_dots(levels: int) -> str:
    """``levels`` segments ``\\t..``: no '..' segment to the boundary; '..' once pyiceberg's
    FileIO has parsed the URI (``urlparse`` removes tabs, CRs and LFs anywhere in a URL)."""
    return "/".join(["\t.."] * levels)


def test_a_tab_in_a_file_uri_does_not_hide_dot_segments_from_a_write(setting: Setting) -> None:
    """A table location ``file:<root>/\\t../\\t../outside/esc``: the boundary sees segments
    ``\\t..`` (names, under the root); pyiceberg writes ``<root>/../../outside/esc/...``."""
    both = setting.both
    _namespace(both, "tabw")
    # <root> is <work>/server/warehouse: two levels up is <work>, beside <work>/outside.
    escaped = setting.outside / "esc"
    try:
        for name, location in (("t1", f"file:{setting.root}/{_tab_dots(2)}/outside/esc"),
                               ("t2", f"file:{setting.root}/\n../\r../outside/esc")):
            status, body = _create(both, "tabw", name, location=location)
            assert not escaped.exists(), (name, status, body)
            assert status in (400, 403), (name, body)
    finally:
        shutil.rmtree(escaped, ignore_errors=True)
    setting.untouched()


def test_a_tab_in_a_file_uri_does_not_hide_dot_segments_from_a_purge(setting: Setting) -> None:
    """A statistics file named ``file:<table>/\\t../\\t../\\t../\\t../outside/sentinel`` lies
    under the table to the boundary; the purge's FileIO deletes ``<work>/outside/sentinel``."""
    both = setting.both
    _namespace(both, "tabp")
    status, created = _create(both, "tabp", "t")
    assert status == 200, created
    location = created["metadata"]["location"]
    victim = setting.outside / "victim"
    victim.write_text("keep")
    try:
        # <table> is <root>/tabp.db/t: four levels up is <work>.
        path = f"{location}/{_tab_dots(4)}/outside/victim"
        status, body = _commit(both, "tabp", "t", [{"action": "set-statistics", "statistics": {
            "snapshot-id": 1, "statistics-path": path, "file-size-in-bytes": 1,
            "file-footer-size-in-bytes": 1, "blob-metadata": []}}])  # fmt: skip
        if status == 200:
            both.http("DELETE", "/v1/namespaces/tabp/tables/t?purgeRequested=true")
        assert victim.exists(), "the purge deleted a file outside the data roots"
    finally:
        victim.unlink(missing_ok=True)
    setting.untouched()


def test_a_tab_in_a_file_uri_does_not_hide_dot_segments_from_a_read(setting: Setting) -> None:
    """A table pointed (Thrift) at ``file:<root>/\\t../\\t../outside/x.metadata.json``: the
    boundary reads the path as under the root; the load returns the file outside."""
    both = setting.both
    _namespace(both, "tabr")
    status, created = _create(both, "tabr", "t")
    assert status == 200, created
    foreign = dict(created["metadata"], properties={"secret": "outside-the-roots"})
    planted = setting.outside / "x.metadata.json"
    planted.write_text(json.dumps(foreign))
    try:
        pointer = f"file:{setting.root}/{_tab_dots(2)}/outside/x.metadata.json"
        with setting.thrift() as client:
            _point_metadata_at(client, "tabr", "t", pointer)
        status, body = both.http("GET", "/v1/namespaces/tabr/tables/t")
        assert "outside-the-roots" not in json.dumps(body), status
        status, body = both.http("POST", "/v1/namespaces/tabr/register",
                                 {"name": "r", "metadata-location": pointer})  # fmt: skip
        assert "outside-the-roots" not in json.dumps(body) and status in (400, 403), body
    finally:
        planted.unlink()
    setting.untouched()


def test_a_tab_in_a_file_uri_does_not_lead_into_another_users_table(secured: Setting) -> None:
    """Under ``--authorization privileges``: bob's table location ``<his dir>/\\t../\\t../
    <alice's table>/x``, and a statistics file of his table naming her metadata file that
    way; neither the location rule nor the boundary sees the '..' pyiceberg then follows."""
    both = secured.both
    alice, committed, table_dir = _alices_table(secured, "tb_alice")
    before = _files_under(table_dir)
    bob = _token(both, "bob")
    _namespace(both, "tb_bob", bob)
    status, mine = _create(both, "tb_bob", "mine", bob)
    assert status == 200, mine
    bob_dir = mine["metadata"]["location"]  # <root>/tb_bob.db/mine
    up = _tab_dots(2)  # to <root>
    status, inside = _create(both, "tb_bob", "into", bob,
                             location=f"{bob_dir}/{up}/tb_alice.db/t/x")  # fmt: skip
    victim = committed["metadata-location"].rsplit("/", 1)[-1]
    path = f"{bob_dir}/{up}/tb_alice.db/t/metadata/{victim}"
    status, body = _commit(both, "tb_bob", "mine", [{"action": "set-statistics", "statistics": {
        "snapshot-id": 1, "statistics-path": path, "file-size-in-bytes": 1,
        "file-footer-size-in-bytes": 1, "blob-metadata": []}}], bob)  # fmt: skip
    if status == 200:
        both.http("DELETE", "/v1/namespaces/tb_bob/tables/mine?purgeRequested=true", token=bob)
    assert _files_under(table_dir) == before, ("bob reached alice's table directory", inside)
    secured.untouched()


# --- attacks refused (coverage the first attack file lacks) ----------------------------------


def test_locations_beside_or_around_the_root_are_refused(setting: Setting) -> None:
    """A root's path as a string prefix (``<root>2``), ``file:///``, ``file://localhost/``,
    percent-encoded dots (kept literally: a directory named ``%2e%2e`` under the root)."""
    both = setting.both
    _namespace(both, "forms")
    sibling = setting.root.parent / f"{setting.root.name}2"
    for location, codes in ((str(sibling / "t"), (403,)),
                            (f"file:{sibling}/t", (403,)),
                            (f"file://{setting.outside}/t", (403,)),
                            (f"file://localhost{setting.root}/forms.db/t", (400,)),
                            (f"FILE:{setting.outside}/t", (403,)),
                            (f"file:{setting.root}/./forms.db/t", (400,)),
                            (f"file:{setting.root}//..//outside", (400,))):  # fmt: skip
        status, body = _create(both, "forms", "t", location=location)
        assert status in codes, (location, body)
    status, body = _create(both, "forms", "pct", location=f"file:{setting.root}/%2e%2e/%2e%2e")
    assert status == 200, body
    assert (setting.root / "%2e%2e" / "%2e%2e" / "metadata").is_dir()
    assert not sibling.exists()
    setting.untouched()


def test_staged_creates_transactions_and_views_write_nothing_outside(setting: Setting) -> None:
    both = setting.both
    _namespace(both, "staged")
    status, staged = _create(both, "staged", "s", **{"stage-create": True})
    assert status == 200 and staged["metadata-location"] is None, staged
    before = _files_under(setting.root)
    metadata = staged["metadata"]
    status, body = both.http("POST", "/v1/namespaces/staged/tables/s", {
        "requirements": [{"type": "assert-create"}],
        "updates": [{"action": "assign-uuid", "uuid": metadata["table-uuid"]},
                    {"action": "upgrade-format-version", "format-version": 2},
                    {"action": "add-schema", "schema": SCHEMA},
                    {"action": "set-current-schema", "schema-id": -1},
                    *SPEC_AND_ORDER,
                    {"action": "set-location", "location": str(setting.outside / "s")},
                    {"action": "set-properties",
                     "updates": {"write.metadata.path": str(setting.outside)}}]})  # fmt: skip
    assert status == 403, body
    assert _files_under(setting.root) == before
    # A transaction whose second table would move outside: neither table gets a file.
    assert _create(both, "staged", "a")[0] == 200
    assert _create(both, "staged", "b")[0] == 200
    before = _files_under(setting.root)
    status, body = both.http("POST", "/v1/transactions/commit", {"table-changes": [
        {"identifier": {"namespace": ["staged"], "name": "a"}, "requirements": [],
         "updates": [{"action": "set-properties", "updates": {"k": "v"}}]},
        {"identifier": {"namespace": ["staged"], "name": "b"}, "requirements": [],
         "updates": [{"action": "set-location", "location": str(setting.outside / "b")}]},
    ]})  # fmt: skip
    assert status == 403, body
    assert _files_under(setting.root) == before
    # Views: outside the roots, code properties, set-location outside.
    assert _view(both, "staged", "v", location=str(setting.outside / "v"))[0] == 403
    status, body = _view(both, "staged", "v", properties={"py-io-impl": "subprocess.Popen"})
    assert status == 400, body
    assert _view(both, "staged", "v")[0] == 200
    before = _files_under(setting.root)
    for updates in ([{"action": "set-location", "location": str(setting.outside / "v")}],
                    [{"action": "set-properties", "updates": {"io-impl": "x.Y"}}],
                    [{"action": "set-location", "location": f"file:{setting.root}/../x"}]):
        status, body = both.http("POST", "/v1/namespaces/staged/views/v",
                                 {"requirements": [], "updates": updates})  # fmt: skip
        assert status in (400, 403), (updates, body)
    assert _files_under(setting.root) == before
    status, body = both.http("POST", "/v1/namespaces/staged/register-view",
                             {"name": "rv", "metadata-location": str(setting.sentinel)})
    assert status == 403 and "keep" not in json.dumps(body), body
    setting.untouched()


def test_a_purge_deletes_no_file_through_a_link_in_the_table(setting: Setting) -> None:
    """Links inside the table's directory (to a file, to a directory) lead outside it: the
    files named through them are kept."""
    both = setting.both
    _namespace(both, "links")
    status, created = _create(both, "links", "t")
    assert status == 200, created
    location = created["metadata"]["location"]
    table_dir = _local(location)
    (table_dir / "data").mkdir()
    (table_dir / "data" / "file-link").symlink_to(setting.sentinel)
    (table_dir / "dir-link").symlink_to(setting.outside)
    paths = [f"{location}/data/file-link", f"{location}/dir-link/sentinel"]
    updates = [{"action": "set-statistics", "statistics": {
        "snapshot-id": 1 + i, "statistics-path": path, "file-size-in-bytes": 1,
        "file-footer-size-in-bytes": 1, "blob-metadata": []}} for i, path in enumerate(paths)]
    status, body = _commit(both, "links", "t", updates)
    assert status == 200, body
    # A metadata folder that is a link outside: no commit writes through it.
    status, body = _commit(both, "links", "t", [{"action": "set-properties", "updates": {
        "write.metadata.path": f"{location}/dir-link"}}])  # fmt: skip
    assert status == 403, body
    assert both.http("DELETE", "/v1/namespaces/links/tables/t?purgeRequested=true")[0] == 204
    assert setting.sentinel.read_text() == "keep"
    setting.untouched()


def test_another_user_is_refused_before_any_file_is_written(secured: Setting) -> None:
    """bob's staged create in alice's namespace, view in it, and replace of her view: 403, and
    no file."""
    both = secured.both
    alice, bob = _token(both, "alice"), _token(both, "bob")
    _namespace(both, "fw_alice", alice)
    assert _view(both, "fw_alice", "v", alice)[0] == 200
    before = _files_under(secured.root)
    status, staged = _create(both, "fw_alice", "s", bob, **{"stage-create": True})
    if status == 200:
        status, body = both.http("POST", "/v1/namespaces/fw_alice/tables/s", {
            "requirements": [{"type": "assert-create"}],
            "updates": [{"action": "assign-uuid", "uuid": staged["metadata"]["table-uuid"]},
                        {"action": "upgrade-format-version", "format-version": 2},
                        {"action": "add-schema", "schema": SCHEMA},
                        {"action": "set-current-schema", "schema-id": -1},
                        *SPEC_AND_ORDER,
                        {"action": "set-location",
                         "location": staged["metadata"]["location"]}]}, token=bob)  # fmt: skip
        assert status == 403, body
    assert _view(both, "fw_alice", "w", bob)[0] == 403
    status, body = both.http("POST", "/v1/namespaces/fw_alice/views/v", {
        "requirements": [], "updates": [{"action": "set-properties", "updates": {"a": "b"}}]},
        token=bob)  # fmt: skip
    assert status in (403, 404), body
    assert _files_under(secured.root) == before
    secured.untouched()


def test_malformed_requests_are_4xx_not_500(setting: Setting) -> None:
    """Requests of the wrong shape are the caller's error (400), never the server's (500)."""
    both = setting.both
    _namespace(both, "shapes")
    assert _view(both, "shapes", "v")[0] == 200
    versions = [{"action": "add-view-version", "view-version": dict(
        VIEW_VERSION, representations=[{"type": "sql", "sql": f"select {i}", "dialect": "s"}])}
        for i in range(2, 13)]  # fmt: skip
    requests = [
        ("POST", "/v1/namespaces", {"namespace": ["shapes2"], "properties": ["a"]}),
        ("POST", "/v1/namespaces/shapes/properties", {"removals": [{"a": 1}]}),
        ("POST", "/v1/namespaces/shapes/views",
         {"name": "w", "schema": SCHEMA, "view-version": VIEW_VERSION, "properties": ["a"]}),
        ("POST", "/v1/namespaces/shapes/views/v",
         {"requirements": [], "updates": [{"action": "set-properties", "updates": ["a"]}]}),
        # 11 versions added, the current one (not re-set) falls out of the 10 kept.
        ("POST", "/v1/namespaces/shapes/views/v", {"requirements": [], "updates": versions}),
        ("POST", "/v1/tables/rename", {"source": {"namespace": [1], "name": "t"},
                                       "destination": {"namespace": ["shapes"], "name": "u"}}),
        ("POST", "/v1/views/rename", {"source": "x", "destination": "y"}),
        # A staged create's commit missing its partition spec and sort order.
        ("POST", "/v1/namespaces/shapes/tables/staged", {
            "requirements": [{"type": "assert-create"}],
            "updates": [{"action": "add-schema", "schema": SCHEMA},
                        {"action": "set-current-schema", "schema-id": -1},
                        {"action": "set-location", "location": f"{setting.root}/shapes.db/s"}]}),
    ]
    answers = [(path, *both.http(method, path, body)) for method, path, body in requests]
    assert [(path, status, answer["error"]["message"]) for path, status, answer in answers
            if status >= 500] == []  # fmt: skip


def test_a_purge_with_an_unreadable_manifest_list_is_not_a_500(setting: Setting) -> None:
    """The table is dropped before its files are read: a manifest list pyiceberg cannot read
    (here text) must leave a logged, partial purge, not a 500 with every file kept."""
    both = setting.both
    _namespace(both, "badlist")
    status, created = _create(both, "badlist", "t")
    assert status == 200, created
    location = created["metadata"]["location"]
    (_local(location) / "list.avro").write_text("not avro at all\n" * 4)
    status, body = _commit(both, "badlist", "t", [{"action": "add-snapshot", "snapshot": {
        "snapshot-id": 7, "timestamp-ms": 1, "manifest-list": f"{location}/list.avro",
        "summary": {"operation": "append"}, "schema-id": 0}}])  # fmt: skip
    assert status == 200, body
    status, body = both.http("DELETE", "/v1/namespaces/badlist/tables/t?purgeRequested=true")
    assert status == 204, body
    assert not _local(location).exists()  # its files went, then its emptied directories
