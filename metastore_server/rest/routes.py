"""The HTTP endpoints of the Iceberg REST catalog (a Starlette application): each reads its
request, runs the catalog operation in a worker thread as the request's caller, and answers
JSON, or the spec's error model (never a stack trace)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from urllib.parse import parse_qsl, unquote

import structlog
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from metastore_server import metrics
from metastore_server.caller import Session
from metastore_server.catalog.core.metrics_reports import MetricsReports
from metastore_server.rest import (
    credentials,
    freshness,
    idempotency,
    metrics_reports,
    namespaces,
    paging,
    scan_service,
    tables,
    views,
    warehouses,
)
from metastore_server.rest.auth import OAuthError, RestAuth
from metastore_server.rest.calls import MetastoreCalls
from metastore_server.rest.commits import commit_table, parse_commit
from metastore_server.rest.errors import RestError, bad_request, from_metastore, not_found
from metastore_server.rest.health import health_routes
from metastore_server.rest.iceberg_tables import MetadataFiles, NotMetadata
from metastore_server.rest.idempotency import Idempotency
from metastore_server.rest.scan_plans import Planner
from metastore_server.rest.transactions import commit_transaction
from metastore_server.rest.vending import Vending
from metastore_server.thrift_api import hms

log = structlog.get_logger(__name__)

#: The namespace separator in paths (``%1F``, the spec's default).
SEPARATOR = "\x1f"
NS = "/v1/namespaces/{namespace}"
TABLE = NS + "/tables/{table}"
VIEW = NS + "/views/{view}"
PLAN = TABLE + "/plan"


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


@dataclass
class Call:
    """One request, as an endpoint's operation sees it."""

    calls: MetastoreCalls
    files: MetadataFiles
    path: dict[str, str]
    query: dict[str, str]
    body: bytes
    #: The request's headers (names in lower case).
    headers: dict[str, str] = field(default_factory=dict)
    #: The request's method and target (its path and query, as sent).
    method: str = "GET"
    target: str = ""
    #: What ``GET /v1/config`` advertises beside the endpoints (the key lifetime).
    advertised: dict[str, str] = field(default_factory=dict)
    #: The kept metrics reports (``catalog.core.metrics_reports.MetricsReports``).
    reports: Any = None
    #: Vended storage credentials (off unless a role is configured).
    vending: Vending = field(default_factory=Vending)
    #: The scan plans held for callers.
    planner: Planner = field(default_factory=Planner)

    def namespace(self) -> list[str]:
        """The path's namespace, its levels split."""
        return unquote(self.path["namespace"]).split(SEPARATOR)

    def db(self) -> str:
        """The path's namespace as a database name (400 when nested)."""
        return namespaces.database_name(self.namespace())

    def json(self) -> dict[str, Any]:
        """The body as a JSON object (400 otherwise)."""
        try:
            document = json.loads(self.body or b"{}")
        except (ValueError, RecursionError) as exc:
            raise bad_request(f"Request body is not JSON: {exc}") from None
        if not isinstance(document, dict):
            raise bad_request("Request body must be a JSON object")
        return document


Operation = Callable[[Call], Any]


def loaded(location: str | None, metadata: Any, kind: str = "table",
           form: str = freshness.ALL_SNAPSHOTS) -> Response:  # fmt: skip
    """A LoadTableResult or LoadViewResult (also a CommitTableResponse: it carries these two
    fields) with its ETag; ``metadata``: the model, or its JSON already made."""
    document = metadata if isinstance(metadata, str) else metadata.model_dump_json()
    text = (f'{{"metadata-location":{json.dumps(location)},'
            f'"metadata":{document},"config":{{}}}}')  # fmt: skip
    tag = freshness.etag(kind, location, form)
    return Response(text, media_type="application/json",
                    headers={"ETag": tag} if tag else None)  # fmt: skip


def _not_modified(call: Call, kind: str, location: str, form: str,
                  vends: bool = False) -> Response | None:  # fmt: skip
    """A 304 when the request's ``If-None-Match`` names the current version (None: answer
    the whole load; always when the answer carries vended credentials)."""
    tag = freshness.etag(kind, location, form)
    if not freshness.may_answer_not_modified({"storage-credentials": []} if vends else {}):
        return None
    if freshness.matches(call.headers.get("if-none-match"), tag):
        return Response(status_code=304, headers={"ETag": tag} if tag else None)
    return None


