"""Fast statistics (``numFiles``, ``totalSize``) as HMS 2.3 keeps them, over real sockets: counted
when a table or partition is created over files already there, counted again by an alter by
HMS's rules, left as sent when the client says so; on local directories and on S3 (moto's
server). ``tests/compat/test_fast_stats_side_by_side.py`` compares the same rules with the
reference metastore."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.s3_server import MotoS3, S3Endpoint

from metastore_server.thrift_api import hms

from .conftest import create_db, make_partition, make_table

#: Two data files (30 bytes) among the hidden ones HMS does not count.
FILES = {"a.parquet": 10, "sub/b.parquet": 20, "_SUCCESS": 0, ".a.parquet.crc": 4,
         "_temporary/c": 7, ".hive-staging/d": 3}  # fmt: skip
DNU = hms.EnvironmentContext(properties={"DO_NOT_UPDATE_STATS": "true"})
TASK = hms.EnvironmentContext(properties={"STATS_GENERATED": "TASK"})


def _write(directory: Path, files: dict[str, int] = FILES) -> None:
    for relative, size in files.items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * size)


def _stats(obj: hms.Table | hms.Partition) -> tuple[str | None, str | None]:
    params = obj.parameters or {}
    return params.get("numFiles"), params.get("totalSize")


def _external(db: str, name: str, location: Path | str, **extra: object) -> hms.Table:
    params = {"EXTERNAL": "TRUE", **extra.pop("parameters", {})}  # type: ignore[dict-item]
    table = make_table(db, name, tableType="EXTERNAL_TABLE", parameters=params, **extra)
    table.sd.location = f"file:{location}" if isinstance(location, Path) else location
    return table


@pytest.fixture()
def lake(tmp_path: Path) -> Path:
    return tmp_path / "lake"


def test_create_over_existing_files_counts_them(client, lake: Path) -> None:
    create_db(client, "fs_create")
    _write(lake / "ext")
    client.create_table(_external("fs_create", "ext", lake / "ext", parameters={
        "COLUMN_STATS_ACCURATE": '{"BASIC_STATS":"true"}'}))  # fmt: skip
    params = client.get_table("fs_create", "ext").parameters
    assert _stats(client.get_table("fs_create", "ext")) == ("2", "30")
    assert "COLUMN_STATS_ACCURATE" not in params  # counted, not computed by a task

    (lake / "empty").mkdir()
    client.create_table(_external("fs_create", "empty", lake / "empty"))
    assert _stats(client.get_table("fs_create", "empty")) == ("0", "0")


def test_create_leaves_out_what_hms_leaves_out(client, lake: Path) -> None:
    create_db(client, "fs_none")
    _write(lake / "ext")
    client.create_table(make_table("fs_none", "fresh"))  # its directory is made: nothing counted
    assert _stats(client.get_table("fs_none", "fresh")) == (None, None)
    client.create_table(_external("fs_none", "missing", lake / "missing"))
    assert _stats(client.get_table("fs_none", "missing")) == (None, None)
    client.create_table(_external("fs_none", "parted", lake / "ext", keys=[("ds", "string")]))
    assert _stats(client.get_table("fs_none", "parted")) == (None, None)
    client.create_table(_external("fs_none", "sent", lake / "ext", parameters={
        "numFiles": "5", "totalSize": "50"}))  # fmt: skip
    assert _stats(client.get_table("fs_none", "sent")) == ("5", "50")
    client.create_table(_external("fs_none", "dnu", lake / "ext", parameters={
        "DO_NOT_UPDATE_STATS": "TRUE"}))  # fmt: skip
    params = client.get_table("fs_none", "dnu").parameters
    assert "DO_NOT_UPDATE_STATS" not in params and "numFiles" not in params


def test_create_generated_by_a_task_marks_them_accurate(client, lake: Path) -> None:
    create_db(client, "fs_task")
    _write(lake / "ext")
    table = _external("fs_task", "t", lake / "ext", parameters={
        "COLUMN_STATS_ACCURATE": '{"COLUMN_STATS":{"b":"true","a":"true"}}'})  # fmt: skip
    client.create_table_with_environment_context(table, TASK)
    params = client.get_table("fs_task", "t").parameters
    assert params["COLUMN_STATS_ACCURATE"] == (
        '{"BASIC_STATS":"true","COLUMN_STATS":{"a":"true","b":"true"}}'
    )


def test_alter_table_rules(client, lake: Path) -> None:
    create_db(client, "fs_alter")
    _write(lake / "ext")
    client.create_table(_external("fs_alter", "ext", lake / "ext"))
    (lake / "ext" / "more.parquet").write_bytes(b"m" * 5)
    table = client.get_table("fs_alter", "ext")
    client.alter_table("fs_alter", "ext", table)
    assert _stats(client.get_table("fs_alter", "ext")) == ("3", "35")

    table.parameters.update(numFiles="8", totalSize="80", DO_NOT_UPDATE_STATS="true")
    client.alter_table("fs_alter", "ext", table)  # the parameter says so, and goes
    params = client.get_table("fs_alter", "ext").parameters
    assert _stats(client.get_table("fs_alter", "ext")) == ("8", "80")
    assert "DO_NOT_UPDATE_STATS" not in params

    table = client.get_table("fs_alter", "ext")
    table.sd.location = f"file:{lake / 'nowhere'}"
    client.alter_table("fs_alter", "ext", table)  # a missing location counts as empty
    assert _stats(client.get_table("fs_alter", "ext")) == ("0", "0")


def test_renamed_managed_table_keeps_its_statistics_as_sent(client) -> None:
    create_db(client, "fs_rename")
    client.create_table(make_table("fs_rename", "t"))
    table = client.get_table("fs_rename", "t")
    _write(Path(table.sd.location.removeprefix("file:")))
    table.tableName = "t2"
    client.alter_table("fs_rename", "t", table)
    assert _stats(client.get_table("fs_rename", "t2")) == (None, None)


def test_renamed_external_table_is_counted_again(client, lake: Path) -> None:
    create_db(client, "fs_rename_ext")
    _write(lake / "ext")
    client.create_table(_external("fs_rename_ext", "e", lake / "ext"))
    (lake / "ext" / "more.parquet").write_bytes(b"m" * 5)
    table = client.get_table("fs_rename_ext", "e")
    table.tableName = "e2"
    client.alter_table("fs_rename_ext", "e", table)
    assert _stats(client.get_table("fs_rename_ext", "e2")) == ("3", "35")


def _partitioned(client, db: str) -> Path:
    create_db(client, db)
    client.create_table(make_table(db, "p", keys=[("ds", "string")]))
    return Path(client.get_table(db, "p").sd.location.removeprefix("file:"))


def test_add_partitions_over_existing_files(client, lake: Path) -> None:
    directory = _partitioned(client, "fs_add")
    _write(directory / "ds=1")
    (directory / "ds=3").mkdir(parents=True)
    _write(lake / "outside", {"f.parquet": 17})
    sent = make_partition("fs_add", "p", ["4"])
    sent.parameters = {"numFiles": "4", "totalSize": "40"}
    client.add_partition(make_partition("fs_add", "p", ["1"]))
    client.add_partitions([
        make_partition("fs_add", "p", ["2"]), make_partition("fs_add", "p", ["3"]), sent,
        make_partition("fs_add", "p", ["9"], f"file:{lake / 'outside'}"),
    ])  # fmt: skip
    found = {p.values[0]: _stats(p) for p in client.get_partitions("fs_add", "p", -1)}
    assert found == {"1": ("2", "30"), "2": (None, None), "3": ("0", "0"), "4": ("4", "40"),
                     "9": ("1", "17")}  # fmt: skip
    _write(directory / "ds=5", {"f.parquet": 13})
    assert _stats(client.append_partition("fs_add", "p", ["5"])) == ("1", "13")


def test_alter_partition_rules(client) -> None:
    directory = _partitioned(client, "fs_alter_part")
    _write(directory / "ds=1")
    client.add_partitions([make_partition("fs_alter_part", "p", [v]) for v in ("1", "2")])

    two = client.get_partition("fs_alter_part", "p", ["2"])
    client.alter_partition("fs_alter_part", "p", two)  # none before: counted (empty)
    assert _stats(client.get_partition("fs_alter_part", "p", ["2"])) == ("0", "0")

    (directory / "ds=1" / "late.parquet").write_bytes(b"l" * 5)
    one = client.get_partition("fs_alter_part", "p", ["1"])
    one.parameters["k"] = "v"
    client.alter_partition("fs_alter_part", "p", one)  # the stored ones: kept
    assert _stats(client.get_partition("fs_alter_part", "p", ["1"])) == ("2", "30")

    one.parameters["numFiles"] = "99"
    client.alter_partition("fs_alter_part", "p", one)  # others: counted again
    assert _stats(client.get_partition("fs_alter_part", "p", ["1"])) == ("3", "35")

    one.parameters.update(numFiles="42", totalSize="420")
    client.alter_partition_with_environment_context("fs_alter_part", "p", one, DNU)
    assert _stats(client.get_partition("fs_alter_part", "p", ["1"])) == ("42", "420")

    client.alter_partitions_with_environment_context("fs_alter_part", "p", [one], TASK)
    stored = client.get_partition("fs_alter_part", "p", ["1"])
    assert _stats(stored) == ("42", "420")  # the stored ones, now marked accurate
    assert stored.parameters["COLUMN_STATS_ACCURATE"] == '{"BASIC_STATS":"true"}'

    del stored.parameters["totalSize"]
    client.alter_partitions_with_environment_context("fs_alter_part", "p", [stored], TASK)
    assert _stats(client.get_partition("fs_alter_part", "p", ["1"])) == ("3", "35")


def test_renamed_partition_without_statistics_is_counted(client) -> None:
    directory = _partitioned(client, "fs_rename_part")
    _write(directory / "ds=1")
    _write(directory / "ds=2")
    client.add_partitions([make_partition("fs_rename_part", "p", [v]) for v in ("1", "2")])
    kept = client.get_partition("fs_rename_part", "p", ["1"])
    kept.values = ["10"]
    client.rename_partition("fs_rename_part", "p", ["1"], kept)
    assert _stats(client.get_partition("fs_rename_part", "p", ["10"])) == ("2", "30")

    bare = client.get_partition("fs_rename_part", "p", ["2"])
    bare.values = ["20"]
    del bare.parameters["numFiles"], bare.parameters["totalSize"]
    client.rename_partition("fs_rename_part", "p", ["2"], bare)
    assert _stats(client.get_partition("fs_rename_part", "p", ["20"])) == RENAMED_BARE


#: What HMS 2.3 counts for a renamed partition sent without statistics (its directory moves
#: after they are counted).
RENAMED_BARE = ("0", "0")


def test_data_operations_off_counts_nothing(start_server, lake: Path) -> None:
    conn = start_server(data_operations="off").client()
    create_db(conn, "fs_off")
    _write(lake / "ext")
    conn.create_table(_external("fs_off", "ext", lake / "ext"))
    assert _stats(conn.get_table("fs_off", "ext")) == (None, None)


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Endpoint]:
    pytest.importorskip("s3fs", reason="the S3 tests need s3fs (hbase-metastore[s3])")
    with MotoS3(tmp_path_factory.mktemp("moto")) as endpoint:
        yield endpoint


def test_counted_on_s3(start_server, s3: S3Endpoint) -> None:
    options = {"s3": {"key": s3.admin.key, "secret": s3.admin.secret, "endpoint_url": s3.url}}
    conn = start_server(fs_options=options).client()
    conn.create_database(hms.Database(name="fs_s3", description="", parameters={},
                                      locationUri=f"s3a://{s3.bucket}/wh/fs_s3.db"))  # fmt: skip
    for relative, size in FILES.items():
        s3.put(f"ext/{relative}", b"x" * size)
    s3.put("ext/", b"")  # directory markers, as Hadoop's S3A writes them
    s3.put("ext/sub/", b"")
    conn.create_table(_external("fs_s3", "ext", f"s3a://{s3.bucket}/ext"))
    assert _stats(conn.get_table("fs_s3", "ext")) == ("2", "30")

    conn.create_table(make_table("fs_s3", "p", keys=[("ds", "string")]))
    s3.put("wh/fs_s3.db/p/ds=1/part-0.parquet", b"p" * 11)
    s3.put("wh/fs_s3.db/p/ds=1/_SUCCESS", b"")
    conn.add_partitions([make_partition("fs_s3", "p", [v]) for v in ("1", "2")])
    found = {p.values[0]: _stats(p) for p in conn.get_partitions("fs_s3", "p", -1)}
    assert found == {"1": ("1", "11"), "2": (None, None)}
    two = conn.get_partition("fs_s3", "p", ["2"])
    conn.alter_partition("fs_s3", "p", two)
    assert _stats(conn.get_partition("fs_s3", "p", ["2"])) == ("0", "0")


def test_exchanged_partitions_are_not_counted(client) -> None:
    directory = _partitioned(client, "fs_exchange")
    client.create_table(make_table("fs_exchange", "q", keys=[("ds", "string")]))
    client.add_partition(make_partition("fs_exchange", "p", ["1"]))
    _write(directory / "ds=1")
    client.exchange_partition({"ds": "1"}, "fs_exchange", "p", "fs_exchange", "q")
    assert _stats(client.get_partition("fs_exchange", "q", ["1"])) == (None, None)


def test_autogather_off_counts_only_on_alters(start_server, lake: Path) -> None:
    conn = start_server(extra_config={"hive.stats.autogather": "false"}).client()
    create_db(conn, "fs_gather")
    _write(lake / "ext")
    conn.create_table(_external("fs_gather", "ext", lake / "ext"))
    assert _stats(conn.get_table("fs_gather", "ext")) == (None, None)
    conn.create_table(_external("fs_gather", "p", lake / "p", keys=[("ds", "string")]))
    _write(lake / "p" / "ds=1")
    conn.add_partition(make_partition("fs_gather", "p", ["1"]))
    assert _stats(conn.get_partition("fs_gather", "p", ["1"])) == (None, None)
    conn.alter_table("fs_gather", "ext", conn.get_table("fs_gather", "ext"))
    assert _stats(conn.get_table("fs_gather", "ext")) == ("2", "30")
