"""A REST catalog bearer token ends with its user: each use looks the user up again (the
password file as now loaded; an LDAP directory at most LOOKUP_CACHE_S behind), and a token
whose user cannot be looked up without the password lives UNCHECKED_TOKEN_LIFETIME_S only."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import structlog
from structlog.testing import capture_logs

from metastore_server.rest import auth as rest_auth
from metastore_server.rest.auth import (
    TOKEN_LIFETIME_S,
    UNCHECKED_TOKEN_LIFETIME_S,
    OAuthError,
    RestAuth,
)
from metastore_server.rest.errors import RestError
from metastore_server.server import ldap_auth
from metastore_server.server.passwords import PasswordFile, hash_password

KEY = b"k" * 32


@pytest.fixture(autouse=True)
def fresh_logger(monkeypatch: pytest.MonkeyPatch) -> None:
    """A logger that follows the configuration of the moment (capture_logs must see it)."""
    monkeypatch.setattr(rest_auth, "log", structlog.get_logger(rest_auth.__name__))


def form(user: str, password: str) -> dict[str, str]:
    return {"grant_type": "client_credentials", "client_id": user, "client_secret": password}


def refused(auth: RestAuth, token: str) -> RestError:
    with pytest.raises(RestError) as raised:
        auth.caller(f"Bearer {token}")
    return raised.value


class Directory:
    """A stand-in for a password file or directory: who is there, and whether it can tell."""

    def __init__(self, users: dict[str, str], tells: bool = True) -> None:
        self.users, self.tells, self.lookups = users, tells, 0

    def verify(self, user: str, password: str) -> str | None:
        return None if self.users.get(user) == password else "unknown user or wrong password"

    def lookup(self, user: str) -> tuple[bool | None, str]:
        self.lookups += 1
        if not self.tells:
            return None, "the directory cannot tell"
        return (True, "") if user in self.users else (False, "gone")


def test_a_token_of_a_user_removed_from_the_password_file_is_refused_at_once(
    tmp_path: Path,
) -> None:
    passwords = tmp_path / "passwords"
    alice, bob = f"alice:{hash_password('wonderland')}\n", f"bob:{hash_password('builder')}\n"
    passwords.write_text(alice + bob)
    auth = RestAuth(PasswordFile(str(passwords)), KEY)
    issued = auth.issue(form("bob", "builder"))
    assert issued["expires_in"] == TOKEN_LIFETIME_S
    kept = auth.issue(form("alice", "wonderland"))["access_token"]
    assert auth.caller(f"Bearer {issued['access_token']}") == "bob"

    passwords.write_text(alice)  # bob is removed: no restart, no waiting
    with capture_logs() as logs:
        error = refused(auth, issued["access_token"])
    assert (error.code, error.kind) == (401, "NotAuthorizedException")
    assert [e["user"] for e in logs if e["event"] == "rest_token_refused"] == ["bob"]
    assert auth.caller(f"Bearer {kept}") == "alice"  # the others' tokens go on working

    passwords.write_text(alice + bob)  # back again: the token is good again, until it expires
    assert auth.caller(f"Bearer {issued['access_token']}") == "bob"


def test_a_directory_that_cannot_show_the_user_gets_short_unchecked_tokens() -> None:
    directory = Directory({"carol": "carrot"}, tells=False)
    auth = RestAuth(directory, KEY)
    with capture_logs() as logs:
        issued = auth.issue(form("carol", "carrot"))
        second = auth.issue(form("carol", "carrot"))
    assert issued["expires_in"] == second["expires_in"] == UNCHECKED_TOKEN_LIFETIME_S
    expiry = int(issued["access_token"].split(".")[1])
    assert expiry <= time.time() + UNCHECKED_TOKEN_LIFETIME_S + 1
    assert [(e["event"], e["log_level"]) for e in logs] == [
        ("rest_token_unchecked", "warning"),
        ("rest_token_unchecked", "info"),
    ]
    asked = directory.lookups
    assert auth.caller(f"Bearer {issued['access_token']}") == "carol"
    assert directory.lookups == asked  # not looked up: it lives 5 minutes instead


def test_a_checked_token_cannot_be_turned_into_an_unchecked_one() -> None:
    directory = Directory({"dave": "pw"})
    auth = RestAuth(directory, KEY)
    token = auth.issue(form("dave", "pw"))["access_token"]
    user, expiry, signature = token.split(".")
    for forged in (f"{user}.{expiry}.u.{signature}", f"{user}.{expiry}.x.{signature}",
                   f"{user}.{expiry}.{signature}.u"):  # fmt: skip
        assert refused(auth, forged).kind == "NotAuthorizedException"
    del directory.users["dave"]
    assert refused(auth, token).code == 401


def test_a_directory_that_fails_refuses_the_token_without_remembering() -> None:
    directory = Directory({"erin": "pw"})
    auth = RestAuth(directory, KEY)
    token = auth.issue(form("erin", "pw"))["access_token"]
    directory.tells = False
    assert refused(auth, token).code == 401
    directory.tells = True
    assert auth.caller(f"Bearer {token}") == "erin"


def test_a_wrong_secret_still_gets_no_token() -> None:
    with pytest.raises(OAuthError):
        RestAuth(Directory({"frank": "pw"}), KEY).issue(form("frank", "nope"))


def test_ldap_lookups_are_kept_for_a_short_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """One request does not cost an LDAP round trip each: an answer is kept LOOKUP_CACHE_S
    (30 s at most); a failure of the directory is not kept."""
    pytest.importorskip("ldap3", reason="ldap3 (the ldap extra) is not installed")
    assert ldap_auth.LOOKUP_CACHE_S <= 30
    settings = ldap_auth.LdapSettings.from_settings(
        {"ldap_url": "ldap://127.0.0.1:1", "ldap_user_dn_pattern": "uid=%s,dc=example"}
    )
    directory = ldap_auth.LdapDirectory(settings)
    answers = iter([ldap_auth._Failed("down"), None, ldap_auth._Unknown("gone")])
    calls = []

    def find(user: str, deadline: float) -> None:
        calls.append(user)
        answer = next(answers)
        if answer is not None:
            raise answer

    monkeypatch.setattr(directory, "_find_without_password", find)
    assert directory.lookup("bob") == (None, "down")
    assert directory.lookup("bob") == (True, "")
    assert directory.lookup("bob") == (True, "")  # kept
    assert calls == ["bob", "bob"]
    later = time.monotonic() + ldap_auth.LOOKUP_CACHE_S + 1
    monkeypatch.setattr(ldap_auth, "time", SimpleNamespace(monotonic=lambda: later))
    assert directory.lookup("bob") == (False, "gone")
    assert calls == ["bob", "bob", "bob"]


def test_ldap_user_filter_ends_tokens_without_asking_the_directory() -> None:
    pytest.importorskip("ldap3", reason="ldap3 (the ldap extra) is not installed")
    settings = ldap_auth.LdapSettings.from_settings({
        "ldap_url": "ldap://127.0.0.1:1", "ldap_user_dn_pattern": "uid=%s,dc=example",
        "ldap_user_filter": "alice"})  # fmt: skip
    assert ldap_auth.LdapDirectory(settings).lookup("bob") == (False, "not in ldap_user_filter")
