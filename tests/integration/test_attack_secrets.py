"""Secrets at rest, attacked (issue 48): a local account reading the embedded store's files
(they hold the REST token signing key and the delegation tokens' master keys), a store left
readable by others, and a REST bearer token kept by a user who has since been removed, first
from the password file of a real server started as users start it, then from an LDAP
directory (a real slapd, when installed).

The file modes are the embedded store's: on the HBase backend (METASTORE_TEST_STORAGE) there
is no local file and those tests skip; the token tests run on either store."""

from __future__ import annotations

import base64
import json
import os
import shutil
import stat
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.ldap_server import (
    ADMIN_DN,
    ADMIN_PASSWORD,
    GROUPS_BASE,
    LDAP_SKIP_REASON,
    PEOPLE,
    READER_DN,
    READER_PASSWORD,
    SUFFIX,
    LdapServer,
    user_dn,
)
from support.net import LOOPBACK, free_port
from support.our_server import OurServer

from metastore_server.rest.auth import TOKEN_LIFETIME_S, RestAuth
from metastore_server.rest.errors import RestError
from metastore_server.server import ldap_auth
from metastore_server.server.passwords import hash_password
from metastore_server.thrift_api import hms, make_client

from .conftest import ON_HBASE

#: How long a REST catalog may take to start on a loaded machine (the wait ends at once).
START_WAIT_S = 180.0
embedded_only = pytest.mark.skipif(ON_HBASE, reason="the HBase backend keeps no local file")
NOBODY = 65534


@pytest.fixture
def open_workdir() -> Iterator[Path]:
    """A scratch directory every account may enter (as a deployment's /var/lib may be), so
    that only the store's own modes keep others out."""
    work = Path(tempfile.mkdtemp(prefix="attack-secrets-"))
    work.chmod(0o755)
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _read_as_nobody(path: Path) -> subprocess.CompletedProcess[str]:
    """Try to read ``path`` as another local account (uid nobody)."""
    return subprocess.run(["head", "-c", "16", str(path)], user=NOBODY, capture_output=True,
                          text=True, timeout=30, check=False)  # fmt: skip


def _create_database(server: OurServer, name: str) -> None:
    client = make_client(LOOPBACK, server.port)
    try:
        client.create_database(hms.Database(name=name, parameters={}))
    finally:
        client.close()


@embedded_only
def test_a_fresh_stores_files_are_the_servers_users_only(open_workdir: Path) -> None:
    store_dir = open_workdir / "var"  # made by the server, as make run makes ./var
    db = store_dir / "metastore.db"
    server = OurServer(open_workdir / "server")
    server.storage = f"sqlite:///{db}"
    with server:
        _create_database(server, "written")  # the -wal and -shm exist while it serves
        sides = [Path(f"{db}{suffix}") for suffix in ("-wal", "-shm", "-writers.lock")]
        assert {p.name: _mode(p) for p in [db, *sides]} == {p.name: 0o600 for p in [db, *sides]}
        assert _mode(store_dir) == 0o700
        log = server.stderr_path.read_text()  # before the directory is opened below
        assert "store_file_open_to_others" not in log
        assert "store_directory_open_to_others" not in log
        if os.geteuid() == 0:  # another account, even where the directory lets it in
            store_dir.chmod(0o755)
            for secret in (db, Path(f"{db}-wal")):
                attempt = _read_as_nobody(secret)
                assert attempt.returncode != 0 and "Permission denied" in attempt.stderr
                assert attempt.stdout == ""


@embedded_only
def test_make_runs_var_holding_store_and_warehouse_is_made_private_first(
    open_workdir: Path,
) -> None:
    """``make run``'s layout: ./var/metastore.db and ./var/warehouse. The warehouse made first
    with the usual mode opened ./var to others, and a first start warned about it."""
    store_dir = open_workdir / "var"
    server = OurServer(open_workdir / "server")
    server.storage = f"sqlite:///{store_dir / 'metastore.db'}"
    server.warehouse = store_dir / "warehouse"
    with server:
        _create_database(server, "first_contact")
        assert _mode(store_dir) == 0o700
        assert (store_dir / "warehouse" / "first_contact.db").is_dir()
        assert "open_to_others" not in server.stderr_path.read_text()


