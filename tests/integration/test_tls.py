"""TLS: a self-signed certificate made in the test (openssl CLI), Python clients over TLS,
plaintext/TLS mismatches failing cleanly, handshakes off the accept loop, settings checks."""

from __future__ import annotations

import socket
import ssl
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from support.tls import make_certificate
from thriftpy2.transport import TTransportException

from metastore_server.cli import main as cli
from metastore_server.client import MetastoreClient
from metastore_server.server.app import build_handler
from metastore_server.server.config import ServerConfig
from metastore_server.server.thrift_server import MetastoreServer
from metastore_server.thrift_api import make_client

from .conftest import RunningServer

pytestmark = pytest.mark.any_store

#: What a client sees when the other side does not speak its language.
MISMATCH_ERRORS = (TTransportException, ssl.SSLError, ConnectionError, OSError)


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(certificate, key) of the TLS servers of this module."""
    return make_certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def tls_server(
    tmp_path_factory: pytest.TempPathFactory, certificate: tuple[Path, Path]
) -> Iterator[RunningServer]:
    """A server speaking TLS."""
    cert, key = certificate
    server = RunningServer(
        tmp_path_factory.mktemp("tls-server"), tls_cert=str(cert), tls_key=str(key)
    )
    yield server
    server.stop()


def _server_closed(exc: BaseException, logs: list[dict], event: str) -> None:
    """The client's failure came from the server closing the connection (it logged ``event``),
    not from the client giving up waiting."""
    seen: BaseException | None = exc
    while seen is not None:
        assert not isinstance(seen, TimeoutError), f"the client timed out: {exc!r}"
        if isinstance(seen, TTransportException):
            assert seen.type != TTransportException.TIMED_OUT, f"the client timed out: {exc!r}"
        seen = seen.__cause__ or seen.__context__
    deadline = time.monotonic() + 10  # the server logs a moment after the client sees the close
    while not any(entry["event"] == event for entry in logs):
        assert time.monotonic() < deadline, f"no {event} logged: {logs}"
        time.sleep(0.01)


def _tls_serves(server: RunningServer, cert: Path) -> None:
    connection = server.client(tls_ca=str(cert))
    try:
        assert "default" in connection.get_all_databases()
    finally:
        connection.close()


def test_python_client_over_tls(tls_server: RunningServer, certificate: tuple[Path, Path]) -> None:
    cert, _key = certificate
    _tls_serves(tls_server, cert)
    uri = f"thrift://{tls_server.host}:{tls_server.port}"
    with MetastoreClient.from_uri(uri, tls_ca=str(cert)) as ms:
        assert "default" in ms.get_all_databases()


def test_plaintext_client_against_tls_server_fails_cleanly(
    tls_server: RunningServer, certificate: tuple[Path, Path]
) -> None:
    with structlog.testing.capture_logs() as logs:
        with pytest.raises(MISMATCH_ERRORS) as info:
            plain = make_client(tls_server.host, tls_server.port, timeout_ms=10000)
            try:
                plain.get_all_databases()
            finally:
                plain.close()
        _server_closed(info.value, logs, "tls_handshake_failed")
    _tls_serves(tls_server, certificate[0])


def test_tls_client_against_plaintext_server_fails_cleanly(
    tmp_path: Path, certificate: tuple[Path, Path]
) -> None:
    server = RunningServer(tmp_path)
    try:
        with structlog.testing.capture_logs() as logs:
            with pytest.raises(MISMATCH_ERRORS) as info:
                server.client(tls_ca=str(certificate[0]), timeout_ms=10000).get_all_databases()
            _server_closed(info.value, logs, "connection_closed_malformed_message")
        plain = server.client()
        assert "default" in plain.get_all_databases()
        plain.close()
    finally:
        server.stop()


def test_untrusted_certificate_is_refused_by_the_client(
    tls_server: RunningServer, tmp_path: Path
) -> None:
    other_cert, _ = make_certificate(tmp_path)
    with pytest.raises(MISMATCH_ERRORS):
        tls_server.client(tls_ca=str(other_cert), timeout_ms=10000).get_all_databases()


def test_stalled_handshake_blocks_neither_accepts_nor_others(
    tmp_path: Path, certificate: tuple[Path, Path]
) -> None:
    cert, key = certificate
    config = ServerConfig(storage=f"sqlite:///{tmp_path / 'm.db'}", warehouse=str(tmp_path / "w"))
    handler, close = build_handler(config)
    server = MetastoreServer(
        handler, "127.0.0.1", 0, tls_cert=str(cert), tls_key=str(key), tls_handshake_timeout=1.0
    )
    server.start()
    host, port = server.address
    try:
        stalled = [socket.create_connection((host, port), timeout=10) for _ in range(3)]
        stalled[0].sendall(b"\x16\x03\x01")  # the start of a ClientHello, then nothing
        connection = make_client(host, port, tls_ca=str(cert), timeout_ms=5000)
        assert "default" in connection.get_all_databases()
        connection.close()
        for sock in stalled:  # dropped after the handshake timeout
            sock.settimeout(10)
            assert sock.recv(1024) == b""
            sock.close()
    finally:
        server.stop()
        close()


# --------------------------------------------------------------------------- settings


def test_tls_settings_both_or_neither(certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    with pytest.raises(ValueError, match="tls_cert is set but tls_key is not"):
        ServerConfig(tls_cert=str(cert)).validate()
    with pytest.raises(ValueError, match="tls_key is set but tls_cert is not"):
        ServerConfig(tls_key=str(key)).validate()
    ServerConfig(tls_cert=str(cert), tls_key=str(key)).validate()


def test_unusable_tls_files_are_refused(tmp_path: Path, certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    missing = str(tmp_path / "missing.pem")
    with pytest.raises(ValueError, match="certificate file .*missing.pem.* does not exist"):
        ServerConfig(tls_cert=missing, tls_key=str(key)).validate()
    with pytest.raises(ValueError, match="key file .* is not a file"):
        ServerConfig(tls_cert=str(cert), tls_key=str(tmp_path)).validate()
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a key\n")
    with pytest.raises(ValueError, match="cannot be loaded"):
        ServerConfig(tls_cert=str(cert), tls_key=str(garbage)).validate()


def test_serve_refuses_to_start_on_bad_tls_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], certificate: tuple[Path, Path]
) -> None:
    base = ["serve", "--port", "0", "--storage", f"sqlite:///{tmp_path / 'm.db'}"]
    with pytest.raises(SystemExit) as info:
        cli.main([*base, "--tls-cert", str(certificate[0])])
    assert info.value.code == 2
    assert "tls_cert is set but tls_key is not" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        cli.main([*base, "--tls-cert", str(tmp_path / "nope.pem"), "--tls-key", "x.pem"])
    assert info.value.code == 2
    assert "nope.pem" in capsys.readouterr().err


def test_settings_from_environment_and_file(tmp_path: Path) -> None:
    env = {
        "METASTORE_TLS_CERT": "/c.pem",
        "METASTORE_TLS_KEY": "/k.pem",
        "METASTORE_MAX_MESSAGE_SIZE": "1048576",
    }
    config = ServerConfig.from_env(env)
    assert (config.tls_cert, config.tls_key, config.max_message_size) == (
        "/c.pem",
        "/k.pem",
        1048576,
    )
    file = tmp_path / "m.toml"
    file.write_text('max_message_size = 2048\ntls_cert = "/a.pem"\ntls_key = "/b.pem"\n')
    config = ServerConfig.from_file(file)
    assert (config.tls_cert, config.tls_key, config.max_message_size) == ("/a.pem", "/b.pem", 2048)
    assert ServerConfig().max_message_size == 256 * 1024 * 1024
    with pytest.raises(ValueError, match="max_message_size must be between"):
        ServerConfig(max_message_size=2**31).validate()
    with pytest.raises(ValueError, match="max_message_size must be between"):
        ServerConfig(max_message_size=0).validate()
