"""The HTTP endpoints of the Iceberg REST catalog (a Starlette application): each reads its
request, runs the catalog operation in a worker thread as the request's caller, and answers
JSON, or the spec's error model (never a stack trace)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from urllib.parse import parse_qsl

import structlog
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from metastore_server import metrics
from metastore_server.caller import Session
from metastore_server.catalog.core.metrics_reports import MetricsReports
from metastore_server.rest import credentials, idempotency, remote_signing, warehouses
from metastore_server.rest.auth import OAuthError, RestAuth
from metastore_server.rest.calls import MetastoreCalls
from metastore_server.rest.errors import RestError, from_metastore, not_found
from metastore_server.rest.health import health_routes
from metastore_server.rest.iceberg_tables import MetadataFiles, NotMetadata
from metastore_server.rest.idempotency import Idempotency
from metastore_server.rest.operations import (
    CATALOG,
    EXTRA,
    PLAN,
    Call,
    Operation,
    config,
    create_table,
    generic_sign,
    load_credentials,
    loaded,
    prefixed,
    sign_request,
)
from metastore_server.rest.scan_plans import Planner
from metastore_server.rest.signing import Signing
from metastore_server.rest.vending import Vending
from metastore_server.thrift_api import hms

log = structlog.get_logger(__name__)

@dataclass
class RestContext:
    """What every endpoint needs: the metastore handler, the metadata files' FileIO settings
    (also the catalog's defaults for clients) and who may call."""

    handler: Any
    files: MetadataFiles
    auth: RestAuth = field(default_factory=lambda: RestAuth(None))
    #: The largest request body read (``--max-message-size``); a bigger one is a 413.
    max_body: int = 256 * 1024 * 1024
    #: Seconds a begun body may take to arrive (``--message-timeout``; 0: no limit): 408.
    body_timeout: float = 60.0
    #: The kept replies of ``Idempotency-Key`` requests (none kept: keys not taken).
    idempotency: Idempotency = field(default_factory=lambda: Idempotency(None))
    #: The kept metrics reports (None: made from the handler's store by ``build_app``).
    reports: Any = None
    #: Vended storage credentials (off unless a role is configured).
    vending: Vending = field(default_factory=Vending)
    #: The scan plans held for callers (server-side scan planning).
    planner: Planner = field(default_factory=Planner)
    #: Remote signing of S3 requests (off unless configured).
    signing: Signing = field(default_factory=Signing)




def build_app(context: RestContext) -> Starlette:
    """The Starlette application of the catalog over ``context``."""

    def route(path: str, method: str, operation: Operation, ok: int = 200) -> Route:
        return Route(path, _endpoint(context, operation, ok, path, _mutates(method, path)),
                     methods=[method])  # fmt: skip

    if context.idempotency.rebuild is None:
        context.idempotency.rebuild = partial(_rebuild, context.files)
    if context.reports is None and hasattr(context.handler, "catalog"):
        context.reports = MetricsReports(context.handler.catalog.ctx)

    routes = [route("/v1/config", "GET", config)]
    served = CATALOG + EXTRA
    if context.vending.offered:  # served and advertised only when on
        served += ((credentials.CREDENTIALS_PATH, "GET", load_credentials, 200),)
    if context.signing.enabled:  # served and advertised only when on
        served += ((remote_signing.SIGN_PATH, "POST", sign_request, 200),)
        routes.append(route(remote_signing.GENERIC_PATH, "POST", generic_sign))
    routes.extend(route(path, method, operation, ok) for path, method, operation, ok in served)
    # The unprefixed routes first: ``/v1/namespaces/x`` is the default catalog's namespace.
    routes.extend(route(prefixed(path), method, operation, ok)
                  for path, method, operation, ok in served)  # fmt: skip
    routes.append(Route(TOKENS, _token_endpoint(context), methods=["POST"]))
    routes.extend(health_routes(context.handler, context.auth))
    app = Starlette(routes=routes)
    app.add_exception_handler(404, _no_route)
    app.add_exception_handler(405, _no_route)
    return app


async def _no_route(request: Request, exc: Exception) -> Response:
    error = not_found(request.url.path)
    if getattr(exc, "status_code", 404) == 405:
        error = RestError(405, "MethodNotAllowedException",
                          f"{request.method} is not served at {request.url.path}")  # fmt: skip
    metrics.rest_request(UNMATCHED, request.method, error.code, 0.0)
    return JSONResponse(error.body(), status_code=error.code)


#: The route label of a request no route took (its path is the client's: never a label).
UNMATCHED = "unmatched"


def _mutates(method: str, path: str) -> bool:
    """Whether a route changes the catalog (takes an ``Idempotency-Key``): every POST and
    DELETE but a metrics report, scan planning and signing (which change nothing kept)."""
    path = "/v1/" + path.removeprefix("/v1/").removeprefix("{prefix}/")  # a catalog's too
    return method in ("POST", "DELETE") and not path.endswith(("/metrics", "/tasks", "/sign")) \
        and not path.startswith(PLAN)


def _rebuild(files: MetadataFiles, status: int, location: str, target: str) -> Response:
    """A kept LoadTableResult (LoadViewResult) too large to keep whole, made again from its
    metadata file."""
    with files.io(location).new_input(location).open() as stream:
        document = stream.read().decode("utf-8")
    kind = "view" if "/views" in target or "/register-view" in target else "table"
    answer = loaded(location, document, kind)
    answer.status_code = status
    return answer


def _endpoint(
    context: RestContext, operation: Operation, ok: int, route: str, mutates: bool = False
) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        started = time.perf_counter()
        client = request.client
        peer = f"{client.host}:{client.port}" if client is not None else "unknown"
        response = await _respond(context, Served(operation, ok, mutates), request, peer)
        seconds = time.perf_counter() - started
        metrics.rest_request(route, request.method, response.status_code, seconds)
        log.info("rest_request", method=request.method, path=request.url.path,
                 status=response.status_code, peer=peer, ms=round(seconds * 1000, 3))  # fmt: skip
        return response

    return endpoint


@dataclass(frozen=True)
class Served:
    """A route's operation, its success status, and whether it changes the catalog."""

    operation: Operation
    ok: int
    mutates: bool


async def _respond(context: RestContext, served: Served, request: Request,
                   peer: str) -> Response:  # fmt: skip
    """The answer to one request: its body read within the limits, then the operation run
    as its caller."""
    try:
        body = await asyncio.wait_for(_body(request, context.max_body),
                                      context.body_timeout or None)  # fmt: skip
    except RestError as exc:
        return JSONResponse(exc.body(), status_code=exc.code)
    except TimeoutError:
        error = RestError(408, "RequestTimeoutException", "The request body did not arrive "
                          f"within {context.body_timeout:g} s")  # fmt: skip
        return JSONResponse(error.body(), status_code=error.code,
                            headers={"Connection": "close"})
    try:
        catalog = warehouses.catalog_of(request.path_params)
    except RestError as exc:
        return JSONResponse(exc.body(), status_code=exc.code)
    client = request.client
    session = Session(address=client.host if client is not None else None)
    call = Call(MetastoreCalls(context.handler, session, peer, catalog), context.files,
                dict(request.path_params), dict(request.query_params), body,
                dict(request.headers), request.method, _target(request),
                context.idempotency.advertised(), context.reports,
                context.vending, context.planner, context.signing,
                str(request.base_url))  # fmt: skip
    return await run_in_threadpool(_authenticated_answer, context,
                                   request.headers.get("authorization"), call, served)


def _target(request: Request) -> str:
    """The request's path and query as sent."""
    query = request.url.query
    return request.url.path + ("?" + query if query else "")


async def _body(request: Request, limit: int) -> bytes:
    """The request's body; 413 past ``limit`` bytes (read no further)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise RestError(413, "RequestTooLargeException",
                        f"Request body of {declared} bytes is over the limit of {limit}")
    parts, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise RestError(413, "RequestTooLargeException",
                            f"Request body is over the limit of {limit} bytes")  # fmt: skip
        parts.append(chunk)
    return b"".join(parts)


def _token_endpoint(context: RestContext) -> Callable[[Request], Awaitable[Response]]:
    """OAuth2's client-credentials token endpoint (``POST /v1/oauth/tokens``, a form)."""

    async def endpoint(request: Request) -> Response:
        started = time.perf_counter()
        response = await _token_answer(context, request)
        metrics.rest_request(TOKENS, request.method, response.status_code,
                             time.perf_counter() - started)  # fmt: skip
        return response

    return endpoint


TOKENS = "/v1/oauth/tokens"


async def _token_answer(context: RestContext, request: Request) -> Response:
    try:
        raw = await _body(request, 64 * 1024)
    except RestError as exc:
        return JSONResponse(exc.body(), status_code=exc.code)
    form = dict(parse_qsl(raw.decode("utf-8", "replace")))
    try:
        answer = await run_in_threadpool(context.auth.issue, form)
    except OAuthError as exc:
        return JSONResponse(exc.body(), status_code=exc.status)
    return JSONResponse(answer, headers={"Cache-Control": "no-store"})


def _authenticated_answer(context: RestContext, authorization: str | None, call: Call,
                          served: Served) -> Response:  # fmt: skip
    """Who is calling (401 when credentials are needed and wrong), then ``_answer`` (a kept
    answer for a retried ``Idempotency-Key``): one hand-over to a worker thread a request."""
    try:
        user, groups = context.auth.identity(authorization)
    except RestError as exc:
        challenge = {"WWW-Authenticate": context.auth.challenge()} if exc.code == 401 else None
        return JSONResponse(exc.body(), status_code=exc.code, headers=challenge)
    if user is not None:
        session = call.calls.session
        session.authenticated_user, session.mechanism = user, "REST"
        session.proven_groups = groups
    key = call.headers.get(idempotency.HEADER)
    if key is None or not served.mutates or not context.idempotency.offered:
        return _vended_after(call, served, _answer(call, served.operation, served.ok))
    try:
        request = idempotency.Request.of(user, idempotency.checked_key(key), call.method,
                                         call.target, call.body)  # fmt: skip
    except RestError as exc:
        return JSONResponse(exc.body(), status_code=exc.code)
    kept = context.idempotency.run(request, call.target,
                                   lambda: _answer(call, served.operation, served.ok))
    return _vended_after(call, served, kept)


def _vended_after(call: Call, served: Served, response: Response) -> Response:
    """A create answer with its vended credentials (and its signer), added after the answer
    was kept for an ``Idempotency-Key`` (the kept answer never holds them)."""
    if served.operation is not create_table or not (call.vending.offered or
                                                    call.signing.enabled):
        return response
    try:
        db, name = call.db(), call.json().get("name")
    except RestError:
        return response
    response = remote_signing.after_create(call.signing, call.headers, response, call.base,
                                           db, name, call.path.get("prefix"))
    if not call.vending.offered:
        return response
    return _answer(call, lambda _: credentials.after_create(
        call.vending, call.calls, call.files, db, name, call.headers, response,
        call.path.get("prefix")), 200)


def _answer(call: Call, operation: Operation, ok: int) -> Response:
    """Run ``operation`` (in the path's catalog: 404 when there is none); its result as JSON
    (None: no content), or its error."""
    try:
        warehouses.require(call.calls)
        result = operation(call)
    except RestError as exc:
        return JSONResponse(exc.body(), status_code=exc.code)
    except (hms.NoSuchObjectException, hms.AlreadyExistsException, hms.MetaException,
            hms.InvalidObjectException, hms.InvalidOperationException) as exc:  # fmt: skip
        error = from_metastore(exc)
        return JSONResponse(error.body(), status_code=error.code)
    except FileNotFoundError as exc:
        error = RestError(500, "ServerErrorException", f"A metadata file is missing: {exc}")
        return JSONResponse(error.body(), status_code=error.code)
    except NotMetadata as exc:  # its message names the file, never what it holds
        error = RestError(500, "ServerErrorException", str(exc))
        return JSONResponse(error.body(), status_code=error.code)
    except Exception as exc:  # noqa: BLE001 - answered, never a stack trace to the client
        log.exception("rest_request_failed", error=f"{type(exc).__name__}: {exc}")
        # The exception's text may quote a file or input it read: the log has it, not the
        # answer.
        error = RestError(500, "ServerErrorException", f"Internal error ({type(exc).__name__}); "
                          "the server's log has the details")  # fmt: skip
        return JSONResponse(error.body(), status_code=error.code)
    if isinstance(result, Response):
        return result
    if result is None or ok == 204:
        return Response(status_code=204)
    return JSONResponse(result, status_code=ok)
