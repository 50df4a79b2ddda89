"""The Iceberg REST catalog's process (``serve --rest-process``, started by ``serve`` beside
the Thrift server): a metastore handler over the same store, served over HTTP by uvicorn on
``--host``:``--rest-port`` (TLS with the server's certificate). It stops on SIGTERM/SIGINT
(uvicorn's handlers while it serves: requests in flight finish; a second SIGINT stops at once),
or when its standard input ends (its parent is gone)."""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any

import structlog

from metastore_server import stop_signals
from metastore_server.server.config import ServerConfig

log = structlog.get_logger(__name__)


def file_io_properties(config: ServerConfig) -> dict[str, str]:
    """The FileIO settings of metadata files (and the catalog's defaults for clients): the
    server's S3 endpoint and region."""
    properties = {}
    if config.s3_endpoint:
        properties["s3.endpoint"] = config.s3_endpoint
    if config.s3_region:
        properties["s3.region"] = config.s3_region
    return properties


def run_rest_catalog(config: ServerConfig) -> bool:
    """Serve the REST catalog until stopped; False when it could not listen. ValueError or
    OSError (with the reason) when it cannot be set up."""
    import uvicorn

    from metastore_server.catalog.core.kept_replies import KeptReplies
    from metastore_server.rest.auth import build_rest_auth
    from metastore_server.rest.boundary import FileBoundary
    from metastore_server.rest.iceberg_tables import MetadataFiles
    from metastore_server.rest.idempotency import Idempotency
    from metastore_server.rest.routes import RestContext, build_app
    from metastore_server.rest.scan_plans import Planner, PlanSettings
    from metastore_server.server.app import build_handler

    handler, close = build_handler(config)
    try:
        auth = build_rest_auth(config, handler)
    except BaseException:
        close()
        raise
    files = MetadataFiles(file_io_properties(config), FileBoundary.of(handler))
    kept = Idempotency(KeptReplies(handler.catalog.ctx), config.rest_idempotency_lifetime)
    app = build_app(RestContext(handler, files, auth,
                                max_body=config.max_message_size,
                                body_timeout=config.message_timeout,
                                idempotency=kept, vending=_vending(config),
                                signing=_signing(config),
                                planner=Planner(PlanSettings(
                                    async_files=config.rest_plan_async_files,
                                    batch=config.rest_plan_batch))))  # fmt: skip
    tls: dict[str, Any] = {}
    if config.tls_cert:
        tls = {"ssl_certfile": config.tls_cert, "ssl_keyfile": config.tls_key}
    server = uvicorn.Server(uvicorn.Config(
        app, host=config.host, port=config.rest_port, log_config=None, access_log=False,
        lifespan="off", server_header=False, **tls,
    ))  # fmt: skip

    def stop(*_args: object) -> None:
        server.should_exit = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if stop_signals.taken_at_start() is not None:  # one came while it started, not taken
        stop()
    threading.Thread(target=_stop_at_end_of_input, args=(stop,), daemon=True).start()
    log.info("rest_catalog_serving", host=config.host, port=config.rest_port,
             tls=bool(config.tls_cert))  # fmt: skip
    try:
        server.run()
    finally:
        close()
    return bool(server.started)


def _vending(config: ServerConfig) -> Any:
    """The catalog's credential vending (off without ``--rest-vend-role-arn``)."""
    from metastore_server.rest.vending import Vending

    properties = file_io_properties(config)
    if config.s3_endpoint:  # an S3-compatible store: buckets by path (DuckDB's http switch)
        properties["s3.path-style-access"] = "true"
    return Vending(config.rest_vend_role_arn, config.rest_vend_sts_endpoint, config.s3_region,
                   config.rest_vend_duration, properties,
                   reuse=config.rest_vend_reuse == "on")  # fmt: skip


def _signing(config: ServerConfig) -> Any:
    """The catalog's remote signing (off unless ``--rest-remote-signing on``), for the
    server's S3 endpoint and region."""
    from metastore_server.rest.signing import Endpoint, Signing

    return Signing(config.rest_remote_signing == "on",
                   Endpoint.of(config.s3_endpoint, config.s3_region))


def _stop_at_end_of_input(stop: Any) -> None:
    """Stop once standard input ends. Read from its descriptor, not ``sys.stdin``: a daemon
    thread holding the buffered reader's lock when the process exits (stopped by a signal)
    aborts the interpreter's finalization."""
    try:
        while os.read(sys.stdin.fileno(), 4096):
            pass
    except (OSError, ValueError):
        pass
    stop()
