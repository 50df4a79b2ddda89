"""Type-checks the server with mypy (``make test`` runs it; ``python tests/typecheck.py``).

mypy cannot follow setuptools' package-dir mapping (``metastore_server.storage`` is the folder
``storage/``, likewise ``planner/`` and ``timeline/``), so this builds the installed layout as a
shadow tree of copies under ``build/typecheck/`` (anew each run), checks it with pyproject.toml's
``[tool.mypy]`` and prints mypy's report with the checkout's own paths. Exit status: mypy's.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import typecheck_idl  # noqa: E402  (this folder is no package)

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / "build" / "typecheck"
CACHE = ROOT / "build" / "typecheck-cache"
PACKAGE = "metastore_server"
#: The folders installed inside the package (pyproject's [tool.setuptools.package-dir]);
#: ``metastore_server.idl`` (thrift/) holds no Python.
ROOMS = ("storage", "planner", "timeline")


def _copy_sources(source: Path, target: Path) -> None:
    """Copies the Python sources of ``source`` to ``target`` (modification times kept)."""

    def skipped(folder: str, names: list[str]) -> set[str]:
        return {
            name
            for name in names
            if not (Path(folder, name).is_dir() or name.endswith((".py", ".pyi", "py.typed")))
            or name == "__pycache__"
        }

    shutil.copytree(source, target, ignore=skipped)


def build_tree() -> Path:
    """Builds build/typecheck/metastore_server/ as installed; returns the tree's root."""
    shutil.rmtree(TREE, ignore_errors=True)
    _copy_sources(ROOT / PACKAGE, TREE / PACKAGE)
    for room in ROOMS:
        _copy_sources(ROOT / room, TREE / PACKAGE / room)
    typecheck_idl.write_stubs(TREE)
    return TREE


def real_path(line: str) -> str:
    """Rewrites a report line's shadow path to the checkout's file."""
    return re.sub(
        rf"^{PACKAGE}/({'|'.join(ROOMS)})/",
        r"\1/",
        line,
    )


def main(argv: list[str]) -> int:
    """Builds the tree, runs mypy on it (extra arguments passed on), prints the report."""
    tree = build_tree()
    command = [
        sys.executable,
        "-m",
        "mypy",
        "--config-file",
        str(ROOT / "pyproject.toml"),
        "--cache-dir",
        str(CACHE),
        "-p",
        PACKAGE,
        *argv,
    ]
    done = subprocess.run(command, cwd=tree, capture_output=True, text=True, check=False)
    for line in done.stdout.splitlines():
        print(real_path(line))
    sys.stderr.write(done.stderr)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
