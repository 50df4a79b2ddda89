"""Vended credentials for S3-compatible stores (the spec's ``storage-credentials``): short-lived
keys minted by STS ``AssumeRole`` with a session policy that reaches only one table's location
(its objects below ``<location>/``, read-only unless the caller may change the table). The
policy and the answer's fields are made by pure functions; only ``Vending.mint`` calls STS.
A credential's secret is never logged and never part of an error."""

from __future__ import annotations

import json
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

from metastore_server.rest.errors import RestError

log = structlog.get_logger(__name__)

#: The schemes whose locations credentials are vended for (S3 and its Hadoop spellings).
S3_SCHEMES = ("s3", "s3a", "s3n")
#: STS's bounds on ``DurationSeconds`` of an AssumeRole.
MIN_DURATION_S, MAX_DURATION_S = 900, 43200
#: The request header asking for vended credentials, and the value that does.
DELEGATION_HEADER = "x-iceberg-access-delegation"
VENDED = "vended-credentials"
#: The config keys a vended credential fills (pyiceberg's and Iceberg's S3FileIO's names).
ACCESS_KEY, SECRET_KEY, TOKEN = "s3.access-key-id", "s3.secret-access-key", "s3.session-token"
EXPIRES = "s3.session-token-expires-at-ms"
REFRESH_ENDPOINT = "client.refresh-credentials-endpoint"
#: Every config key that carries a secret or names one (never kept, never logged).
SECRET_KEYS = frozenset({ACCESS_KEY, SECRET_KEY, TOKEN, EXPIRES})
#: What a read-only and a read-write credential may do to the table's objects.
READ_ACTIONS = ("s3:GetObject", "s3:GetObjectVersion")
WRITE_ACTIONS = ("s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload",
                 "s3:ListMultipartUploadParts")  # fmt: skip
_SESSION_NAME = re.compile(r"[^\w+=,.@-]")
#: Minted credentials kept for reuse, at most (the least recently used go first).
KEPT_CREDENTIALS = 1024


def asks_for_credentials(header: str | None) -> bool:
    """Whether ``X-Iceberg-Access-Delegation`` (a comma-separated list) asks for vended
    credentials."""
    if not header or len(header) > 1024:
        return False
    return any(part.strip().lower() == VENDED for part in header.split(","))


def s3_place(location: str) -> tuple[str, str] | None:
    """The bucket and key prefix (no slash at either end) of an S3 location; None when the
    location is not on S3 (a local file: no credentials)."""
    scheme, sep, rest = location.partition("://")
    if not sep or scheme.lower() not in S3_SCHEMES:
        return None
    bucket, _, key = rest.partition("/")
    key = key.strip("/")
    if not bucket or not key:
        return None  # a whole bucket is never one table's
    return bucket, key


def session_policy(bucket: str, key: str, write: bool) -> dict[str, Any]:
    """The session policy of a credential for the table whose objects lie below
    ``s3://bucket/key/``: its objects (read, and written when ``write``) and the listing of
    that prefix only. Every resource ends with ``key + '/'``: a table at ``t`` never reaches
    ``t2``."""
    prefix = key + "/"
    actions = list(READ_ACTIONS) + (list(WRITE_ACTIONS) if write else [])
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Sid": "TableObjects", "Effect": "Allow", "Action": actions,
             "Resource": [f"arn:aws:s3:::{bucket}/{prefix}*"]},
            {"Sid": "TableListing", "Effect": "Allow", "Action": ["s3:ListBucket"],
             "Resource": [f"arn:aws:s3:::{bucket}"],
             "Condition": {"StringLike": {"s3:prefix": [prefix, prefix + "*"]}}},
            {"Sid": "BucketLocation", "Effect": "Allow", "Action": ["s3:GetBucketLocation"],
             "Resource": [f"arn:aws:s3:::{bucket}"]},
        ],
    }  # fmt: skip


def session_name(user: str | None) -> str:
    """The STS session name of a credential minted for ``user`` (CloudTrail shows it)."""
    return ("iceberg-" + _SESSION_NAME.sub("_", user or "anonymous"))[:64]


@dataclass(frozen=True)
class Vended:
    """One minted credential: for the location ``prefix``, read-write or read-only."""

    prefix: str
    access_key: str
    secret_key: str
    token: str
    expires_ms: int
    write: bool

    def __repr__(self) -> str:  # never the secrets, whatever prints it
        return f"Vended(prefix={self.prefix!r}, write={self.write}, expires_ms={self.expires_ms})"

    def config(self, properties: dict[str, str]) -> dict[str, str]:
        """The credential's config: the keys and the server's S3 endpoint and region."""
        return {**properties, ACCESS_KEY: self.access_key, SECRET_KEY: self.secret_key,
                TOKEN: self.token, EXPIRES: str(self.expires_ms)}  # fmt: skip

    def storage_credential(self, properties: dict[str, str]) -> dict[str, Any]:
        """The spec's ``StorageCredential``: the prefix (with its ending slash) and config."""
        return {"prefix": self.prefix, "config": self.config(properties)}