@embedded_only
def test_a_store_others_may_read_is_warned_about_at_start(open_workdir: Path) -> None:
    store_dir = open_workdir / "var"
    store_dir.mkdir(mode=0o755)
    store_dir.chmod(0o755)
    db = store_dir / "metastore.db"
    db.touch()
    db.chmod(0o644)  # as every store before issue 48 was made
    server = OurServer(open_workdir / "server")
    server.storage = f"sqlite:///{db}"
    with server:
        _create_database(server, "written")
    lines = server.stderr_path.read_text().splitlines()
    on_file = [line for line in lines if "store_file_open_to_others" in line]
    assert on_file and all(str(db) in line and "0644" in line for line in on_file)
    assert any(f"chmod 600 {db}" in line for line in on_file)
    on_dir = [line for line in lines if "store_directory_open_to_others" in line]
    assert on_dir and f"chmod 700 {store_dir}" in on_dir[0] and "0755" in on_dir[0]
    assert _mode(db) == 0o644 and _mode(store_dir) == 0o755  # warned about, not changed


# --------------------------------------------------------------------------- tokens


class RestClient:
    """Raw HTTP to a REST catalog on loopback."""

    def __init__(self, port: int) -> None:
        self.uri = f"http://{LOOPBACK}:{port}"

    def request(self, path: str, authorization: str = "", form: dict[str, str] | None = None,
                ) -> tuple[int, Any]:  # fmt: skip
        data = None if form is None else urllib.parse.urlencode(form).encode()
        headers = {"Authorization": authorization} if authorization else {}
        if form is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        request = urllib.request.Request(self.uri + path, data=data, headers=headers,
                                         method="POST" if form is not None else "GET")  # fmt: skip
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status, json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def token(self, user: str, password: str) -> str:
        status, body = self.request("/v1/oauth/tokens", form={
            "grant_type": "client_credentials", "client_id": user, "client_secret": password,
            "scope": "catalog"})  # fmt: skip
        assert status == 200, body
        assert body["expires_in"] == TOKEN_LIFETIME_S
        return str(body["access_token"])

    def wait_ready(self) -> None:
        deadline = time.monotonic() + START_WAIT_S
        while True:
            try:
                if self.request("/v1/config")[0] == 401:
                    return
            except OSError:
                pass  # not listening yet
            assert time.monotonic() < deadline, "the REST catalog did not start"
            time.sleep(0.1)


def test_a_token_of_a_user_removed_from_the_password_file_is_refused_at_once(
    tmp_path: Path,
) -> None:
    pytest.importorskip("starlette", reason="the 'rest' extra is not installed")
    pytest.importorskip("pyiceberg", reason="the 'rest' extra is not installed")
    passwords = tmp_path / "passwords"
    alice = f"alice:{hash_password('wonderland')}\n"
    passwords.write_text(alice + f"mallory:{hash_password('leaving')}\n")
    rest_port = free_port(LOOPBACK)
    server = OurServer(
        tmp_path / "server",
        extra_args=[
            "--rest-port",
            str(rest_port),
            "--auth",
            "password",
            "--password-file",
            str(passwords),
            "--rest-oauth-tokens",
            "on",
        ],
    )
    with server:
        catalog = RestClient(rest_port)
        catalog.wait_ready()
        kept = catalog.token("mallory", "leaving")  # taken while still a user
        assert catalog.request("/v1/namespaces", f"Bearer {kept}")[0] == 200

        passwords.write_text(alice)  # mallory leaves: no restart
        status, body = catalog.request("/v1/namespaces", f"Bearer {kept}")
        assert (status, body["error"]["type"]) == (401, "NotAuthorizedException")
        basic = base64.b64encode(b"mallory:leaving").decode()
        assert catalog.request("/v1/namespaces", f"Basic {basic}")[0] == 401
        assert catalog.request("/v1/oauth/tokens", form={
            "grant_type": "client_credentials", "client_id": "mallory",
            "client_secret": "leaving"})[0] == 401  # fmt: skip
        assert catalog.request("/v1/namespaces", f"Bearer {catalog.token('alice', 'wonderland')}"
                               )[0] == 200  # fmt: skip
    assert "passwords_in_clear_text" not in server.stderr_path.read_text()  # loopback


