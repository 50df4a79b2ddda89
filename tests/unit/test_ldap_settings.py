"""``--auth ldap`` without a directory: user names escaped into DNs and filters, the settings
checked at start (a missing URL or pattern stops the server, exit 2), and the bounds of a check
(an empty password never reaches the directory; at most a few checks at once)."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from metastore_server.cli import main as cli
from metastore_server.server import ldap_auth
from metastore_server.server.config import ServerConfig
from metastore_server.server.ldap_auth import (
    LdapDirectory,
    LdapSettings,
    escape_dn_value,
    escape_filter_value,
)

ldap3 = pytest.importorskip("ldap3", reason="ldap3 (the ldap extra) is not installed")
from ldap3.utils.dn import parse_dn  # noqa: E402

URL = "ldap://127.0.0.1:389"
PATTERN = "uid=%s,ou=people,dc=example,dc=com"


def _settings(**given: object) -> LdapSettings:
    values: dict[str, object] = {"ldap_url": URL, "ldap_user_dn_pattern": PATTERN}
    values.update(given)
    return LdapSettings.from_settings(values)


# --------------------------------------------------------------------------- escaping


@pytest.mark.parametrize(
    ("name", "escaped"),
    [
        ("alice", "alice"),
        ("a,ou=admins", "a\\,ou\\=admins"),
        ("a+cn=b", "a\\+cn\\=b"),
        ("#x", "\\#x"),
        ("a#b", "a\\#b"),
        ("a\0b", "a\\00b"),
        (" x ", "\\ x\\ "),
        ('a"b;c<d>', 'a\\"b\\;c\\<d\\>'),
        ("a\\b", "a\\\\b"),
        ("*", "*"),  # no special meaning in a DN
    ],
)
def test_names_are_escaped_into_dns(name: str, escaped: str) -> None:
    assert escape_dn_value(name) == escaped


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1))
def test_an_escaped_name_is_one_value_of_one_rdn(name: str) -> None:
    parts = parse_dn(PATTERN.replace("%s", escape_dn_value(name)))
    assert [attr for attr, _value, _sep in parts] == ["uid", "ou", "dc", "dc"]


@pytest.mark.parametrize(
    ("name", "escaped"),
    [("alice", "alice"), ("*", "\\2a"), (")(", "\\29\\28"), ("a\\b", "a\\5cb"),
     ("al*)(uid=*", "al\\2a\\29\\28uid=\\2a"), ("a,b", "a,b")],
)  # fmt: skip
def test_names_are_escaped_into_filters(name: str, escaped: str) -> None:
    assert escape_filter_value(name) == escaped


def test_user_dns_and_filters_hold_the_escaped_name() -> None:
    settings = _settings(ldap_user_dn_pattern=f"{PATTERN}:cn=%s,ou=staff,dc=example,dc=com")
    assert settings.user_dns("a,b") == [
        "uid=a\\,b,ou=people,dc=example,dc=com",
        "cn=a\\,b,ou=staff,dc=example,dc=com",
    ]
    by_base = _settings(ldap_user_dn_pattern="", ldap_base_dn="dc=x", ldap_guid_key="cn")
    assert by_base.user_dns("*") == ["cn=*,dc=x"]
    assert by_base.user_search_filter("*") == "(cn=\\2a)"
    assert settings.group_search_filter("*", "uid=\\*") == (
        "(&(objectClass=groupOfNames)(|(member=uid=\\5c\\2a)(member=\\2a)))"
    )


def test_group_bases_come_from_the_group_patterns() -> None:
    settings = _settings(
        ldap_group_dn_pattern="cn=%s,ou=groups,dc=x:cn=%s,ou=teams,dc=x:cn=%s,ou=groups,dc=x"
    )
    assert settings.group_bases() == ["ou=groups,dc=x", "ou=teams,dc=x"]
    assert _settings(ldap_base_dn="dc=x").group_bases() == ["dc=x"]


# --------------------------------------------------------------------------- settings


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"ldap_url": ""}, "auth ldap needs ldap_url"),
        ({"ldap_url": "http://h"}, "must be ldap://host"),
        ({"ldap_url": "ldap://"}, "must be ldap://host"),
        ({"ldap_url": "ldaps://h", "ldap_starttls": "on"}, "is TLS already"),
        ({"ldap_starttls": "yes"}, "ldap_starttls must be on or off"),
        ({"ldap_user_dn_pattern": ""}, "needs ldap_user_dn_pattern .* or ldap_base_dn"),
        ({"ldap_user_dn_pattern": "uid=alice,dc=x"}, "must hold %s"),
        ({"ldap_user_dn_pattern": "uid=%s,cn=%s"}, "must hold %s"),
        ({"ldap_user_dn_pattern": "uid=%s,,=x"}, "is not a DN"),
        ({"ldap_base_dn": "not a dn"}, "ldap_base_dn 'not a dn' is not a DN"),
        ({"ldap_guid_key": "uid)(x"}, "ldap_guid_key 'uid\\)\\(x' is not an attribute"),
        ({"ldap_group_membership_key": "member=*"}, "is not an attribute"),
        ({"ldap_group_filter": "admins"}, "ldap_group_filter needs ldap_group_dn_pattern"),
        ({"ldap_bind_dn": "cn=reader,dc=x"}, "ldap_bind_dn and ldap_bind_password_file go"),
        ({"ldap_bind_password_file": "/p"}, "ldap_bind_dn and ldap_bind_password_file go"),
        ({"ldap_ca_file": "/nonexistent/ca.pem"}, "ldap_ca_file /nonexistent/ca.pem: cannot"),
        ({"ldap_timeout": 0}, "ldap_timeout must be a positive number"),
        ({"ldap_timeout": float("nan")}, "ldap_timeout must be a positive number"),
    ],
)
def test_settings_that_cannot_work_are_named(given: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _settings(**given)


def test_the_search_user_settings(tmp_path: Path) -> None:
    secret = tmp_path / "bind"
    secret.write_text("s3cret\n")
    search = {"ldap_bind_dn": "cn=reader,dc=x", "ldap_bind_password_file": str(secret)}
    with pytest.raises(ValueError, match="exclude each other"):
        _settings(ldap_base_dn="dc=x", **search)
    with pytest.raises(ValueError, match="ldap_bind_dn needs ldap_base_dn"):
        _settings(ldap_user_dn_pattern="", **search)
    settings = _settings(ldap_user_dn_pattern="", ldap_base_dn="dc=x", **search)
    assert settings.bind_password == "s3cret"
    secret.write_text("")
    with pytest.raises(ValueError, match="is empty"):
        _settings(ldap_user_dn_pattern="", ldap_base_dn="dc=x", **search)
    with pytest.raises(ValueError, match="cannot be read"):
        _settings(ldap_user_dn_pattern="", ldap_base_dn="dc=x", ldap_bind_dn="cn=r,dc=x",
                  ldap_bind_password_file=str(tmp_path / "missing"))  # fmt: skip


def test_ldap_settings_from_environment_and_file(tmp_path: Path) -> None:
    env = {"METASTORE_AUTH": "ldap", "METASTORE_LDAP_URL": URL,
           "METASTORE_LDAP_USER_DN_PATTERN": PATTERN, "METASTORE_LDAP_TIMEOUT": "2.5",
           "METASTORE_LDAP_GROUP_FILTER": "a,b", "METASTORE_LDAP_BASE_DN": "dc=x"}  # fmt: skip
    config = ServerConfig.from_env(env)
    config.validate()
    assert (config.ldap_url, config.ldap_timeout, config.ldap_group_filter) == (URL, 2.5, "a,b")
    file = tmp_path / "m.toml"
    file.write_text(f'auth = "ldap"\nldap_url = "{URL}"\nldap-base-dn = "dc=x"\nldap_timeout = 3\n')
    config = ServerConfig.from_file(file)
    config.validate()
    assert (config.ldap_base_dn, config.ldap_timeout) == ("dc=x", 3.0)


def test_ldap_settings_without_auth_ldap_are_refused() -> None:
    with pytest.raises(ValueError, match="ldap_url is set but auth is none, not ldap"):
        ServerConfig(ldap_url=URL).validate()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ([], "auth ldap needs ldap_url"),
        (["--ldap-url", URL], "auth ldap needs ldap_user_dn_pattern"),
        (["--ldap-url", URL, "--ldap-user-dn-pattern", "uid=x"], "must hold %s"),
    ],
)
def test_serve_stops_at_start_on_missing_ldap_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    argv = ["serve", "--port", "0", "--storage", f"sqlite:///{tmp_path / 'm.db'}",
            "--auth", "ldap", *flags]  # fmt: skip
    with pytest.raises(SystemExit) as info:
        cli.main(argv)
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_ldap_flags_reach_the_settings(tmp_path: Path) -> None:
    argv = ["serve", "--auth", "ldap", "--ldap-url", URL, "--ldap-base-dn", "dc=x",
            "--ldap-group-filter", "hive", "--ldap-starttls", "on",
            "--ldap-timeout", "4"]  # fmt: skip
    defaults = cli._file_defaults(argv)
    config = cli._config_from_args(cli.build_parser(defaults).parse_args(argv), defaults)
    settings = LdapSettings.from_settings(config.ldap_settings())
    assert (settings.urls, settings.base_dn, settings.group_filter) == ((URL,), "dc=x", ("hive",))
    assert (settings.starttls, settings.timeout, settings.guid_key) == (True, 4.0, "uid")


# --------------------------------------------------------------------------- bounds


class _Silent:
    """A listening socket that accepts connections and never answers; counts them."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"ldap://127.0.0.1:{self.sock.getsockname()[1]}"
        self.accepted: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                self.accepted.append(self.sock.accept()[0])
            except OSError:
                return

    def close(self) -> None:
        self.sock.close()
        for sock in self.accepted:
            sock.close()


