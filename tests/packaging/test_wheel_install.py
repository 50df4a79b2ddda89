"""The built wheel, installed as a user installs it: into a clean virtual environment, beside
another distribution that owns the top-level package ``storage``.

An extra-free install is the Python client alone (it talks to a served metastore, and the
console script says what to install to serve); the ``server`` extra serves, with its compiled
modules. Neither touches the other distribution's ``storage``. The versions installed are
uv.lock's (through ``uv export``) when uv is at hand, as ``make`` installs them, taken from
the uv cache ``make`` filled (``--offline``): the suite runs in a namespace with no network.
A requirement of ours that the lock's export does not hold fails the offline install.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.net import LOOPBACK, free_port, tail, wait_for_port
from support.our_server import OurServer

from metastore_server.thrift_api import hms, make_client

REPO = Path(__file__).resolve().parents[2]
#: A build of three Cython modules and installs on a loaded machine: generous, ends at once.
STEP_TIMEOUT_S = 900
#: The other distribution's marker, read back through ``import storage``.
OWNER = "storage-owner-0.1"
UV = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")


def _run(*args: str | Path, cwd: Path | None = None) -> str:
    done = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True,
                          timeout=STEP_TIMEOUT_S, check=False)  # fmt: skip
    assert done.returncode == 0, f"{args}: {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Our wheel (built from this checkout) and the other distribution's."""
    out = tmp_path_factory.mktemp("wheels")
    if UV:
        _run(UV, "build", "--wheel", "--offline", "--out-dir", out, REPO)
    else:
        _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", out, REPO)
    other = tmp_path_factory.mktemp("storage-owner")
    (other / "storage").mkdir()
    (other / "storage" / "__init__.py").write_text(f"OWNER = {OWNER!r}\n")
    (other / "pyproject.toml").write_text(textwrap.dedent("""\
        [build-system]
        requires = ["setuptools>=68"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "storage-owner"
        version = "0.1"
        [tool.setuptools]
        packages = ["storage"]
        """))
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", out,
         other)  # fmt: skip
    (ours,) = out.glob("hbase_metastore-*.whl")
    (owner,) = out.glob("storage_owner-*.whl")
    return {"ours": ours, "owner": owner}


def _venv(where: Path, wheels: dict[str, Path], extra: str | None) -> Path:
    """A clean venv holding the other distribution and ours (with ``extra``); its python."""
    ours = f"hbase-metastore[{extra}] @ {wheels['ours'].as_uri()}" if extra else str(
        wheels["ours"])  # fmt: skip
    if UV:
        _run(UV, "venv", "--python", sys.executable, where)
        python = where / "bin" / "python"
        # uv.lock's versions, as a PEP 751 lock naming each wheel: installed from the cache
        # with no index page (``make`` fetched the wheels, never the registry's index pages,
        # which a resolution offline would need). Ours then finds its requirements met.
        pins = where / "pylock.deps.toml"
        lock = ["--extra", extra] if extra else []
        _run(UV, "export", "--frozen", "--format", "pylock.toml", "--no-emit-project", *lock,
             "--project", REPO, "--output-file", pins)  # fmt: skip
        _run(UV, "pip", "install", "--offline", "--python", python, "-r", pins)
        _run(UV, "pip", "install", "--offline", "--python", python, wheels["owner"], ours)
    else:
        _run(sys.executable, "-m", "venv", where)
        python = where / "bin" / "python"
        _run(python, "-m", "pip", "install", "-q", wheels["owner"], ours)
    return python


def _in_venv(python: Path, code: str, cwd: Path) -> dict:
    """Run ``code`` (it prints one JSON document) with ``python`` outside the checkout."""
    return json.loads(_run(python, "-c", textwrap.dedent(code), cwd=cwd).strip().splitlines()[-1])


@pytest.fixture
def served() -> Iterator[int]:
    """A metastore served from the checkout, for the installed client to talk to."""
    with OurServer() as endpoint:
        yield endpoint.port


def test_an_extra_free_install_is_the_client_beside_another_storage(
    wheels: dict[str, Path], tmp_path: Path, served: int
) -> None:
    python = _venv(tmp_path / "venv", wheels, None)
    found = _in_venv(python, f"""
        import importlib.metadata, importlib.util, json, storage
        from metastore_server.client import MetastoreClient
        with MetastoreClient.from_uri("thrift://{LOOPBACK}:{served}") as ms:
            databases = ms.get_all_databases()
        files = importlib.metadata.files("hbase-metastore")
        tops = sorted({{f.parts[0] for f in files if not f.parts[0].startswith("..")}})
        heavy = [m for m in ("structlog", "happybase", "pyarrow", "pyiceberg", "re2")
                 if importlib.util.find_spec(m)]
        print(json.dumps({{"owner": storage.OWNER, "databases": databases, "tops": tops,
                          "heavy": heavy}}))
        """, tmp_path)  # fmt: skip
    assert found["owner"] == OWNER
    assert "default" in found["databases"]
    assert found["tops"] == ["hbase_metastore-0.1.0.dist-info", "metastore_server"]
    assert found["heavy"] == []
    # The console script of a client-only install says what to install; no traceback.
    script = subprocess.run([str(python.parent / "metastore-server"), "serve"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=STEP_TIMEOUT_S)  # fmt: skip
    assert script.returncode == 2
    assert "pip install 'hbase-metastore[server]'" in script.stderr
    assert "Traceback" not in script.stderr
    assert not (tmp_path / "var").exists()


def test_the_server_extra_serves_beside_another_storage(
    wheels: dict[str, Path], tmp_path: Path
) -> None:
    python = _venv(tmp_path / "venv", wheels, "server")
    found = _in_venv(python, """
        import json, storage
        import metastore_server.storage.row_scan as row_scan
        import metastore_server.wire.walk as wire_walk
        print(json.dumps({"owner": storage.OWNER,
                          "compiled": [m.__file__.endswith(".so") for m in (row_scan, wire_walk)]}))
        """, tmp_path)  # fmt: skip
    assert found == {"owner": OWNER, "compiled": [True, True]}
    port = free_port(LOOPBACK)
    log = tmp_path / "serve.log"
    with log.open("wb") as err:
        server = subprocess.Popen(
            [str(python.parent / "metastore-server"), "serve", "--host", LOOPBACK, "--port",
             str(port), "--workers", "0"],
            cwd=tmp_path, stdout=err, stderr=subprocess.STDOUT,
            env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        )  # fmt: skip
    try:
        started = wait_for_port(LOOPBACK, port, STEP_TIMEOUT_S, lambda: server.poll() is None)
        assert started, tail(log)
        client = make_client(LOOPBACK, port)
        try:
            client.create_database(hms.Database(name="installed", locationUri=None,
                                                parameters={}))  # fmt: skip
            assert client.get_database("installed").name == "installed"
        finally:
            client.close()
    finally:
        server.send_signal(signal.SIGTERM)
        code = server.wait(STEP_TIMEOUT_S)
    assert code == 0, tail(log)
    assert (tmp_path / "var" / "metastore.db").is_file()  # the default store, where it ran
