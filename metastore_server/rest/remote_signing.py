"""Remote signing in the catalog's answers and its signing routes: a load or create answer
whose request asks (``X-Iceberg-Access-Delegation: remote-signing``) names, in its ``config``,
the table's own signing route; ``POST .../tables/{table}/sign`` loads the table as the caller
(the authorizer's 403 when it may not) and signs a request inside the table's location: reads
for a caller who may load it, writes for one who may also alter it. The spec's generic
``POST /v1/aws/s3/sign`` names no table, so it is refused (400)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from starlette.responses import JSONResponse, Response

from metastore_server.rest.calls import MetastoreCalls
from metastore_server.rest.credentials import NO_STORE, may_write
from metastore_server.rest.errors import RestError, bad_request
from metastore_server.rest.iceberg_tables import MetadataFiles
from metastore_server.rest.signing import (
    ENABLED,
    PYICEBERG_SIGNER,
    SIGNER,
    SIGNER_ENDPOINT,
    SIGNER_URI,
    Signing,
    access,
    asks_for_signing,
    parse_target,
    signed_headers,
)
from metastore_server.rest.tables import load_table
from metastore_server.rest.vending import s3_place

#: The route of a table's signer (under the table's path), and the spec's generic one.
SIGN_PATH = "/v1/namespaces/{namespace}/tables/{table}/sign"
GENERIC_PATH = "/v1/aws/s3/sign"


def wanted(signing: Signing, headers: Mapping[str, str], location: str | None) -> bool:
    """Whether an answer for the table at ``location`` names its signer: signing is on, the
    request asks for it, and the table is on S3."""
    return (signing.enabled and location is not None and s3_place(location) is not None
            and asks_for_signing(headers.get("x-iceberg-access-delegation")))  # fmt: skip


def sign_path(db: str, name: str, prefix: str | None = None) -> str:
    """The signing route of ``db.name``, relative to the catalog's URI (under the request's
    ``prefix`` when it named a catalog)."""
    under = f"{quote(prefix, safe='')}/" if prefix else ""
    return f"v1/{under}namespaces/{quote(db, safe='')}/tables/{quote(name, safe='')}/sign"


def signer_config(base_uri: str, db: str, name: str, prefix: str | None) -> dict[str, str]:
    """The config keys that turn a client's remote signing on (pyiceberg's and Iceberg
    Java's S3FileIO's names)."""
    return {ENABLED: "true", SIGNER: PYICEBERG_SIGNER, SIGNER_URI: base_uri.rstrip("/"),
            SIGNER_ENDPOINT: sign_path(db, name, prefix)}  # fmt: skip


def with_signer(response: Response, config: Mapping[str, str]) -> Response:
    """``response`` (a LoadTableResult) with ``config`` added to its ``config``, not to be
    cached."""
    if response.status_code != 200:
        return response
    document = json.loads(bytes(response.body))
    document["config"] = {**document.get("config", {}), **config}
    headers = {k: v for k, v in response.headers.items() if k.lower() == "etag"}
    return Response(json.dumps(document, separators=(",", ":")), status_code=response.status_code,
                    media_type="application/json", headers={**headers, **NO_STORE})  # fmt: skip


def after_create(signing: Signing, headers: Mapping[str, str], response: Response,
                 base_uri: str, db: str, name: Any, prefix: str | None) -> Response:  # fmt: skip
    """A create answer naming the new table's signer (a staged create has no table yet:
    nothing)."""
    if response.status_code != 200 or not signing.enabled or not isinstance(name, str):
        return response
    document = json.loads(bytes(response.body))
    location = (document.get("metadata") or {}).get("location")
    if document.get("metadata-location") is None or not wanted(signing, headers, location):
        return response
    return with_signer(response, signer_config(base_uri, db, name, prefix))


def sign(signing: Signing, calls: MetastoreCalls, files: MetadataFiles, db: str, name: str,
         body: Mapping[str, Any]) -> Response:  # fmt: skip
    """The S3SignResponse for the S3SignRequest ``body`` on ``db.name``, or 403 (nothing
    signed) when the request leaves the table's location or needs more than the caller
    may do."""
    method, uri = body.get("method"), body.get("uri")
    if not isinstance(method, str) or not isinstance(uri, str) or len(uri) > 8192:
        raise bad_request("S3SignRequest needs a method and a uri (strings)")
    table = load_table(calls, files, db, name)  # the authorizer's 403 when it may not load
    target = parse_target(method, uri, signing.endpoint)
    headers = signed_headers(body.get("headers") or {})
    needs = access(target, table.metadata.location)
    if needs == "write" and not may_write(calls, db, name, table):
        raise RestError(403, "ForbiddenException",
                        f"Request not signed: {calls.session.user or 'the caller'} may not "
                        f"change {db}.{name} ({target.method})")  # fmt: skip
    return JSONResponse(signing.sign(target, headers), headers=NO_STORE)


def generic() -> RestError:
    """The answer of ``POST /v1/aws/s3/sign``: it names no table, so nothing says whose
    location a request may reach."""
    return bad_request("This catalog signs S3 requests only through a table's signing "
                       "endpoint (the s3.signer.endpoint of its load answer): "
                       "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/sign")
