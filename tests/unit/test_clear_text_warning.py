"""``--auth password`` or ``ldap`` without TLS on an address beyond loopback sends passwords
(PLAIN, the REST catalog's Basic credentials and bearer tokens) in clear text: the server warns
at start, naming the TLS flags. Decided without binding anything: no test binds or sends to
an address other than loopback."""

from __future__ import annotations

from pathlib import Path

import pytest
import structlog
from structlog.testing import capture_logs

from metastore_server.server import app
from metastore_server.server.app import build_handler, is_loopback, passwords_in_clear
from metastore_server.server.config import ServerConfig
from metastore_server.server.passwords import hash_password


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "", "10.0.0.5", "192.168.1.20",
                                  "fd00::1", "metastore.example.com"])  # fmt: skip
@pytest.mark.parametrize("auth", ["password", "ldap"])
def test_passwords_beyond_loopback_without_tls_are_in_clear(auth: str, host: str) -> None:
    assert passwords_in_clear(auth, host, "")
    assert not passwords_in_clear(auth, host, "/etc/metastore/cert.pem")


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost",
                                  "LOCALHOST", "::ffff:127.0.0.1"])  # fmt: skip
def test_loopback_is_no_network(host: str) -> None:
    assert is_loopback(host)
    assert not passwords_in_clear("password", host, "")


@pytest.mark.parametrize("auth", ["none", "kerberos"])
def test_no_password_is_sent_by_other_modes(auth: str) -> None:
    assert not passwords_in_clear(auth, "0.0.0.0", "")


def _warnings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host: str) -> list[dict]:
    """The start-up warnings of a handler (the Thrift server's and the REST catalog's
    processes both build one) for ``--auth password`` on ``host``: nothing is bound."""
    monkeypatch.setattr(app, "log", structlog.get_logger(app.__name__))
    passwords = tmp_path / "passwords"
    passwords.write_text(f"alice:{hash_password('wonderland')}\n")
    config = ServerConfig(host=host, auth="password", password_file=str(passwords),
                          storage=f"sqlite:///{tmp_path / 'metastore.db'}",
                          warehouse=str(tmp_path / "warehouse"))  # fmt: skip
    config.validate()
    with capture_logs() as logs:
        _handler, close = build_handler(config)
        close()
    return [entry for entry in logs if entry["log_level"] == "warning"]


def test_the_warning_names_the_tls_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (warned,) = [e for e in _warnings(tmp_path, monkeypatch, "10.0.0.5")
                 if e["event"] == "passwords_in_clear_text"]  # fmt: skip
    assert warned["host"] == "10.0.0.5" and warned["auth"] == "password"
    assert "--tls-cert" in warned["hint"] and "--tls-key" in warned["hint"]


def test_no_warning_on_loopback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events = [e["event"] for e in _warnings(tmp_path, monkeypatch, "127.0.0.1")]
    assert "passwords_in_clear_text" not in events
