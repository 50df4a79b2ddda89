"""Build hook for the compiled modules: ``metastore_server/server/wire_walk.py``,
``storage/row_scan.py`` and ``metastore_server/catalog/basics/wire_partitions.py``, compiled by
Cython when a C compiler is at hand. The project works without them (the same modules run as
plain Python, slower), so a failed build is only a warning."""

from setuptools import Extension, setup


def _extensions() -> list[Extension]:
    try:
        from Cython.Build import cythonize
    except ImportError:  # building without the build requirements (e.g. --no-build-isolation)
        return []
    modules = [
        Extension(
            "metastore_server.server.wire_walk",
            ["metastore_server/server/wire_walk.py"],
            optional=True,
        ),
        Extension("storage.row_scan", ["storage/row_scan.py"], optional=True),
        Extension(
            "metastore_server.catalog.basics.wire_partitions",
            ["metastore_server/catalog/basics/wire_partitions.py"],
            optional=True,
        ),
    ]
    return cythonize(
        modules,
        language_level=3,
        compiler_directives={"annotation_typing": False},
        quiet=True,
    )


setup(ext_modules=_extensions())
