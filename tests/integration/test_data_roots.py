"""Data roots over Thrift, on the local file system: with ``--data-roots`` the server creates,
moves and deletes data only under them; calls that would go outside are refused with nothing
changed, and external tables are not affected."""

from __future__ import annotations

from pathlib import Path

import pytest

from metastore_server.thrift_api import hms

from .conftest import make_partition, make_table

OUTSIDE = "is outside the data roots of this server"


def _uri(path: Path) -> str:
    return f"file:{path}"


def _fill(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    data = directory / "part-0.parquet"
    data.write_bytes(b"PAR1")
    return data


def _roots(tmp_path: Path) -> str:
    """The roots: the servers' own directories (their warehouses) and ``inside``."""
    return ",".join(_uri(tmp_path / name) for name in ("server0", "server1", "inside/"))


def _db(conn, name: str, location: Path) -> None:
    conn.create_database(hms.Database(name=name, description="", parameters={},
                                      locationUri=_uri(location)))  # fmt: skip


def _table_at(conn, db: str, name: str, location: Path | None, keys=(), **extra) -> None:
    table = make_table(db, name, keys=[(k, "string") for k in keys], **extra)
    table.sd.location = _uri(location) if location else None
    conn.create_table(table)


def _external(**extra) -> dict:
    return {"tableType": "EXTERNAL_TABLE", "parameters": {"EXTERNAL": "TRUE"}, **extra}


@pytest.fixture()
def inside(tmp_path: Path) -> Path:
    return tmp_path / "inside"


@pytest.fixture()
def outside(tmp_path: Path) -> Path:
    return tmp_path / "outside"


def test_creates_outside_the_roots_are_refused(start_server, tmp_path, inside, outside) -> None:
    conn = start_server(data_roots=_roots(tmp_path)).client()
    sibling = tmp_path / "insidexyz"  # shares the root's name as text, not its path
    for location in (outside / "o.db", sibling / "o.db"):
        with pytest.raises(hms.MetaException, match=OUTSIDE) as refused:
            _db(conn, "o", location)
        assert f"file:{location}" in refused.value.message
        assert f"file:{inside}" in refused.value.message  # the roots are named
        assert not location.exists()
    with pytest.raises(hms.NoSuchObjectException):
        conn.get_database("o")
    _db(conn, "d", inside / "d.db")
    assert (inside / "d.db").is_dir()
    conn.create_table(make_table("d", "t"))  # default location: inside
    assert (inside / "d.db" / "t").is_dir()
    for location in (outside / "t2", sibling / "t2"):
        with pytest.raises(hms.MetaException, match=OUTSIDE):
            _table_at(conn, "d", "t2", location)
        assert not location.exists()
    (outside / "existing").mkdir(parents=True)  # owned data outside: refused even if present
    with pytest.raises(hms.MetaException, match=f"file:{outside}/existing {OUTSIDE}"):
        _table_at(conn, "d", "t2", outside / "existing")
    assert conn.get_all_tables("d") == ["t"]
    # external.table.purge makes an external table own its data: refused too.
    purged = {"EXTERNAL": "TRUE", "external.table.purge": "true"}
    with pytest.raises(hms.MetaException, match=OUTSIDE):
        _table_at(conn, "d", "p", outside / "p", **_external(parameters=purged))


def test_partitions_outside_the_roots_are_refused(start_server, tmp_path, inside, outside) -> None:
    conn = start_server(data_roots=_roots(tmp_path)).client()
    _db(conn, "d", inside / "d.db")
    _table_at(conn, "d", "t", None, keys=("ds",))
    table_dir = inside / "d.db" / "t"
    good = make_partition("d", "t", ["1"])
    bad = make_partition("d", "t", ["2"], _uri(outside / "ds=2"))
    with pytest.raises(hms.MetaException, match=OUTSIDE):
        conn.add_partitions([good, bad])
    assert conn.get_partition_names("d", "t", -1) == []
    assert not (table_dir / "ds=1").exists() and not outside.exists()
    conn.add_partitions([good])
    assert (table_dir / "ds=1").is_dir()


def test_external_tables_are_not_affected(start_server, tmp_path, inside, outside) -> None:
    conn = start_server(data_roots=_roots(tmp_path)).client()
    _db(conn, "d", inside / "d.db")
    data = _fill(outside / "e")
    _table_at(conn, "d", "e", outside / "e", keys=("ds",), **_external())
    conn.add_partitions([make_partition("d", "e", ["1"], _uri(outside / "e" / "ds=1"))])
    # A missing directory outside the roots is not made for it, and the call goes through.
    _table_at(conn, "d", "missing", outside / "missing", **_external())
    assert not (outside / "missing").exists()
    changed = conn.get_table("d", "e")
    changed.sd.location = _uri(outside / "e2")
    conn.alter_table("d", "e", changed)  # an external table may point anywhere
    conn.drop_table("d", "e", True)
    conn.drop_table("d", "missing", True)
    assert data.exists()
    assert conn.get_all_tables("d") == []


def test_alters_giving_owned_data_a_place_outside_are_refused(
    start_server, tmp_path, inside, outside
) -> None:
    conn = start_server(data_roots=_roots(tmp_path)).client()
    _db(conn, "d", inside / "d.db")
    _table_at(conn, "d", "t", None, keys=("ds",))
    conn.add_partitions([make_partition("d", "t", ["1"])])
    before = conn.get_table("d", "t")
    moved = conn.get_table("d", "t")
    moved.sd.location = _uri(outside / "t")
    with pytest.raises(hms.InvalidOperationException, match=OUTSIDE):
        conn.alter_table("d", "t", moved)
    assert conn.get_table("d", "t").sd.location == before.sd.location
    part = conn.get_partition("d", "t", ["1"])
    old_location = part.sd.location
    part.sd.location = _uri(outside / "ds=1")
    with pytest.raises(hms.InvalidOperationException, match=OUTSIDE):
        conn.alter_partition("d", "t", part)
    assert conn.get_partition("d", "t", ["1"]).sd.location == old_location
    # An external table outside, made managed: its data would become the server's.
    _table_at(conn, "d", "e", outside / "e", **_external())
    managed = conn.get_table("d", "e")
    managed.tableType, managed.parameters = "MANAGED_TABLE", {"EXTERNAL": "FALSE"}
    with pytest.raises(hms.InvalidOperationException, match=OUTSIDE):
        conn.alter_table("d", "e", managed)
    assert conn.get_table("d", "e").tableType == "EXTERNAL_TABLE"
    database = conn.get_database("d")
    database.locationUri = _uri(outside / "d.db")
    with pytest.raises(hms.MetaException, match=OUTSIDE):
        conn.alter_database("d", database)
    assert conn.get_database("d").locationUri == _uri(inside / "d.db")


def _made_without_roots(start_server, outside: Path):
    """A database, a managed partitioned table with data and a partition outside the roots,
    made by a server without roots; stopped, and a server with roots on the same store."""
    first = start_server()
    conn = first.client()
    _db(conn, "o", outside / "o.db")
    _table_at(conn, "o", "t", None, keys=("ds",))
    conn.add_partitions([make_partition("o", "t", ["1"])])
    _fill(outside / "o.db" / "t" / "ds=1")
    conn.close()
    first.stop()
    return first.config.storage


def test_drops_of_data_outside_the_roots_are_refused(start_server, tmp_path, outside) -> None:
    storage = _made_without_roots(start_server, outside)
    conn = start_server(storage=storage, data_roots=_roots(tmp_path)).client()
    table_dir = outside / "o.db" / "t"
    with pytest.raises(hms.MetaException) as refused:
        conn.drop_partition("o", "t", ["1"], True)
    assert refused.value.message == (
        f"Table partition not deleted since file:{table_dir}/ds=1 {OUTSIDE} "
        f"({_roots(tmp_path).replace(',', ', ').rstrip('/')})"
    )
    with pytest.raises(hms.MetaException, match=f"Table metadata not deleted since .*{OUTSIDE}"):
        conn.drop_table("o", "t", True)
    with pytest.raises(hms.MetaException, match=OUTSIDE):
        conn.drop_database("o", True, True)
    with pytest.raises(hms.MetaException, match=f"Table o.t not truncated since .*{OUTSIDE}"):
        conn.truncate_table("o", "t", None)
    assert conn.get_partition_names("o", "t", -1) == ["ds=1"]  # nothing changed
    assert (table_dir / "ds=1" / "part-0.parquet").exists()
    # Without deleteData the metadata goes and the data stays, as asked.
    conn.drop_partition("o", "t", ["1"], False)
    conn.drop_table("o", "t", False)
    conn.drop_database("o", False, True)
    assert (table_dir / "ds=1" / "part-0.parquet").exists()


def test_moves_outside_the_roots_are_refused(start_server, tmp_path, inside, outside) -> None:
    storage = _made_without_roots(start_server, outside)
    conn = start_server(storage=storage, data_roots=_roots(tmp_path)).client()
    table_dir = outside / "o.db" / "t"
    renamed = conn.get_table("o", "t")
    renamed.tableName = "t2"
    with pytest.raises(hms.InvalidOperationException) as refused:
        conn.alter_table("o", "t", renamed)
    assert refused.value.message.startswith("Alter Table operation for o.t2 failed to move data")
    assert OUTSIDE in refused.value.message
    assert conn.get_all_tables("o") == ["t"] and table_dir.is_dir()
    part = conn.get_partition("o", "t", ["1"])
    part.values = ["2"]
    with pytest.raises(hms.InvalidOperationException, match=OUTSIDE):
        conn.rename_partition("o", "t", ["1"], part)
    assert conn.get_partition_names("o", "t", -1) == ["ds=1"]
    # A table inside renamed into a database outside: its directory would leave the roots.
    _db(conn, "d", inside / "d.db")
    _table_at(conn, "d", "in", None, keys=("ds",))
    into = conn.get_table("d", "in")
    into.dbName = "o"
    with pytest.raises(hms.InvalidOperationException, match=OUTSIDE):
        conn.alter_table("d", "in", into)
    assert (inside / "d.db" / "in").is_dir() and not (outside / "o.db" / "in").exists()
    # Exchanging the partition outside into the table inside: refused, nothing moved.
    with pytest.raises(hms.MetaException, match=OUTSIDE):
        conn.exchange_partition({"ds": "1"}, "o", "t", "d", "in")
    assert conn.get_partition_names("o", "t", -1) == ["ds=1"]
    assert (table_dir / "ds=1" / "part-0.parquet").exists()


def test_roots_themselves_are_never_deleted(start_server, tmp_path, inside) -> None:
    conn = start_server(data_roots=_roots(tmp_path)).client()
    _db(conn, "d", inside / "d.db")
    _table_at(conn, "d", "at_root", inside)
    data = _fill(inside / "x")
    conn.drop_table("d", "at_root", True)  # dropped, its directory (a root) kept
    assert data.exists()
    assert conn.get_all_tables("d") == []