# --------------------------------------------------------------------------- LDAP


@pytest.fixture
def directory(tmp_path: Path) -> Iterator[LdapServer]:
    if LDAP_SKIP_REASON is not None:
        pytest.skip(LDAP_SKIP_REASON)
    pytest.importorskip("ldap3", reason="ldap3 (the ldap extra) is not installed")
    with LdapServer(tmp_path / "slapd") as running:
        yield running


def _change(directory: LdapServer, dn: str, changes: dict[str, Any] | None) -> None:
    """As the directory's administrator: modify ``dn`` (None: delete it)."""
    import ldap3

    connection = ldap3.Connection(ldap3.Server(directory.url), ADMIN_DN, ADMIN_PASSWORD,
                                  auto_bind=True)  # fmt: skip
    try:
        done = connection.delete(dn) if changes is None else connection.modify(dn, changes)
        assert done, connection.result
    finally:
        connection.unbind()


def _ldap_auth(tmp_path: Path, directory: LdapServer, search_user: bool) -> RestAuth:
    settings: dict[str, object] = {
        "ldap_url": directory.url,
        "ldap_group_filter": "metastore-users",
        "ldap_group_dn_pattern": f"cn=%s,{GROUPS_BASE}",
    }
    if search_user:
        secret = tmp_path / "reader-password"
        secret.write_text(READER_PASSWORD)
        settings.update(ldap_base_dn=SUFFIX, ldap_bind_dn=READER_DN,
                        ldap_bind_password_file=str(secret))  # fmt: skip
    else:
        settings["ldap_user_dn_pattern"] = f"uid=%s,{PEOPLE}"
    directory_checker = ldap_auth.LdapDirectory(ldap_auth.LdapSettings.from_settings(settings))
    return RestAuth(directory_checker, b"k" * 32)


@pytest.mark.parametrize("search_user", [False, True], ids=["dn-pattern", "search-user"])
def test_an_ldap_token_ends_with_its_user(
    tmp_path: Path, directory: LdapServer, search_user: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Out of the group of the filter, or deleted: the token is refused once the look-up
    kept for LOOKUP_CACHE_S (30 s; 0 here, not to wait) is made again."""
    monkeypatch.setattr(ldap_auth, "LOOKUP_CACHE_S", 0.0)
    auth = _ldap_auth(tmp_path, directory, search_user)
    form = {"grant_type": "client_credentials"}
    tokens = {user: auth.issue({**form, "client_id": user, "client_secret": password})
              for user, password in (("alice", "wonderland"), ("bob", "builder"))}  # fmt: skip
    assert {u: t["expires_in"] for u, t in tokens.items()} == {
        "alice": TOKEN_LIFETIME_S,
        "bob": TOKEN_LIFETIME_S,
    }  # looked up: full lifetime
    bearer = {user: f"Bearer {t['access_token']}" for user, t in tokens.items()}
    assert auth.caller(bearer["bob"]) == "bob"

    import ldap3

    _change(directory, f"cn=metastore-users,{GROUPS_BASE}",
            {"member": [(ldap3.MODIFY_DELETE, [user_dn("bob")])]})  # fmt: skip
    _change(directory, user_dn("alice"), None)
    for user in ("alice", "bob"):
        with pytest.raises(RestError) as refused:
            auth.caller(bearer[user])
        assert (refused.value.code, refused.value.kind) == (401, "NotAuthorizedException")
