"""The project's own client logs in to servers that authenticate clients: ``MetastoreClient``
and the command-line tools (values, explain, timeline, dependency, import, bench) with
``--auth plain`` (SASL PLAIN over TLS, the password from an environment variable, never an
argument) and ``--auth kerberos`` (SASL GSSAPI with the process's ticket cache, against the
test KDC)."""

from __future__ import annotations

import importlib.util
import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.kdc import KDC_SKIP_REASON, Kdc
from support.tls import make_certificate
from thriftpy2.transport import TTransportException

from metastore_server.cli import bench as cli_bench
from metastore_server.cli import importing as cli_import
from metastore_server.cli import main as cli
from metastore_server.cli.common import not_thrift_errors
from metastore_server.client import MetastoreClient
from metastore_server.server.passwords import hash_password

from .conftest import RunningServer, create_db, make_partition, make_table

pytestmark = pytest.mark.any_store

DAYS = ["2024-01-01", "2024-01-02", "2024-01-03"]
_GSSAPI_SKIP = KDC_SKIP_REASON or (
    "python-gssapi is not installed (needs libkrb5-dev)"
    if importlib.util.find_spec("gssapi") is None else None
)  # fmt: skip


@pytest.fixture(scope="module")
def password_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("auth") / "passwords"
    path.write_text(
        f"alice:{hash_password('wonderland')}\nbob:{hash_password('builder', 'bcrypt')}\n"
    )
    return path


@pytest.fixture(scope="module")
def cert(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, password_file: Path,
           cert: tuple[Path, Path]) -> Iterator[RunningServer]:  # fmt: skip
    """``--auth password`` over TLS, holding sales.events with three partitions made by alice."""
    running = RunningServer(tmp_path_factory.mktemp("plain"), auth="password",
                            password_file=str(password_file), tls_cert=str(cert[0]),
                            tls_key=str(cert[1]))  # fmt: skip
    with MetastoreClient(running.host, running.port, auth="plain", user="alice",
                         password="wonderland", tls_ca=str(cert[0])) as client:  # fmt: skip
        _seed(client)
    yield running
    running.stop()


def _seed(client: MetastoreClient) -> None:
    create_db(client, "sales")
    client.create_table(make_table("sales", "events", keys=[("ds", "string")]))
    client.add_partitions([make_partition("sales", "events", [day]) for day in DAYS])


def _uri(server: RunningServer) -> str:
    return f"thrift://{server.host}:{server.port}"


# --------------------------------------------------------------------------- MetastoreClient


def test_client_logs_in_with_plain_over_tls(
    server: RunningServer, cert: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    with MetastoreClient.from_uri(_uri(server), auth="plain", user="bob", password="builder",
                                  tls_ca=str(cert[0])) as client:  # fmt: skip
        assert client.list_partition_values("sales", "events", ["ds"]) == [[d] for d in DAYS]
    logged = capsys.readouterr().out  # (the in-process server logs to standard output)
    assert "sasl_authenticated             mechanism=PLAIN" in logged and "user=bob" in logged
    with pytest.raises(TTransportException, match="Bad status: 3"):
        MetastoreClient(server.host, server.port, auth="plain", user="bob", password="nope",
                        tls_ca=str(cert[0]))  # fmt: skip
    client = MetastoreClient(server.host, server.port, tls_ca=str(cert[0]))  # no login
    with pytest.raises((TTransportException, *not_thrift_errors())), client:
        client.get_all_databases()  # (it reads the server's ERROR frame as a reply)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"auth": "plain", "user": "bob"}, "auth plain needs a user and a password"),
        ({"auth": "ldap"}, "auth must be one of none, plain, kerberos, not 'ldap'"),
        ({"auth": "kerberos", "sasl_qop": "secret"}, "qop must be auth, auth-int or auth-conf"),
    ],
)
def test_client_login_settings_are_checked(options: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MetastoreClient("127.0.0.1", 1, **options)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- command line


def _login(cert: tuple[Path, Path], user: str = "bob") -> list[str]:
    return ["--auth", "plain", "--user", user, "--tls-ca", str(cert[0])]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["values", "sales.events", "--keys", "ds"], "2024-01-01\n2024-01-02\n2024-01-03\n"),
        (["explain", 'ds = "2024-01-02"', "--table", "sales.events"], "2024-01-02"),
        (["dependency", "dependents", "sales.events"], "sales.events"),
        (["timeline", "show", "sales.events"], "sales.events"),
    ],
    ids=["values", "explain", "dependency", "timeline"],
)
def test_commands_log_in_with_plain(
    server: RunningServer, cert: tuple[Path, Path], capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch, argv: list[str], expected: str,
) -> None:  # fmt: skip
    monkeypatch.setenv("METASTORE_PASSWORD", "builder")
    code = cli.main([*argv, "--uri", _uri(server), *_login(cert)])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert expected in printed.out