@dataclass
class Vending:
    """Credential vending of one catalog: off unless ``role_arn`` is set."""

    role_arn: str = ""
    sts_endpoint: str = ""
    region: str = ""
    duration: int = 3600
    #: The S3 settings clients get with each credential (``s3.endpoint``, ``s3.region``).
    properties: dict[str, str] = field(default_factory=dict)
    clock: Callable[[], float] = time.time
    #: Whether a minted credential is handed again (``mint``; ``--rest-vend-reuse``).
    reuse: bool = True
    _client: Any = field(default=None, repr=False)
    #: Credentials minted (with when, by ``clock``), by (location, write, user), reused while
    #: half their life is left.
    _kept: OrderedDict[tuple[str, bool, str], tuple[float, Vended]] = field(
        default_factory=OrderedDict, repr=False)  # fmt: skip
    _kept_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def offered(self) -> bool:
        """Whether credentials are vended (and the endpoint advertised)."""
        return bool(self.role_arn)

    def sts(self) -> Any:
        """The STS client (made once; boto3 clients are thread-safe), signed with the server's
        own credentials."""
        if self._client is None:
            import boto3  # type: ignore[import-untyped]

            self._client = boto3.client("sts", endpoint_url=self.sts_endpoint or None,
                                        region_name=self.region or "us-east-1")  # fmt: skip
        return self._client

    def mint(self, location: str, write: bool, user: str | None) -> Vended | None:
        """A credential for the table at ``location`` (None: not on S3): one minted before
        for the same location, access and user while at least half its lifetime is left (STS
        is asked once, not at every load of a busy table), else a new one; 503 when STS
        refuses or cannot be reached (its error code, never its text, is told). Whether the
        caller may have it is decided before, at every request."""
        place = s3_place(location)
        if place is None:
            return None
        kept_as = (location.rstrip("/"), write, user or "")
        with self._kept_lock:
            kept = self._kept.get(kept_as)
            if kept is not None and self.reuse and self._fresh(*kept):
                self._kept.move_to_end(kept_as)
                return kept[1]
        minted_at = self.clock()
        vended = self._assume(location, place, write, user)
        with self._kept_lock:
            self._kept[kept_as] = (minted_at, vended)
            self._kept.move_to_end(kept_as)
            while len(self._kept) > KEPT_CREDENTIALS:
                self._kept.popitem(last=False)
        return vended

    def _fresh(self, minted_at: float, kept: Vended) -> bool:
        """Whether a kept credential has at least half its lifetime left, by this server's
        clock (not compared with STS's: a skew between the two does not matter), and a
        quarter by its stated expiry."""
        now = self.clock()
        return now - minted_at <= self.duration / 2 and (
            kept.expires_ms - now * 1000 >= self.duration * 1000 / 4)

    def _assume(self, location: str, place: tuple[str, str], write: bool,
                user: str | None) -> Vended:  # fmt: skip
        """A new credential from STS (``mint``)."""
        bucket, key = place
        policy = json.dumps(session_policy(bucket, key, write), separators=(",", ":"))
        try:
            answer = self.sts().assume_role(
                RoleArn=self.role_arn, RoleSessionName=session_name(user), Policy=policy,
                DurationSeconds=self.duration)  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - any failure of STS is the same 503
            code = getattr(exc, "response", {}).get("Error", {}).get("Code", type(exc).__name__)
            log.warning("rest_credentials_not_vended", reason=str(code), write=write)
            raise RestError(503, "ServiceUnavailableException",
                            f"Storage credentials could not be vended ({code})") from None
        credentials = answer["Credentials"]
        expires = credentials["Expiration"]
        expires_ms = (int(expires.timestamp() * 1000) if hasattr(expires, "timestamp")
                      else int((self.clock() + self.duration) * 1000))  # fmt: skip
        log.info("rest_credentials_vended", bucket=bucket, prefix=key + "/", write=write,
                 expires_ms=expires_ms)  # fmt: skip
        return Vended(f"{location.split('://')[0]}://{bucket}/{key}/",
                      credentials["AccessKeyId"], credentials["SecretAccessKey"],
                      credentials["SessionToken"], expires_ms, write)  # fmt: skip
