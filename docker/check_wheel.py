"""Fails unless a wheel holds every module that setup.py compiles, compiled.

setup.py marks its Cython extensions optional, so a build without a working compiler still
succeeds and ships the slow plain-Python modules; the image build runs this on its wheel to
make that an error instead. Usage: ``python check_wheel.py setup.py dist/x.whl``.
"""

from __future__ import annotations

import ast
import sys
import zipfile
from pathlib import Path


def extensions(setup_py: Path) -> dict[str, list[str]]:
    """setup.py's ``Extension(name, [sources])`` calls, read without running setup.py."""
    found: dict[str, list[str]] = {}
    for node in ast.walk(ast.parse(setup_py.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Extension":
            name, sources = (ast.literal_eval(arg) for arg in node.args[:2])
            found[name] = list(sources)
    return found


def missing_compiled(setup_py: Path, wheel: Path) -> list[str]:
    """The extension modules with no compiled file (``pkg/mod.*.so``) in the wheel."""
    names = zipfile.ZipFile(wheel).namelist()
    missing = []
    for module in extensions(setup_py):
        stem = module.replace(".", "/") + "."
        if not any(n.startswith(stem) and n.endswith((".so", ".pyd")) for n in names):
            missing.append(module)
    return missing


def main(argv: list[str]) -> int:
    setup_py, wheel = Path(argv[0]), Path(argv[1])
    if not extensions(setup_py):
        print(f"{setup_py}: no Extension found", file=sys.stderr)
        return 1
    missing = missing_compiled(setup_py, wheel)
    if missing:
        print(f"{wheel.name}: not compiled: {', '.join(missing)}", file=sys.stderr)
        return 1
    print(f"{wheel.name}: {len(extensions(setup_py))} compiled modules")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
