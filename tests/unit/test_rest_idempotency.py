"""The REST catalog's kept replies (``Idempotency-Key``) by their logic, over an in-memory
stand-in of the store's rows: a finished answer replayed to its caller only, a 5xx or an error
never kept, a key reused for another request refused, a running one answered 409, entries
expiring, and an answer too large to keep whole kept by its metadata file."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the 'rest' extra is not installed")
from starlette.responses import JSONResponse, Response  # noqa: E402

from metastore_server.rest import idempotency  # noqa: E402
from metastore_server.rest.errors import RestError  # noqa: E402
from metastore_server.rest.idempotency import Idempotency, Request  # noqa: E402

KEY = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"


class Rows:
    """The store's kept-reply rows, in memory, with the compare-and-set of ``KeptReplies``."""

    def __init__(self) -> None:
        self.rows: dict[bytes, tuple[bytes, int]] = {}

    def read(self, digest: bytes) -> bytes | None:
        return self.rows[digest][0] if digest in self.rows else None

    def replace(self, digest: bytes, expected: bytes | None, entry: bytes, until: int) -> bool:
        if self.read(digest) != expected:
            return False
        self.rows[digest] = (entry, until)
        return True

    def remove(self, digest: bytes, expected: bytes) -> bool:
        if self.read(digest) != expected:
            return False
        del self.rows[digest]
        return True

    def sweep(self, now: int) -> int:
        old = [k for k, (_, until) in self.rows.items() if until < now]
        for key in old:
            del self.rows[key]
        return len(old)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def kept(rows: Rows, clock: Clock, lifetime: int = 1800) -> Idempotency:
    return Idempotency(rows, lifetime, clock, _swept=clock.now)  # type: ignore[arg-type]


def request(caller: str = "alice", body: bytes = b'{"a":1}', key: str = KEY) -> Request:
    return Request.of(caller, key, "POST", "/v1/namespaces", body)


def counting(answers: list[Response]) -> tuple[list[int], Any]:
    ran: list[int] = []

    def produce() -> Response:
        ran.append(1)
        return answers[min(len(ran), len(answers)) - 1]

    return ran, produce


def test_a_finished_answer_is_replayed_without_running_again() -> None:
    rows, clock = Rows(), Clock()
    ran, produce = counting([JSONResponse({"n": 1}, headers={"ETag": '"t"'})])
    first = kept(rows, clock).run(request(), "/v1/namespaces", produce)
    clock.now += 1700
    again = kept(rows, clock).run(request(), "/v1/namespaces", produce)  # another process
    assert len(ran) == 1 and again.status_code == 200
    assert again.body == first.body and again.headers["etag"] == '"t"'


def test_terminal_4xx_is_kept_and_5xx_is_not() -> None:
    rows, clock = Rows(), Clock()
    conflict = JSONResponse({"error": {"code": 409}}, status_code=409)
    ran, produce = counting([conflict, JSONResponse({}, status_code=200)])
    for _ in range(2):
        assert kept(rows, clock).run(request(), "/", produce).status_code == 409
    assert len(ran) == 1
    rows2 = Rows()
    for status in (500, 503, 429, 408):
        ran, produce = counting([Response(status_code=status), Response(status_code=204)])
        assert kept(rows2, clock).run(request(key=KEY), "/", produce).status_code == status
        assert rows2.rows == {}  # the claim was dropped: a retry runs anew
        assert kept(rows2, clock).run(request(key=KEY), "/", produce).status_code == 204
        assert len(ran) == 2
        rows2.rows.clear()


def test_an_error_drops_the_claim() -> None:
    rows, clock = Rows(), Clock()

    def fails() -> Response:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        kept(rows, clock).run(request(), "/", fails)
    assert rows.rows == {}


def test_another_body_or_path_with_the_key_is_a_422() -> None:
    rows, clock = Rows(), Clock()
    ran, produce = counting([Response(status_code=204)])
    kept(rows, clock).run(request(), "/", produce)
    other = kept(rows, clock).run(request(body=b'{"a":2}'), "/", produce)
    assert other.status_code == 422 and len(ran) == 1
    moved = Request.of("alice", KEY, "DELETE", "/v1/namespaces", b'{"a":1}')
    assert kept(rows, clock).run(moved, "/", produce).status_code == 422


