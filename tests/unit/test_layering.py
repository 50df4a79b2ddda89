"""The rooms of the code base import one way: cli -> server -> api -> catalog -> storage ->
planner / timeline (tools and rest sit between cli and server, and the shared base modules
below catalog). A module may import its own room and the rooms below it, never one above.

The catalog's sub-rooms are ranked the same way inside it (``metastore_server/catalog/__init__``
says the order), and no two modules import each other, directly or through others.

import-linter checks the ranks (``[tool.importlinter]`` in pyproject.toml, its layers as RANKS
and CATALOG_RANKS say), on a copy of the installed layout: grimp finds a package's modules in
its folder, and the pure rooms' folders (storage/, planner/, timeline/) are not in
``metastore_server/`` (the editable install maps them). This file keeps what import-linter does
not state: the layers agree with the ranks, every catalog folder is a ranked sub-room that says
what it owns, and no import circle."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The installed layout's copy that ``lint-imports`` reads (made anew by each run).
LINT_TREE = ROOT / "build" / "importlint"
#: The folders installed inside the package (pyproject's [tool.setuptools.package-dir]).
PURE_ROOMS = ("storage", "planner", "timeline")

#: Each room's rank: a module may import rooms of its rank or lower.
RANKS = {
    "metastore_server.planner": 0,
    "metastore_server.timeline": 0,
    "metastore_server.storage": 1,
    "metastore_server.base": 2,  # thrift_api, audit, safe_log, client, the package itself
    "metastore_server.wire": 3,  # the Thrift binary codec, stored and kept bytes' shapes
    "metastore_server.catalog": 4,
    "metastore_server.api": 5,
    "metastore_server.server": 6,
    "metastore_server.tools": 7,
    "metastore_server.rest": 7,  # the Iceberg REST catalog: over the server's handler
    "metastore_server.cli": 8,
}

#: The catalog's sub-rooms: a module may import sub-rooms of its rank or lower. Modules right
#: in ``metastore_server/catalog/`` (the facade) are above them all.
CATALOG_RANKS = {
    "basics": 0,
    "data": 1,
    "events": 1,
    "core": 2,
    "objects": 3,
    "txn": 3,
    "registry": 3,
    "reads": 4,
    "views": 4,
    "security": 5,
    "timelines": 5,
    "dependencies": 5,
    "partitions": 6,
    "": 7,  # facade.py, the package itself
}


def room_of(module: str) -> str | None:
    """The room of a dotted module name (None: not ours)."""
    parts = module.split(".")
    if parts[0] != "metastore_server":
        return None
    if parts[1:] == ["__main__"]:  # ``python -m metastore_server`` is the console script
        return "metastore_server.cli"
    if len(parts) > 1 and f"metastore_server.{parts[1]}" in RANKS:
        return f"metastore_server.{parts[1]}"
    return "metastore_server.base"


def catalog_room_of(module: str) -> str | None:
    """The catalog sub-room of a dotted module name (None: not in the catalog)."""
    parts = module.split(".")
    if parts[:2] != ["metastore_server", "catalog"]:
        return None
    if len(parts) > 2 and parts[2] in CATALOG_RANKS:
        return parts[2]
    return ""


def imports_of(path: Path) -> list[str]:
    """The modules a file imports (``from a import b`` gives ``a.b`` and ``a``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
            found.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def our_modules() -> dict[str, Path]:
    """Every module of ours by dotted name."""
    found = {}
    for top in ("planner", "timeline", "storage", "metastore_server"):
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if top != "metastore_server":  # installed as metastore_server.<folder>
                parts = ("metastore_server", *parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def installed_layout(target: Path) -> Path:
    """A copy of the package's Python sources as installed: ``metastore_server/`` with the pure
    rooms' folders inside it. The copy's root (for ``sys.path``)."""
    shutil.rmtree(target, ignore_errors=True)
    sources = shutil.ignore_patterns("__pycache__", "*.so", "*.c", "*.pxd")
    shutil.copytree(ROOT / "metastore_server", target / "metastore_server", ignore=sources)
    for room in PURE_ROOMS:
        shutil.copytree(ROOT / room, target / "metastore_server" / room, ignore=sources)
    return target


def run_in_layout(tree: Path, *command: str) -> subprocess.CompletedProcess[str]:
    """Run a command in the copied layout, which then comes first on ``sys.path``."""
    env = {**os.environ, "PYTHONPATH": str(tree), "NO_COLOR": "1"}
    return subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True,
                          timeout=300)  # fmt: skip


@pytest.fixture(scope="module")
def layout_tree() -> Path:
    return installed_layout(LINT_TREE)


def test_grimp_sees_every_room_in_the_installed_layout(layout_tree: Path) -> None:
    probe = (
        "import grimp; g = grimp.build_graph('metastore_server', cache_dir=None); "
        "print(sorted({'.'.join(m.split('.')[:2]) for m in g.modules}))"
    )
    found = run_in_layout(layout_tree, sys.executable, "-c", probe)
    assert found.returncode == 0, found.stderr
    for room in RANKS:
        if room != "metastore_server.base":
            assert repr(room) in found.stdout, f"grimp does not see {room}"


def test_import_linter_contracts_are_kept(layout_tree: Path) -> None:
    linter = Path(sys.executable).with_name("lint-imports")
    result = run_in_layout(
        layout_tree, str(linter), "--no-cache", "--no-logo", str(ROOT / "pyproject.toml")
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout


def _layers(contract_id: str) -> list[list[str]]:
    """The layers of a contract of pyproject.toml, lowest first, each its module names."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if c["id"] == contract_id]
    return [
        [name.strip().strip("()") for name in layer.split(":")]
        for layer in reversed(contract["layers"])
    ]


def _ranked(ranks: dict[str, int]) -> list[set[str]]:
    """Rooms grouped by rank, lowest first."""
    levels = sorted(set(ranks.values()))
    return [{room for room, rank in ranks.items() if rank == level} for level in levels]


def test_the_import_linter_layers_are_the_ranks() -> None:
    rooms = [{room_of(f"metastore_server.{name}") for name in layer} for layer in _layers("rooms")]
    assert rooms == _ranked(RANKS)
    sub_rooms = [
        {catalog_room_of(f"metastore_server.catalog.{name}") for name in layer}
        for layer in _layers("catalog")
    ]
    assert sub_rooms == _ranked(CATALOG_RANKS)


def test_every_catalog_folder_is_a_ranked_sub_room() -> None:
    folders = {
        p.name for p in (ROOT / "metastore_server" / "catalog").iterdir()
        if p.is_dir() and p.name != "__pycache__"
    }
    assert folders == set(CATALOG_RANKS) - {""}
    for name in folders:
        init = ROOT / "metastore_server" / "catalog" / name / "__init__.py"
        assert ast.get_docstring(ast.parse(init.read_text())), f"{name} says what it owns"


def test_no_import_circle() -> None:
    modules = our_modules()
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        graph[module] = {i for i in imports_of(path) if i in modules and i != module}
        # a package's own __init__ is imported on the way to its modules: not an edge back
        graph[module] -= {m for m in graph[module] if module.startswith(m + ".")}
    state: dict[str, int] = {}
    circles: list[list[str]] = []

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                circles.append(trail[trail.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert circles == []


def test_the_room_of_a_module_is_its_folder() -> None:
    assert room_of("metastore_server.cli.main") == "metastore_server.cli"
    assert room_of("metastore_server.thrift_api") == "metastore_server.base"
    assert room_of("metastore_server.storage.codec") == "metastore_server.storage"
    assert room_of("storage.codec") is None  # not ours: the folder installs under our namespace
    assert room_of("thriftpy2.protocol") is None
    assert RANKS[room_of("metastore_server.server.app")] > RANKS["metastore_server.api"]
    assert catalog_room_of("metastore_server.catalog.objects.tables") == "objects"
    assert catalog_room_of("metastore_server.catalog.facade") == ""
    assert catalog_room_of("metastore_server.api.handler") is None


#: What the api may import from the storage room: plain types of the store's contract (none
#: today: it reaches the store only through the catalog).
API_STORAGE_NAMES: set[str] = set()


def _api_imports() -> list[tuple[str, str, str]]:
    """Each import of an api module: (file, module, name; '' for ``import module``)."""
    found = []
    for path in sorted((ROOT / "metastore_server" / "api").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found.extend((path.name, alias.name, "") for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.extend((path.name, node.module, alias.name) for alias in node.names)
    return found


def test_the_api_imports_the_catalog_only_from_its_face() -> None:
    import metastore_server.catalog as face

    wrong = [
        (file, module, name)
        for file, module, name in _api_imports()
        if module.startswith("metastore_server.catalog.")
        or (module == "metastore_server.catalog" and name not in face.__all__)
        or (module.startswith("metastore_server.storage") and name not in API_STORAGE_NAMES)
    ]
    assert wrong == []


def test_the_catalog_face_is_what_it_exports() -> None:
    import metastore_server.catalog as face

    assert len(set(face.__all__)) == len(face.__all__)
    assert all(hasattr(face, name) for name in face.__all__)


def test_no_catalog_module_imports_the_face() -> None:
    # the face imports every sub-room eagerly: one importing it back would be a circle the
    # circle test does not see (a package's own __init__ is not an edge there)
    for path in (ROOT / "metastore_server" / "catalog").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                assert node.module != "metastore_server.catalog", path
            elif isinstance(node, ast.Import):
                assert "metastore_server.catalog" not in {a.name for a in node.names}, path
