"""Build hook for the one compiled module: ``metastore_server/wire_walk.py``, compiled by Cython
when a C compiler is at hand. The project works without it (the same module runs as plain
Python, slower), so a failed build is only a warning."""

from setuptools import Extension, setup


def _extensions() -> list[Extension]:
    try:
        from Cython.Build import cythonize
    except ImportError:  # building without the build requirements (e.g. --no-build-isolation)
        return []
    walker = Extension(
        "metastore_server.wire_walk", ["metastore_server/wire_walk.py"], optional=True
    )
    return cythonize(
        [walker],
        language_level=3,
        compiler_directives={"annotation_typing": False},
        quiet=True,
    )


setup(ext_modules=_extensions())
