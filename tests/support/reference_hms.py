"""Launch the reference Apache Hive Metastore 2.3.x from the jars shipped in the pyspark wheel.

The 2.3.x server binds every network interface and has no bind-address setting, so it is only
started when this process lives in a private network namespace whose only interface is
loopback (``unshare -n``); see :func:`in_isolated_netns`. Metadata lives in an embedded Derby
database inside a scratch directory (the default) or, given a JDBC URL, in PostgreSQL (see
:class:`ReferenceHms`); logs go to files in ``<dir>/logs``.

Run by hand (inside ``unshare -n``)::

    python tests/support/reference_hms.py --port 9183 --dir /tmp/ref-hms
    python tests/support/reference_hms.py --postgres   # a throwaway PostgreSQL as well
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from xml.sax.saxutils import escape

import pytest

if not __package__:  # executed as a script
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from support.net import (
        LOOPBACK,
        MetastoreEndpoint,
        StartedByWith,
        failed_to_start,
        free_port,
        in_isolated_netns,
        tail,
        terminate,
    )
else:
    from .net import (
        LOOPBACK,
        MetastoreEndpoint,
        StartedByWith,
        failed_to_start,
        free_port,
        in_isolated_netns,
        tail,
        terminate,
    )

__all__ = [
    "POSTGRES_JDBC_JAR",
    "ReferenceHms",
    "find_java",
    "find_postgres_jdbc_jar",
    "find_pyspark_jars",
    "in_isolated_netns",
    "reference_hms",
    "reference_hms_unavailable_reason",
]

MAIN_CLASS = "org.apache.hadoop.hive.metastore.HiveMetaStore"
SCHEMA_TOOL_CLASS = "org.datanucleus.store.schema.SchemaTool"
STARTUP_TIMEOUT_S = 240.0
STOP_TIMEOUT_S = 20.0
POSTGRES_DRIVER = "org.postgresql.Driver"
POSTGRES_JDBC_JAR = Path("/usr/share/java/postgresql.jar")  # Debian: libpostgresql-jdbc-java
POSTGRES_JAR_HINT = "apt-get install -y libpostgresql-jdbc-java"


def find_java() -> str | None:
    """Path of the ``java`` executable ($JAVA_HOME first, then $PATH)."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / "java"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("java")


