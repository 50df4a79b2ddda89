"""The server image is built with its compiled modules: the build stage has a compiler and
every source setup.py's Cython extensions need (their .py and .pxd files, setup.py itself),
and fails when the wheel lacks a compiled module; the runtime stage installs that wheel alone
and has no compiler."""

from __future__ import annotations

import importlib.util
import zipfile
from pathlib import Path

from dockerfiles import DOCKER, DOCKERFILES, ROOT, Stage, copy_sources, dockerignore, stages

SERVER_DOCKERFILE = DOCKERFILES["Dockerfile"][0]
COMPILERS = ("build-essential", "gcc", "g++", "clang", "cc ")


def _check_wheel():
    spec = importlib.util.spec_from_file_location("check_wheel", DOCKER / "check_wheel.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _stage(name: str) -> Stage:
    return next(s for s in stages(SERVER_DOCKERFILE) if s.name == name)


def _sent(path: str, copied: list[str]) -> bool:
    """Whether a repository file reaches the build stage: under a copied path, and not left
    out of the build context by .dockerignore."""
    under = any(path == c or path.startswith(c.rstrip("/") + "/") for c in copied)
    return under and not dockerignore(ROOT).matches(path)


def test_setup_py_lists_the_three_compiled_modules() -> None:
    assert set(_check_wheel().extensions(ROOT / "setup.py")) == {
        "metastore_server.wire.walk",
        "metastore_server.storage.row_scan",
        "metastore_server.wire.partitions",
    }


def test_build_stage_has_setup_py_the_sources_and_a_compiler() -> None:
    build = _stage("build")
    copied = copy_sources(build)
    assert _sent("setup.py", copied) and _sent("pyproject.toml", copied)
    needed = []
    for sources in _check_wheel().extensions(ROOT / "setup.py").values():
        for source in sources:
            needed.append(source)
            declarations = Path(source).with_suffix(".pxd")
            if (ROOT / declarations).exists():  # Cython reads it beside the .py
                needed.append(str(declarations))
    assert any(n.endswith(".pxd") for n in needed)
    missing = [n for n in needed if not _sent(n, copied)]
    assert not missing, f"the build stage lacks {missing}"
    runs = " ".join(build.args("RUN"))
    assert "build-essential" in runs
    assert "pip wheel" in runs and "check_wheel.py setup.py" in runs
    assert _sent("docker/check_wheel.py", copied)


def test_runtime_stage_installs_the_built_wheel_and_has_no_compiler() -> None:
    runtime = stages(SERVER_DOCKERFILE)[-1]
    assert runtime.name == "runtime"
    assert "-slim" in runtime.base  # the slim images ship no compiler
    assert not copy_sources(runtime), "the runtime stage copies no sources"
    runs = " ".join(runtime.args("RUN"))
    assert "--mount=type=bind,from=build,source=/wheels" in runs
    assert "--no-index" in runs
    assert "apt-get" not in runs
    assert not any(compiler in runs for compiler in COMPILERS)


def test_check_wheel_fails_without_a_compiled_module(tmp_path: Path) -> None:
    check = _check_wheel()
    modules = check.extensions(ROOT / "setup.py")
    complete, partial = tmp_path / "complete.whl", tmp_path / "partial.whl"
    with zipfile.ZipFile(complete, "w") as whole, zipfile.ZipFile(partial, "w") as part:
        for i, module in enumerate(modules):
            stem = module.replace(".", "/")
            whole.writestr(f"{stem}.cpython-311-x86_64-linux-gnu.so", b"")
            # The partial wheel has one module as plain Python only, as a failed compile leaves
            so = f"{stem}.cpython-311-x86_64-linux-gnu.so"
            part.writestr(f"{stem}.py" if i == 0 else so, b"")
    assert check.main([str(ROOT / "setup.py"), str(complete)]) == 0
    assert check.missing_compiled(ROOT / "setup.py", partial) == [next(iter(modules))]
    assert check.main([str(ROOT / "setup.py"), str(partial)]) == 1