def _config(call: Call) -> Any:
    overrides = warehouses.overrides(call.calls, call.query.get("warehouse"))
    endpoints = ENDPOINTS + ([advertised("GET", credentials.CREDENTIALS_PATH)]
                             if call.vending.offered else [])  # fmt: skip
    return {"defaults": dict(call.files.properties), "overrides": overrides,
            "endpoints": endpoints, **call.advertised}


def _list_namespaces(call: Call) -> Any:
    parent = call.query.get("parent")
    levels = unquote(parent).split(SEPARATOR) if parent else None
    found, token = namespaces.list_namespaces(call.calls, levels, paging.requested(call.query))
    return {"namespaces": found, "next-page-token": token}


def _create_namespace(call: Call) -> Any:
    body = call.json()
    namespace = body.get("namespace")
    if not isinstance(namespace, list) or not all(isinstance(p, str) for p in namespace):
        raise bad_request("CreateNamespaceRequest needs a namespace (a list of strings)")
    return namespaces.create_namespace(call.calls, namespace, body.get("properties") or {},
                                       call.files.boundary)


def _load_namespace(call: Call) -> Any:
    database = namespaces.load_database(call.calls, call.db())
    return {"namespace": [database.name], "properties": namespaces.properties_of(database)}


def _namespace_exists(call: Call) -> Any:
    namespaces.load_database(call.calls, call.db())
    return None


def _update_namespace(call: Call) -> Any:
    body = call.json()
    removals, updates = body.get("removals") or [], body.get("updates") or {}
    if not isinstance(removals, list) or not isinstance(updates, dict) or not all(
        isinstance(key, str) for key in removals
    ):
        raise bad_request("removals must be a list of strings and updates an object")
    return namespaces.update_properties(call.calls, call.namespace(), removals, updates,
                                        call.files.boundary)


def _drop_namespace(call: Call) -> Any:
    namespaces.drop_namespace(call.calls, call.namespace())


def _list_tables(call: Call) -> Any:
    found, token = tables.list_tables(call.calls, call.db(), paging.requested(call.query))
    return {"identifiers": found, "next-page-token": token}


def _create_table(call: Call) -> Any:
    return loaded(*tables.create_table(call.calls, call.files, call.db(), call.json()))


def _register_table(call: Call) -> Any:
    return loaded(*tables.register_table(call.calls, call.files, call.db(), call.json()))


def _load_table(call: Call) -> Any:
    table = tables.load_table(call.calls, call.files, call.db(), unquote(call.path["table"]))
    form = "refs" if call.query.get("snapshots", "all").lower() == "refs" else "all"
    vends = credentials.wanted(call.vending, call.headers, table.metadata.location)
    unchanged = _not_modified(call, "table", table.metadata_location, form, vends)
    if unchanged is not None:
        return unchanged
    if form == "refs":
        answer = loaded(table.metadata_location,
                        tables.only_referenced_snapshots(table.metadata), form=form)
    else:
        answer = loaded(table.metadata_location,
                        call.files.read_with_json(table.metadata_location)[1])
    if not vends:
        return answer
    db, name = call.db(), unquote(call.path["table"])
    vended = credentials.for_table(call.vending, call.calls, db, name, table)
    return credentials.with_credentials(answer, vended, call.vending.properties,
                                        credentials.refresh_path(db, name,
                                                                 call.path.get("prefix")))


def _load_credentials(call: Call) -> Any:
    return credentials.load_credentials(call.vending, call.calls, call.files, call.db(),
                                        unquote(call.path["table"]))


def _table_exists(call: Call) -> Any:
    tables.load_table(call.calls, call.files, call.db(), unquote(call.path["table"]))


def _commit_table(call: Call) -> Any:
    request = parse_commit(call.json(), call.db(), unquote(call.path["table"]))
    return loaded(*commit_table(call.calls, call.files, request))


