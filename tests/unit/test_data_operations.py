"""Data operations on the local file system: locations, creating, deleting (guards, links,
parents, trash), moving; and how locations of other file systems resolve."""

from __future__ import annotations

import errno
import importlib.util
import os
import shutil
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from metastore_server import audit
from metastore_server.catalog.data import files as data_files
from metastore_server.catalog.data import operations as data_module
from metastore_server.catalog.data.filesystems import (
    FileSystems,
    FileSystemUnavailable,
    split_location,
)
from metastore_server.catalog.data.operations import DataOperations
from metastore_server.thrift_api import hms


def _uri(path: Path) -> str:
    return f"file:{path}"


def _refuse(reason: str) -> Exception:
    return hms.MetaException(message=reason)


def _refuse_make(uri: str, detail: str) -> Exception:
    return hms.MetaException(message=f"{uri}: {detail}")


def _file(path: Path, text: str = "x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _delete(data: DataOperations, path: Path, **kwargs: object) -> None:
    deletion = data.plan_delete(_uri(path), what="test", purge=kwargs.pop("purge", True),
                                refuse=_refuse, **kwargs)  # type: ignore[arg-type]  # fmt: skip
    data.carry_out([deletion])


# -- locations ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("file:/a/b", ("file", "", "/a/b")),
        ("file:///a/b", ("file", "", "/a/b")),
        ("/a/b", ("", "", "/a/b")),
        ("s3a://bucket/k/x", ("s3a", "bucket", "/k/x")),
        ("hdfs://nn:8020/p", ("hdfs", "nn:8020", "/p")),
        ("HDFS://nn/p", ("hdfs", "nn", "/p")),
        # Hive writes escaped values into names: %3A is three characters of a directory name.
        ("file:/t/k=a%3Ab/q?x#y", ("file", "", "/t/k=a%3Ab/q?x#y")),
    ],
)
def test_locations_split_as_hadoop_paths(location: str, expected: tuple[str, str, str]) -> None:
    assert split_location(location) == expected


def test_local_places_are_normalised_and_compare_by_path() -> None:
    fs = FileSystems()
    place = fs.resolve("file:///w/db.db/t/../t/ds=1/")
    assert (place.protocol, place.path) == ("file", "/w/db.db/t/ds=1")
    assert place.uri == "file:/w/db.db/t/ds=1"
    table = fs.resolve("/w/db.db/t")
    assert table.contains(place) and not place.contains(table)
    assert not table.contains(fs.resolve("file:/w/db.db/t2"))  # a prefix, not a parent
    assert fs.resolve("file:/").is_root and not table.is_root


def test_s3_places() -> None:
    pytest.importorskip("s3fs")
    fs = FileSystems()
    place = fs.resolve("s3a://lake/wh/t/")
    assert (place.protocol, place.path, place.uri) == ("s3", "lake/wh/t", "s3a://lake/wh/t")
    assert fs.resolve("s3://lake").is_root and fs.resolve("s3n://lake/").is_root
    assert place.same_filesystem(fs.resolve("s3://lake/x"))
    assert not place.same_filesystem(fs.resolve("s3://other/wh/t"))  # buckets are authorities
    with pytest.raises(FileSystemUnavailable, match="must name a bucket"):
        fs.resolve("s3a:///no-bucket")


def test_unknown_schemes_and_missing_clients_are_named() -> None:
    fs = FileSystems()
    with pytest.raises(FileSystemUnavailable, match="No FileSystem for scheme: nosuch"):
        fs.resolve("nosuch://x/y")
    with pytest.raises(FileSystemUnavailable, match="must be absolute"):
        fs.resolve("file:relative/path")
    with pytest.raises(FileSystemUnavailable, match="must name this machine"):
        fs.resolve("file://otherhost/x")


@pytest.mark.skipif(
    importlib.util.find_spec("gcsfs") is not None, reason="gcsfs is installed here"
)
def test_a_scheme_whose_package_is_missing_says_so() -> None:
    with pytest.raises(FileSystemUnavailable, match="need a package that is not installed"):
        FileSystems().resolve("gs://bucket/t")


