"""Managed data on local file systems, over Thrift: what HMS creates, deletes and moves.

Locations are anywhere on the machine (Spark sends its own warehouse's), not only under the
server's ``--warehouse``: a managed table's data is deleted with it wherever it lies, and an
external table's data is never touched.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

from metastore_server.thrift_api import hms

from .conftest import make_partition, make_table

_names = itertools.count()


def _uri(path: Path) -> str:
    return f"file:{path}"


def _fill(directory: Path, name: str = "part-0.parquet") -> Path:
    """Write a data file into ``directory`` (as a Spark task does)."""
    directory.mkdir(parents=True, exist_ok=True)
    data = directory / name
    data.write_bytes(b"PAR1")
    return data


@pytest.fixture()
def lake(tmp_path: Path) -> Path:
    """A directory outside the server's warehouse, like Spark's own warehouse."""
    path = tmp_path / "spark-warehouse"
    path.mkdir()
    return path


@pytest.fixture()
def db(client, lake: Path) -> str:
    """A database located in ``lake``."""
    name = f"md{next(_names)}"
    client.create_database(
        hms.Database(name=name, description="", locationUri=_uri(lake / f"{name}.db"),
                     parameters={})
    )  # fmt: skip
    return name


def _table(client, db: str, name: str, keys=(("ds", "string"), ("hr", "int")), **extra) -> Path:
    client.create_table(make_table(db, name, keys=list(keys), **extra))
    location = client.get_table(db, name).sd.location
    assert location.startswith("file:")
    return Path(location.removeprefix("file:"))


def _add(client, db: str, table: str, *values: list[str], location: str | None = None) -> None:
    client.add_partitions([make_partition(db, table, list(v), location) for v in values])


def test_create_database_and_table_make_their_directories(client, lake: Path, db: str) -> None:
    assert (lake / f"{db}.db").is_dir()
    table_dir = _table(client, db, "t")
    assert table_dir == lake / f"{db}.db" / "t"
    assert table_dir.is_dir()
    _add(client, db, "t", ["2024-01-01", "1"])
    assert (table_dir / "ds=2024-01-01" / "hr=1").is_dir()


def test_drop_partition_deletes_its_directory_and_parents_left_empty(
    client, lake: Path, db: str
) -> None:
    table_dir = _table(client, db, "t")
    _add(client, db, "t", ["2024-01-01", "1"], ["2024-01-01", "2"], ["2024-01-02", "1"])
    for ds, hr in (("2024-01-01", 1), ("2024-01-01", 2), ("2024-01-02", 1)):
        _fill(table_dir / f"ds={ds}" / f"hr={hr}")
    client.drop_partition(db, "t", ["2024-01-01", "1"], True)
    assert not (table_dir / "ds=2024-01-01" / "hr=1").exists()
    assert (table_dir / "ds=2024-01-01" / "hr=2" / "part-0.parquet").exists()
    client.drop_partition_by_name(db, "t", "ds=2024-01-01/hr=2", True)
    assert not (table_dir / "ds=2024-01-01").exists()  # left empty: gone too
    assert table_dir.is_dir()  # never the table's directory
    client.drop_partition(db, "t", ["2024-01-02", "1"], True)
    assert table_dir.is_dir() and not any(table_dir.iterdir())


def test_drop_partition_without_delete_data_keeps_files(client, db: str) -> None:
    table_dir = _table(client, db, "t")
    _add(client, db, "t", ["2024-01-01", "1"])
    data = _fill(table_dir / "ds=2024-01-01" / "hr=1")
    client.drop_partition(db, "t", ["2024-01-01", "1"], False)
    assert data.exists()


def test_drop_partitions_req_deletes_every_directory(client, db: str) -> None:
    table_dir = _table(client, db, "t", keys=(("ds", "string"),))
    _add(client, db, "t", ["a"], ["b"], ["c"])
    for value in "abc":
        _fill(table_dir / f"ds={value}")
    request = hms.DropPartitionsRequest(
        dbName=db, tblName="t", parts=hms.RequestPartsSpec(names=["ds=a", "ds=b"]),
        deleteData=True, ifExists=True, needResult=True,
    )  # fmt: skip
    assert len(client.drop_partitions_req(request).partitions) == 2
    assert sorted(p.name for p in table_dir.iterdir()) == ["ds=c"]


def test_drop_table_deletes_its_directory_and_partitions_outside_it(
    client, lake: Path, tmp_path: Path, db: str
) -> None:
    table_dir = _table(client, db, "t", keys=(("ds", "string"),))
    outside = tmp_path / "elsewhere" / "ds=2"
    _add(client, db, "t", ["1"])
    _add(client, db, "t", ["2"], location=_uri(outside))
    _fill(table_dir / "ds=1")
    _fill(outside)
    sibling = _fill(tmp_path / "elsewhere" / "other")
    client.drop_table(db, "t", True)
    assert not table_dir.exists()
    assert not outside.exists()
    assert sibling.exists()  # only the partition's own directory
    assert (lake / f"{db}.db").is_dir()


def test_a_table_created_again_reads_no_old_rows(client, db: str) -> None:
    table_dir = _table(client, db, "t", keys=(("ds", "string"),))
    _add(client, db, "t", ["1"])
    _fill(table_dir / "ds=1")
    client.drop_table(db, "t", True)
    again = _table(client, db, "t", keys=(("ds", "string"),))
    assert again == table_dir and list(again.iterdir()) == []


def test_drop_table_without_delete_data_keeps_files(client, db: str) -> None:
    table_dir = _table(client, db, "t", keys=())
    data = _fill(table_dir)
    client.drop_table(db, "t", False)
    assert data.exists()


def test_external_table_data_is_never_touched(client, tmp_path: Path, db: str) -> None:
    location = tmp_path / "external" / "events"
    data = _fill(location / "ds=1")
    table = make_table(db, "e", keys=[("ds", "string")], tableType="EXTERNAL_TABLE",
                       parameters={"EXTERNAL": "TRUE"})  # fmt: skip
    table.sd.location = _uri(location)
    client.create_table(table)
    _add(client, db, "e", ["1"])
    client.drop_partition(db, "e", ["1"], True)
    assert data.exists()
    _add(client, db, "e", ["1"])
    client.drop_table(db, "e", True)
    assert data.exists()


def test_external_table_purge_deletes_like_a_managed_table(
    client, tmp_path: Path, db: str
) -> None:
    location = tmp_path / "external" / "purged"
    _fill(location)
    table = make_table(db, "p", tableType="EXTERNAL_TABLE",
                       parameters={"EXTERNAL": "TRUE", "external.table.purge": "true"})  # fmt: skip
    table.sd.location = _uri(location)
    client.create_table(table)
    client.drop_table(db, "p", True)
    assert not location.exists()


def test_views_have_no_directory(client, lake: Path, db: str) -> None:
    view = make_table(db, "v", tableType="VIRTUAL_VIEW", viewOriginalText="select 1",
                      viewExpandedText="select 1")  # fmt: skip
    client.create_table(view)
    client.drop_table(db, "v", True)
    assert not (lake / f"{db}.db" / "v").exists()


def test_rename_moves_a_managed_table_and_its_partitions(client, lake: Path, db: str) -> None:
    table_dir = _table(client, db, "t", keys=(("ds", "string"),))
    _add(client, db, "t", ["1"], ["2"])
    _fill(table_dir / "ds=1")
    renamed = client.get_table(db, "t")
    renamed.tableName = "t2"
    client.alter_table(db, "t", renamed)
    moved = lake / f"{db}.db" / "t2"
    assert not table_dir.exists()
    assert (moved / "ds=1" / "part-0.parquet").exists()
    assert client.get_table(db, "t2").sd.location == _uri(moved)
    locations = sorted(p.sd.location for p in client.get_partitions(db, "t2", -1))
    assert locations == [_uri(moved / "ds=1"), _uri(moved / "ds=2")]


def test_rename_into_another_database_moves_there(client, lake: Path, db: str) -> None:
    table_dir = _table(client, db, "t", keys=())
    _fill(table_dir)
    other = f"{db}_other"
    client.create_database(hms.Database(name=other, description="", parameters={},
                                        locationUri=_uri(lake / f"{other}.db")))  # fmt: skip
    renamed = client.get_table(db, "t")
    renamed.dbName, renamed.tableName = other, "t"
    client.alter_table(db, "t", renamed)
    assert (lake / f"{other}.db" / "t" / "part-0.parquet").exists()
    assert not table_dir.exists()


def test_rename_refused_when_the_new_directory_exists_changes_nothing(
    client, lake: Path, db: str
) -> None:
    table_dir = _table(client, db, "t", keys=())
    data = _fill(table_dir)
    squatter = _fill(lake / f"{db}.db" / "t2", "someone-elses")
    renamed = client.get_table(db, "t")
    renamed.tableName = "t2"
    with pytest.raises(hms.InvalidOperationException) as refused:
        client.alter_table(db, "t", renamed)
    assert refused.value.message == (
        f"New location for this table {db}.t2 already exists : {_uri(lake / f'{db}.db' / 't2')}"
    )
    assert client.get_table(db, "t").sd.location == _uri(table_dir)
    with pytest.raises(hms.NoSuchObjectException):
        client.get_table(db, "t2")
    assert data.exists() and squatter.exists()


def test_rename_keeps_tables_placed_elsewhere_and_external_ones(
    client, tmp_path: Path, db: str
) -> None:
    placed = tmp_path / "placed"
    table = make_table(db, "placed")
    table.sd.location = _uri(placed)
    client.create_table(table)
    data = _fill(placed)
    renamed = client.get_table(db, "placed")
    renamed.tableName = "placed2"
    client.alter_table(db, "placed", renamed)
    assert client.get_table(db, "placed2").sd.location == _uri(placed)
    assert data.exists()


def test_rename_partition_moves_its_directory(client, db: str) -> None:
    table_dir = _table(client, db, "t", keys=(("ds", "string"),))
    _add(client, db, "t", ["1"])
    _fill(table_dir / "ds=1")
    new = client.get_partition(db, "t", ["1"])
    new.values = ["9"]
    client.rename_partition(db, "t", ["1"], new)
    assert (table_dir / "ds=9" / "part-0.parquet").exists()
    assert not (table_dir / "ds=1").exists()
    assert client.get_partition(db, "t", ["9"]).sd.location == _uri(table_dir / "ds=9")


def test_drop_database_cascade_deletes_it_but_keeps_external_tables_inside(
    client, lake: Path, db: str
) -> None:
    db_dir = lake / f"{db}.db"
    managed = _table(client, db, "m", keys=())
    _fill(managed)
    external_dir = db_dir / "ext"
    kept = _fill(external_dir)
    table = make_table(db, "ext", tableType="EXTERNAL_TABLE", parameters={"EXTERNAL": "TRUE"})
    table.sd.location = _uri(external_dir)
    client.create_table(table)
    stray = _fill(db_dir / "stray")
    client.drop_database(db, True, True)
    assert not managed.exists() and not stray.exists()
    assert kept.exists()  # an external table's data, even inside the database's directory


def test_drop_database_deletes_its_directory(client, lake: Path, db: str) -> None:
    _fill(lake / f"{db}.db" / "leftover")
    client.drop_database(db, True, False)
    assert not (lake / f"{db}.db").exists()


def test_a_link_out_of_a_table_is_never_followed(client, tmp_path: Path, db: str) -> None:
    precious = _fill(tmp_path / "precious")
    table_dir = _table(client, db, "t", keys=(("ds", "string"),))
    _add(client, db, "t", ["1"])
    os.symlink(tmp_path / "precious", table_dir / "ds=1" / "linked-dir")
    os.symlink(precious, table_dir / "ds=1" / "linked-file")
    client.drop_partition(db, "t", ["1"], True)
    assert precious.exists()
    # A partition whose location is itself a link: the link goes, not what it points to.
    _add(client, db, "t", ["2"], location=_uri(table_dir / "ds=2"))
    os.rmdir(table_dir / "ds=2")
    os.symlink(tmp_path / "precious", table_dir / "ds=2")
    client.drop_partition(db, "t", ["2"], True)
    assert not os.path.lexists(table_dir / "ds=2")
    assert precious.exists()
    client.drop_table(db, "t", True)
    assert precious.exists()


def test_a_table_at_a_database_directory_never_deletes_it(
    client, lake: Path, db: str
) -> None:
    db_dir = lake / f"{db}.db"
    neighbour = _fill(db_dir / "neighbour")
    table = make_table(db, "wide")
    table.sd.location = _uri(db_dir)
    client.create_table(table)
    client.drop_table(db, "wide", True)
    assert neighbour.exists()


def test_drops_see_databases_created_and_moved_since_the_last_drop(
    client, lake: Path, db: str
) -> None:
    """Every database's location is read once and kept between drops; a database created (or
    altered to a new location) since is still never deleted by a later drop."""
    first = _table(client, db, "first", keys=())
    second = _table(client, db, "second", keys=())
    third = _table(client, db, "third", keys=())
    client.drop_table(db, "first", True)  # reads (and keeps) every database's location
    assert not first.exists()
    inside = f"{db}_inside"
    client.create_database(
        hms.Database(name=inside, description="", locationUri=_uri(second / "inner.db"),
                     parameters={})
    )  # fmt: skip
    kept = _fill(second / "inner.db")
    client.drop_table(db, "second", True)
    assert kept.exists()
    moved = client.get_database(inside)
    moved.locationUri = _uri(third / "moved.db")
    client.alter_database(inside, moved)
    kept = _fill(third / "moved.db")
    client.drop_table(db, "third", True)
    assert kept.exists()
    client.drop_database(inside, False, True)


def test_a_partition_at_its_table_directory_never_deletes_it(client, db: str) -> None:
    table_dir = _table(client, db, "t", keys=(("ds", "string"),))
    other = _fill(table_dir / "ds=other")
    _add(client, db, "t", ["odd"], location=_uri(table_dir))
    client.drop_partition(db, "t", ["odd"], True)
    assert other.exists()


def test_create_refused_when_its_directory_cannot_be_made(
    client, tmp_path: Path, db: str
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    table = make_table(db, "blocked")
    table.sd.location = _uri(blocker / "t")
    with pytest.raises(hms.MetaException) as refused:
        client.create_table(table)
    assert "is not a directory or unable to create one" in refused.value.message
    with pytest.raises(hms.NoSuchObjectException):
        client.get_table(db, "blocked")
    table.sd.location = "nosuchscheme://somewhere/t"
    with pytest.raises(hms.MetaException, match="No FileSystem for scheme: nosuchscheme"):
        client.create_table(table)


def test_add_partitions_refused_when_a_directory_cannot_be_made_adds_none(
    client, tmp_path: Path, db: str
) -> None:
    table_dir = _table(client, db, "t", keys=(("ds", "string"),))
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    with pytest.raises(hms.MetaException, match="unable to create one"):
        client.add_partitions(
            [make_partition(db, "t", ["1"]), make_partition(db, "t", ["2"], _uri(blocker / "p"))]
        )
    assert client.get_partition_names(db, "t", -1) == []
    assert not (table_dir / "ds=1").exists()  # made for the refused call, removed again


# -- servers of their own -------------------------------------------------------------------


def _db_on(conn, lake: Path, name: str = "d") -> None:
    conn.create_database(hms.Database(name=name, description="", parameters={},
                                      locationUri=_uri(lake / f"{name}.db")))  # fmt: skip


def test_data_operations_off_touches_nothing(start_server, lake: Path) -> None:
    conn = start_server(data_operations="off").client()
    _db_on(conn, lake)
    assert not (lake / "d.db").exists()
    table_dir = _table(conn, "d", "t", keys=(("ds", "string"),))
    assert not table_dir.exists()
    data = _fill(table_dir / "ds=1")
    _add(conn, "d", "t", ["1"])
    renamed = conn.get_table("d", "t")
    renamed.tableName = "t2"
    conn.alter_table("d", "t", renamed)
    assert conn.get_table("d", "t2").sd.location == _uri(table_dir)  # nothing moved
    conn.drop_partition("d", "t2", ["1"], True)
    conn.drop_table("d", "t2", True)
    conn.drop_database("d", True, True)
    assert data.exists()


def test_trash_keeps_dropped_data_unless_purged(start_server, lake: Path, tmp_path: Path) -> None:
    trash = tmp_path / "trash"
    conn = start_server(trash_root=_uri(trash)).client()
    _db_on(conn, lake)
    table_dir = _table(conn, "d", "t", keys=(("ds", "string"),))
    _add(conn, "d", "t", ["1"], ["2"])
    _fill(table_dir / "ds=1")
    _fill(table_dir / "ds=2")
    conn.drop_partition("d", "t", ["1"], True)
    in_trash = trash / "Current" / str(table_dir / "ds=1").lstrip("/") / "part-0.parquet"
    assert in_trash.exists() and not (table_dir / "ds=1").exists()
    purge = hms.EnvironmentContext(properties={"ifPurge": "TRUE"})
    conn.drop_partition_with_environment_context("d", "t", ["2"], True, purge)
    assert not (table_dir / "ds=2").exists()
    assert not (trash / "Current" / str(table_dir / "ds=2").lstrip("/")).exists()
    # The same path dropped again: the earlier copy in the trash stays, the new one is beside.
    _add(conn, "d", "t", ["1"])
    _fill(table_dir / "ds=1", "second.parquet")
    conn.drop_partition("d", "t", ["1"], True)
    assert in_trash.exists()
    copies = sorted(p.name for p in in_trash.parent.parent.iterdir())
    assert copies[0] == "ds=1" and copies[1].startswith("ds=1.") and len(copies) == 2
    conn.drop_table("d", "t", True)
    assert (trash / "Current" / str(table_dir).lstrip("/")).is_dir()


def test_auto_purge_table_skips_the_trash(start_server, lake: Path, tmp_path: Path) -> None:
    trash = tmp_path / "trash"
    conn = start_server(trash_root=_uri(trash)).client()
    _db_on(conn, lake)
    table_dir = _table(conn, "d", "t", keys=(), parameters={"auto.purge": "true"})
    _fill(table_dir)
    conn.drop_table("d", "t", True)
    assert not table_dir.exists() and not trash.exists()
    # external.table.purge deletes an external table's data, through the trash (as HMS).
    location = tmp_path / "ext"
    _fill(location)
    table = make_table("d", "e", tableType="EXTERNAL_TABLE",
                       parameters={"EXTERNAL": "TRUE", "external.table.purge": "true"})  # fmt: skip
    table.sd.location = _uri(location)
    conn.create_table(table)
    conn.drop_table("d", "e", True)
    assert not location.exists()
    assert (trash / "Current" / str(location).lstrip("/") / "part-0.parquet").exists()


def test_a_drop_that_cannot_delete_is_refused_with_nothing_changed(
    start_server, lake: Path
) -> None:
    """A table on HDFS, made by a server that leaves data alone, dropped by one that manages
    data but has no Hadoop client: refused, and the table and its partition stay."""
    first = start_server(data_operations="off")
    conn = first.client()
    _db_on(conn, lake)
    table = make_table("d", "on_hdfs", keys=[("ds", "string")])
    table.sd.location = "hdfs://namenode.invalid:8020/warehouse/d.db/on_hdfs"
    conn.create_table(table)
    _add(conn, "d", "on_hdfs", ["1"])
    conn.close()
    first.stop()
    second = start_server(storage=first.config.storage)
    conn = second.client()
    with pytest.raises(hms.MetaException) as refused:
        conn.drop_table("d", "on_hdfs", True)
    assert refused.value.message.startswith("Table metadata not deleted since hdfs://")
    assert "no Hadoop client" in refused.value.message or "pyarrow" in refused.value.message
    with pytest.raises(hms.MetaException) as refused:
        conn.drop_partition("d", "on_hdfs", ["1"], True)
    assert refused.value.message.startswith("Table partition not deleted since hdfs://")
    assert "no Hadoop client" in refused.value.message or "pyarrow" in refused.value.message
    assert conn.get_partition_names("d", "on_hdfs", -1) == ["ds=1"]
    conn.drop_table("d", "on_hdfs", False)  # the metadata alone can go
    assert conn.get_all_tables("d") == []


def test_rename_moves_a_partition_located_at_the_table_directory(
    client, lake: Path, db: str
) -> None:
    """Such a partition follows the table; left behind, a later drop of the renamed table
    would delete whatever a new table of the old name keeps there."""
    table_dir = _table(client, db, "t", keys=(("ds", "string"),))
    _add(client, db, "t", ["a"], location=_uri(table_dir))
    _fill(table_dir)
    renamed = client.get_table(db, "t")
    renamed.tableName = "t2"
    client.alter_table(db, "t", renamed)
    moved = lake / f"{db}.db" / "t2"
    assert client.get_partition(db, "t2", ["a"]).sd.location == _uri(moved)
    new_table = _table(client, db, "t", keys=())
    precious = _fill(new_table, "precious.parquet")
    client.drop_table(db, "t2", True)
    assert precious.exists()


def test_drop_database_keeps_partitions_of_tables_that_stay(
    client, lake: Path, tmp_path: Path, db: str
) -> None:
    other = f"{db}_o"
    client.create_database(hms.Database(name=other, description="", parameters={},
                                        locationUri=_uri(tmp_path / f"{other}.db")))  # fmt: skip
    db_dir = lake / f"{db}.db"
    table = make_table(other, "m", keys=[("ds", "string")])
    table.sd.location = _uri(db_dir / "o_m")  # another database's table inside this directory
    client.create_table(table)
    _add(client, other, "m", ["1"], location=_uri(db_dir / "o_m_ds=1"))
    kept_table, kept_partition = _fill(db_dir / "o_m"), _fill(db_dir / "o_m_ds=1")
    client.drop_database(db, True, True)
    assert kept_table.exists() and kept_partition.exists()


def test_drop_database_sees_tables_created_altered_and_dropped_since_the_last_drop(
    client, lake: Path, tmp_path: Path, db: str
) -> None:
    """Every table's location is kept between database drops (on stores that log table
    changes): a table of another database created, moved or renamed into this database's
    directory since the last drop is still seen and its data kept; one dropped since is not."""
    other = f"{db}_o"
    client.create_database(hms.Database(name=other, description="", parameters={},
                                        locationUri=_uri(tmp_path / f"{other}.db")))  # fmt: skip
    first = f"{db}_first"
    client.create_database(hms.Database(name=first, description="", parameters={},
                                        locationUri=_uri(lake / f"{first}.db")))  # fmt: skip
    client.drop_database(first, True, True)  # reads (and keeps) every table's outline
    db_dir = lake / f"{db}.db"
    created = make_table(other, "created", keys=[])
    created.sd.location = _uri(db_dir / "created")
    client.create_table(created)
    moved = make_table(other, "moved", keys=[])
    client.create_table(moved)
    moved = client.get_table(other, "moved")
    moved.sd.location = _uri(db_dir / "moved")
    client.alter_table(other, "moved", moved)
    gone = make_table(other, "gone", keys=[])
    gone.sd.location = _uri(db_dir / "gone")
    client.create_table(gone)
    client.drop_table(other, "gone", False)
    kept = [_fill(db_dir / "created"), _fill(db_dir / "moved"), _fill(db_dir / "gone")]
    client.drop_database(db, True, True)
    assert kept[0].exists() and kept[1].exists()
    assert not kept[2].exists()  # the rest of the directory goes
    renamed = make_table(other, "before", keys=[])
    next_dir = lake / f"{db}_next.db"
    renamed.sd.location = _uri(next_dir / "r")
    client.create_table(renamed)
    client.create_database(hms.Database(name=f"{db}_next", description="", parameters={},
                                        locationUri=_uri(next_dir)))  # fmt: skip
    renamed = client.get_table(other, "before")
    renamed.tableName = "after"
    client.alter_table(other, "before", renamed)
    kept_r = _fill(next_dir / "r")
    client.drop_database(f"{db}_next", True, True)
    assert kept_r.exists() and client.get_table(other, "after").sd.location == _uri(next_dir / "r")


def test_two_databases_at_one_location_never_delete_each_other(
    client, lake: Path, db: str
) -> None:
    twin = f"{db}_twin"
    client.create_database(hms.Database(name=twin, description="", parameters={},
                                        locationUri=_uri(lake / f"{db}.db")))  # fmt: skip
    table_dir = _table(client, twin, "t", keys=())
    data = _fill(table_dir)
    loose = _fill(lake / f"{db}.db" / "twin's own files")
    client.drop_database(db, True, True)
    assert data.exists() and loose.exists()
    assert client.get_table(twin, "t").sd.location == _uri(table_dir)