def _wait_until(condition, what: str, timeout: float = 10.0) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def test_an_empty_password_never_reaches_the_directory() -> None:
    silent = _Silent()
    try:
        directory = LdapDirectory(_settings(ldap_url=silent.url, ldap_timeout=1.0))
        assert "empty user or password" in (directory.verify("alice", "") or "")
        assert "empty user or password" in (directory.verify("", "pw") or "")
        assert not silent.accepted
        assert "timed out" in (directory.verify("alice", "pw") or "")  # a password does reach it
        assert len(silent.accepted) == 1
    finally:
        silent.close()


def test_at_most_a_few_checks_run_at_once() -> None:
    """LDAP_SLOTS checks held by a directory that does not answer: one more waits for a slot
    and fails without connecting."""
    silent = _Silent()
    try:
        holding = LdapDirectory(_settings(ldap_url=silent.url, ldap_timeout=5.0))
        waiting = LdapDirectory(_settings(ldap_url=silent.url, ldap_timeout=0.5))
        reasons: list[str | None] = []
        threads = [threading.Thread(target=lambda: reasons.append(holding.verify("u", "p")))
                   for _ in range(ldap_auth.LDAP_SLOTS)]  # fmt: skip
        for thread in threads:
            thread.start()
        _wait_until(lambda: len(silent.accepted) == ldap_auth.LDAP_SLOTS, "slots not taken")
        assert waiting.verify("u", "p") == "too many LDAP logins being checked at once"
        assert len(silent.accepted) == ldap_auth.LDAP_SLOTS
        for thread in threads:
            thread.join(30)
        assert len(reasons) == ldap_auth.LDAP_SLOTS
        assert all("timed out" in (reason or "") for reason in reasons)
    finally:
        silent.close()
