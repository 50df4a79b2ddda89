"""Safe retries of the Iceberg REST catalog (``Idempotency-Key``) against the server started
as users start it, and their attacks: a retried commit is answered from the store without
applying twice, also by the server started again after a crash; a key reused for another
request is refused; a 5xx is never kept; and one caller's key never replays another caller's
answer (Basic and bearer tokens alike), each asserted on the store afterwards (the table's
metadata file, the databases and their owners)."""

from __future__ import annotations

import base64
import json
import uuid
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the 'rest' extra is not installed")
pytest.importorskip("pyiceberg.catalog.rest", reason="pyiceberg is not installed")
from support.rest_attacks import SCHEMA, Setting, local, start  # noqa: E402
from support.rest_attacks import namespace as _namespace  # noqa: E402
from support.rest_attacks import secured as secured_setting  # noqa: E402
from support.rest_attacks import token as _token  # noqa: E402
from support.rest_catalog import Both, ready  # noqa: E402

from metastore_server.rest.idempotency import Request  # noqa: E402


@pytest.fixture(scope="module")
def setting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setting]:
    yield from start(tmp_path_factory.mktemp("rest-retries"))


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setting]:
    yield from secured_setting(tmp_path_factory.mktemp("rest-retries-secured"))


def key() -> str:
    """A new key (UUIDv7 where this Python makes them; any UUID is taken)."""
    maker = getattr(uuid, "uuid7", uuid.uuid4)
    return str(maker())


def send(both: Both, method: str, path: str, body: Any, idem: str, token: str = "",
         basic: str = "") -> tuple[int, dict[str, str], Any]:  # fmt: skip
    headers = {"Idempotency-Key": idem}
    if basic:
        headers["Authorization"] = f"Basic {basic}"
    return both.exchange(method, path, body, token=token, headers=headers)


def _point_metadata_at(client: Any, db: str, name: str, metadata_location: str) -> None:
    table = client.get_table(db, name)
    table.parameters["metadata_location"] = metadata_location
    client.alter_table(db, name, table)


def set_property(value: str) -> dict[str, Any]:
    return {"requirements": [], "updates": [{"action": "set-properties",
                                             "updates": {"k": value}}]}  # fmt: skip


def current(both: Both, path: str) -> tuple[str, dict[str, Any]]:
    status, answer = both.http("GET", path)
    assert status == 200, answer
    return answer["metadata-location"], answer["metadata"]


def test_config_advertises_the_key_lifetime(setting: Setting) -> None:
    status, config = setting.both.http("GET", "/v1/config")
    assert status == 200 and config["idempotency-key-lifetime"] == "PT30M"


def test_a_retried_commit_applies_once_even_after_a_crash(setting: Setting) -> None:
    both = setting.both
    _namespace(both, "retry")
    created_key = key()
    table = {"name": "t", "schema": SCHEMA}
    status, _, created = send(both, "POST", "/v1/namespaces/retry/tables", table, created_key)
    assert status == 200
    path = "/v1/namespaces/retry/tables/t"
    commit_key = key()
    status, headers, committed = send(both, "POST", path, set_property("1"), commit_key)
    assert status == 200
    history = len(committed["metadata"]["metadata-log"])
    # The server dies (SIGKILL, the REST process with it) and is started again on its store.
    both.server.kill()
    both.server.start()
    ready(both, 200)
    for _ in range(2):
        status, again_headers, again = send(both, "POST", path, set_property("1"), commit_key)
        assert status == 200 and again == committed and again_headers["etag"] == headers["etag"]
    location, metadata = current(both, path)
    assert location == committed["metadata-location"]  # no second commit was applied
    assert len(metadata["metadata-log"]) == history
    metadata_dir = local(location).parent
    assert len(list(metadata_dir.glob("*.metadata.json"))) == 2  # created, committed once
    # The create, retried, answers its first answer (not 409: the table exists now).
    status, _, again = send(both, "POST", "/v1/namespaces/retry/tables", table, created_key)
    assert status == 200 and again == created
    # The same key for another commit: refused, and nothing is applied.
    status, _, refused = send(both, "POST", path, set_property("2"), commit_key)
    assert status == 422 and refused["error"]["type"] == "UnprocessableEntityException"
    assert current(both, path)[0] == location
    setting.untouched()


def test_terminal_failures_are_replayed_and_server_errors_are_not(setting: Setting) -> None:
    both = setting.both
    _namespace(both, "retry_fail")
    path = "/v1/namespaces/retry_fail/tables/t"
    assert send(both, "POST", "/v1/namespaces/retry_fail/tables",
                {"name": "t", "schema": SCHEMA}, key())[0] == 200  # fmt: skip
    lost = {"requirements": [{"type": "assert-table-uuid", "uuid": str(uuid.uuid4())}],
            "updates": [{"action": "set-properties", "updates": {"k": "x"}}]}
    lost_key = key()
    assert send(both, "POST", path, lost, lost_key)[0] == 409
    assert send(both, "POST", path, lost, lost_key)[0] == 409
    # A 5xx (the table pointed, through Thrift, at a metadata file that is not there) is not
    # kept: once the table points at its file again, the retry runs.
    location, _ = current(both, path)
    with setting.thrift() as client:
        _point_metadata_at(client, "retry_fail", "t", location + ".gone.metadata.json")
    broken_key = key()
    assert send(both, "POST", path, set_property("y"), broken_key)[0] == 500
    with setting.thrift() as client:
        _point_metadata_at(client, "retry_fail", "t", location)
    status, _, answer = send(both, "POST", path, set_property("y"), broken_key)
    assert status == 200 and answer["metadata"]["properties"]["k"] == "y"
    # A drop retried answers 204 again, not 404.
    drop_key = key()
    assert send(both, "DELETE", path, None, drop_key)[0] == 204
    assert send(both, "DELETE", path, None, drop_key)[0] == 204
    assert both.http("GET", path)[0] == 404


