"""Run our metastore server (``python -m metastore_server serve``) as a subprocess for tests."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from . import test_storage
from .hbase_double import HBaseDouble, storage_url
from .net import (
    LOOPBACK,
    MetastoreEndpoint,
    StartedByWith,
    failed_to_start,
    free_port,
    tail,
    terminate,
)

__all__ = ["OurServer", "free_port", "our_metastore"]

REPO_ROOT = Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 10.0


class OurServer(StartedByWith):
    """Context manager running our server on 127.0.0.1 with a SQLite store in a scratch dir, or,
    with ``METASTORE_TEST_STORAGE=hbase-double``, on the HBase backend against an HBase test
    double started for it.

    ``with OurServer(workdir) as endpoint:`` yields a :class:`MetastoreEndpoint`.
    """

    def __init__(
        self,
        workdir: Path | str | None = None,
        port: int | None = None,
        *,
        extra_args: list[str] | None = None,
        startup_timeout: float = STARTUP_TIMEOUT_S,
        env: dict[str, str] | None = None,
        storage: str | None = None,
    ) -> None:
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="our-metastore-")).resolve()
        self.port = port or free_port(LOOPBACK)
        self.extra_args = list(extra_args or [])
        #: Environment variables set for the server on top of this process's.
        self.env = dict(env or {})
        self.startup_timeout = startup_timeout
        self.warehouse = self.workdir / "warehouse"
        self.stdout_path = self.workdir / "server.stdout.log"
        self.stderr_path = self.workdir / "server.stderr.log"
        self.process: subprocess.Popen[bytes] | None = None
        #: A storage URL the test gave (its own HBase double, say): used whatever the test
        #: storage.
        self._given_storage = storage is not None
        self.storage = storage or f"sqlite:///{self.workdir}/metastore.db"
        self._double: HBaseDouble | None = None

    @property
    def endpoint(self) -> MetastoreEndpoint:
        """Host, port and warehouse directory of this server."""
        return MetastoreEndpoint(LOOPBACK, self.port, str(self.warehouse))

    def command(self) -> list[str]:
        """The command line that starts the server."""
        return [
            sys.executable,
            "-m",
            "metastore_server",
            "serve",
            "--host",
            LOOPBACK,
            "--port",
            str(self.port),
            "--storage",
            self.storage,
            "--warehouse",
            str(self.warehouse),
            *self.extra_args,
        ]

    def start(self) -> MetastoreEndpoint:
        """Start the server and block until its port accepts connections."""
        process = self.launch()
        failure = failed_to_start(process, self.port, self.startup_timeout, self.stop)
        if failure is not None:
            raise RuntimeError(
                f"our metastore server {failure}\n"
                f"command: {' '.join(self.command())}\n"
                f"--- stderr ---\n{tail(self.stderr_path, 60)}\n"
                f"--- stdout ---\n{tail(self.stdout_path, 20)}"
            )
        return self.endpoint

    def launch(self) -> subprocess.Popen[bytes]:
        """Start the server process and return at once (``start`` also waits for the port);
        ``stop`` ends it."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        chosen = "given" if self._given_storage else test_storage.kind()
        if chosen == "hbase-double" and self._double is None:
            self._double = HBaseDouble().start()
            self.storage = storage_url(*self._double.address)
        elif chosen == "hbase" and not self.storage.startswith("hbase:"):
            url = test_storage.real_hbase_url()
            if url is None:
                pytest.skip(test_storage.SKIP_REASON)
            self.storage = test_storage.own(url)  # its tables dropped when it stops
        env = {**os.environ, **self.env}
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p
        )
        test_storage.server_started(self.storage)
        with self.stdout_path.open("wb") as out, self.stderr_path.open("wb") as err:
            self.process = subprocess.Popen(
                self.command(),
                cwd=self.workdir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,  # its workers too: see kill()
            )
        return self.process

    def kill(self) -> None:
        """SIGKILL the server and its worker processes at once (a crash: no shutdown code
        runs anywhere)."""
        proc = self.process
        if proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    def stop(self) -> int | None:
        """SIGTERM the server, SIGKILL it after a timeout; returns its exit code."""
        proc, self.process = self.process, None
        code = terminate(proc, STOP_TIMEOUT_S)
        if proc is not None:
            test_storage.server_stopped(self.storage)
        double, self._double = self._double, None
        if double is not None:
            double.stop()
        return code



@pytest.fixture(scope="session")
def our_metastore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MetastoreEndpoint]:
    """Our server for the whole session: (host, port, warehouse_dir)."""
    with OurServer(tmp_path_factory.mktemp("our-metastore")) as endpoint:
        yield endpoint
