"""A purge through the Iceberg REST catalog removes the directories the table leaves empty
(``metadata/``, ``data/``, the location itself), so that a table of that name can be made
again at the same place (Spark refuses a location that exists); it never removes a directory
still holding something, nor anything reached through a link. Against the server as users
start it (``--rest-port``), with pyiceberg as the client; both stores
(``METASTORE_TEST_STORAGE``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the 'rest' extra is not installed")
pytest.importorskip("pyiceberg.catalog.rest", reason="pyiceberg is not installed")
pa = pytest.importorskip("pyarrow")
from support.net import LOOPBACK, free_port  # noqa: E402
from support.our_server import OurServer  # noqa: E402
from support.rest_catalog import Both, ready  # noqa: E402


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Both]:
    rest_port = free_port(LOOPBACK)
    server = OurServer(tmp_path_factory.mktemp("rest-purge") / "server",
                       extra_args=["--rest-port", str(rest_port)])  # fmt: skip
    with server:
        yield ready(Both(server, rest_port), 200)


@pytest.fixture
def catalog(both: Both) -> Any:
    return both.rest_catalog()


def _written_table(catalog: Any, name: str, location: Path) -> Any:
    """Table ``purge_ns.name`` at ``location`` with one appended data file."""
    from pyiceberg.exceptions import NamespaceAlreadyExistsError

    try:
        catalog.create_namespace("purge_ns")
    except NamespaceAlreadyExistsError:
        pass
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])
    table = catalog.create_table(f"purge_ns.{name}", schema=schema, location=str(location))
    table.append(pa.table({"id": [1, 2], "name": ["a", "b"]}, schema=schema))
    return table


def _tree(path: Path) -> list[str]:
    """Everything below ``path`` (directories too), relative, sorted."""
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


def test_a_purge_leaves_no_directory_of_the_table(catalog: Any, tmp_path: Path) -> None:
    location = tmp_path / "warehouse" / "events"
    _written_table(catalog, "events", location)
    assert {"data", "metadata"} <= set(_tree(location))
    catalog.purge_table("purge_ns.events")
    assert not location.exists(), _tree(location)
    assert (tmp_path / "warehouse").is_dir()  # the location's parent is not the table's
    # The name and the place can be taken again.
    _written_table(catalog, "events", location)
    assert len(catalog.load_table("purge_ns.events").scan().to_arrow()) == 2
    catalog.purge_table("purge_ns.events")
    assert not location.exists()


def test_a_purge_keeps_what_is_not_the_tables_and_its_directories(
    catalog: Any, tmp_path: Path
) -> None:
    """A user's file and another table's files under the location stay, with the directories
    holding them; the table's own empty directories go."""
    location = tmp_path / "shared"
    _written_table(catalog, "outer", location)
    inner = location / "data" / "inner"
    _written_table(catalog, "inner", inner)
    notes = location / "data" / "notes" / "readme.txt"
    notes.parent.mkdir()
    notes.write_text("mine")
    catalog.purge_table("purge_ns.outer")
    assert notes.read_text() == "mine"
    assert not (location / "metadata").exists()
    inner_tree = _tree(inner)
    assert any(p.startswith("metadata/") for p in inner_tree), inner_tree
    assert any(p.startswith("data/") and p.endswith(".parquet") for p in inner_tree), inner_tree
    left = {p for p in _tree(location / "data") if "/" not in p}
    assert left == {"inner", "notes"}, left  # no parquet file of outer, no empty directory
    assert len(catalog.load_table("purge_ns.inner").scan().to_arrow()) == 2
    catalog.purge_table("purge_ns.inner")
    assert not inner.exists()
    assert _tree(location) == ["data", "data/notes", "data/notes/readme.txt"]


def test_a_purge_removes_nothing_through_a_link(catalog: Any, tmp_path: Path) -> None:
    """A location that is a link to another directory: the table's files are deleted there,
    but no directory is removed through the link, nor the link."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    location = tmp_path / "linked"
    location.symlink_to(elsewhere)
    _written_table(catalog, "linked", location)
    catalog.purge_table("purge_ns.linked")
    assert location.is_symlink() and elsewhere.is_dir()
    left = _tree(elsewhere)
    assert "metadata" in left and not [p for p in left if Path(elsewhere, p).is_file()], left