def _drop_table(call: Call) -> Any:
    purge = call.query.get("purgeRequested", "false").lower() == "true"
    tables.drop_table(call.calls, call.files, call.db(), unquote(call.path["table"]), purge)


def _rename_table(call: Call) -> Any:
    body = call.json()
    source, target = body.get("source"), body.get("destination")
    if not isinstance(source, dict) or not isinstance(target, dict):
        raise bad_request("RenameTableRequest needs a source and a destination")
    tables.rename_table(call.calls, source, target)


def _report_metrics(call: Call) -> Any:
    metrics_reports.post(call.reports, call.calls, call.files, call.db(),
                         unquote(call.path["table"]), call.body)  # fmt: skip


def _list_metrics(call: Call) -> Any:
    return metrics_reports.listed(call.reports, call.calls, call.files, call.db(),
                                  unquote(call.path["table"]), call.query.get("limit"))


def _unregister_table(call: Call) -> Any:
    location, document = tables.unregister_table(call.calls, call.files, call.db(),
                                                 unquote(call.path["table"]))  # fmt: skip
    text = f'{{"metadata-location":{json.dumps(location)},"metadata":{document}}}'
    return Response(text, media_type="application/json")


def _plan_scan(call: Call) -> Any:
    return scan_service.plan_table_scan(call.calls, call.files, call.planner, call.db(),
                                        unquote(call.path["table"]), call.json())  # fmt: skip


def _fetch_plan(call: Call) -> Any:
    return scan_service.fetch_planning_result(call.calls, call.planner, call.db(),
                                              unquote(call.path["table"]),
                                              unquote(call.path["plan_id"]))  # fmt: skip


def _cancel_plan(call: Call) -> Any:
    scan_service.cancel_planning(call.calls, call.planner, call.db(),
                                 unquote(call.path["table"]), unquote(call.path["plan_id"]))


def _fetch_tasks(call: Call) -> Any:
    return scan_service.fetch_scan_tasks(call.calls, call.planner, call.db(),
                                         unquote(call.path["table"]), call.json())  # fmt: skip


def _commit_transaction(call: Call) -> Any:
    changes = call.json().get("table-changes")
    if not isinstance(changes, list) or not changes:
        raise bad_request("CommitTransactionRequest needs table-changes")
    requests = []
    for change in changes:
        if not isinstance(change, dict) or not isinstance(change.get("identifier"), dict):
            raise bad_request("Each table change needs an identifier")
        identifier = change["identifier"]
        db = namespaces.database_name(identifier.get("namespace") or [])
        requests.append(parse_commit(change, db, str(identifier.get("name"))))
    commit_transaction(call.calls, call.files, requests)


def _view_name(call: Call) -> str:
    return unquote(call.path["view"])


def _list_views(call: Call) -> Any:
    found, token = views.list_views(call.calls, call.db(), paging.requested(call.query))
    return {"identifiers": found, "next-page-token": token}


def _create_view(call: Call) -> Any:
    return loaded(*views.create_view(call.calls, call.files, call.db(), call.json()), "view")


def _register_view(call: Call) -> Any:
    return loaded(*views.register_view(call.calls, call.files, call.db(), call.json()), "view")


def _load_view(call: Call) -> Any:
    _, location, metadata = views.load_view(call.calls, call.files, call.db(), _view_name(call))
    return _not_modified(call, "view", location, "all") or loaded(location, metadata, "view")


def _view_exists(call: Call) -> Any:
    views.load_view(call.calls, call.files, call.db(), _view_name(call))


def _replace_view(call: Call) -> Any:
    return loaded(*views.replace_view(call.calls, call.files, call.db(),
                                      _view_name(call), call.json()), "view")  # fmt: skip


def _drop_view(call: Call) -> Any:
    views.drop_view(call.calls, call.files, call.db(), _view_name(call))


def _rename_view(call: Call) -> Any:
    views.rename_view(call.calls, call.files, call.json())


