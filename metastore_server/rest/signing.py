"""Remote signing of S3 requests (the Iceberg REST spec's S3 signer API): a client holding no
keys sends the request it means to make (``{method, uri, headers, region}``) to its table's
signing route; the catalog checks that the request stays inside the table's location and is
one it may make, and signs it (SigV4) with the server's own credentials, for the server's own
S3 endpoint and region. The parsing and checking are pure functions; only ``Signing.sign``
reads the server's credentials, which never leave it (only the signature does)."""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote_to_bytes, urlsplit

import structlog

from metastore_server.rest.errors import RestError, bad_request, forbidden
from metastore_server.rest.vending import s3_place

log = structlog.get_logger(__name__)

#: The delegation mode asking for remote signing, and the config keys a load answer gets.
REMOTE_SIGNING = "remote-signing"
ENABLED, SIGNER, SIGNER_URI, SIGNER_ENDPOINT = (
    "s3.remote-signing-enabled", "s3.signer", "s3.signer.uri", "s3.signer.endpoint")
#: pyiceberg's name of its REST signer (it picks the signer by ``s3.signer``).
PYICEBERG_SIGNER = "S3V4RestSigner"
#: The headers the signature adds (the only ones answered: the client keeps its own).
ADDED = ("Authorization", "X-Amz-Date", "X-Amz-Content-SHA256", "X-Amz-Security-Token")
#: The x-amz-* headers a signed request may carry (any other one is refused: a copy source,
#: an ACL, a grant, an object lock, a redirect...).
ALLOWED_AMZ = ("x-amz-meta-", "x-amz-checksum-", "x-amz-server-side-encryption")
ALLOWED_AMZ_EXACT = frozenset({"x-amz-sdk-checksum-algorithm", "x-amz-expected-bucket-owner",
                               "x-amz-storage-class", "x-amz-request-payer",
                               "x-amz-checksum-mode"})  # fmt: skip
#: Headers the client's request carries that the signer sets itself (dropped).
OWN = frozenset({"host", "authorization", "x-amz-date", "x-amz-content-sha256",
                 "x-amz-security-token"})  # fmt: skip
#: The other headers signed (when sent); the rest are left unsigned.
SIGNED_PLAIN = frozenset({"content-md5", "content-type"})
#: The query parameters each kind of request may carry (``x-id``: botocore's, ignored).
OBJECT_READ_QUERY = frozenset({"versionId", "partNumber", "x-id", "response-content-type",
                               "response-content-disposition", "response-content-encoding",
                               "response-content-language", "response-cache-control",
                               "response-expires"})  # fmt: skip
LIST_QUERY = frozenset({"list-type", "prefix", "delimiter", "max-keys", "continuation-token",
                        "start-after", "encoding-type", "fetch-owner", "marker", "x-id"})
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9]$")
_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def asks_for_signing(header: str | None) -> bool:
    """Whether ``X-Iceberg-Access-Delegation`` (a comma-separated list) asks for remote
    signing."""
    if not header or len(header) > 1024:
        return False
    return any(part.strip().lower() == REMOTE_SIGNING for part in header.split(","))


def refused(message: str) -> RestError:
    """403: the request is not one this caller may have signed (nothing is signed)."""
    return forbidden(f"Request not signed: {message}")


@dataclass(frozen=True)
class Endpoint:
    """The server's S3 endpoint: the only place a signed request may go."""

    scheme: str
    netloc: str
    region: str

    @classmethod
    def of(cls, url: str, region: str) -> Endpoint:
        """The endpoint at ``url`` ('': AWS's regional endpoint of ``region``)."""
        region = region or "us-east-1"
        if not url:
            return cls("https", f"s3.{region}.amazonaws.com", region)
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"S3 endpoint is not an http(s) URL: {url!r}")
        return cls(parts.scheme, parts.netloc.lower(), region)


