"""The Iceberg REST catalog's operations, each a function of one request (a ``Call``), and the
table of routes that serves and advertises them (``CATALOG``); ``routes`` builds the
application around them."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from starlette.responses import Response

from metastore_server.rest import (
    credentials,
    freshness,
    metrics_reports,
    namespaces,
    paging,
    remote_signing,
    scan_service,
    tables,
    views,
    warehouses,
)
from metastore_server.rest.calls import MetastoreCalls
from metastore_server.rest.commits import commit_table, parse_commit
from metastore_server.rest.errors import bad_request
from metastore_server.rest.iceberg_tables import MetadataFiles
from metastore_server.rest.scan_plans import Planner
from metastore_server.rest.signing import Signing
from metastore_server.rest.transactions import commit_transaction
from metastore_server.rest.vending import Vending

#: The namespace separator in paths (``%1F``, the spec's default).
SEPARATOR = "\x1f"
NS = "/v1/namespaces/{namespace}"
TABLE = NS + "/tables/{table}"
VIEW = NS + "/views/{view}"
PLAN = TABLE + "/plan"


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
    #: Remote signing of S3 requests (off unless configured).
    signing: Signing = field(default_factory=Signing)
    #: The catalog's base URL as the client reached it (the signer's URI).
    base: str = ""

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


def config(call: Call) -> Any:
    overrides = warehouses.overrides(call.calls, call.query.get("warehouse"))
    endpoints = ENDPOINTS + ([advertised("GET", credentials.CREDENTIALS_PATH)]
                             if call.vending.offered else [])  # fmt: skip
    if call.signing.enabled:
        endpoints.append(advertised("POST", remote_signing.SIGN_PATH))
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


def create_table(call: Call) -> Any:
    return loaded(*tables.create_table(call.calls, call.files, call.db(), call.json()))


def _register_table(call: Call) -> Any:
    return loaded(*tables.register_table(call.calls, call.files, call.db(), call.json()))


def _load_table(call: Call) -> Any:
    table = tables.load_table(call.calls, call.files, call.db(), unquote(call.path["table"]))
    form = "refs" if call.query.get("snapshots", "all").lower() == "refs" else "all"
    vends = credentials.wanted(call.vending, call.headers, table.metadata.location)
    signs = remote_signing.wanted(call.signing, call.headers, table.metadata.location)
    unchanged = _not_modified(call, "table", table.metadata_location, form, vends or signs)
    if unchanged is not None:
        return unchanged
    if form == "refs":
        answer = loaded(table.metadata_location,
                        tables.only_referenced_snapshots(table.metadata), form=form)
    else:
        answer = loaded(table.metadata_location,
                        call.files.read_with_json(table.metadata_location)[1])
    db, name = call.db(), unquote(call.path["table"])
    if signs:
        answer = remote_signing.with_signer(answer, remote_signing.signer_config(
            call.base, db, name, call.path.get("prefix")))
    if not vends:
        return answer
    vended = credentials.for_table(call.vending, call.calls, db, name, table)
    return credentials.with_credentials(answer, vended, call.vending.properties,
                                        credentials.refresh_path(db, name,
                                                                 call.path.get("prefix")))


def load_credentials(call: Call) -> Any:
    return credentials.load_credentials(call.vending, call.calls, call.files, call.db(),
                                        unquote(call.path["table"]))


def sign_request(call: Call) -> Any:
    return remote_signing.sign(call.signing, call.calls, call.files, call.db(),
                               unquote(call.path["table"]), call.json())


def generic_sign(_: Call) -> Any:
    raise remote_signing.generic()


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
    (NS + "/tables", "POST", create_table, 200),
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
