"""Safe retries of the catalog's mutations (the spec's ``Idempotency-Key``): the answer of a
finished request (2xx, and 4xx but for those a retry may change: 408, 429) is kept in the
store (``KeptReplies``: any server process, and one started again, replays it) for the
lifetime ``GET /v1/config`` advertises (``idempotency-key-lifetime``), keyed by the caller
and the key; a retry with the same key gets it without the operation running again. A 5xx or
an error is not kept: the retry runs anew. A key reused for another request (another method,
path, query or body) is refused with 422, and one whose first request is still running with
409 (the IETF draft's answers; the spec names none)."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
import uuid
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import structlog
from starlette.responses import JSONResponse, Response

from metastore_server.catalog.core.kept_replies import KeptReplies
from metastore_server.rest.errors import RestError, bad_request

log = structlog.get_logger(__name__)

#: Seconds a key is kept for unless ``--rest-idempotency-lifetime`` says otherwise.
DEFAULT_LIFETIME_S = 1800
#: Seconds kept past the advertised lifetime (the spec's grace for delays and clock skew).
GRACE_S = 60
#: Seconds a request's claim of its key lives: one left by a process that died is taken over.
CLAIM_LEASE_S = 600
#: The largest answer kept whole (compressed); a larger LoadTableResult is kept by its
#: metadata file's location and read again for a replay.
MAX_KEPT_BYTES = 4 * 1024 * 1024
#: Seconds between a process's sweeps of expired entries.
SWEEP_EVERY_S = 300
#: Statuses a retry may change: never kept.
_RETRYABLE = frozenset({408, 425, 429})
HEADER = "idempotency-key"
_VERSION = 1


def iso_duration(seconds: int) -> str:
    """``seconds`` as an ISO-8601 duration (``PT30M``)."""
    if seconds % 3600 == 0:
        return f"PT{seconds // 3600}H"
    if seconds % 60 == 0:
        return f"PT{seconds // 60}M"
    return f"PT{seconds}S"


def checked_key(value: str) -> str:
    """The ``Idempotency-Key`` as sent; 400 unless a UUID in its 36-character form."""
    try:
        if len(value) == 36 and str(uuid.UUID(value)) == value.lower():
            return value.lower()
    except ValueError:
        pass
    raise bad_request("Idempotency-Key must be a UUID (UUIDv7, 36 characters)")


@dataclass(frozen=True)
class Request:
    """What makes a request the same request: its caller, key, and a digest of its method,
    path, query and body."""

    caller: str
    key: str
    fingerprint: str

    @classmethod
    def of(cls, caller: str | None, key: str, method: str, target: str, body: bytes) -> Request:
        """The request ``method target`` with ``body`` of ``caller`` (None: anonymous)."""
        digest = hashlib.sha256()
        for part in (method.encode(), target.encode(), body):
            digest.update(len(part).to_bytes(8, "big") + part)
        return cls(caller or "", key, digest.hexdigest())

    def row(self) -> bytes:
        """The digest naming its entry: the caller's and the key's, never one without the
        other."""
        text = json.dumps([self.caller, self.key])
        return hashlib.sha256(text.encode()).hexdigest().encode()


@dataclass
class Idempotency:
    """Kept replies of one catalog: ``lifetime`` seconds (0: keys are not taken)."""

    replies: KeptReplies | None
    lifetime: int = DEFAULT_LIFETIME_S
    clock: Callable[[], float] = time.time
    #: Rebuild an answer kept by location (too large to keep whole): (status, location).
    rebuild: Callable[[int, str, str], Response] | None = None
    _swept: float = field(default=0.0, repr=False)

    @property
    def offered(self) -> bool:
        """Whether keys are taken (and the lifetime advertised)."""
        return self.replies is not None and self.lifetime > 0

    def advertised(self) -> dict[str, str]:
        """The config answer's field saying so (none when keys are not taken)."""
        if not self.offered:
            return {}
        return {"idempotency-key-lifetime": iso_duration(self.lifetime)}

    def run(self, request: Request, target: str, produce: Callable[[], Response]) -> Response:
        """The kept answer of ``request``, or ``produce()``'s, kept when final."""
        assert self.replies is not None
        row, now = request.row(), int(self.clock())
        stored = self.replies.read(row)
        entry = _decode(stored)
        if entry is not None and entry.get("until", 0) >= now:
            if entry.get("fp") != request.fingerprint or entry.get("caller") != request.caller:
                return _error(RestError(422, "UnprocessableEntityException", "Idempotency-Key "
                                        "was used for another request"))  # fmt: skip
            if entry.get("state") == "done":
                return self._replay(entry, target)
            return _error(RestError(409, "ConflictException", "A request with this "
                                    "Idempotency-Key is still running: retry later"))  # fmt: skip
        claim = _encode({"v": _VERSION, "state": "running", "caller": request.caller,
                         "fp": request.fingerprint, "until": now + CLAIM_LEASE_S})  # fmt: skip
        if not self.replies.replace(row, stored, claim, now + CLAIM_LEASE_S):
            return _error(RestError(409, "ConflictException", "A request with this "
                                    "Idempotency-Key is still running: retry later"))  # fmt: skip
        self._sweep_now_and_then(now)
        answer: Response | None = None
        try:
            answer = produce()
        finally:
            self._settle(row, claim, request, answer, now)
        return answer

    def _settle(self, row: bytes, claim: bytes, request: Request, answer: Response | None,
                now: int) -> None:  # fmt: skip
        """Keep ``answer`` in place of the claim when final; else drop the claim."""
        assert self.replies is not None
        status = answer.status_code if answer is not None else 500
        if answer is None or status >= 500 or status in _RETRYABLE:
            self.replies.remove(row, claim)
            return
        until = now + self.lifetime + GRACE_S
        entry = _kept(answer, request, until)
        if not self.replies.replace(row, claim, _encode(entry), until):
            log.warning("rest_idempotency_claim_lost", status=status)

    def _replay(self, entry: dict[str, Any], target: str) -> Response:
        headers = {"ETag": entry["etag"]} if entry.get("etag") else {}
        status = int(entry.get("status", 500))
        if "location" in entry and self.rebuild is not None:
            return self.rebuild(status, str(entry["location"]), target)
        packed = entry.get("body")
        body = zlib.decompress(base64.b64decode(packed)) if packed else b""
        return Response(body, status_code=status, headers=headers,
                        media_type=entry.get("type"))  # fmt: skip

    def _sweep_now_and_then(self, now: int) -> None:
        """Remove expired entries, at most every ``SWEEP_EVERY_S`` in a process (a thread of
        its own: the request does not wait)."""
        if now - self._swept < SWEEP_EVERY_S or self.replies is None:
            return
        self._swept = now
        replies = self.replies

        def sweep() -> None:
            try:
                removed = replies.sweep(now)
            except Exception as exc:  # noqa: BLE001 - the next sweep tries again
                log.warning("rest_idempotency_sweep_failed", error=type(exc).__name__)
                return
            if removed:
                log.info("rest_idempotency_swept", removed=removed)

        threading.Thread(target=sweep, name="idempotency-sweep", daemon=True).start()


def _kept(answer: Response, request: Request, until: int) -> dict[str, Any]:
    """The entry keeping ``answer``: whole (compressed) when small enough, else a
    LoadTableResult by its metadata file's location."""
    entry: dict[str, Any] = {"v": _VERSION, "state": "done", "caller": request.caller,
                             "fp": request.fingerprint, "until": until,
                             "status": answer.status_code,
                             "type": answer.headers.get("content-type"),
                             "etag": answer.headers.get("etag")}  # fmt: skip
    body = bytes(answer.body or b"")
    packed = base64.b64encode(zlib.compress(body, 6)).decode()
    if len(packed) <= MAX_KEPT_BYTES:
        entry["body"] = packed
        return entry
    location = json.loads(body).get("metadata-location")
    entry["location"] = location
    return entry


def _encode(entry: dict[str, Any]) -> bytes:
    return json.dumps(entry, separators=(",", ":")).encode()


def _decode(stored: bytes | None) -> dict[str, Any] | None:
    if stored is None:
        return None
    try:
        entry = json.loads(stored)
    except ValueError:
        return None
    return entry if isinstance(entry, dict) and entry.get("v") == _VERSION else None


def _error(error: RestError) -> Response:
    return JSONResponse(error.body(), status_code=error.code)
