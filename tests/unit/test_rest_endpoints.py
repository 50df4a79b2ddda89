"""The endpoints ``GET /v1/config`` advertises are the catalog routes the application serves:
one list (``operations.CATALOG``) makes both."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the 'rest' extra is not installed")
from starlette.requests import Request  # noqa: E402
from starlette.routing import Route  # noqa: E402

from metastore_server.rest import operations, routes  # noqa: E402
from metastore_server.rest.iceberg_tables import MetadataFiles  # noqa: E402

#: Served, never advertised: the config itself, OAuth tokens, the probes and metrics.
UNADVERTISED = {"/v1/config", "/v1/oauth/tokens", "/health", "/ready", "/metrics"}
#: Served beyond the spec, never advertised (with a prefix and without).
BEYOND = {"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics"}

#: The reply's endpoints as they were when kept by hand (the spec's form, this order).
EXPECTED = [
    "GET /v1/{prefix}/namespaces",
    "POST /v1/{prefix}/namespaces",
    "GET /v1/{prefix}/namespaces/{namespace}",
    "HEAD /v1/{prefix}/namespaces/{namespace}",
    "DELETE /v1/{prefix}/namespaces/{namespace}",
    "POST /v1/{prefix}/namespaces/{namespace}/properties",
    "GET /v1/{prefix}/namespaces/{namespace}/tables",
    "POST /v1/{prefix}/namespaces/{namespace}/tables",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/register",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/unregister",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/tasks",
    "POST /v1/{prefix}/tables/rename",
    "POST /v1/{prefix}/transactions/commit",
    "GET /v1/{prefix}/namespaces/{namespace}/views",
    "POST /v1/{prefix}/namespaces/{namespace}/views",
    "GET /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "POST /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "POST /v1/{prefix}/namespaces/{namespace}/register-view",
    "POST /v1/{prefix}/views/rename",
]


def _app() -> Any:
    return routes.build_app(routes.RestContext(handler=object(), files=MetadataFiles({})))


def _declared(route: Route) -> set[str]:
    """The route's methods as declared: Starlette adds HEAD to every GET route itself."""
    methods = set(route.methods or ())
    return {"GET"} if methods == {"GET", "HEAD"} else methods


def test_advertised_endpoints_are_the_served_routes() -> None:
    app = _app()
    served: set[str] = set()
    paths = set()
    for route in app.routes:
        assert isinstance(route, Route)
        paths.add(route.path)
        if route.path not in UNADVERTISED:
            served |= {operations.advertised(method, route.path) for method in _declared(route)}
    assert paths >= UNADVERTISED
    assert served == set(operations.ENDPOINTS) | BEYOND
    assert len(operations.ENDPOINTS) == len(set(operations.ENDPOINTS))
    assert operations.ENDPOINTS == EXPECTED
    # every catalog route is served under a prefix (a catalog) and without (``hive``)
    assert {p for p in paths if p.startswith("/v1/{prefix}/")} == {
        operations.prefixed(path) for path, _, _, _ in operations.CATALOG + operations.EXTRA}
    # and takes an ``Idempotency-Key`` (or not: planning, metrics) the same way under both
    for path, method, _, _ in operations.CATALOG + operations.EXTRA:
        assert routes._mutates(method, operations.prefixed(path)) == routes._mutates(method, path)
    assert not routes._mutates("POST", operations.prefixed(operations.PLAN))


def test_config_reply_lists_the_endpoints() -> None:
    config = next(r for r in _app().routes if isinstance(r, Route) and r.path == "/v1/config")

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    scope = {"type": "http", "method": "GET", "path": "/v1/config", "headers": [],
             "query_string": b"", "path_params": {}}  # fmt: skip
    response = asyncio.run(config.endpoint(Request(scope, receive)))
    assert response.status_code == 200
    assert json.loads(bytes(response.body))["endpoints"] == EXPECTED


def _advertised(app: Any) -> list[str]:
    """The endpoints ``GET /v1/config`` of ``app`` lists."""
    config = next(r for r in app.routes if isinstance(r, Route) and r.path == "/v1/config")

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    scope = {"type": "http", "method": "GET", "path": "/v1/config", "headers": [],
             "query_string": b"", "path_params": {}}  # fmt: skip
    response = asyncio.run(config.endpoint(Request(scope, receive)))
    return list(json.loads(bytes(response.body))["endpoints"])


def test_the_credentials_endpoint_is_served_and_advertised_only_with_vending() -> None:
    from metastore_server.rest.vending import Vending

    credentials = "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials"
    vending = routes.RestContext(handler=object(), files=MetadataFiles({}),
                                 vending=Vending(role_arn="arn:aws:iam::1:role/r"))  # fmt: skip
    for context, served in ((vending, True), (routes.RestContext(object(), MetadataFiles({})),
                                              False)):  # fmt: skip
        app = routes.build_app(context)
        paths = {r.path for r in app.routes if isinstance(r, Route)}
        assert (operations.credentials.CREDENTIALS_PATH in paths) is served
        # under a prefix (a catalog) too
        assert (operations.prefixed(operations.credentials.CREDENTIALS_PATH) in paths) is served
        endpoints = _advertised(app)
        assert endpoints == EXPECTED + ([credentials] if served else [])


def test_the_signing_endpoints_are_served_and_advertised_only_with_remote_signing() -> None:
    from metastore_server.rest import remote_signing
    from metastore_server.rest.signing import Signing

    sign = "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/sign"
    signing = routes.RestContext(handler=object(), files=MetadataFiles({}),
                                 signing=Signing(enabled=True))  # fmt: skip
    for context, served in ((signing, True), (routes.RestContext(object(), MetadataFiles({})),
                                              False)):  # fmt: skip
        app = routes.build_app(context)
        paths = {(r.path, m) for r in app.routes if isinstance(r, Route) for m in _declared(r)}
        assert ((remote_signing.SIGN_PATH, "POST") in paths) is served
        assert ((operations.prefixed(remote_signing.SIGN_PATH), "POST") in paths) is served
        # the spec's generic route: served (to refuse it, 400) only when on, never advertised
        assert ((remote_signing.GENERIC_PATH, "POST") in paths) is served
        endpoints = _advertised(app)
        assert endpoints == EXPECTED + ([sign] if served else [])
    # a sign request changes nothing kept: no Idempotency-Key taken
    assert not routes._mutates("POST", remote_signing.SIGN_PATH)
    assert not routes._mutates("POST", operations.prefixed(remote_signing.SIGN_PATH))