def find_pyspark_jars() -> Path | None:
    """The ``jars`` directory of the installed pyspark wheel, if it holds hive-metastore 2.3.x."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        return None
    jars = Path(next(iter(spec.submodule_search_locations))) / "jars"
    if not any(jars.glob("hive-metastore-2.3.*.jar")):
        return None
    return jars


def find_postgres_jdbc_jar() -> Path | None:
    """The PostgreSQL JDBC driver jar ($HMS_JDBC_JAR, else Debian's), if it exists."""
    configured = os.environ.get("HMS_JDBC_JAR")
    jar = Path(configured) if configured else POSTGRES_JDBC_JAR
    return jar if jar.is_file() else None


def reference_hms_unavailable_reason() -> str | None:
    """Why the reference metastore cannot be started here, or None when it can."""
    if not in_isolated_netns():
        return (
            "reference HMS 2.3 listens on all interfaces; run the tests inside an isolated "
            "network namespace: unshare -n bash -c 'ip link set lo up; <pytest ...>'"
        )
    if find_java() is None:
        return "reference HMS needs java (set JAVA_HOME or put java on PATH)"
    if find_pyspark_jars() is None:
        return "reference HMS needs the pyspark wheel's jars (hive-metastore-2.3.*.jar)"
    return None


def _site_xml(props: dict[str, str]) -> str:
    """A Hadoop-style configuration file holding ``props``."""
    body = "\n".join(
        f"  <property><name>{escape(k)}</name><value>{escape(v)}</value></property>"
        for k, v in props.items()
    )
    return f'<?xml version="1.0"?>\n<configuration>\n{body}\n</configuration>\n'


def _derby_properties(db_dir: Path, warehouse: Path) -> dict[str, str]:
    """Embedded Derby, schema auto-create, no schema verification."""
    return {
        "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={db_dir};create=true",
        "javax.jdo.option.ConnectionDriverName": "org.apache.derby.jdbc.EmbeddedDriver",
        "javax.jdo.option.ConnectionUserName": "APP",
        "javax.jdo.option.ConnectionPassword": "mine",
        "datanucleus.schema.autoCreateAll": "true",
        "hive.metastore.schema.verification": "false",
        "datanucleus.connectionPoolingType": "HikariCP",
        "hive.metastore.warehouse.dir": warehouse.as_uri(),
    }


def _postgres_properties(url: str, user: str, password: str, warehouse: Path) -> dict[str, str]:
    """PostgreSQL through JDBC, on a schema created beforehand (:meth:`ReferenceHms.create_schema`).

    DataNucleus' lazy auto-create is off (``fixedDatastore``): on PostgreSQL, where DDL is
    transactional, it can deadlock when pooled connections create tables concurrently.
    """
    return {
        "javax.jdo.option.ConnectionURL": url,
        "javax.jdo.option.ConnectionDriverName": POSTGRES_DRIVER,
        "javax.jdo.option.ConnectionUserName": user,
        "javax.jdo.option.ConnectionPassword": password,
        "datanucleus.schema.autoCreateAll": "false",
        "datanucleus.fixedDatastore": "true",
        "hive.metastore.schema.verification": "false",
        "datanucleus.connectionPoolingType": "HikariCP",
        "hive.metastore.warehouse.dir": warehouse.as_uri(),
    }


def _schema_tool_properties(url: str, user: str, password: str) -> str:
    """DataNucleus SchemaTool settings: the connection, and HMS's identifier conventions."""
    props = {
        "javax.jdo.option.ConnectionURL": url,
        "javax.jdo.option.ConnectionDriverName": POSTGRES_DRIVER,
        "javax.jdo.option.ConnectionUserName": user,
        "javax.jdo.option.ConnectionPassword": password,
        # HiveConf's defaults, which decide table and column names and id generation
        "datanucleus.identifierFactory": "datanucleus1",
        "datanucleus.rdbms.useLegacyNativeValueStrategy": "true",
        "datanucleus.storeManagerType": "rdbms",
    }
    return "".join(f"{k}={v}\n" for k, v in props.items())


def _log4j2(logs: Path) -> str:
    """log4j2 configuration: main log, audit log, quiet DataNucleus; nothing on the console."""
    return f"""status = WARN
appender.main.type = File
appender.main.name = MAIN
appender.main.fileName = {logs / "hms.log"}
appender.main.layout.type = PatternLayout
appender.main.layout.pattern = %d{{ISO8601}} %5p [%t] %c: %m%n
appender.audit.type = File
appender.audit.name = AUDIT
appender.audit.fileName = {logs / "audit.log"}
appender.audit.layout.type = PatternLayout
appender.audit.layout.pattern = %d{{ISO8601}} [%t] %m%n
loggers = audit, datanucleus
logger.audit.name = org.apache.hadoop.hive.metastore.HiveMetaStore.audit
logger.audit.level = INFO
logger.audit.additivity = false
logger.audit.appenderRefs = audit
logger.audit.appenderRef.audit.ref = AUDIT
logger.datanucleus.name = DataNucleus
logger.datanucleus.level = WARN
rootLogger.level = INFO
rootLogger.appenderRefs = main
rootLogger.appenderRef.main.ref = MAIN
"""


class ReferenceHms(StartedByWith):
    """Context manager running the reference Hive Metastore 2.3.x on 127.0.0.1:port.

    ``with ReferenceHms(workdir) as endpoint:`` yields a :class:`MetastoreEndpoint`.
    Metadata goes to embedded Derby in ``workdir``, or to PostgreSQL when ``jdbc_url``
    (``jdbc:postgresql://127.0.0.1:5432/hms``) is given; the driver jar is ``jdbc_jar`` or
    :func:`find_postgres_jdbc_jar`; on PostgreSQL each start first makes sure the schema exists
    (:meth:`create_schema`). ``properties`` are added to (or override) hive-site.xml.
    """

    def __init__(
        self,
        workdir: Path | str | None = None,
        port: int | None = None,
        *,
        startup_timeout: float = STARTUP_TIMEOUT_S,
        heap: str = "1g",
        jdbc_url: str | None = None,
        jdbc_user: str = "hive",
        jdbc_password: str = "hive",
        jdbc_jar: Path | str | None = None,
        properties: dict[str, str] | None = None,
    ) -> None:
        self._own_tmp = workdir is None
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="reference-hms-")).resolve()
        self.port = port or free_port()
        self.startup_timeout = startup_timeout
        self.heap = heap
        self.warehouse = self.workdir / "warehouse"
        self.logs = self.workdir / "logs"
        self.process: subprocess.Popen[bytes] | None = None
        self.jdbc_url = jdbc_url
        self.jdbc_user = jdbc_user
        self.jdbc_password = jdbc_password
        self.jdbc_jar = Path(jdbc_jar) if jdbc_jar else None
        self.properties = dict(properties or {})

    @property
    def backend(self) -> str:
        """``derby`` or ``postgres``."""
        return "derby" if self.jdbc_url is None else "postgres"

    def _driver_jar(self) -> Path:
        jar = self.jdbc_jar or find_postgres_jdbc_jar()
        if jar is None or not jar.is_file():
            raise RuntimeError(
                f"the PostgreSQL JDBC driver jar is missing ({jar or POSTGRES_JDBC_JAR}); "
                f"install it with: {POSTGRES_JAR_HINT}"
            )
        return jar

    @property
    def endpoint(self) -> MetastoreEndpoint:
        """Host, port and warehouse directory of this metastore."""
        return MetastoreEndpoint(LOOPBACK, self.port, str(self.warehouse))

    def hive_properties(self) -> dict[str, str]:
        """The properties written to hive-site.xml."""
        if self.jdbc_url is None:
            props = _derby_properties(self.workdir / "metastore_db", self.warehouse)
        else:
            props = _postgres_properties(
                self.jdbc_url, self.jdbc_user, self.jdbc_password, self.warehouse
            )
        return props | self.properties

    def create_schema(self) -> None:
        """Create the metastore tables in PostgreSQL (idempotent; existing tables are kept).

        No schema SQL ships with the pyspark jars, so DataNucleus' own SchemaTool creates the
        tables of every class in the metastore jar's ``package.jdo`` (what auto-create would
        do lazily), over one connection, before the metastore starts.
        """
        java = find_java()
        jars = find_pyspark_jars()
        if self.jdbc_url is None or java is None or jars is None:
            raise RuntimeError("create_schema needs a JDBC URL, java and the pyspark jars")
        # not in conf/, which is on the metastore's classpath next to the jar's own package.jdo
        schema = self.workdir / "schema"
        for d in (schema, self.logs):
            d.mkdir(parents=True, exist_ok=True)
        metastore_jar = next(iter(sorted(jars.glob("hive-metastore-2.3.*.jar"))))
        with zipfile.ZipFile(metastore_jar) as jar:
            (schema / "package.jdo").write_bytes(jar.read("package.jdo"))
        props = schema / "schematool.properties"
        props.write_text(_schema_tool_properties(self.jdbc_url, self.jdbc_user, self.jdbc_password))
        log = self.logs / "schematool.log"
        with log.open("wb") as out:
            code = subprocess.call(
                [
                    java,
                    "-cp",
                    os.pathsep.join([str(jars / "*"), str(self._driver_jar())]),
                    SCHEMA_TOOL_CLASS,
                    "-create",
                    "-api",
                    "JDO",
                    "-props",
                    str(props),
                    str(schema / "package.jdo"),
                ],
                cwd=self.workdir,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=self.startup_timeout,
            )
        if code != 0:
            raise RuntimeError(f"DataNucleus SchemaTool failed ({code}):\n{tail(log)}")

    def command(self) -> list[str]:
        """The java command line (writes the configuration files as a side effect)."""
        java = find_java()
        jars = find_pyspark_jars()
        if java is None or jars is None:
            raise RuntimeError("java or the pyspark hive-metastore jars are missing")
        classpath = [str(self.workdir / "conf"), str(jars / "*")]
        if self.jdbc_url is not None:
            classpath.append(str(self._driver_jar()))
        conf = self.workdir / "conf"
        for d in (conf, self.logs, self.warehouse):
            d.mkdir(parents=True, exist_ok=True)
        (conf / "hive-site.xml").write_text(_site_xml(self.hive_properties()))
        (conf / "log4j2.properties").write_text(_log4j2(self.logs))
        return [
            java,
            f"-Xmx{self.heap}",
            f"-Dlog4j.configurationFile={conf / 'log4j2.properties'}",
            f"-Dderby.stream.error.file={self.logs / 'derby.log'}",
            "-cp",
            os.pathsep.join(classpath),
            MAIN_CLASS,
            "-p",
            str(self.port),
        ]

    def start(self) -> MetastoreEndpoint:
        """Start the JVM and block until the Thrift port accepts connections."""
        reason = reference_hms_unavailable_reason()
        if reason is not None:
            raise RuntimeError(reason)
        if self.jdbc_url is not None:
            self.create_schema()
        cmd = self.command()
        with (
            (self.logs / "stdout.log").open("wb") as out,
            (self.logs / "stderr.log").open("wb") as err,
        ):
            self.process = subprocess.Popen(
                cmd, cwd=self.workdir, stdin=subprocess.DEVNULL, stdout=out, stderr=err
            )
        failure = failed_to_start(self.process, self.port, self.startup_timeout, self.stop)
        if failure is not None:
            raise RuntimeError(
                f"reference HMS {failure} (port {self.port}, dir {self.workdir})\n"
                f"--- hms.log ---\n{tail(self.logs / 'hms.log')}\n"
                f"--- stderr ---\n{tail(self.logs / 'stderr.log')}"
            )
        return self.endpoint

    def stop(self) -> None:
        """SIGTERM the JVM, SIGKILL it if it has not exited after a timeout."""
        proc, self.process = self.process, None
        terminate(proc, STOP_TIMEOUT_S)



