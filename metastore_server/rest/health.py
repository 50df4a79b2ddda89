"""``/health``, ``/ready`` and ``/metrics`` on the REST catalog's port, as on
``--metrics-port`` (``metastore_server.server.monitoring``), for deployments that reach the
server through this port only.

``/health`` and ``/ready`` need no credentials (an orchestrator's probes carry none; they tell
no more than whether the catalog can serve). ``/metrics`` needs the credentials of any request
under ``--auth password`` or ``ldap`` (call volumes and error types are the operators'), none
under ``--auth none``. ``/ready`` is 503 while the store does not answer a cheap read; this
process knows nothing of the Thrift workers. ``/metrics`` shows the same figures as
``--metrics-port`` (every process of the server's): scrape one of the two."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from metastore_server.rest.auth import RestAuth
from metastore_server.rest.errors import RestError
from metastore_server.server.monitoring import answer

Endpoint = Callable[[Request], Awaitable[Response]]


def health_routes(handler: Any, auth: RestAuth) -> list[Route]:
    """The three routes, over the REST process's metastore handler and its authentication."""
    settings = getattr(handler, "settings", None)
    store = getattr(settings, "store_health", None)

    def ready() -> str | None:
        return store() if store is not None else None

    def plain(path: str) -> Endpoint:
        async def endpoint(request: Request) -> Response:
            code, body, content_type = await run_in_threadpool(answer, path, ready)
            return Response(body, status_code=code, media_type=content_type,
                            headers={"Cache-Control": "no-store"})  # fmt: skip

        return endpoint

    async def metrics_endpoint(request: Request) -> Response:
        if auth.required:
            try:
                await run_in_threadpool(auth.caller, request.headers.get("authorization"))
            except RestError as exc:
                return JSONResponse(exc.body(), status_code=exc.code,
                                    headers={"WWW-Authenticate": auth.challenge()})
        return await plain("/metrics")(request)

    return [
        Route("/health", plain("/health"), methods=["GET", "HEAD"]),
        Route("/ready", plain("/ready"), methods=["GET", "HEAD"]),
        Route("/metrics", metrics_endpoint, methods=["GET"]),
    ]