def test_a_bad_key_is_refused_and_reads_ignore_keys(setting: Setting) -> None:
    both = setting.both
    for bad in ("not-a-uuid", "1" * 36, key()[:-1], key() + "x"):
        status, _, answer = send(both, "POST", "/v1/namespaces", {"namespace": ["bad_key"]}, bad)
        assert status == 400 and "Idempotency-Key" in answer["error"]["message"], answer
    assert both.http("GET", "/v1/namespaces/bad_key")[0] == 404  # nothing was created
    assert send(both, "GET", "/v1/namespaces", None, "not-a-uuid")[0] == 200


@pytest.mark.parametrize("mode", ["bearer", "basic"])
def test_one_callers_key_never_replays_to_another(secured: Setting, mode: str) -> None:
    """bob sends alice's key with her very request: it runs as bob (refused: he may not write
    under her warehouse, or the namespace is hers already), never her kept 200; and his own
    use of the key is kept apart from hers."""
    both = secured.both

    def creds(user: str, password: str) -> dict[str, str]:
        if mode == "bearer":
            return {"token": _token(both, user)}
        return {"basic": base64.b64encode(f"{user}:{password}".encode()).decode()}

    alice, bob = creds("alice", "wonderland"), creds("bob", "builder")
    shared = key()
    name = f"kept_{mode}"
    body = {"namespace": [name]}
    status, _, hers = send(both, "POST", "/v1/namespaces", body, shared, **alice)
    assert status == 200
    status, _, his = send(both, "POST", "/v1/namespaces", body, shared, **bob)
    assert status in (403, 409) and "error" in his, his  # his own answer, not her 200
    replayed = send(both, "POST", "/v1/namespaces", body, shared, **bob)
    assert (replayed[0], replayed[2]) == (status, his)
    status, _, again = send(both, "POST", "/v1/namespaces", body, shared, **alice)
    assert (status, again) == (200, hers)
    # bob's own request under his key is his: alice sending it gets her own answer.
    other, his_key = {"namespace": [name + "_bob"]}, key()
    status, _, made = send(both, "POST", "/v1/namespaces", other, his_key, **bob)
    assert status == 200, made
    status, _, theirs = send(both, "POST", "/v1/namespaces", other, his_key, **alice)
    assert status in (403, 409) and "error" in theirs, theirs  # hers, not his 200
    assert send(both, "POST", "/v1/namespaces", other, his_key, **bob)[2] == made
    with secured.thrift("alice") as client:
        assert client.get_database(name).ownerName == "alice"
        assert client.get_database(name + "_bob").ownerName == "bob"
    # Without credentials the key is never looked at: 401.
    assert send(both, "POST", "/v1/namespaces", body, shared)[0] == 401
    # In the store: each caller's entry under the key is under his own row, naming him.
    kept = kept_entries(both)
    for caller, answer in (("alice", hers), ("bob", his)):
        entry = kept[Request(caller, shared, "").row()]
        assert entry["caller"] == caller and entry["state"] == "done"
        assert json.loads(zlib.decompress(base64.b64decode(entry["body"]))) == answer
    assert all(entry["caller"] in ("alice", "bob") for entry in kept.values())
    secured.untouched()


def kept_entries(both: Both) -> dict[bytes, dict[str, Any]]:
    """The kept replies in the server's store, by their row's digest."""
    from metastore_server.storage import layout
    from metastore_server.storage.open import open_store

    store = open_store(both.server.storage)
    try:
        start, stop = layout.idempotency_range()
        return {key[len(start):]: json.loads(row[layout.OBJECT])
                for key, row in store.scan(layout.META, start, stop)}  # fmt: skip
    finally:
        getattr(store, "close", lambda: None)()


def test_a_key_without_the_store_is_ignored(tmp_path: Path) -> None:
    """``--rest-idempotency-lifetime 0``: not advertised, keys not taken (each request runs)."""
    for setting in start(tmp_path, ["--rest-idempotency-lifetime", "0"], 200):
        both = setting.both
        status, config = both.http("GET", "/v1/config")
        assert status == 200 and "idempotency-key-lifetime" not in config
        shared = key()
        assert send(both, "POST", "/v1/namespaces", {"namespace": ["once"]}, shared)[0] == 200
        assert send(both, "POST", "/v1/namespaces", {"namespace": ["once"]}, shared)[0] == 409