def test_a_callers_key_is_never_another_callers() -> None:
    rows, clock = Rows(), Clock()
    ran, produce = counting([JSONResponse({"who": "alice"}), JSONResponse({"who": "bob"})])
    kept(rows, clock).run(request("alice"), "/", produce)
    bobs = kept(rows, clock).run(request("bob"), "/", produce)
    assert json.loads(bobs.body) == {"who": "bob"} and len(ran) == 2
    assert len(rows.rows) == 2
    assert request("alice").row() != request("bob").row()
    assert Request.of("a", KEY, "POST", "/", b"").row() != Request.of("", "a" + KEY, "POST", "/",
                                                                     b"").row()  # fmt: skip


def test_a_running_request_answers_a_retry_409_until_its_claim_lapses() -> None:
    rows, clock = Rows(), Clock()
    seen: list[int] = []

    def slow() -> Response:
        seen.append(kept(rows, clock).run(request(), "/", slow_inner).status_code)
        return Response(status_code=204)

    def slow_inner() -> Response:
        return Response(status_code=200)

    assert kept(rows, clock).run(request(), "/", slow).status_code == 204
    assert seen == [409]
    # A claim left by a process that died is taken over after its lease.
    claim = kept(rows, clock)
    rows.rows.clear()
    rows.replace(request().row(), None, json.dumps({"v": 1, "state": "running",
                 "caller": "alice", "fp": request().fingerprint,
                 "until": int(clock.now) + 10}).encode(), int(clock.now) + 10)  # fmt: skip
    assert claim.run(request(), "/", slow_inner).status_code == 409
    clock.now += 11
    assert claim.run(request(), "/", slow_inner).status_code == 200


def test_entries_expire_after_the_lifetime() -> None:
    rows, clock = Rows(), Clock()
    ran, produce = counting([Response(status_code=204)])
    kept(rows, clock, 60).run(request(), "/", produce)
    clock.now += 60 + idempotency.GRACE_S + 1
    kept(rows, clock, 60).run(request(), "/", produce)
    assert len(ran) == 2
    assert rows.sweep(int(clock.now) + 10_000) == 1


def test_a_large_answer_is_kept_by_its_metadata_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(idempotency, "MAX_KEPT_BYTES", 10)
    rows, clock = Rows(), Clock()
    body = {"metadata-location": "file:/w/t/metadata/00001-x.metadata.json", "metadata": {}}
    ran, produce = counting([JSONResponse(body)])
    rebuilt: list[tuple[int, str, str]] = []

    def rebuild(status: int, location: str, target: str) -> Response:
        rebuilt.append((status, location, target))
        return Response(status_code=status)

    catalog = Idempotency(rows, 1800, clock, rebuild)  # type: ignore[arg-type]
    catalog.run(request(), "/v1/namespaces/n/tables", produce)
    assert catalog.run(request(), "/v1/namespaces/n/tables", produce).status_code == 200
    assert rebuilt == [(200, body["metadata-location"], "/v1/namespaces/n/tables")]
    assert len(ran) == 1 and b'"body"' not in next(iter(rows.rows.values()))[0]


@pytest.mark.parametrize("key", ["", "x", KEY[:-1], KEY + "0", "{" + KEY[1:-1] + "}",
                                 KEY.replace("-", ""), "é" * 36])  # fmt: skip
def test_a_key_must_be_a_uuid(key: str) -> None:
    with pytest.raises(RestError) as refused:
        idempotency.checked_key(key)
    assert refused.value.code == 400
    assert idempotency.checked_key(KEY.upper()) == KEY


def test_the_lifetime_is_advertised_as_an_iso_duration() -> None:
    assert idempotency.iso_duration(1800) == "PT30M"
    assert idempotency.iso_duration(7200) == "PT2H" and idempotency.iso_duration(90) == "PT90S"
    assert Idempotency(Rows(), 1800).advertised() == {  # type: ignore[arg-type]
        "idempotency-key-lifetime": "PT30M"}
    assert Idempotency(None).advertised() == {}
    assert Idempotency(Rows(), 0).advertised() == {}  # type: ignore[arg-type]