@dataclass(frozen=True)
class Target:
    """A request to sign, as parsed: its bucket, object key ('' for the bucket itself) and
    query (pairs, a name without ``=`` having None), and its addressing."""

    method: str
    bucket: str
    key: str
    query: tuple[tuple[str, str | None], ...]
    virtual: bool

    def params(self) -> dict[str, str]:
        """The query as a mapping (a repeated name was refused by ``parse_target``)."""
        return {name: value or "" for name, value in self.query}

    def url(self, endpoint: Endpoint) -> str:
        """The URL signed (made anew from the parts: the client sends exactly this)."""
        path = "/" + quote(self.key, safe="/~")
        host = endpoint.netloc
        if self.virtual:
            host = f"{self.bucket}.{host}"
        else:
            path = f"/{self.bucket}" + (path if self.key else "")
        query = "&".join(quote(n, safe="-_.~") + ("" if v is None else "=" + quote(v, safe="-_.~"))
                         for n, v in self.query)  # fmt: skip
        return f"{endpoint.scheme}://{host}{path}" + (f"?{query}" if query else "")


def _decoded(text: str, what: str) -> str:
    """``text`` percent-decoded once, strictly (a stray ``%``, bad UTF-8 or a control
    character: 403)."""
    if _PERCENT.search(text):
        raise refused(f"malformed percent-encoding in the {what}")
    try:
        value = unquote_to_bytes(text).decode("utf-8")
    except UnicodeDecodeError:
        raise refused(f"the {what} is not UTF-8") from None
    if _CONTROL.search(value):
        raise refused(f"control character in the {what}")
    return value


def _query(raw: str) -> tuple[tuple[str, str | None], ...]:
    """The query's pairs, decoded; a repeated name is refused."""
    pairs: list[tuple[str, str | None]] = []
    for part in raw.split("&") if raw else ():
        name, eq, value = part.partition("=")
        pairs.append((_decoded(name, "query"), _decoded(value, "query") if eq else None))
    names = [name for name, _ in pairs]
    if len(set(names)) != len(names) or "" in names:
        raise refused("repeated or empty query parameter")
    return tuple(pairs)


def parse_target(method: str, uri: str, endpoint: Endpoint) -> Target:
    """The request at ``uri`` as a ``Target``: on the server's endpoint only (path-style or
    virtual-hosted), its key decoded once and free of ``.``/``..``/empty segments."""
    parts = urlsplit(uri)
    netloc = parts.netloc.lower()
    if parts.scheme.lower() != endpoint.scheme or parts.fragment or "@" in netloc:
        raise refused("not a request to this catalog's S3 endpoint")
    path = parts.path or "/"
    if netloc == endpoint.netloc:
        bucket_part, _, key_part = path.removeprefix("/").partition("/")
        bucket, virtual = _decoded(bucket_part, "bucket"), False
    elif netloc.endswith("." + endpoint.netloc):
        bucket, virtual = netloc[: -len(endpoint.netloc) - 1], True
        key_part = path.removeprefix("/")
    else:
        raise refused("not a request to this catalog's S3 endpoint")
    if not _BUCKET.match(bucket):
        raise refused("no bucket, or a malformed one")
    key = _decoded(key_part, "key")
    if key and any(segment in ("", ".", "..") for segment in key.split("/")):
        raise refused("the key has an empty, '.' or '..' segment")
    return Target(method.upper(), bucket, key, _query(parts.query), virtual)


def _inside(bucket: str, key: str, location: str) -> bool:
    """Whether ``key`` of ``bucket`` lies below the table's location (``key`` may end with
    '/', a listing's prefix)."""
    place = s3_place(location)
    return place is not None and bucket == place[0] and key.startswith(place[1] + "/")


def access(target: Target, location: str) -> str:
    """What the request needs of the table at ``location``: ``read`` or ``write``; 403 for a
    request outside it or of a kind never signed (a multi-object delete, a copy, ACLs...)."""
    query = target.params()
    names = set(query)
    if not target.key:  # the bucket itself: only a listing below the location
        if target.method != "GET" or not names <= LIST_QUERY or "prefix" not in query:
            raise refused("only a listing with a prefix is signed on a bucket")
        if not _inside(target.bucket, query["prefix"], location):
            raise refused("the listing's prefix is outside the table's location")
        return "read"
    if not _inside(target.bucket, target.key, location):
        raise refused("the object is outside the table's location")
    kind = _object_access(target.method, names)
    if kind is None:
        raise refused(f"{target.method} with query {sorted(names)} is not signed")
    return kind


