"""Attacks on the Iceberg REST catalog as the tests mount them: a server started as users
start it (``--rest-port``, ``--data-roots``) beside a directory outside the roots holding a
sentinel file, and requests made raw, as an attacker sends them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from metastore_server.sasl_client import SaslLogin, open_sasl_client
from metastore_server.thrift_api import make_client

from .net import LOOPBACK, free_port
from .our_server import OurServer
from .rest_catalog import Both, ready

SCHEMA = {"type": "struct", "schema-id": 0,
          "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}  # fmt: skip
VIEW_VERSION = {"version-id": 1, "schema-id": 0, "timestamp-ms": 1, "summary": {},
                "default-namespace": ["x"],
                "representations": [{"type": "sql", "sql": "select 1", "dialect": "spark"}]}
#: What a staged create's commit sends besides its schema (pyiceberg's create transaction).
SPEC_AND_ORDER = [{"action": "add-spec", "spec": {"spec-id": 0, "fields": []}},
                  {"action": "set-default-spec", "spec-id": -1},
                  {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
                  {"action": "set-default-sort-order", "sort-order-id": -1}]
#: The users of a secured setting; ``daemon`` and ``nobody`` are users of this machine too
#: (``--authorization storage`` checks their permissions on the directories).
PASSWORDS = {"alice": "wonderland", "bob": "builder", "daemon": "daemon-pw", "nobody": "nobody-pw"}


class Setting:
    """A running server with its REST catalog, the data root, a directory outside it holding
    a sentinel file, and the marker a code payload would create."""

    def __init__(self, both: Both, root: Path, outside: Path) -> None:
        self.both, self.root, self.outside = both, root, outside
        self.sentinel = outside / "sentinel"
        self.marker = outside / "pwned"

    def untouched(self) -> None:
        """No payload ran, nothing outside the root was made or removed."""
        assert not self.marker.exists(), "a caller's code ran in the server"
        assert self.sentinel.read_text() == "keep"
        assert sorted(p.name for p in self.outside.iterdir()) == ["sentinel"]

    @contextlib.contextmanager
    def thrift(self, user: str = "") -> Iterator[Any]:
        """A Thrift client (logged in as ``user`` when given)."""
        if not user:
            client = make_client(LOOPBACK, self.both.server.port)
        else:
            client = open_sasl_client(LOOPBACK, self.both.server.port,
                                      SaslLogin("plain", user=user, password=PASSWORDS[user]))
        try:
            yield client
        finally:
            client.close()


def start(work: Path, extra: list[str] | None = None,
          status: int | None = None) -> Iterator[Setting]:  # fmt: skip
    """A server with its REST catalog and ``--data-roots`` (``extra``: more flags; then
    ``/v1/config`` answers 401 unless ``status`` says otherwise) over ``work``: the setting
    while it runs."""
    outside = work / "outside"
    outside.mkdir()
    (outside / "sentinel").write_text("keep")
    server_dir = work / "server"
    root = server_dir / "warehouse"
    rest_port = free_port(LOOPBACK)
    args = ["--rest-port", str(rest_port), "--data-roots", str(root), *(extra or [])]
    server = OurServer(server_dir, extra_args=args)
    with server:
        expected = status if status is not None else (401 if extra else 200)
        yield Setting(ready(Both(server, rest_port), expected), root, outside)


def namespace(both: Both, name: str, token: str = "", **properties: str) -> None:
    """Create the namespace ``name`` (there already: fine)."""
    body: dict[str, Any] = {"namespace": [name]}
    if properties:
        body["properties"] = properties
    status, answer = both.http("POST", "/v1/namespaces", body, token=token)
    assert status in (200, 409), answer


def create(both: Both, ns: str, name: str, token: str = "", **extra: Any) -> tuple[int, Any]:
    """Create table ``ns.name`` (``extra``: more of the request): status and answer."""
    return both.http("POST", f"/v1/namespaces/{ns}/tables",
                     {"name": name, "schema": SCHEMA, **extra}, token=token)  # fmt: skip


def commit(both: Both, ns: str, name: str, updates: list[Any], token: str = "",
            requirements: list[Any] | None = None) -> tuple[int, Any]:  # fmt: skip
    """Commit ``updates`` to table ``ns.name``: status and answer."""
    return both.http("POST", f"/v1/namespaces/{ns}/tables/{name}",
                     {"requirements": requirements or [], "updates": updates},
                     token=token)  # fmt: skip


def view(both: Both, ns: str, name: str, token: str = "", **extra: Any) -> tuple[int, Any]:
    """Create view ``ns.name``: status and answer."""
    return both.http("POST", f"/v1/namespaces/{ns}/views",
                     {"name": name, "schema": SCHEMA, "view-version": VIEW_VERSION, **extra},
                     token=token)  # fmt: skip


def files_under(path: Path) -> list[str]:
    """The files (and links) below ``path``, relative to it, sorted."""
    return sorted(str(p.relative_to(path)) for p in path.rglob("*")
                  if p.is_file() or p.is_symlink())  # fmt: skip


def entries_under(path: Path) -> list[str]:
    """Everything below ``path`` (directories too), relative to it, sorted: a write refused
    after its directories were made shows here."""
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


def token(both: Both, user: str) -> str:
    """A bearer token of ``user`` from the catalog's OAuth2 endpoint."""
    status, issued = both.token("client_credentials", user, PASSWORDS[user])
    assert status == 200, issued
    return str(issued["access_token"])


def local(location: str) -> Path:
    """The local path of a ``file:`` location."""
    return Path(location.removeprefix("file:"))


def secured(work: Path, authorization: str = "privileges") -> Iterator[Setting]:
    """``start`` with ``--auth password`` (the users of ``PASSWORDS``) and ``authorization``
    (``privileges`` or ``storage``), and the deprecated token endpoint on (its tokens are
    attacked too)."""
    from metastore_server.server.passwords import hash_password

    passwords = work / "passwords"
    passwords.write_text("".join(f"{u}:{hash_password(p)}\n" for u, p in PASSWORDS.items()))
    yield from start(work, ["--auth", "password", "--password-file", str(passwords),
                            "--authorization", authorization,
                            "--rest-oauth-tokens", "on"])  # fmt: skip
