"""Data roots: matching locations to roots (path boundaries, file systems, buckets, links),
the settings (flag, variable, config file) and the checks made at start."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from metastore_server.catalog.data.deletions import Guard
from metastore_server.catalog.data.filesystems import FileSystems, Place
from metastore_server.catalog.data.operations import DataOperations
from metastore_server.catalog.data.roots import DataRoots
from metastore_server.catalog.data.warehouse import Warehouse
from metastore_server.cli import main as cli
from metastore_server.cli import serving
from metastore_server.server.app import data_roots
from metastore_server.server.config import ServerConfig
from metastore_server.thrift_api import hms

FS = FileSystems()


def _roots(*uris: str) -> DataRoots:
    return DataRoots.parse(list(uris), FS)


def _inside(roots: DataRoots, location: str) -> bool:
    return roots.outside(FS.resolve(location)) is None


@pytest.mark.parametrize(
    ("location", "inside"),
    [
        ("file:/data/x", True),
        ("/data/x", True),  # a bare path is local
        ("file:/data/x/", True),
        ("file:///data/x/t/ds=1", True),
        ("file:/data/x/../x/t", True),  # normalised
        ("file:/data/xyz", False),  # a string prefix is not a path prefix
        ("file:/data/xyz/t", False),
        ("file:/data", False),
        ("file:/data/x/../y", False),
        ("s3://bucket/data/x/t", True),
        ("s3a://bucket/data/x/t", True),  # one S3 whatever Hadoop's name of it
        ("s3://bucket/data/xyz", False),
        ("s3://other/data/x/t", False),  # another bucket
        ("s3://bucket/data", False),
        ("file:/bucket/data/x/t", False),  # another file system, same path
    ],
)
def test_locations_match_roots_on_path_boundaries(location: str, inside: bool) -> None:
    roots = _roots("file:/data/x/", "s3://bucket/data/x")
    assert _inside(roots, location) is inside


def _hdfs(authority: str, path: str) -> Place:
    """An HDFS place, its client not opened (no Hadoop here)."""
    return Place("hdfs", "hdfs", authority, path, None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("authority", "path", "inside"),
    [
        ("nn:8020", "/w/t", True),
        ("nn:8020", "/w", True),
        ("other:8020", "/w/t", False),  # another cluster
        ("nn:8020", "/wx", False),
    ],
)
def test_hdfs_roots_match_cluster_and_path(authority: str, path: str, inside: bool) -> None:
    roots = DataRoots((Guard.of(_hdfs("nn:8020", "/w")),))
    assert (roots.outside(_hdfs(authority, path)) is None) is inside


def test_no_roots_allow_everything() -> None:
    roots = _roots()
    assert not roots.active
    assert _inside(roots, "file:/anything") and _inside(roots, "s3://b/k")


def test_a_link_under_a_root_does_not_lead_outside(tmp_path: Path) -> None:
    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    os.symlink(elsewhere, root / "link")
    roots = _roots(f"file:{root}")
    assert _inside(roots, f"file:{root}/t")
    assert not _inside(roots, f"file:{root}/link/t")
    assert "is outside the data roots of this server (file:" in roots.outside(
        FS.resolve(f"file:{root}/link/t")
    )


def test_links_are_resolved_only_for_places_under_a_root_by_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A place outside every root as written is outside whatever its links say: its path is
    not resolved (an external table's thousands of partitions cost no ``realpath`` each)."""
    from metastore_server.catalog.data import roots as roots_module

    resolved: list[str] = []
    real = roots_module.real_path
    monkeypatch.setattr(roots_module, "real_path",
                        lambda place: resolved.append(place.path) or real(place))  # fmt: skip
    roots = _roots(f"file:{tmp_path / 'root'}")
    assert not _inside(roots, f"file:{tmp_path / 'out'}/t/ds=1")
    assert resolved == []
    assert _inside(roots, f"file:{tmp_path / 'root'}/t/ds=1")
    assert resolved == [f"{tmp_path / 'root'}/t/ds=1"]


def test_parents_a_drop_may_remove_stay_inside_the_root() -> None:
    roots = _roots("file:/r")
    assert roots.levels_inside(FS.resolve("file:/r/a/b/c")) == 2
    assert roots.levels_inside(FS.resolve("file:/r/a")) == 0
    assert roots.levels_inside(FS.resolve("file:/elsewhere/a/b")) == 0
    assert _roots().levels_inside(FS.resolve("file:/x/a")) > 100