def test_hdfs_without_a_hadoop_client_says_what_is_missing() -> None:
    if importlib.util.find_spec("pyarrow") is None:
        with pytest.raises(FileSystemUnavailable, match=r"hbase-metastore\[hdfs\]"):
            FileSystems().resolve("hdfs://nn:8020/warehouse")
        return
    if os.environ.get("ARROW_LIBHDFS_DIR") or os.environ.get("HADOOP_HOME"):
        pytest.skip("a Hadoop client may be configured here")
    fs = FileSystems()
    for _ in range(2):  # the second look gives the same full reason
        with pytest.raises(FileSystemUnavailable, match="no Hadoop client for hdfs://nn:8020"):
            fs.resolve("hdfs://nn:8020/warehouse")


# -- creating -------------------------------------------------------------------------------


def test_make_dirs_creates_and_undo_removes_only_what_it_made(tmp_path: Path) -> None:
    data = DataOperations()
    existing = tmp_path / "existing"
    existing.mkdir()
    made = data.make_dirs([_uri(existing / "a" / "b"), _uri(existing), None], _refuse_make)
    assert (existing / "a" / "b").is_dir()
    data.undo(made)
    assert existing.is_dir() and not (existing / "a").exists()


def test_undo_leaves_a_directory_someone_wrote_into(tmp_path: Path) -> None:
    data = DataOperations()
    made = data.make_dirs([_uri(tmp_path / "t" / "ds=1")], _refuse_make)
    written = _file(tmp_path / "t" / "ds=1" / "part-0")
    data.undo(made)
    assert written.exists()


def test_make_dirs_refuses_and_removes_what_it_made_first(tmp_path: Path) -> None:
    data = DataOperations()
    blocker = _file(tmp_path / "file")
    with pytest.raises(hms.MetaException, match="exists and is not a directory"):
        data.make_dirs([_uri(tmp_path / "new"), _uri(blocker)], _refuse_make)
    assert not (tmp_path / "new").exists()


def test_disabled_data_operations_do_nothing(tmp_path: Path) -> None:
    data = DataOperations(enabled=False)
    data.make_dirs([_uri(tmp_path / "x")], _refuse_make)
    assert not (tmp_path / "x").exists()
    kept = _file(tmp_path / "t" / "f")
    assert data.plan_delete(_uri(tmp_path / "t"), what="t", purge=True, refuse=_refuse) is None
    move = data.plan_move(_uri(tmp_path / "t"), _uri(tmp_path / "u"), what="t", subject="d.t")
    assert move is None
    assert kept.exists()


# -- deleting -------------------------------------------------------------------------------


def test_delete_removes_a_tree_and_reports_it(tmp_path: Path) -> None:
    data = DataOperations()
    _file(tmp_path / "t" / "ds=1" / "f")
    with audit.collecting_extras() as extras:
        _delete(data, tmp_path / "t")
    assert not (tmp_path / "t").exists()
    assert extras["data_deleted"] == [_uri(tmp_path / "t")]


def test_nothing_to_delete_plans_nothing(tmp_path: Path) -> None:
    plan = DataOperations().plan_delete(
        _uri(tmp_path / "absent"), what="t", purge=True, refuse=_refuse
    )
    assert plan is None


