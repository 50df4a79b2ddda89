"""Vended credentials in the catalog's answers: a load or create answer carries them (in
``storage-credentials`` and ``config``) when its request asks (``X-Iceberg-Access-Delegation:
vended-credentials``) and vending is on, and ``GET .../tables/{table}/credentials`` (the spec's
loadCredentials) mints fresh ones. Who may have what is the authorizer's word: a caller who may
load the table gets read-only credentials, one who may also alter it read-write ones. A create
answer gets its credentials after it was kept for an ``Idempotency-Key``: never kept, and a
replay gets fresh ones, authorized anew."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from starlette.responses import JSONResponse, Response

from metastore_server.rest.calls import MetastoreCalls
from metastore_server.rest.errors import RestError, not_found
from metastore_server.rest.iceberg_tables import IcebergTable, MetadataFiles
from metastore_server.rest.tables import NO_STATS, load_table
from metastore_server.rest.vending import (
    REFRESH_ENDPOINT,
    Vended,
    Vending,
    asks_for_credentials,
    s3_place,
)
from metastore_server.thrift_api import hms

#: The route of loadCredentials (under the table's path).
CREDENTIALS_PATH = "/v1/namespaces/{namespace}/tables/{table}/credentials"
#: Headers of every answer that carries credentials: no cache keeps it.
NO_STORE = {"Cache-Control": "no-store"}


def wanted(vending: Vending, headers: Mapping[str, str], location: str | None) -> bool:
    """Whether an answer for the table at ``location`` carries credentials: vending is on,
    the request asks for them, and the table is on S3."""
    return (vending.offered and location is not None and s3_place(location) is not None
            and asks_for_credentials(headers.get("x-iceberg-access-delegation")))  # fmt: skip


def may_write(calls: MetastoreCalls, db: str, name: str, table: IcebergTable) -> bool:
    """Whether the caller may change the table (the authorizer's answer to its commit, an
    ``alter_table``): read-write credentials; else read-only."""
    try:
        calls.authorize("alter_table_with_environment_context", db, name, table.hive, NO_STATS)
    except RestError as exc:
        if exc.code == 403:
            return False
        raise
    return True


def for_table(vending: Vending, calls: MetastoreCalls, db: str, name: str,
              table: IcebergTable) -> Vended | None:  # fmt: skip
    """A credential for a loaded (so readable) table; None when it is not on S3."""
    location = table.metadata.location
    return vending.mint(location, may_write(calls, db, name, table), calls.session.user)


def with_credentials(response: Response, vended: Vended | None,
                     properties: Mapping[str, str], refresh: str) -> Response:  # fmt: skip
    """``response`` (a LoadTableResult) with ``vended`` in its ``storage-credentials`` and
    ``config`` (and the refresh endpoint), not to be cached."""
    if vended is None:
        return response
    document = json.loads(bytes(response.body))
    config = {**document.get("config", {}), **vended.config(dict(properties)),
              REFRESH_ENDPOINT: refresh}  # fmt: skip
    document["config"] = config
    document["storage-credentials"] = [vended.storage_credential(dict(properties))]
    headers = {k: v for k, v in response.headers.items() if k.lower() == "etag"}
    return Response(json.dumps(document, separators=(",", ":")), status_code=response.status_code,
                    media_type="application/json", headers={**headers, **NO_STORE})  # fmt: skip


def refresh_path(db: str, name: str, prefix: str | None = None) -> str:
    """The loadCredentials path of ``db.name``, relative to the catalog's URI (under the
    request's ``prefix`` when it named a catalog)."""
    under = f"{quote(prefix, safe='')}/" if prefix else ""
    return f"v1/{under}namespaces/{db}/tables/{name}/credentials"


def after_create(vending: Vending, calls: MetastoreCalls, files: MetadataFiles, db: str,
                 name: Any, headers: Mapping[str, str], response: Response,
                 prefix: str | None = None) -> Response:  # fmt: skip
    """A create answer with the caller's credentials for the new table (made after the answer
    was kept for an ``Idempotency-Key``, so never kept); ``prefix``: the request's."""
    if response.status_code != 200 or not vending.offered:
        return response
    document = json.loads(bytes(response.body))
    metadata = document.get("metadata") or {}
    location = metadata.get("location")
    if not wanted(vending, headers, location) or not isinstance(name, str):
        return response
    try:
        if document.get("metadata-location") is None:  # staged: may the caller create it?
            vended = _for_staged(vending, calls, db, name, str(location))
        else:
            vended = for_table(vending, calls, db, name, load_table(calls, files, db, name))
    except RestError as exc:
        return JSONResponse(exc.body(), status_code=exc.code)
    return with_credentials(response, vended, vending.properties,
                            refresh_path(db, name, prefix))  # fmt: skip


def _for_staged(vending: Vending, calls: MetastoreCalls, db: str, name: str,
                location: str) -> Vended | None:  # fmt: skip
    """Read-write credentials for a staged create's location, when the caller may create
    the table there (403 otherwise)."""
    table = hms.Table(dbName=db, tableName=name, owner=calls.session.user,
                      tableType="EXTERNAL_TABLE", sd=hms.StorageDescriptor(location=location),
                      parameters={"EXTERNAL": "TRUE", "table_type": "ICEBERG"})  # fmt: skip
    calls.authorize("create_table", table)
    return vending.mint(location, True, calls.session.user)


def load_credentials(vending: Vending, calls: MetastoreCalls, files: MetadataFiles, db: str,
                     name: str) -> Response:  # fmt: skip
    """The spec's LoadCredentialsResponse for ``db.name``: fresh credentials (none for a
    table not on S3); 404 when vending is off or there is no such table, 403 when the caller
    may not load it."""
    if not vending.offered:
        raise not_found("credential vending (not configured on this catalog)")
    table = load_table(calls, files, db, name)
    vended = for_table(vending, calls, db, name, table)
    found = [] if vended is None else [vended.storage_credential(dict(vending.properties))]
    return JSONResponse({"storage-credentials": found}, headers=NO_STORE)
