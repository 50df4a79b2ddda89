"""The metastores a benchmark measures: our server (started here, or at a given URI), other
metastores on loopback, and the reference Hive Metastore 2.3.x started here (on PostgreSQL or
Derby, in a private network namespace)."""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import bench_path  # noqa: F401 - puts the repository on sys.path
from bench_report import log
from hbase_target import hbase_storage
from support.net import LOOPBACK, in_isolated_netns

from metastore_server import __version__ as OUR_VERSION
from metastore_server import thrift_api

LOOPBACK_NAMES = {"127.0.0.1", "localhost"}
ISOLATED_HINT = (
    "unshare -n bash -c 'ip link set lo up; "
    ".venv/bin/python tests/bench/partition_filters.py --reference-hms postgres'"
)


class AuditLog:
    """Our server's JSON audit lines (its stderr), read from a remembered offset."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.mark()

    def mark(self) -> None:
        """Forget everything logged so far."""
        self.offset = self.path.stat().st_size if self.path.exists() else 0

    def calls(self, method: str) -> list[dict[str, Any]]:
        """Audit lines of ``method`` logged since the last :meth:`mark`."""
        with self.path.open("rb") as f:
            f.seek(self.offset)
            data = f.read()
        out = []
        for line in data.splitlines():
            with contextlib.suppress(ValueError):
                event = json.loads(line)
                if event.get("event") == "call" and event.get("method") == method:
                    out.append(event)
        return out


@dataclass
class Target:
    """A metastore to benchmark."""

    name: str
    host: str
    port: int
    description: str
    audit: AuditLog | None = None
    timeout_ms: int = 600_000
    framed: bool = False  # the server speaks framed transport (``--client drain``)
    pid: int | None = None  # the server's process when started here (memory is sampled)

    def client(self) -> Any:
        """A fresh binary client (buffered, or framed for a framed server; close it)."""
        return thrift_api.make_client(
            self.host, self.port, timeout_ms=self.timeout_ms, framed=self.framed
        )

    @contextlib.contextmanager
    def connected(self) -> Iterator[Any]:
        """A client for the duration of a block."""
        client = self.client()
        try:
            yield client
        finally:
            with contextlib.suppress(Exception):
                client.close()

    def version(self) -> str:
        """What the server says its version is (fb303 getVersion)."""
        try:
            with self.connected() as client:
                return str(client.getVersion())
        except Exception as exc:  # noqa: BLE001 - informational only
            return f"? ({type(exc).__name__})"


def loopback_target(name: str, uri: str, description: str, timeout_ms: int) -> Target:
    """A target from ``thrift://127.0.0.1:PORT``; other hosts are refused."""
    parts = urlsplit(uri)
    if parts.scheme != "thrift" or not parts.hostname or not parts.port:
        raise SystemExit(f"{name}: expected thrift://127.0.0.1:PORT, got {uri!r}")
    if parts.hostname not in LOOPBACK_NAMES:
        raise SystemExit(f"{name}: this benchmark only talks to 127.0.0.1, not {parts.hostname}")
    return Target(name, LOOPBACK, parts.port, description, timeout_ms=timeout_ms)


def reference_preflight(kind: str) -> str | None:
    """Why the reference metastore cannot be started here, with what to do; None if it can."""
    from support.postgres import postgres_unavailable_reason
    from support.reference_hms import (
        POSTGRES_JAR_HINT,
        find_postgres_jdbc_jar,
        reference_hms_unavailable_reason,
    )

    if not in_isolated_netns():
        return (
            "the reference HMS listens on every interface, so it is only started in a private "
            f"network namespace with loopback only. Run (as root):\n  {ISOLATED_HINT}"
        )
    reason = reference_hms_unavailable_reason()
    if reason is not None:
        return reason
    if kind == "postgres":
        if find_postgres_jdbc_jar() is None:
            return f"the PostgreSQL JDBC driver jar is missing; install it: {POSTGRES_JAR_HINT}"
        return postgres_unavailable_reason()
    return None