@pytest.mark.parametrize(
    ("root", "message"),
    [
        ("relative/dir", "data root 'relative/dir': a local location must be absolute"),
        ("file:relative", "data root 'file:relative': a local location must be absolute"),
        ("s3://", "an S3 location must name a bucket"),
        ("nosuch://x/y", "No FileSystem for scheme: nosuch"),
    ],
)
def test_a_root_that_cannot_be_resolved_is_named(root: str, message: str) -> None:
    with pytest.raises(ValueError, match="data root") as refused:
        _roots("file:/ok", root)
    assert message in str(refused.value)


def test_data_operations_refuse_outside_roots(tmp_path: Path) -> None:
    inside, outside = tmp_path / "in", tmp_path / "out"
    data = DataOperations(FS, roots=_roots(f"file:{inside}"))

    def refuse_make(uri: str, detail: str) -> Exception:
        return hms.MetaException(message=f"{uri}: {detail}")

    data.make_dirs([f"file:{inside}/t"], refuse_make)
    assert (inside / "t").is_dir()
    with pytest.raises(hms.MetaException, match="is outside the data roots"):
        data.make_dirs([f"file:{outside}/t"], refuse_make)
    assert not outside.exists()
    data.make_dirs([f"file:{outside}/e"], refuse_make, owned=False)  # not made, not refused
    assert not outside.exists()
    (outside / "d").mkdir(parents=True)
    with pytest.raises(hms.MetaException, match="is outside the data roots"):
        data.plan_delete(f"file:{outside}/d", what="t", purge=True,
                         refuse=lambda r: hms.MetaException(message=r))  # fmt: skip
    assert data.plan_delete(f"file:{outside}/none", what="t", purge=True,
                            refuse=lambda r: hms.MetaException(message=r)) is None  # fmt: skip
    # A root itself is never deleted.
    kept = data.plan_delete(f"file:{inside}", what="t", purge=True,
                            refuse=lambda r: hms.MetaException(message=r))  # fmt: skip
    assert kept is not None and kept.kept is not None
    with pytest.raises(hms.InvalidOperationException, match="outside the data roots"):
        data.plan_move(f"file:{inside}/t", f"file:{outside}/t", what="t", subject="d.t")


def test_the_setting_from_file_variable_and_flag(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "m.toml"
    path.write_text('data_roots = "file:/a, s3://b/c/"\n')
    assert ServerConfig.from_file(path).data_root_uris() == ["file:/a", "s3://b/c/"]
    monkeypatch.setenv("METASTORE_DATA_ROOTS", "file:/env")
    argv = ["serve", "--config", str(path)]
    defaults = cli._file_defaults(argv)
    config = cli._config_from_args(cli.build_parser(defaults).parse_args(argv), defaults)
    assert config.data_root_uris() == ["file:/env"]  # the variable wins over the file
    argv = [*argv, "--data-roots", "file:/flag,file:/flag2"]
    config = cli._config_from_args(cli.build_parser(defaults).parse_args(argv), defaults)
    assert config.data_root_uris() == ["file:/flag", "file:/flag2"]
    assert ServerConfig().data_root_uris() == []


def test_the_warehouse_and_trash_must_lie_under_a_root(tmp_path: Path) -> None:
    warehouse = Warehouse(tmp_path / "w")
    fine = ServerConfig(data_roots=f"file:{tmp_path}/w", trash_root=f"file:{tmp_path}/w/.t")
    assert data_roots(fine, FS, warehouse).active
    outside = ServerConfig(data_roots=f"file:{tmp_path}/data")
    with pytest.raises(ValueError, match=r"the warehouse \(--warehouse\) file:.*/w is outside"):
        data_roots(outside, FS, warehouse)
    trash = ServerConfig(data_roots=f"file:{tmp_path}/w", trash_root=f"file:{tmp_path}/trash")
    with pytest.raises(ValueError, match=r"the trash root \(--trash-root\) .* add it to"):
        data_roots(trash, FS, warehouse)


def test_a_bad_root_stops_the_server_with_a_usage_error(tmp_path: Path, capsys) -> None:
    for roots, message in (
        ("var/data", "data root 'var/data': a local location must be absolute"),
        (f"file:{tmp_path}/elsewhere", "the warehouse (--warehouse)"),
    ):
        argv = ["serve", "--port", "0", "--storage", f"sqlite:///{tmp_path}/m.db",
                "--warehouse", str(tmp_path / "w"), "--data-roots", roots]  # fmt: skip
        defaults = cli._file_defaults(argv)
        config = cli._config_from_args(cli.build_parser(defaults).parse_args(argv), defaults)
        assert serving.serve(config) == 2
        assert message in capsys.readouterr().err