@pytest.fixture(scope="session")
def reference_hms(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MetastoreEndpoint]:
    """A reference Hive Metastore 2.3.x for the whole session: (host, port, warehouse_dir)."""
    reason = reference_hms_unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    with ReferenceHms(tmp_path_factory.mktemp("reference-hms")) as endpoint:
        yield endpoint


def main(argv: list[str] | None = None) -> int:
    """Run the reference metastore in the foreground until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=9083)
    parser.add_argument("--dir", type=Path, default=None, help="work directory (default: temp)")
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="keep the metadata in a throwaway PostgreSQL (in <dir>/postgres) instead of Derby",
    )
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as stack:
        jdbc_url = None
        if args.postgres:
            if __package__:
                from .postgres import PostgresServer
            else:
                from support.postgres import PostgresServer
            pg_dir = args.dir / "postgres" if args.dir else None
            jdbc_url = stack.enter_context(PostgresServer(pg_dir)).jdbc_url
            print(f"PostgreSQL on {jdbc_url}", flush=True)
        hms = ReferenceHms(args.dir, args.port, jdbc_url=jdbc_url)
        endpoint = stack.enter_context(hms)
        print(f"listening on {endpoint.uri}; warehouse {endpoint.warehouse_dir}", flush=True)
        print(f"logs in {hms.logs}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            signal.sigwait({signal.SIGINT, signal.SIGTERM})
    return 0


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    sys.exit(main())