def start_targets(args: argparse.Namespace, stack: contextlib.ExitStack) -> list[Target]:
    """Start (or point at) every target; ours first."""
    timeout_ms = int(args.timeout * 1000)
    data_dir = args.data_dir.resolve()
    framed = getattr(args, "client", None) == "drain"
    targets: list[Target] = []
    if args.ours == "none":
        pass
    elif args.ours:
        targets.append(
            loopback_target("ours", args.ours, f"hbase-metastore at {args.ours}", timeout_ms)
        )
    else:
        from support.our_server import OurServer

        extra = ["--log-level", "info", "--log-format", "json"]
        server = OurServer(
            data_dir / "ours", extra_args=[*extra, *(["--transport", "framed"] if framed else [])]
        )
        store = f"SQLite store {server.workdir / 'metastore.db'}"
        if getattr(args, "ours_storage", None):  # ours on another store (HBase)
            server.storage, store = args.ours_storage, f"store {args.ours_storage}"
        log(f"starting our server ({store}) ...")
        endpoint = stack.enter_context(server)
        targets.append(
            Target(
                "ours",
                endpoint.host,
                endpoint.port,
                f"hbase-metastore {OUR_VERSION}, {store}, audit at info (JSON) for rows scanned",
                audit=AuditLog(server.stderr_path),
                timeout_ms=timeout_ms,
                pid=server.process.pid if server.process is not None else None,
            )
        )
    if args.reference_hms:
        if framed:
            args.reference_props["hive.metastore.thrift.framed.transport.enabled"] = "true"
        targets.append(start_reference(args.reference_hms, args, data_dir, stack, timeout_ms))
    for i, uri in enumerate(args.reference):
        name = "reference" if len(args.reference) == 1 else f"ref{i + 1}"
        targets.append(loopback_target(name, uri, f"metastore at {uri}", timeout_ms))
    for target in targets:
        target.framed = framed
    return targets


def start_ours_on_hbase(args: argparse.Namespace, stack: contextlib.ExitStack) -> list[Target]:
    """A server of ours on the HBase of ``--hbase`` (a fresh table prefix), for the load rate."""
    from support.our_server import OurServer

    host, _, port = args.hbase.rpartition(":")
    if not host or not port.isdigit():
        raise SystemExit(f"--hbase must be host:port, not {args.hbase!r}")
    url = hbase_storage(args.hbase, False, stack, log)
    server = OurServer(args.data_dir.resolve() / "ours-hbase")
    server.storage = url
    log(f"starting our server on HBase ({url}) ...")
    endpoint = stack.enter_context(server)
    return [
        Target(
            "ours-hbase",
            endpoint.host,
            endpoint.port,
            f"hbase-metastore {OUR_VERSION}, HBase store {url}",
            timeout_ms=int(args.timeout * 1000),
        )
    ]


def start_reference(
    kind: str,
    args: argparse.Namespace,
    data_dir: Path,
    stack: contextlib.ExitStack,
    timeout_ms: int,
) -> Target:
    """Start PostgreSQL (when asked) and the reference HMS 2.3.x in ``data_dir``."""
    from support.postgres import PostgresServer
    from support.reference_hms import ReferenceHms, find_pyspark_jars

    jdbc_url = None
    backend = "embedded Derby"
    if kind == "postgres":
        pg = PostgresServer(data_dir / "postgres", settings={"shared_buffers": "512MB"})
        log(f"starting PostgreSQL (cluster {pg.data}) ...")
        stack.enter_context(pg)
        jdbc_url = pg.jdbc_url
        backend = f"PostgreSQL {pg.query('SHOW server_version')} at {jdbc_url}"
    workdir = data_dir / f"reference-hms-{kind}"
    ref = ReferenceHms(
        workdir, heap=args.reference_heap, jdbc_url=jdbc_url, properties=args.reference_props
    )
    log(f"starting the reference HMS ({kind}, logs in {ref.logs}) ...")
    started = time.monotonic()
    endpoint = stack.enter_context(ref)
    log(f"  up in {time.monotonic() - started:.0f} s on port {endpoint.port}")
    jars = find_pyspark_jars()
    jar = next(iter(sorted(jars.glob("hive-metastore-2.3.*.jar")))).name if jars else "?"
    name = "ref-pg" if kind == "postgres" else "ref-derby"
    return Target(
        name,
        endpoint.host,
        endpoint.port,
        f"Apache Hive Metastore ({jar}, {java_version()}, -Xmx{args.reference_heap}) on {backend}"
        + (f"; hive-site additions {args.reference_props}" if args.reference_props else ""),
        timeout_ms=timeout_ms,
        pid=ref.process.pid if ref.process is not None else None,
    )


def java_version() -> str:
    """First line of ``java -version``."""
    from support.reference_hms import find_java

    java = find_java()
    if java is None:
        return "?"
    out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    return (out.stderr or out.stdout).splitlines()[0] if (out.stderr or out.stdout) else "?"
