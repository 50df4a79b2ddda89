"""The endpoints ``GET /v1/config`` advertises are the catalog routes the application serves:
one list (``routes.CATALOG``) makes both."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the 'rest' extra is not installed")
from starlette.requests import Request  # noqa: E402
from starlette.routing import Route  # noqa: E402

from metastore_server.rest import routes  # noqa: E402
from metastore_server.rest.iceberg_tables import MetadataFiles  # noqa: E402

#: Served, never advertised: the config itself, OAuth tokens, the probes and metrics.
UNADVERTISED = {"/v1/config", "/v1/oauth/tokens", "/health", "/ready", "/metrics"}

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
            served |= {routes.advertised(method, route.path) for method in _declared(route)}
    assert paths >= UNADVERTISED
    assert served == set(routes.ENDPOINTS)
    assert len(routes.ENDPOINTS) == len(set(routes.ENDPOINTS))
    assert routes.ENDPOINTS == EXPECTED


def test_config_reply_lists_the_endpoints() -> None:
    config = next(r for r in _app().routes if isinstance(r, Route) and r.path == "/v1/config")

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    scope = {"type": "http", "method": "GET", "path": "/v1/config", "headers": [],
             "query_string": b"", "path_params": {}}  # fmt: skip
    response = asyncio.run(config.endpoint(Request(scope, receive)))
    assert response.status_code == 200
    assert json.loads(bytes(response.body))["endpoints"] == EXPECTED