def test_command_password_comes_from_the_environment_only(
    server: RunningServer, cert: tuple[Path, Path], capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    argv = ["values", "sales.events", "--keys", "ds", "--uri", _uri(server)]
    monkeypatch.delenv("METASTORE_PASSWORD", raising=False)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # not a terminal: nothing is asked
    assert cli.main([*argv, *_login(cert)]) == 2
    assert "no password (set it in $METASTORE_PASSWORD" in capsys.readouterr().err
    monkeypatch.setenv("ETL_SECRET", "wonderland")
    assert cli.main([*argv, *_login(cert, "alice"), "--password-env", "ETL_SECRET"]) == 0
    assert capsys.readouterr().out.endswith("2024-01-01\n2024-01-02\n2024-01-03\n")
    monkeypatch.setenv("METASTORE_PASSWORD", "wrong")
    assert cli.main([*argv, *_login(cert)]) == 2
    assert f"values: {_uri(server)} refused the login: " in capsys.readouterr().err
    assert cli.main([*argv, "--auth", "plain", "--tls-ca", str(cert[0])]) == 2
    assert "--auth plain needs --user" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # a password on the command line is refused
        cli.main([*argv, *_login(cert), "--password", "builder"])
    refused = capsys.readouterr().err
    assert "--password is not taken: a password on the command line is seen by ps" in refused
    assert "builder" not in refused
    assert cli.main([*argv, "--tls-ca", str(cert[0])]) == 2  # no login where one is wanted
    assert "answered with no Thrift reply" in capsys.readouterr().err


def test_import_between_protected_servers(
    server: RunningServer, cert: tuple[Path, Path], password_file: Path, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """From the TLS server as bob into a plain-socket PLAIN server as alice."""
    target = RunningServer(tmp_path, auth="password", password_file=str(password_file))
    try:
        monkeypatch.setenv("METASTORE_FROM_PASSWORD", "builder")
        monkeypatch.setenv("METASTORE_TO_PASSWORD", "wonderland")
        out, err = io.StringIO(), io.StringIO()
        argv = ["--from", _uri(server), "--from-auth", "plain", "--from-user", "bob",
                "--from-tls-ca", str(cert[0]), "--to", _uri(target), "--to-auth", "plain",
                "--to-user", "alice", "--databases", "sales", "--no-progress"]  # fmt: skip
        assert cli_import.main(argv, out=out, err=err) == 0, err.getvalue()
        with MetastoreClient(target.host, target.port, auth="plain", user="alice",
                             password="wonderland") as client:  # fmt: skip
            assert client.list_partition_values("sales", "events", ["ds"]) == [[d] for d in DAYS]
        err = io.StringIO()
        assert cli_import.main(argv[:8] + ["--to", _uri(target)], out=out, err=err) == 2
        assert "a metastore answered with no Thrift reply" in err.getvalue()
        assert "wants a login (--from-auth/--to-auth plain or kerberos)?" in err.getvalue()
    finally:
        target.stop()


def test_bench_logs_in_with_plain(
    server: RunningServer, cert: tuple[Path, Path], tmp_path: Path,
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setenv("METASTORE_PASSWORD", "builder")
    tiny = ["--partitions", "10", "--calls", "2", "--warmup", "1", "--no-progress"]
    code = cli_bench.main(["--uri", _uri(server), *_login(cert), *tiny, "--database",
                           "bench_plain", "--out", str(tmp_path / "out")])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert (tmp_path / "out" / cli_bench.CSV_NAME).exists()


# --------------------------------------------------------------------------- Kerberos


@pytest.fixture(scope="module")
def kdc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kdc]:
    if _GSSAPI_SKIP is not None:
        pytest.skip(_GSSAPI_SKIP)
    with Kdc(tmp_path_factory.mktemp("kdc")) as running:
        running.add_principal("hive/localhost")
        running.add_principal("carol", password="carol-secret")
        yield running


@pytest.fixture()
def kerberos_server(kdc: Kdc, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                    ) -> Iterator[RunningServer]:  # fmt: skip
    """``--auth kerberos --sasl-qop auth-conf``; this process holds carol's ticket in the cache
    KRB5CCNAME names, as after ``kinit``."""
    monkeypatch.setenv("KRB5_CONFIG", str(kdc.krb5_conf))
    keytab = kdc.keytab("hive/localhost", tmp_path / "hive.keytab")
    cache = kdc.kinit("carol", password="carol-secret", cache=tmp_path / "cc_carol")
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{cache}")
    running = RunningServer(tmp_path / "s", auth="kerberos", kerberos_keytab=str(keytab),
                            kerberos_principal=f"hive/localhost@{kdc.realm}",
                            sasl_qop="auth-conf")  # fmt: skip
    yield running
    running.stop()


def test_client_and_commands_log_in_with_kerberos(
    kerberos_server: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server = kerberos_server
    with MetastoreClient(server.host, server.port, auth="kerberos",
                         kerberos_host="localhost") as client:  # fmt: skip
        _seed(client)  # (auth-conf: the strongest layer offered is taken)
    logged = capsys.readouterr().out
    assert "mechanism=GSSAPI" in logged and "user=carol" in logged
    with pytest.raises(TTransportException, match="offers QOP auth-conf, not the one asked"):
        MetastoreClient(server.host, server.port, auth="kerberos", kerberos_host="localhost",
                        sasl_qop="auth")  # fmt: skip
    with pytest.raises(TTransportException):  # no such service principal in the realm
        MetastoreClient(server.host, server.port, auth="kerberos", kerberos_service="impala",
                        kerberos_host="localhost")  # fmt: skip
    argv = ["values", "sales.events", "--keys", "ds", "--uri", _uri(server), "--auth",
            "kerberos", "--kerberos-host", "localhost"]  # fmt: skip
    assert cli.main(argv) == 0
    assert capsys.readouterr().out.endswith("2024-01-01\n2024-01-02\n2024-01-03\n")
    assert cli.main([*argv, "--sasl-qop", "auth-int"]) == 2
    assert "refused the login" in capsys.readouterr().err
