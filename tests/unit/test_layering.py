"""The rooms of the code base import one way: cli -> server -> api -> catalog -> storage ->
planner / timeline (tools sit beside cli, and the shared base modules below catalog). A module
may import its own room and the rooms below it, never one above."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Each room's rank: a module may import rooms of its rank or lower.
RANKS = {
    "planner": 0,
    "timeline": 0,
    "storage": 1,
    "metastore_server.base": 2,  # thrift_api, audit, safe_log, client, the package itself
    "metastore_server.catalog": 3,
    "metastore_server.api": 4,
    "metastore_server.server": 5,
    "metastore_server.tools": 6,
    "metastore_server.cli": 7,
}


def room_of(module: str) -> str | None:
    """The room of a dotted module name (None: not ours)."""
    parts = module.split(".")
    if parts[0] in ("planner", "timeline", "storage"):
        return parts[0]
    if parts[0] != "metastore_server":
        return None
    if parts[1:] == ["__main__"]:  # ``python -m metastore_server`` is the console script
        return "metastore_server.cli"
    if len(parts) > 1 and f"metastore_server.{parts[1]}" in RANKS:
        return f"metastore_server.{parts[1]}"
    return "metastore_server.base"


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


def test_rooms_import_only_their_own_and_lower_rooms() -> None:
    wrong = []
    for top in ("planner", "timeline", "storage", "metastore_server"):
        for path in sorted((ROOT / top).rglob("*.py")):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            mine = room_of(module)
            assert mine is not None
            for imported in imports_of(path):
                theirs = room_of(imported)
                if theirs is not None and RANKS[theirs] > RANKS[mine]:
                    wrong.append(f"{module} imports {imported}")
    assert wrong == []


def test_the_room_of_a_module_is_its_folder() -> None:
    assert room_of("metastore_server.cli.main") == "metastore_server.cli"
    assert room_of("metastore_server.thrift_api") == "metastore_server.base"
    assert room_of("storage.codec") == "storage"
    assert room_of("thriftpy2.protocol") is None
    assert RANKS[room_of("metastore_server.server.app")] > RANKS["metastore_server.api"]