def test_roots_and_protected_places_are_never_deleted(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    inside = _file(warehouse / "db.db" / "t" / "f")
    data = DataOperations(protected=[_uri(warehouse)])
    root = data.plan_delete("file:/", what="t", purge=True, refuse=_refuse)
    assert root is not None and root.kept == "file:/ is a file system root"
    for target in (warehouse, tmp_path):  # the warehouse, and what holds it
        plan = data.plan_delete(_uri(target), what="t", purge=True, refuse=_refuse)
        assert plan is not None and plan.kept is not None
        with capture_logs() as logs, audit.collecting_extras() as extras:
            data.carry_out([plan])
        assert extras["data_kept"] == [_uri(target)]
        assert logs[0]["event"] == "data_kept"
    db_dir = warehouse / "db.db"
    plan = data.plan_delete(_uri(db_dir), what="t", purge=True, refuse=_refuse,
                            guards=data.guards([_uri(db_dir)]))  # fmt: skip
    assert plan is not None and plan.kept is not None
    data.carry_out([plan])
    assert inside.exists()


def test_a_protected_place_reached_through_a_link_is_protected(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    kept = _file(warehouse / "f")
    os.symlink(warehouse, tmp_path / "alias")
    data = DataOperations(protected=[_uri(tmp_path / "alias")])
    _delete(data, warehouse)
    assert kept.exists()


def test_links_are_removed_never_followed(tmp_path: Path) -> None:
    precious = _file(tmp_path / "precious" / "f")
    table = tmp_path / "t"
    table.mkdir()
    os.symlink(tmp_path / "precious", table / "dir-link")
    os.symlink(precious, table / "file-link")
    os.symlink(tmp_path / "precious", tmp_path / "location-link")
    data = DataOperations()
    _delete(data, tmp_path / "location-link")
    assert not os.path.lexists(tmp_path / "location-link")
    _delete(data, table)
    assert not table.exists()
    assert precious.read_text() == "x"


def test_a_partition_drop_removes_parents_left_empty_up_to_the_table(tmp_path: Path) -> None:
    table = tmp_path / "t"
    _file(table / "ds=1" / "hr=1" / "min=1" / "f")
    _file(table / "ds=1" / "hr=2" / "min=1" / "f")
    data = DataOperations()
    _delete(data, table / "ds=1" / "hr=1" / "min=1", parent_levels=2, boundary=_uri(table))
    assert not (table / "ds=1" / "hr=1").exists()
    assert (table / "ds=1" / "hr=2").exists()  # not empty: stays, and so does ds=1
    _delete(data, table / "ds=1" / "hr=2" / "min=1", parent_levels=5, boundary=_uri(table))
    assert not (table / "ds=1").exists()
    assert table.is_dir()  # never the boundary, whatever the levels


def test_trash_keeps_the_path_and_purge_skips_it(tmp_path: Path) -> None:
    trash = tmp_path / "trash"
    data = DataOperations(trash_roots=[_uri(trash)])
    target = tmp_path / "wh" / "t"
    _file(target / "f", "first")
    with audit.collecting_extras() as extras:
        _delete(data, target, purge=False)
    in_trash = trash / "Current" / str(target).lstrip("/")
    assert (in_trash / "f").read_text() == "first" and not target.exists()
    assert extras["data_trashed"] == [_uri(target)]
    _file(target / "f", "second")
    _delete(data, target, purge=False)
    copies = [p for p in in_trash.parent.iterdir() if p.name.startswith("t.")]
    assert len(copies) == 1 and (copies[0] / "f").read_text() == "second"
    _file(target / "f", "third")
    _delete(data, target, purge=True)
    assert not target.exists() and len(list(in_trash.parent.iterdir())) == 2


def test_a_place_holding_the_trash_is_kept(tmp_path: Path) -> None:
    data = DataOperations(trash_roots=[_uri(tmp_path / "t" / ".trash")])
    plan = data.plan_delete(_uri(tmp_path / "t"), what="t", purge=False, refuse=_refuse)
    assert plan is None or plan.kept is not None
    _file(tmp_path / "t" / "f")
    plan = data.plan_delete(_uri(tmp_path / "t"), what="t", purge=False, refuse=_refuse)
    assert plan is not None and plan.kept is not None


def test_keep_inside_deletes_only_the_rest(tmp_path: Path) -> None:
    db_dir = tmp_path / "db.db"
    kept = _file(db_dir / "external" / "f")
    _file(db_dir / "managed" / "f")
    _file(db_dir / "loose")
    data = DataOperations()
    plan = data.plan_delete(_uri(db_dir), what="db", purge=True, refuse=_refuse)
    assert plan is not None
    data.keep_inside(plan, [_uri(db_dir / "external"), _uri(tmp_path / "unrelated"), None])
    data.carry_out([plan])
    assert kept.exists()
    assert sorted(p.name for p in db_dir.iterdir()) == ["external"]


def test_keep_inside_a_place_that_is_kept_whole(tmp_path: Path) -> None:
    db_dir = tmp_path / "db.db"
    kept = _file(db_dir / "f")
    data = DataOperations()
    plan = data.plan_delete(_uri(db_dir), what="db", purge=True, refuse=_refuse)
    assert plan is not None
    data.keep_inside(plan, [_uri(tmp_path)])
    data.carry_out([plan])
    assert kept.exists()


def test_a_failed_delete_is_logged_and_audited_never_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = _file(tmp_path / "t" / "f").parent
    data = DataOperations()
    plan = data.plan_delete(_uri(target), what="table d.t", purge=True, refuse=_refuse)

    def failing_rmtree(path: str, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(shutil, "rmtree", failing_rmtree)
    with capture_logs() as logs, audit.collecting_extras() as extras:
        data.carry_out([plan])
    assert target.exists()
    failure = next(line for line in logs if line["event"] == "data_delete_failed")
    assert failure["location"] == _uri(target) and "Permission denied" in failure["error"]
    assert extras["data_errors"][0].startswith(f"{_uri(target)}: PermissionError")


def test_an_unwritable_parent_refuses_the_delete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = _file(tmp_path / "t" / "f").parent
    monkeypatch.setattr(data_module.os, "access", lambda path, mode: False)
    with pytest.raises(hms.MetaException) as refused:
        DataOperations().plan_delete(_uri(target), what="t", purge=True, refuse=_refuse)
    assert refused.value.message.startswith(f"{_uri(tmp_path)} is not writable by ")


def test_an_unknown_scheme_refuses_the_delete() -> None:
    with pytest.raises(hms.MetaException, match="No FileSystem for scheme: nosuch"):
        DataOperations().plan_delete("nosuch://x/t", what="t", purge=True, refuse=_refuse)


# -- moving ---------------------------------------------------------------------------------


def test_a_move_and_its_rollback(tmp_path: Path) -> None:
    data = DataOperations()
    _file(tmp_path / "db.db" / "t" / "ds=1" / "f")
    move = data.plan_move(_uri(tmp_path / "db.db" / "t"), _uri(tmp_path / "other.db" / "t2"),
                          what="table db.t", subject="other.t2")  # fmt: skip
    assert move is not None
    data.prepare(move, "db.t")
    assert (tmp_path / "other.db" / "t2" / "ds=1" / "f").exists()
    move.rollback()
    assert (tmp_path / "db.db" / "t" / "ds=1" / "f").exists()
    assert not (tmp_path / "other.db" / "t2").exists()


def test_moves_are_refused_onto_existing_data_or_another_file_system(tmp_path: Path) -> None:
    data = DataOperations()
    _file(tmp_path / "t" / "f")
    _file(tmp_path / "u" / "g")
    with pytest.raises(hms.InvalidOperationException) as refused:
        data.plan_move(_uri(tmp_path / "t"), _uri(tmp_path / "u"), what="t", subject="d.u")
    assert refused.value.message == (
        f"New location for this table d.u already exists : {_uri(tmp_path / 'u')}"
    )
    if importlib.util.find_spec("s3fs") is not None:
        with pytest.raises(hms.InvalidOperationException, match="on a different file system"):
            data.plan_move(_uri(tmp_path / "t"), "s3://lake/t", what="t", subject="d.u")
    assert data.plan_move(_uri(tmp_path / "absent"), _uri(tmp_path / "v"), what="t",
                          subject="d.v") is None  # fmt: skip


def test_keep_inside_compares_real_paths(tmp_path: Path) -> None:
    """A staying table reached through a link into the deleted directory stays."""
    db_dir = tmp_path / "d.db"
    kept = _file(db_dir / "e" / "f")
    _file(db_dir / "gone" / "f")
    os.symlink(db_dir, tmp_path / "alias")
    data = DataOperations()
    plan = data.plan_delete(_uri(db_dir), what="db", purge=True, refuse=_refuse)
    assert plan is not None
    data.keep_inside(plan, [_uri(tmp_path / "alias" / "e")])
    data.carry_out([plan])
    assert kept.exists() and not (db_dir / "gone").exists()


def test_a_deleted_link_with_something_to_keep_behind_it_is_only_unlinked(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    other = _file(shared / "not-ours.txt")
    kept = _file(shared / "e" / "f")
    os.symlink(shared, tmp_path / "d.db")
    data = DataOperations()
    plan = data.plan_delete(_uri(tmp_path / "d.db"), what="db", purge=True, refuse=_refuse)
    assert plan is not None
    data.keep_inside(plan, [_uri(tmp_path / "d.db" / "e")])
    data.carry_out([plan])
    assert other.exists() and kept.exists()


def test_any_failure_after_the_commit_is_reported_not_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class ClientError(Exception):  # an S3 client's own error type: not an OSError
        pass

    def broken(place: object) -> None:
        raise ClientError("Could not connect to the endpoint URL")

    first, second = _file(tmp_path / "a" / "f").parent, _file(tmp_path / "b" / "f").parent
    data = DataOperations()
    plans = [data.plan_delete(_uri(p), what=p.name, purge=True, refuse=_refuse)
             for p in (first, second)]  # fmt: skip
    monkeypatch.setattr(data_files, "remove_tree", broken)
    with audit.collecting_extras() as extras:
        data.carry_out(plans)  # no exception: both are tried and reported
    assert [e.split(": ")[1] for e in extras["data_errors"]] == ["ClientError", "ClientError"]


def test_a_move_across_devices_copies_and_deletes_the_source_after_the_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_rename = os.rename
    cross_device = {"on": True}

    def rename(src: str, dst: str) -> None:
        if cross_device["on"]:
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        real_rename(src, dst)

    monkeypatch.setattr(os, "rename", rename)
    _file(tmp_path / "db.db" / "t" / "ds=1" / "f")
    os.symlink("/nowhere", tmp_path / "db.db" / "t" / "link")
    data = DataOperations()
    for outcome in ("rollback", "commit"):
        move = data.plan_move(_uri(tmp_path / "db.db" / "t"), _uri(tmp_path / "shm" / "t"),
                              what="table db.t", subject="db.t")  # fmt: skip
        assert move is not None
        data.prepare(move, "db.t")
        assert (tmp_path / "shm" / "t" / "ds=1" / "f").exists()
        assert os.readlink(tmp_path / "shm" / "t" / "link") == "/nowhere"  # copied as a link
        assert (tmp_path / "db.db" / "t" / "ds=1" / "f").exists()  # until the metadata commits
        getattr(move, outcome)()
    assert not (tmp_path / "db.db" / "t").exists()
    assert (tmp_path / "shm" / "t" / "ds=1" / "f").exists()


def test_audit_lists_are_bounded() -> None:
    with audit.collecting_extras() as extras:
        for number in range(audit.LIST_LIMIT + 5):
            audit.append("data_deleted", number)
    assert extras["data_deleted"] == list(range(audit.LIST_LIMIT))
    assert extras["data_deleted_more"] == 5


def test_a_directory_made_again_waits_for_the_committed_delete(tmp_path: Path) -> None:
    """A partition dropped (committed, its delete still to run) and added again at once: the
    new directory is made after the old one is gone, never deleted by the late delete."""
    import threading

    old = _file(tmp_path / "t" / "ds=1" / "old-data")
    data = DataOperations()
    plan = data.plan_delete(_uri(old.parent), what="p", purge=True, refuse=_refuse)
    data.reserve([plan])
    made = threading.Event()

    def add_again() -> None:
        data.make_dirs([_uri(tmp_path / "t" / "ds=1")], _refuse_make)
        made.set()

    adder = threading.Thread(target=add_again)
    adder.start()
    assert not made.wait(0.3)  # waits for the delete
    data.carry_out([plan])
    adder.join(5)
    assert made.is_set()
    assert (tmp_path / "t" / "ds=1").is_dir() and not old.exists()


def test_making_a_directory_survives_a_parent_removed_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_makedirs = os.makedirs
    calls = []

    leaf = tmp_path / "t" / "ds=1" / "hr=1"

    def racing_makedirs(path: str, *args: object, **kwargs: object) -> None:
        if path == str(leaf):
            calls.append(path)
            if len(calls) == 1:  # a finishing drop removed an empty parent on the way
                raise FileNotFoundError(2, "No such file or directory", path)
        real_makedirs(path, *args, **kwargs)

    monkeypatch.setattr(data_module.os, "makedirs", racing_makedirs)
    DataOperations().make_dirs([_uri(leaf)], _refuse_make)
    assert leaf.is_dir() and len(calls) == 2


def test_siblings_are_made_with_one_mkdir_each_and_undone_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch of partition directories: the first of a parent is made as any directory
    (looking for the first missing one up the path); its siblings with a single ``mkdir``,
    without looking first. Undo removes every one the call made, and only those."""
    table = tmp_path / "t"
    table.mkdir()
    (table / "ds=1" / "hr=0" / "region=r9").mkdir(parents=True)  # found, not made
    leaves = [table / "ds=1" / "hr=0" / f"region=r{i}" for i in range(3)]
    leaves += [table / "ds=1" / "hr=1" / "region=r0", table / "ds=1" / "hr=1" / "region=r1"]
    looked: list[str] = []
    real_lexists = os.path.lexists
    monkeypatch.setattr(data_module.os.path, "lexists",
                        lambda p: looked.append(str(p)) or real_lexists(p))  # fmt: skip
    data = DataOperations()
    locations = [_uri(table / "ds=1" / "hr=0" / "region=r9"), *map(_uri, leaves)]
    made = data.make_dirs(locations, _refuse_make)
    assert all(leaf.is_dir() for leaf in leaves)
    # Looked up: the existing one, and the first leaf under the new hr=1 (and its parent).
    assert str(leaves[1]) not in looked and str(leaves[4]) not in looked
    assert str(leaves[3]) in looked
    data.undo(made)
    assert not any(leaf.exists() for leaf in leaves)
    assert (table / "ds=1" / "hr=0" / "region=r9").is_dir()
    assert not (table / "ds=1" / "hr=1").exists()


def test_a_sibling_that_is_a_file_refuses_the_batch(tmp_path: Path) -> None:
    (tmp_path / "t" / "ds=1").mkdir(parents=True)
    _file(tmp_path / "t" / "ds=2")
    with pytest.raises(hms.MetaException, match="ds=2: it exists and is not a directory"):
        data = DataOperations()
        data.make_dirs(
            [_uri(tmp_path / "t" / "ds=1"), _uri(tmp_path / "t" / "ds=0"),
             _uri(tmp_path / "t" / "ds=2")],
            _refuse_make,
        )  # fmt: skip
    assert not (tmp_path / "t" / "ds=0").exists()  # made by the call, removed again
    assert (tmp_path / "t" / "ds=1").is_dir() and (tmp_path / "t" / "ds=2").is_file()


def test_a_sibling_whose_parent_went_meanwhile_is_made_the_long_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parent noted as present is removed (a drop finishing) just before the next
    sibling's ``mkdir``: the sibling is still made, its parent again."""
    first, second = tmp_path / "t" / "ds=1" / "a", tmp_path / "t" / "ds=1" / "b"
    real_mkdir = os.mkdir

    def racing_mkdir(path: str, *args: object, **kwargs: object) -> None:
        if str(path) == str(second) and first.exists():
            shutil.rmtree(tmp_path / "t" / "ds=1")
        real_mkdir(path, *args, **kwargs)

    monkeypatch.setattr(data_module.os, "mkdir", racing_mkdir)
    DataOperations().make_dirs([_uri(first), _uri(second)], _refuse_make)
    assert second.is_dir() and not first.exists()


def test_directories_not_made_outside_the_roots_log_one_line_per_call(tmp_path: Path) -> None:
    from metastore_server.catalog.data.roots import DataRoots

    fs = FileSystems()
    data = DataOperations(fs, roots=DataRoots.parse([_uri(tmp_path / "in")], fs))
    outside = [_uri(tmp_path / "out" / f"p={i}") for i in range(50)]
    with capture_logs() as logs, audit.collecting_extras() as extras:
        data.make_dirs(outside, _refuse_make, owned=False)
    assert not (tmp_path / "out").exists()
    assert [entry["event"] for entry in logs] == ["data_not_made", "data_not_made_more"]
    assert logs[0]["location"] == outside[0]
    assert logs[1]["count"] == 49 and logs[1]["last"] == outside[-1]
    assert extras["data_not_made"][0] == outside[0]


def test_many_directories_are_made_side_by_side_as_the_caller(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call with many directories makes them in several threads; each is given to the
    caller (the threads see who the call is made as), and all of them exist after."""
    from metastore_server.caller import Session, current_user, serving

    given: dict[str, str | None] = {}
    monkeypatch.setattr(
        data_module, "give_to_caller",
        lambda top, path: given.__setitem__(path, current_user()),
    )  # fmt: skip
    leaves = [tmp_path / "t" / f"ds={d}" / f"hr={h}" for d in range(10) for h in range(12)]
    assert len(leaves) >= data_module.MAKE_IN_THREADS_FROM
    data = DataOperations()
    data.give_to_caller = True
    with serving(Session(claimed_user="alice")):
        made = data.make_dirs(map(_uri, leaves), _refuse_make)
    assert all(leaf.is_dir() for leaf in leaves)
    assert {str(leaf) for leaf in leaves} <= set(given)
    assert set(given.values()) == {"alice"}
    data.undo(made)
    assert not (tmp_path / "t").exists()


def test_many_directories_with_two_blocked_refuse_the_first_and_keep_nothing(
    tmp_path: Path,
) -> None:
    leaves = [tmp_path / "t" / f"ds={d}" / f"hr={h}" for d in range(10) for h in range(12)]
    _file(tmp_path / "t" / "ds=7")  # blocks ds=7/hr=*
    _file(tmp_path / "t" / "ds=3" / "hr=5")  # blocks one, earlier in the request
    with pytest.raises(hms.MetaException, match=r"ds=3/hr=5: it exists and is not a directory"):
        DataOperations().make_dirs(map(_uri, leaves), _refuse_make)
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == ["ds=3", "ds=7"]
    assert [p.name for p in (tmp_path / "t" / "ds=3").iterdir()] == ["hr=5"]


def test_many_directories_some_there_make_only_the_missing_and_undo_only_those(
    tmp_path: Path,
) -> None:
    """Directories already there (one through a link) are found without being made or
    handed to a thread; the missing ones are made, and undone alone."""
    leaves = [tmp_path / "t" / f"ds={d}" / f"hr={h}" for d in range(10) for h in range(12)]
    assert len(leaves) >= data_module.MAKE_IN_THREADS_FROM
    there = leaves[: len(leaves) // 2]
    for leaf in there[1:]:
        leaf.mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    there[0].parent.mkdir(parents=True, exist_ok=True)
    there[0].symlink_to(tmp_path / "elsewhere")  # a link to a directory: there
    data = DataOperations()
    made = data.make_dirs(map(_uri, leaves), _refuse_make)
    assert all(leaf.is_dir() for leaf in leaves)
    data.undo(made)
    assert all(leaf.is_dir() for leaf in there)
    assert not any(leaf.exists() for leaf in leaves[len(there) :])
    assert (tmp_path / "elsewhere").is_dir()


def test_many_directories_one_a_dangling_link_refuse_the_call(tmp_path: Path) -> None:
    leaves = [tmp_path / "t" / f"ds={d}" / f"hr={h}" for d in range(10) for h in range(12)]
    for leaf in leaves[:20]:
        leaf.mkdir(parents=True)
    leaves[30].parent.mkdir(parents=True, exist_ok=True)
    leaves[30].symlink_to(tmp_path / "nowhere")
    with pytest.raises(hms.MetaException, match=r"hr=6: it exists and is not a directory"):
        DataOperations().make_dirs(map(_uri, leaves), _refuse_make)
    assert all(leaf.is_dir() for leaf in leaves[:20])
    assert not any(leaf.exists() for leaf in leaves[31:])
