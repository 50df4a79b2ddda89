"""A delegation token used by the Java Hive 2.3 client bundled with PySpark: a Kerberos client
(python-gssapi, against the test KDC) gets a token from our server; the Java client, holding only
that token in its user's credentials, connects with ``hive.metastore.sasl.enabled`` and logs in
with DIGEST-MD5 as Hive does for jobs (Hadoop's token classes decode our token, Java's
DIGEST-MD5 client talks to our mechanism), and is served as the token's owner; once the token
is cancelled, the Java client cannot connect with it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.kdc import KDC_SKIP_REASON, Kdc
from support.net import MetastoreEndpoint
from support.sasl_client import gssapi_client
from support.spark_session import local_spark

from metastore_server.server.app import build_server
from metastore_server.server.config import ServerConfig

pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif(KDC_SKIP_REASON is not None, reason=KDC_SKIP_REASON or ""),
]
pytest.importorskip("gssapi", reason="python-gssapi is not installed (needs libkrb5-dev)")

SERVICE = "hive/localhost"


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Kdc, Path]]:
    """(running Kerberos server, its KDC, alice's ticket cache)."""
    work = tmp_path_factory.mktemp("spark-token")
    with Kdc(work / "kdc") as kdc, pytest.MonkeyPatch.context() as patch:
        patch.setenv("KRB5_CONFIG", str(kdc.krb5_conf))
        kdc.add_principal(SERVICE)
        keytab = kdc.keytab(SERVICE, work / "hive.keytab")
        kdc.add_principal("alice", password="alice-secret")
        cache = kdc.kinit("alice", password="alice-secret", cache=work / "cc_alice")
        config = ServerConfig(host="127.0.0.1", port=0, storage=f"sqlite:///{work / 'm.db'}",
                              warehouse=str(work / "warehouse"), workers=0, auth="kerberos",
                              kerberos_keytab=str(keytab),
                              kerberos_principal=f"{SERVICE}@{kdc.realm}")  # fmt: skip
        config.validate()
        server, close = build_server(config)
        server.start()
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            yield server, kdc, cache
        finally:
            server.stop()
            close()


def java_client(jvm: Any, port: int, token: str, realm: str) -> Any:
    """Hive's HiveMetaStoreClient holding ``token`` (and no Kerberos ticket)."""
    conf = jvm.org.apache.hadoop.hive.conf.HiveConf()
    conf.set("hive.metastore.uris", f"thrift://127.0.0.1:{port}")
    conf.set("hive.metastore.sasl.enabled", "true")
    conf.set("hive.metastore.kerberos.principal", f"{SERVICE}@{realm}")
    conf.set("hive.metastore.connect.retries", "1")
    held = jvm.org.apache.hadoop.security.token.Token()
    held.decodeFromUrlString(token)
    jvm.org.apache.hadoop.security.UserGroupInformation.getCurrentUser().addToken(held)
    return jvm.org.apache.hadoop.hive.metastore.HiveMetaStoreClient(conf)


def test_the_java_client_logs_in_with_a_token(
    secured: tuple[Any, Kdc, Path], tmp_path: Path
) -> None:
    server, kdc, cache = secured
    host, port = server.address
    alice = gssapi_client(host, port, str(cache))
    token = alice.get_delegation_token("alice", "alice")
    endpoint = MetastoreEndpoint(host, port, str(tmp_path / "warehouse"))
    with local_spark(endpoint, tmp_path, "metastore-token") as spark:
        jvm = spark.sparkContext._jvm
        held = jvm.org.apache.hadoop.security.token.Token()
        held.decodeFromUrlString(token)
        assert held.getKind().toString() == "HIVE_DELEGATION_TOKEN"
        client = java_client(jvm, port, token, kdc.realm)
        database = jvm.org.apache.hadoop.hive.metastore.api.Database()
        database.setName("from_java_job")
        client.createDatabase(database)
        client.close()
        assert alice.get_database("from_java_job").ownerName == "alice"
        alice.cancel_delegation_token(token)
        with pytest.raises(Exception, match="Could not connect to meta store"):  # noqa: PT011
            java_client(jvm, port, token, kdc.realm)
