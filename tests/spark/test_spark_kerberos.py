"""PySpark's built-in Hive 2.3 client with SASL (Kerberos) on, against our server with
``--auth kerberos``, all on a throw-away MIT KDC started here (``support.kdc``).

The Spark session runs in a child process (``support/spark_kerberos_scenario.py``): a JVM's
Kerberos set-up is global and PySpark keeps one JVM per Python process. It logs in from a user's
keytab (``spark.kerberos.principal``/``keytab``), reaches the metastore as
``thrift://localhost:PORT`` with ``hive.metastore.kerberos.principal=hive/_HOST@REALM`` (the
client puts the URI's host for ``_HOST``: ``hive/localhost@REALM``, the server's principal), and
creates, writes and reads a partitioned table. The server runs in this process, so its log
lines are captured and checked: every call was made as the user.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import structlog
from structlog.testing import capture_logs
from support.kdc import KDC_SKIP_REASON, Kdc
from support.sasl_client import gssapi_client
from support.spark_kerberos_scenario import DB

from metastore_server import audit
from metastore_server.server import sasl
from metastore_server.server.app import build_server
from metastore_server.server.config import ServerConfig

pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif(KDC_SKIP_REASON is not None, reason=KDC_SKIP_REASON or ""),
]
gssapi = pytest.importorskip("gssapi", reason="python-gssapi is not installed (needs libkrb5-dev)")
pytest.importorskip("pyspark", reason="pyspark is not installed")

SERVICE = "hive/localhost"
USER = "etl"
SCENARIO = Path(__file__).parents[1] / "support" / "spark_kerberos_scenario.py"
#: Seconds a child Spark session may take (a JVM start on a busy machine included).
SESSION_TIMEOUT = 600


class KerberosMetastore(NamedTuple):
    """A running ``--auth kerberos`` server in this process, and the realm it is in."""

    kdc: Kdc
    host: str
    port: int
    warehouse: Path
    logs: list[dict[str, Any]]


@contextmanager
def kerberos_metastore(kdc: Kdc, work: Path, qop: str = "auth") -> Iterator[KerberosMetastore]:
    """Our server with ``--auth kerberos`` as ``hive/localhost@REALM`` offering ``qop``, in
    this process, its log captured."""
    warehouse = work / "warehouse"
    warehouse.mkdir(parents=True)
    keytab = kdc.keytab(SERVICE, work / "hive.keytab")
    with pytest.MonkeyPatch.context() as patch, capture_logs() as logs:
        patch.setenv("KRB5_CONFIG", str(kdc.krb5_conf))
        # Loggers made before capture_logs may be cached on an earlier configuration.
        patch.setattr(audit, "_audit", structlog.get_logger("metastore.audit"))
        patch.setattr(sasl, "log", structlog.get_logger(sasl.__name__))
        config = ServerConfig(host="127.0.0.1", port=0, storage=f"sqlite:///{work / 'm.db'}",
                              warehouse=str(warehouse), auth="kerberos",
                              kerberos_principal=f"{SERVICE}@{kdc.realm}",
                              kerberos_keytab=str(keytab), sasl_qop=qop)  # fmt: skip
        config.validate()
        server, close = build_server(config)
        server.start()
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            yield KerberosMetastore(kdc, "localhost", server.address[1], warehouse, logs)
        finally:
            server.stop()
            close()


@pytest.fixture(scope="module")
def kdc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kdc]:
    """The realm, with the server's principal and the user's."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("PySpark needs java")
    with Kdc(tmp_path_factory.mktemp("kdc")) as running:
        running.add_principal(SERVICE)
        running.add_principal(USER)
        yield running


@pytest.fixture(scope="module")
def metastore(kdc: Kdc, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KerberosMetastore]:
    """The server of the module's session (QOP auth, the default)."""
    with kerberos_metastore(kdc, tmp_path_factory.mktemp("spark-kerberos")) as running:
        yield running