def _object_access(method: str, names: set[str]) -> str | None:
    """``read`` or ``write`` for an object request of ``method`` with these query names;
    None when it is not one signed."""
    plain = names - {"x-id"}
    if method in ("GET", "HEAD") and (plain <= OBJECT_READ_QUERY or plain == {"uploadId"}):
        return "read"
    if method == "PUT" and (not plain or plain == {"partNumber", "uploadId"}):
        return "write"
    if method == "POST" and plain in ({"uploads"}, {"uploadId"}):
        return "write"
    if method == "DELETE" and plain in (set(), {"uploadId"}):
        return "write"
    return None


def signed_headers(headers: Any) -> dict[str, str]:
    """The client's headers that are signed (each list joined), checked: an ``x-amz-*``
    header not allowed (a copy source, an ACL...) is refused."""
    if not isinstance(headers, dict):
        raise bad_request("S3SignRequest headers must be an object of string lists")
    kept: dict[str, str] = {}
    for name, values in headers.items():
        if not isinstance(name, str) or not isinstance(values, list) or not all(
                isinstance(v, str) for v in values):  # fmt: skip
            raise bad_request("S3SignRequest headers must be an object of string lists")
        lower = name.strip().lower()
        if lower in OWN:
            continue
        if lower.startswith("x-amz-"):
            if not (lower.startswith(ALLOWED_AMZ) or lower in ALLOWED_AMZ_EXACT):
                raise refused(f"the header {lower} is not signed")
        elif lower not in SIGNED_PLAIN:
            continue
        kept[lower] = ",".join(values)
    return kept


@dataclass
class Signing:
    """Remote signing of one catalog: off unless ``enabled``; signs for ``endpoint``."""

    enabled: bool = False
    endpoint: Endpoint = field(default_factory=lambda: Endpoint.of("", ""))
    clock: Any = time.time
    _credentials: Any = field(default=None, repr=False)

    def credentials(self) -> Any:
        """The server's own credentials (its environment's, as for its metadata files)."""
        if self._credentials is None:
            import boto3  # type: ignore[import-untyped]

            self._credentials = boto3.Session().get_credentials()
        if self._credentials is None:
            raise RestError(503, "ServiceUnavailableException",
                            "Remote signing: the server has no S3 credentials")  # fmt: skip
        return self._credentials

    def sign(self, target: Target, headers: dict[str, str]) -> dict[str, Any]:
        """The spec's S3SignResponse for ``target`` (checked already): its URL and the
        headers the signature adds (SigV4, unsigned payload, the endpoint's region)."""
        from botocore.auth import S3SigV4Auth  # type: ignore[import-untyped]
        from botocore.awsrequest import AWSRequest  # type: ignore[import-untyped]
        from botocore.config import Config  # type: ignore[import-untyped]

        # botocore logs each signature at DEBUG: never, whatever the process's logging says
        quiet = logging.getLogger("botocore.auth")
        quiet.setLevel(max(quiet.level, logging.INFO))
        url = target.url(self.endpoint)
        request = AWSRequest(method=target.method, url=url, headers=dict(headers))
        request.context["client_config"] = Config(s3={"payload_signing_enabled": False})
        frozen = self.credentials().get_frozen_credentials()
        S3SigV4Auth(frozen, "s3", self.endpoint.region).add_auth(request)
        added = {name: [request.headers[name]] for name in ADDED if name in request.headers}
        log.info("rest_request_signed", method=target.method, bucket=target.bucket,
                 key=target.key, query=[name for name, _ in target.query])  # fmt: skip
        return {"uri": url, "headers": added}