#: The catalog's operations: (path, method, operation, success status). Each is served and
#: advertised in ``GET /v1/config``; the config, token and health routes are built apart in
#: ``build_app`` and so never advertised.
CATALOG: tuple[tuple[str, str, Operation, int], ...] = (
    ("/v1/namespaces", "GET", _list_namespaces, 200),
    ("/v1/namespaces", "POST", _create_namespace, 200),
    (NS, "GET", _load_namespace, 200),
    (NS, "HEAD", _namespace_exists, 204),
    (NS, "DELETE", _drop_namespace, 204),
    (NS + "/properties", "POST", _update_namespace, 200),
    (NS + "/tables", "GET", _list_tables, 200),
    (NS + "/tables", "POST", _create_table, 200),
    (TABLE, "GET", _load_table, 200),
    (TABLE, "HEAD", _table_exists, 204),
    (TABLE, "POST", _commit_table, 200),
    (TABLE, "DELETE", _drop_table, 204),
    (NS + "/register", "POST", _register_table, 200),
    (TABLE + "/metrics", "POST", _report_metrics, 204),
    (TABLE + "/unregister", "POST", _unregister_table, 200),
    (PLAN, "POST", _plan_scan, 200),
    (PLAN + "/{plan_id}", "GET", _fetch_plan, 200),
    (PLAN + "/{plan_id}", "DELETE", _cancel_plan, 204),
    (TABLE + "/tasks", "POST", _fetch_tasks, 200),
    ("/v1/tables/rename", "POST", _rename_table, 204),
    ("/v1/transactions/commit", "POST", _commit_transaction, 204),
    (NS + "/views", "GET", _list_views, 200),
    (NS + "/views", "POST", _create_view, 200),
    (VIEW, "GET", _load_view, 200),
    (VIEW, "HEAD", _view_exists, 204),
    (VIEW, "POST", _replace_view, 200),
    (VIEW, "DELETE", _drop_view, 204),
    (NS + "/register-view", "POST", _register_view, 200),
    ("/v1/views/rename", "POST", _rename_view, 204),
)


#: Served beyond the spec, never advertised: the kept metrics reports of a table.
EXTRA: tuple[tuple[str, str, Operation, int], ...] = (
    (TABLE + "/metrics", "GET", _list_metrics, 200),
)


def advertised(method: str, path: str) -> str:
    """A served route (with its prefix or without) as the spec's endpoint string:
    ``METHOD /v1/{prefix}/...``."""
    spec_path = path.removeprefix("/v1/").removeprefix("{prefix}/")
    return f"{method} /v1/{{prefix}}/{spec_path.replace('{plan_id}', '{plan-id}')}"


def prefixed(path: str) -> str:
    """A catalog route's path under a prefix (a catalog of the metastore)."""
    return "/v1/{prefix}/" + path.removeprefix("/v1/")


#: The endpoints this catalog serves, as ``GET /v1/config`` lists them.
ENDPOINTS = [advertised(method, path) for path, method, _, _ in CATALOG]


def build_app(context: RestContext) -> Starlette:
    """The Starlette application of the catalog over ``context``."""

    def route(path: str, method: str, operation: Operation, ok: int = 200) -> Route:
        return Route(path, _endpoint(context, operation, ok, path, _mutates(method, path)),
                     methods=[method])  # fmt: skip

    if context.idempotency.rebuild is None:
        context.idempotency.rebuild = partial(_rebuild, context.files)
    if context.reports is None and hasattr(context.handler, "catalog"):
        context.reports = MetricsReports(context.handler.catalog.ctx)

    routes = [route("/v1/config", "GET", _config)]
    served = CATALOG + EXTRA
    if context.vending.offered:  # served and advertised only when on
        served += ((credentials.CREDENTIALS_PATH, "GET", _load_credentials, 200),)
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
    DELETE but a metrics report and scan planning (which changes nothing kept)."""
    path = "/v1/" + path.removeprefix("/v1/").removeprefix("{prefix}/")  # a catalog's too
    return method in ("POST", "DELETE") and not path.endswith(("/metrics", "/tasks")) \
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
                context.vending, context.planner)  # fmt: skip
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
    """A create answer with its vended credentials, added after the answer was kept for an
    ``Idempotency-Key`` (the kept answer never holds them)."""
    if served.operation is not _create_table or not call.vending.offered:
        return response
    try:
        db, name = call.db(), call.json().get("name")
    except RestError:
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
