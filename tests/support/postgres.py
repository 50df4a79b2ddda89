"""A throwaway PostgreSQL server for the reference Hive Metastore (benchmarks, manual runs).

``with PostgresServer() as pg:`` runs ``initdb`` into a scratch directory, starts ``postgres``
listening on 127.0.0.1 only (a free port; its unix socket in a private temp directory),
creates the role ``hive`` (password ``hive``) and the database ``hms`` owned by it, and stops
the server on exit. Give it a ``workdir`` to keep the cluster between runs: an existing cluster
there is started again instead of re-created.

PostgreSQL refuses to run as root; when this process is root the cluster belongs to an
unprivileged user (``nobody`` unless told otherwise) and the server processes run as that user.
The binaries come from ``pg_config --bindir`` or ``/usr/lib/postgresql/*/bin``.

Run by hand::

    python tests/support/postgres.py --dir /tmp/pg
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

if not __package__:  # executed as a script
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from support.net import LOOPBACK, StartedByWith, free_port, tail, wait_for_port
else:
    from .net import LOOPBACK, StartedByWith, free_port, tail, wait_for_port

__all__ = ["PostgresServer", "find_pg_bindir", "postgres_unavailable_reason"]

STARTUP_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0
UNPRIVILEGED_USER = "nobody"


def find_pg_bindir() -> Path | None:
    """Directory holding ``initdb`` and ``postgres`` (pg_config first, then Debian's layout)."""
    candidates: list[Path] = []
    pg_config = shutil.which("pg_config")
    if pg_config:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, check=True, timeout=10
            )
            candidates.append(Path(out.stdout.strip()))

    def version(path: Path) -> tuple[int, ...]:
        parts = path.parent.name.split(".")
        return tuple(int(p) for p in parts if p.isdigit())

    candidates += sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=version, reverse=True)
    for bindir in candidates:
        if (bindir / "initdb").is_file() and (bindir / "postgres").is_file():
            return bindir
    return None


def postgres_unavailable_reason() -> str | None:
    """Why a PostgreSQL server cannot be started here, or None when it can."""
    if find_pg_bindir() is None:
        return (
            "PostgreSQL server binaries not found (pg_config --bindir, /usr/lib/postgresql/*/bin);"
            " install them with: apt-get install -y postgresql"
        )
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(UNPRIVILEGED_USER)
        except KeyError:
            return f"running as root and there is no user {UNPRIVILEGED_USER!r} to run postgres as"
    return None


