"""Build hook for the compiled modules: ``metastore_server/wire/walk.py``,
``storage/row_scan.py`` and ``metastore_server/wire/partitions.py``, compiled by
Cython when a C compiler is at hand. The project works without them (the same modules run as
plain Python, slower), so a failed build is only a warning."""

from pathlib import Path

from setuptools import Extension, setup

#: Folders installed under the project's namespace (pyproject.toml's package-dir), whose .pxd
#: files another module cimports by their installed name.
_NAMESPACED = {"storage": "metastore_server.storage"}


def _pxd_tree() -> str:
    """A folder where Cython finds each namespaced .pxd under its installed dotted name
    (``metastore_server/storage/row_scan.pxd``): Cython looks a cimport up by folders, and the
    source folder is ``storage/``."""
    root = Path("build", "pxd")
    for folder, dotted in _NAMESPACED.items():
        target = root.joinpath(*dotted.split("."))
        target.mkdir(parents=True, exist_ok=True)
        for level in range(1, len(dotted.split(".")) + 1):
            root.joinpath(*dotted.split(".")[:level], "__init__.pxd").touch()
        for pxd in Path(folder).glob("*.pxd"):
            (target / pxd.name).write_bytes(pxd.read_bytes())
    return str(root)


def _extensions() -> list[Extension]:
    try:
        from Cython.Build import cythonize
    except ImportError:  # building without the build requirements (e.g. --no-build-isolation)
        return []
    modules = [
        Extension(
            "metastore_server.wire.walk",
            ["metastore_server/wire/walk.py"],
            optional=True,
        ),
        Extension(
            "metastore_server.storage.row_scan", ["storage/row_scan.py"], optional=True
        ),
        Extension(
            "metastore_server.wire.partitions",
            ["metastore_server/wire/partitions.py"],
            optional=True,
        ),
    ]
    return cythonize(
        modules,
        include_path=[_pxd_tree()],
        language_level=3,
        compiler_directives={"annotation_typing": False},
        quiet=True,
    )


setup(ext_modules=_extensions())
