"""The REST catalog's file boundary on the local file system: files under the table's own
location and the data roots only, whatever the path's spelling (``..``, ``file:`` forms, a
link leading out, a host in a file URI)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the 'rest' extra is not installed")
from metastore_server.catalog.data.filesystems import FileSystems  # noqa: E402
from metastore_server.catalog.data.roots import DataRoots  # noqa: E402
from metastore_server.rest.boundary import FileBoundary  # noqa: E402
from metastore_server.rest.errors import RestError  # noqa: E402


def _boundary(roots: list[str]) -> FileBoundary:
    filesystems = FileSystems()
    return FileBoundary(filesystems, DataRoots.parse(roots, filesystems))


def test_files_under_the_table_only(tmp_path: Path) -> None:
    table = tmp_path / "root" / "t"
    (table / "metadata").mkdir(parents=True)
    boundary = _boundary([str(tmp_path / "root")])
    assert boundary.outside_table(f"{table}/metadata/x.json", str(table)) is None
    assert boundary.outside_table(f"file:{table}/metadata/x.json", f"file://{table}") is None
    assert "not under the table" in str(boundary.outside_table(f"{table}x/y", str(table)))
    assert "'..'" in str(boundary.outside_table(f"{table}/../t2/y", str(table)))
    assert "'..'" in str(boundary.outside_table(f"file:{table}/a/../../x", str(table)))
    assert "names no host" in str(boundary.outside_table(f"file://evil{table}/y", str(table)))
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (table / "link").symlink_to(outside)
    assert "a link" in str(boundary.outside_table(f"{table}/link/y", str(table)))


def test_locations_and_reads_inside_the_roots(tmp_path: Path) -> None:
    boundary = _boundary([str(tmp_path / "root")])
    boundary.check_root(str(tmp_path / "root" / "t"), "Table location")
    with pytest.raises(RestError) as refused:
        boundary.check_root(str(tmp_path / "other"), "Table location")
    assert refused.value.code == 403 and "outside the data roots" in refused.value.message
    with pytest.raises(RestError) as refused:
        boundary.check_read("/etc/passwd", "Metadata file")
    assert refused.value.code == 403
    with pytest.raises(RestError) as refused:
        boundary.check_root("relative/path", "Table location")
    assert refused.value.code == 400
    unbounded = _boundary([])
    unbounded.check_read("/etc/passwd", "Metadata file")  # no roots: reads are not bounded
    assert unbounded.outside_table("/etc/passwd", str(tmp_path)) is not None