class PostgresServer(StartedByWith):
    """Context manager running PostgreSQL on 127.0.0.1:port with role ``user`` and ``database``.

    ``with PostgresServer(workdir) as pg: pg.jdbc_url`` is the JDBC URL of the database.
    """

    def __init__(
        self,
        workdir: Path | str | None = None,
        port: int | None = None,
        *,
        user: str = "hive",
        password: str = "hive",
        database: str = "hms",
        run_as: str | None = None,
        settings: dict[str, str] | None = None,
        startup_timeout: float = STARTUP_TIMEOUT_S,
    ) -> None:
        self._own_tmp = workdir is None
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="postgres-")).resolve()
        self.port = port or free_port(LOOPBACK)
        self.user = user
        self.password = password
        self.database = database
        self.run_as = run_as or (UNPRIVILEGED_USER if os.geteuid() == 0 else None)
        self.settings = dict(settings or {})
        self.startup_timeout = startup_timeout
        self.data = self.workdir / "data"
        self.log_path = self.workdir / "postgres.log"
        self.socket_dir: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def jdbc_url(self) -> str:
        """``jdbc:postgresql://127.0.0.1:<port>/<database>``."""
        return f"jdbc:postgresql://{LOOPBACK}:{self.port}/{self.database}"

    # ------------------------------------------------------------------ running as another user

    def _ids(self) -> tuple[int, int] | None:
        if self.run_as is None:
            return None
        entry = pwd.getpwnam(self.run_as)
        return entry.pw_uid, entry.pw_gid

    def _give(self, path: Path) -> None:
        """Hand ``path`` to the user running postgres (no-op when that is us)."""
        ids = self._ids()
        if ids is not None:
            os.chown(path, *ids)

    def _popen_kwargs(self) -> dict[str, object]:
        ids = self._ids()
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["LC_ALL"] = "C"
        if ids is None:
            return {"env": env}
        env["HOME"] = str(self.workdir)
        env["USER"] = env["LOGNAME"] = self.run_as or ""
        return {"env": env, "user": ids[0], "group": ids[1], "extra_groups": []}

    def _run(self, cmd: list[str], what: str) -> None:
        out = subprocess.run(
            cmd,
            cwd=self.workdir,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            **self._popen_kwargs(),  # type: ignore[arg-type]
        )
        if out.returncode != 0:
            raise RuntimeError(f"{what} failed ({out.returncode}):\n{out.stdout}\n{out.stderr}")

    def _check_reachable(self) -> None:
        """The user running postgres must be able to reach the work directory."""
        if self.run_as is None:
            return
        for parent in self.workdir.parents:
            if not os.stat(parent).st_mode & 0o001:
                raise RuntimeError(
                    f"{parent} is not searchable by others, so user {self.run_as!r} cannot reach "
                    f"{self.workdir}; choose a PostgreSQL directory elsewhere (e.g. under /tmp)"
                )

    # ------------------------------------------------------------------ life cycle

    def _initdb(self, bindir: Path) -> None:
        pwfile = self.workdir / "superuser.pw"
        pwfile.write_text("postgres\n")
        self._give(pwfile)
        self.data.mkdir(mode=0o700)
        self._give(self.data)
        try:
            self._run(
                [
                    str(bindir / "initdb"),
                    "-D",
                    str(self.data),
                    "-U",
                    "postgres",
                    f"--pwfile={pwfile}",
                    "--auth-local=trust",
                    "--auth-host=scram-sha-256",
                    "--encoding=UTF8",
                    "--no-instructions",
                ],
                "initdb",
            )
        finally:
            pwfile.unlink(missing_ok=True)

    def _psql(self, bindir: Path, sql: str, database: str = "postgres") -> str:
        psql = bindir / "psql"
        if not psql.is_file():
            psql = Path(shutil.which("psql") or "psql")
        cmd = [
            str(psql),
            "-X",
            "-q",
            "-t",
            "-A",
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            str(self.socket_dir),
            "-p",
            str(self.port),
            "-U",
            "postgres",
            "-d",
            database,
            "-c",
            sql,
        ]
        out = subprocess.run(
            cmd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            **self._popen_kwargs(),  # type: ignore[arg-type]
        )
        if out.returncode != 0:
            raise RuntimeError(f"psql {sql!r} failed:\n{out.stderr}")
        return out.stdout.strip()

    def _create_role_and_database(self, bindir: Path) -> None:
        exists = self._psql(bindir, f"SELECT 1 FROM pg_roles WHERE rolname = '{self.user}'")
        if not exists:
            self._psql(bindir, f"CREATE ROLE {self.user} LOGIN PASSWORD '{self.password}'")
        exists = self._psql(bindir, f"SELECT 1 FROM pg_database WHERE datname = '{self.database}'")
        if not exists:
            self._psql(bindir, f"CREATE DATABASE {self.database} OWNER {self.user}")

    def query(self, sql: str, database: str | None = None) -> str:
        """Run one SQL statement as the superuser; its rows as psql's unaligned text."""
        bindir = find_pg_bindir()
        if bindir is None or self.socket_dir is None:
            raise RuntimeError("PostgreSQL is not running")
        return self._psql(bindir, sql, database or self.database)

    def start(self) -> PostgresServer:
        """initdb when needed, start postgres, create the role and database; wait until ready."""
        reason = postgres_unavailable_reason()
        if reason is not None:
            raise RuntimeError(reason)
        bindir = find_pg_bindir()
        assert bindir is not None
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._check_reachable()
        self._give(self.workdir)
        if not (self.data / "PG_VERSION").is_file():
            if self.data.exists():
                shutil.rmtree(self.data)
            self._initdb(bindir)
        # A short private path: unix socket paths are limited to ~107 bytes.
        self.socket_dir = Path(tempfile.mkdtemp(prefix="pgsock-"))
        self._give(self.socket_dir)
        settings = {
            "listen_addresses": LOOPBACK,
            "port": str(self.port),
            "unix_socket_directories": str(self.socket_dir),
            "logging_collector": "off",
            **self.settings,
        }
        cmd = [str(bindir / "postgres"), "-D", str(self.data)]
        for key, value in settings.items():
            cmd += ["-c", f"{key}={value}"]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                cmd,
                cwd=self.workdir,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                **self._popen_kwargs(),  # type: ignore[arg-type]
            )
        proc = self.process
        alive: Callable[[], bool] = lambda: proc.poll() is None  # noqa: E731
        if not wait_for_port(LOOPBACK, self.port, self.startup_timeout, alive):
            self.stop()
            raise RuntimeError(
                f"postgres did not start on port {self.port}\n{tail(self.log_path, 30)}"
            )
        deadline = time.monotonic() + self.startup_timeout
        while True:  # the port opens before the server accepts logins
            try:
                self._create_role_and_database(bindir)
                break
            except RuntimeError:
                if time.monotonic() > deadline or not alive():
                    self.stop()
                    raise
                time.sleep(0.2)
        return self

    def stop(self) -> int | None:
        """Fast shutdown (SIGINT), SIGQUIT then SIGKILL if needed; removes a temp work dir."""
        proc, self.process = self.process, None
        code = None
        if proc is not None:
            for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGKILL):
                if proc.poll() is not None:
                    break
                proc.send_signal(sig)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(STOP_TIMEOUT_S)
            code = proc.wait()
        if self.socket_dir is not None:
            shutil.rmtree(self.socket_dir, ignore_errors=True)
            self.socket_dir = None
        if self._own_tmp:
            shutil.rmtree(self.workdir, ignore_errors=True)
        return code



def main(argv: list[str] | None = None) -> int:
    """Run a PostgreSQL server in the foreground until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=None)
    parser.add_argument("--dir", type=Path, default=None, help="cluster directory (default: temp)")
    args = parser.parse_args(argv)
    with PostgresServer(args.dir, args.port) as pg:
        print(f"PostgreSQL on {pg.jdbc_url} (user {pg.user}/{pg.password})", flush=True)
        print(f"log in {pg.log_path}", flush=True)
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                signal.pause()
    return 0


if __name__ == "__main__":
    sys.exit(main())