def hadoop_conf_dir(directory: Path) -> Path:
    """A Hadoop configuration directory whose core-site.xml turns Kerberos on (Hadoop's login
    reads it from the class path, which the Spark launcher extends with ``HADOOP_CONF_DIR``)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "core-site.xml").write_text(
        "<configuration>\n<property><name>hadoop.security.authentication</name>"
        "<value>kerberos</value></property>\n</configuration>\n"
    )
    return directory


def run_session(metastore: KerberosMetastore, scratch: Path, user: str | None,
                **spec: Any) -> dict[str, Any]:  # fmt: skip
    """Run a Spark session in a child process with ``spec`` (see the scenario module), logged
    in from ``user``'s keytab (None: no login, no ticket)."""
    if user is not None:
        keytab = metastore.kdc.keytab(user, scratch / f"{user}.keytab")
        spec.update(user_principal=f"{user}@{metastore.kdc.realm}", user_keytab=str(keytab))
    spec = {"host": metastore.host, "port": metastore.port,
            "warehouse": str(metastore.warehouse), "scratch": str(scratch),
            "krb5_conf": str(metastore.kdc.krb5_conf),
            "service_principal": f"hive/_HOST@{metastore.kdc.realm}", **spec}  # fmt: skip
    path = scratch / "spec.json"
    path.write_text(json.dumps(spec))
    env = {k: v for k, v in os.environ.items() if k not in ("KRB5CCNAME", "PYSPARK_SUBMIT_ARGS")}
    env["KRB5_CONFIG"] = str(metastore.kdc.krb5_conf)
    env["HADOOP_CONF_DIR"] = str(hadoop_conf_dir(scratch / "hadoop-conf"))
    env["KRB5CCNAME"] = f"FILE:{scratch / 'no-such-cache'}"  # no ticket but the keytab's
    done = subprocess.run([sys.executable, str(SCENARIO), str(path)], env=env, cwd=scratch,
                          capture_output=True, text=True, timeout=SESSION_TIMEOUT,
                          check=False)  # fmt: skip
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-6000:]
    return {**json.loads(lines[-1][len("RESULT ") :]), "stderr": done.stderr}


@pytest.fixture(scope="module")
def session_result(
    metastore: KerberosMetastore, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """What the scenario's queries returned, run as USER logged in from its keytab."""
    return run_session(metastore, tmp_path_factory.mktemp("spark-kerberos-session"), USER)


def test_spark_creates_writes_and_reads_a_partitioned_table(session_result: dict) -> None:
    assert session_result["ok"], session_result["stderr"][-6000:]
    assert session_result["filtered"] == [3]
    assert session_result["all"] == [[1, "2024-01-01"], [2, "2024-01-01"], [3, "2024-01-02"]]
    assert session_result["partitions"] == ["ds=2024-01-01", "ds=2024-01-02"]
    assert session_result["spark_user"] == USER


def test_the_server_saw_every_call_as_the_user(
    session_result: dict, metastore: KerberosMetastore
) -> None:
    assert session_result["ok"], session_result["stderr"][-6000:]
    logins = [e for e in metastore.logs if e.get("event") == "sasl_authenticated"]
    assert logins, "no SASL login seen"
    assert {(e["user"], e["mechanism"]) for e in logins} == {(USER, "GSSAPI")}
    calls = [e for e in metastore.logs if e.get("event") == "call"]
    methods = {e["method"] for e in calls}
    wanted = {"create_database", "create_table_with_environment_context", "add_partitions_req"}
    assert wanted <= methods, methods
    assert {e.get("user") for e in calls} == {USER}


def test_spark_with_privacy_protection(kdc: Kdc, tmp_path: Path) -> None:
    """hadoop.rpc.protection=privacy (QOP auth-conf): every frame encrypted both ways."""
    with kerberos_metastore(kdc, tmp_path / "server", qop="auth-conf") as running:
        scratch = tmp_path / "session"
        scratch.mkdir()
        protection = {"spark.hadoop.hadoop.rpc.protection": "privacy"}
        result = run_session(running, scratch, USER, extra_settings=protection)
        assert result["ok"], result["stderr"][-6000:]
        assert result["filtered"] == [3]
        assert result["partitions"] == ["ds=2024-01-01", "ds=2024-01-02"]
        calls = [e for e in running.logs if e.get("event") == "call"]
        assert calls
        assert {e.get("user") for e in calls} == {USER}


def test_spark_without_a_ticket_fails_and_others_are_served(
    metastore: KerberosMetastore, session_result: dict, tmp_path: Path
) -> None:
    """No login and no ticket cache: the Hive client cannot start GSSAPI, so Spark's first
    metastore call fails, naming the missing ticket; the server serves others meanwhile."""
    result = run_session(metastore, tmp_path, None)
    assert not result["ok"]
    assert "SessionHiveMetaStoreClient" in result["error"]
    assert "GSS initiate failed" in result["stderr"], result["stderr"][-6000:]
    assert "Failed to find any Kerberos tgt" in result["stderr"]
    refused = [e for e in metastore.logs if e.get("event") == "sasl_refused"]
    assert any("GSS initiate failed" in e["reason"] for e in refused), refused
    keytab = metastore.kdc.keytab(USER, tmp_path / f"{USER}.keytab")
    cache = metastore.kdc.kinit(USER, keytab=keytab, cache=tmp_path / "cc")
    client = gssapi_client("127.0.0.1", metastore.port, str(cache))
    try:
        assert client.get_partition_names(DB, "events", -1) == ["ds=2024-01-01", "ds=2024-01-02"]
    finally:
        client.close()
