"""``metastore-server``: the console script (``serve``, ``explain``, ``values``, ``timeline``,
``dependency``, ``bench``, ``import``, ``hash-password``)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import structlog

from metastore_server import __version__
from metastore_server.api.authorization import AUTHORIZATION_CHOICES
from metastore_server.audit import configure_logging
from metastore_server.cli import bench as cli_bench
from metastore_server.cli import dependency as cli_dependency
from metastore_server.cli import errors, serving
from metastore_server.cli import explain as cli_explain
from metastore_server.cli import importing as cli_import
from metastore_server.cli import password as cli_password
from metastore_server.cli import timeline as cli_timeline
from metastore_server.cli import values as cli_values
from metastore_server.cli.ldap_options import add_ldap_options, ldap_arguments
from metastore_server.cli.proxy_options import add_proxy_user_option, proxy_user_arguments
from metastore_server.cli.rest_options import add_rest_options, rest_arguments
from metastore_server.server.auth import AUTH_CHOICES
from metastore_server.server.config import ServerConfig
from metastore_server.storage import embedded_files
from metastore_server.storage.open import sqlite_path

log = structlog.get_logger(__name__)

DEBUG_HELP = "show the Python traceback of an unexpected failure"


def _file_defaults(argv: Sequence[str] | None) -> ServerConfig:
    """Settings from ``--config FILE`` (or METASTORE_CONFIG) and the environment."""
    early = argparse.ArgumentParser(add_help=False)
    early.add_argument("--config", default=os.environ.get("METASTORE_CONFIG"))
    known, _rest = early.parse_known_args(argv)
    base = ServerConfig.from_file(known.config) if known.config else None
    return ServerConfig.from_env(base=base)


def _serve_parser(
    sub: argparse._SubParsersAction,
    defaults: ServerConfig,
) -> None:
    serve = sub.add_parser(
        "serve",
        help="serve the metastore Thrift API",
        description="Serve the Hive Metastore Thrift API. Flags override METASTORE_* variables.",
    )
    _where_options(serve, defaults)
    group = serve.add_argument_group
    _wire_options(group("the wire: transports, connections, workers, limits"), defaults)
    _security_options(group("who may connect"), defaults)
    _catalog_options(group("catalog behaviour"), defaults)
    _data_options(group("managed data"), defaults)
    _log_options(group("logs"), defaults)
    _monitoring_options(group("monitoring"), defaults)
    add_rest_options(group("Iceberg REST catalog"), defaults)


def _where_options(serve: Any, defaults: ServerConfig) -> None:
    """``serve``'s options: where it listens and stores."""
    serve.add_argument(
        "--config",
        help="TOML file of these settings (also METASTORE_CONFIG); flags and METASTORE_* "
        "variables win over it",
    )
    serve.add_argument("--host", default=defaults.host, help="bind address (default %(default)s)")
    serve.add_argument("--port", type=int, default=defaults.port, help="port (default %(default)s)")
    serve.add_argument(
        "--storage",
        default=defaults.storage,
        help="storage URL: sqlite:///path (default %(default)s)",
    )
    serve.add_argument(
        "--warehouse", default=defaults.warehouse, help="warehouse directory (default %(default)s)"
    )


def _wire_options(group: Any, defaults: ServerConfig) -> None:
    """``serve``'s options: transports, connections, workers and limits."""
    group.add_argument(
        "--transport",
        choices=("buffered", "framed"),
        default=defaults.transport,
        help="Thrift transport (default %(default)s, as Hive)",
    )
    group.add_argument(
        "--protocol",
        choices=("binary", "compact"),
        default=defaults.protocol,
        help="Thrift protocol (default %(default)s, as Hive)",
    )
    group.add_argument(
        "--hms-api",
        choices=("auto", "2.3", "4"),
        default=defaults.hms_api,
        help="wire layouts where HMS 2.3 and 3.x/4.x differ: auto (each connection by what its "
        "calls show; see docs/clients.md), or 2.3 or 4 for every connection "
        "(default %(default)s)",
    )
    group.add_argument(
        "--max-connections",
        type=int,
        default=defaults.max_connections,
        help="concurrent client connections accepted (default %(default)s)",
    )
    group.add_argument(
        "--workers",
        type=int,
        default=defaults.workers,
        help="worker processes serving calls, under a supervisor that accepts connections and "
        "replaces a worker that dies or runs a call past --call-timeout; 0: one process, no "
        "supervisor (default: the number of cores, %(default)s)",
    )
    group.add_argument(
        "--call-timeout",
        type=float,
        default=defaults.call_timeout,
        metavar="SECONDS",
        help="a call running longer has its worker replaced (its connection closed); 0: never "
        "(default %(default)s)",
    )
    group.add_argument("--worker-channel-fd", type=int, default=-1, help=argparse.SUPPRESS)
    group.add_argument(
        "--max-message-size",
        type=int,
        default=defaults.max_message_size,
        help="largest incoming Thrift message in bytes; a bigger one closes its connection "
        "(default %(default)s bytes)",
    )
    group.add_argument(
        "--message-timeout",
        type=float,
        default=defaults.message_timeout,
        metavar="SECONDS",
        help="once the first byte of a message has arrived, the rest must arrive within this "
        "time or the connection is closed; idle connections are never cut "
        "(0: no limit; default %(default)s)",
    )


def _security_options(group: Any, defaults: ServerConfig) -> None:
    """``serve``'s options: who may connect."""
    group.add_argument(
        "--tls-cert",
        default=defaults.tls_cert,
        metavar="PATH",
        help="PEM certificate (chain): with --tls-key, serve over TLS",
    )
    group.add_argument(
        "--tls-key", default=defaults.tls_key, metavar="PATH", help="PEM private key of --tls-cert"
    )
    group.add_argument(
        "--auth",
        choices=AUTH_CHOICES,
        default=defaults.auth,
        help="client authentication: none (as HMS without SASL); password (SASL PLAIN, as "
        "Hive 4's hive.metastore.authentication=CONFIG, against --password-file); ldap (SASL "
        "PLAIN checked by binding to --ldap-url as the user, as hive.metastore.authentication="
        "LDAP); "
        "kerberos (SASL GSSAPI, as hive.metastore.sasl.enabled=true, with --kerberos-principal "
        "and --kerberos-keytab); a client that does not speak SASL is then refused "
        "(default %(default)s)",
    )
    group.add_argument(
        "--password-file",
        default=defaults.password_file,
        metavar="PATH",
        help="--auth password: a file of user:hash lines (argon2 or bcrypt hashes; make them with "
        "`metastore-server hash-password`), read again when it changes",
    )
    add_ldap_options(group, defaults)
    group.add_argument(
        "--kerberos-principal",
        default=defaults.kerberos_principal,
        metavar="PRINCIPAL",
        help="--auth kerberos: the server's principal, as HMS's hive.metastore.kerberos.principal "
        "(service/_HOST@REALM; _HOST becomes this host's name)",
    )
    group.add_argument(
        "--kerberos-keytab",
        default=defaults.kerberos_keytab,
        metavar="PATH",
        help="--auth kerberos: the keytab of --kerberos-principal",
    )
    group.add_argument(
        "--sasl-qop",
        choices=("auth", "auth-int", "auth-conf"),
        default=defaults.sasl_qop,
        help="--auth kerberos: the protection offered after login, as hadoop.rpc.protection "
        "(auth: none; auth-int: integrity; auth-conf: privacy) (default %(default)s)",
    )
    _delegation_options(group, defaults)
    group.add_argument(
        "--authorization",
        choices=AUTHORIZATION_CHOICES,
        default=defaults.authorization,
        help="who may do what: off (every caller may do everything, as HMS without an "
        "authorization manager); storage (HMS's storage-based authorization: creating, "
        "altering or dropping a database, table or partition needs the caller's permission "
        "on its directories); privileges (the roles and privileges the server stores are "
        "enforced, as HMS's SQL-standard based authorization) (default %(default)s)",
    )
    group.add_argument(
        "--admin-users",
        default=defaults.admin_users,
        metavar="USER[,USER...]",
        help="--authorization privileges: users who are administrators, as HMS's "
        "hive.users.in.admin.role (besides the holders of the admin role)",
    )
    add_proxy_user_option(group)


def _delegation_options(group: Any, defaults: ServerConfig) -> None:
    """``serve``'s options: delegation-token lifetimes (--auth kerberos)."""
    for flag, default, hms_name, what in (
        ("--delegation-key-update-interval", defaults.delegation_key_update_interval,
         "hive.cluster.delegation.key.update-interval", "how often a new master key signs "
         "new delegation tokens"),
        ("--delegation-token-renew-interval", defaults.delegation_token_renew_interval,
         "hive.cluster.delegation.token.renew-interval", "how long a delegation token lives "
         "past its issue or last renewal"),
        ("--delegation-token-max-lifetime", defaults.delegation_token_max_lifetime,
         "hive.cluster.delegation.token.max-lifetime", "how long after its issue a "
         "delegation token may be renewed to at most"),
    ):  # fmt: skip
        group.add_argument(
            flag,
            type=float,
            default=default,
            metavar="SECONDS",
            help=f"--auth kerberos: {what}, as HMS's {hms_name} (default %(default)g)",
        )


def _catalog_options(group: Any, defaults: ServerConfig) -> None:
    """``serve``'s options: catalog behaviour."""
    group.add_argument(
        "--partition-request-limit",
        type=int,
        default=defaults.partition_request_limit,
        help="most partitions one request may return, as HMS's "
        "hive.metastore.limit.partition.request (default %(default)s: no limit)",
    )
    group.add_argument(
        "--listing-cache-mb",
        type=int,
        default=defaults.listing_cache_mb,
        help="memory for whole-table partition listings kept while the store is unchanged "
        "(embedded store; 0: off; default %(default)s)",
    )
    group.add_argument(
        "--writer-lease",
        type=float,
        default=defaults.writer_lease,
        metavar="SECONDS",
        help="HBase: how long a server's unfinished change (its intent) and its marks of a "
        "write in progress stand without a heartbeat before another server process takes "
        "them for a dead server's and rolls the change back (default %(default)s)",
    )
    group.add_argument(
        "--txn-timeout",
        type=float,
        default=defaults.txn_timeout,
        metavar="SECONDS",
        help="a lock or transaction not heartbeated for this long expires, as HMS's "
        "hive.txn.timeout (default %(default)s)",
    )
    group.add_argument(
        "--event-ttl",
        type=float,
        default=defaults.event_ttl,
        metavar="SECONDS",
        help="notification events older than this are removed, as HMS's "
        "hive.metastore.event.db.listener.timetolive (default %(default)s)",
    )
    group.add_argument(
        "--notification-log",
        choices=("on", "off"),
        default=defaults.notification_log,
        help="record an event for every change, read with get_next_notification (HMS's "
        "DbNotificationListener; off: no events, as HMS without it) (default %(default)s)",
    )
    group.add_argument(
        "--event-messages",
        choices=("json", "gzip"),
        default=defaults.event_messages,
        help="the format of new events' messages, as HMS's metastore.event.message.factory: "
        "json (json-0.2, what Impala and StarRocks read) or gzip (gzip(json-2.0), read by "
        "Hive replication and Doris) (default %(default)s)",
    )


def _data_options(group: Any, defaults: ServerConfig) -> None:
    """``serve``'s options: managed data."""
    group.add_argument(
        "--data-operations",
        choices=("on", "off"),
        default=defaults.data_operations,
        help="on: create, delete and move managed tables' directories as HMS does, on every "
        "file system; off: data is managed elsewhere, locations are never touched "
        "(default %(default)s)",
    )
    group.add_argument(
        "--trash-root",
        default=defaults.trash_root,
        metavar="URI[,URI...]",
        help="move dropped data under URI/Current/... instead of deleting it, unless the drop "
        "asks for PURGE (one root per file system: file:/..., s3://bucket/..., hdfs://...)",
    )
    group.add_argument(
        "--data-roots",
        default=defaults.data_roots,
        metavar="URI[,URI...]",
        help="create, move and delete data only under these directories (file:/..., "
        "s3://bucket/..., hdfs://...; the warehouse must be under one); default: anywhere",
    )
    group.add_argument(
        "--s3-endpoint",
        default=defaults.s3_endpoint,
        metavar="URL",
        help="endpoint of an S3-compatible store (credentials and region otherwise from the "
        "standard AWS variables and files)",
    )
    group.add_argument("--s3-region", default=defaults.s3_region, help="S3 region")
    group.add_argument(
        "--fs-option",
        action="append",
        default=[],
        metavar="SCHEME.KEY=VALUE",
        help="an fsspec option of a file system, e.g. s3.anon=false (repeatable)",
    )


def _log_options(group: Any, defaults: ServerConfig) -> None:
    """``serve``'s options: logs."""
    group.add_argument(
        "--log-level", default=defaults.log_level, help="debug, info, warning, error"
    )
    group.add_argument(
        "--log-format",
        choices=("console", "json"),
        default=defaults.log_format,
        help="log line format (default %(default)s)",
    )


def _monitoring_options(group: Any, defaults: ServerConfig) -> None:
    """``serve``'s options: health checks and metrics."""
    group.add_argument(
        "--metrics-port",
        type=int,
        default=defaults.metrics_port,
        metavar="PORT",
        help="serve /health, /ready and Prometheus /metrics over HTTP on this port of --host "
        "(docs/operations.md#monitoring); 0: not served (default %(default)s)",
    )


def build_parser(defaults: ServerConfig | None = None) -> argparse.ArgumentParser:
    """The argument parser of the console script (``defaults``: of ``serve``'s flags)."""
    parser = argparse.ArgumentParser(
        prog="metastore-server",
        description="A Hive-Metastore-compatible Thrift server.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    sub = parser.add_subparsers(dest="command", required=True)
    _serve_parser(sub, defaults if defaults is not None else ServerConfig.from_env())
    cli_explain.add_parser(sub)
    cli_values.add_parser(sub)
    cli_timeline.add_parser(sub)
    cli_dependency.add_parser(sub)
    cli_bench.add_parser(sub)
    cli_import.add_parser(sub)
    cli_password.add_parser(sub)
    for command in sub.choices.values():  # --debug before or after the command
        command.add_argument(
            "--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP
        )
    return parser


def _config_from_args(args: argparse.Namespace, defaults: ServerConfig) -> ServerConfig:
    config = ServerConfig(
        extra_config=defaults.extra_config,
        host=args.host,
        port=args.port,
        storage=args.storage,
        warehouse=args.warehouse,
        transport=args.transport,
        protocol=args.protocol,
        hms_api=args.hms_api,
        max_connections=args.max_connections,
        workers=args.workers,
        call_timeout=args.call_timeout,
        max_message_size=args.max_message_size,
        message_timeout=args.message_timeout,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        auth=args.auth,
        password_file=args.password_file,
        **ldap_arguments(args),
        kerberos_principal=args.kerberos_principal,
        kerberos_keytab=args.kerberos_keytab,
        sasl_qop=args.sasl_qop,
        delegation_key_update_interval=args.delegation_key_update_interval,
        delegation_token_renew_interval=args.delegation_token_renew_interval,
        delegation_token_max_lifetime=args.delegation_token_max_lifetime,
        authorization=args.authorization,
        admin_users=args.admin_users,
        **proxy_user_arguments(args, defaults),
        partition_request_limit=args.partition_request_limit,
        listing_cache_mb=args.listing_cache_mb,
        writer_lease=args.writer_lease,
        txn_timeout=args.txn_timeout,
        event_ttl=args.event_ttl,
        notification_log=args.notification_log,
        event_messages=args.event_messages,
        data_operations=args.data_operations,
        trash_root=args.trash_root,
        data_roots=args.data_roots,
        s3_endpoint=args.s3_endpoint,
        s3_region=args.s3_region,
        fs_options=_fs_options(defaults.fs_options, args.fs_option),
        **rest_arguments(args),
        metrics_port=args.metrics_port,
        log_level=args.log_level,
        log_format=args.log_format,
    )
    config.validate()
    return config


def _option_value(text: str) -> object:
    """``true``/``false`` and integers as such; other text as it is."""
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    try:
        return int(text)
    except ValueError:
        return text


def _fs_options(
    base: dict[str, dict[str, object]], given: Sequence[str]
) -> dict[str, dict[str, object]]:
    """``base`` with the ``SCHEME.KEY=VALUE`` options of the command line over it."""
    options = {scheme: dict(values) for scheme, values in base.items()}
    for item in given:
        name, equals, value = item.partition("=")
        scheme, dot, key = name.partition(".")
        if not (equals and dot and scheme and key):
            raise ValueError(f"--fs-option takes SCHEME.KEY=VALUE, not {item!r}")
        options.setdefault(scheme.lower(), {})[key] = _option_value(value)
    return options


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``metastore-server`` console script: a failure is one or two lines
    on stderr (exit 2: usage or set-up, 1: refused or unexpected), the traceback only with
    ``--debug``."""
    words = list(sys.argv[1:] if argv is None else argv)
    try:
        return _main(argv)
    except KeyboardInterrupt:
        return errors.report("interrupted", 130)
    except Exception as exc:
        if "--debug" in words:
            raise
        return errors.unexpected(exc)


def _make_store_directory(storage: str) -> None:
    """Make an embedded store's missing directories 0700 (it holds keys), so a warehouse made
    beside it (``./var/warehouse``) does not make their shared parent open to others first."""
    if storage.startswith("sqlite:"):
        path = sqlite_path(storage)
        embedded_files.make_directories(os.path.dirname(os.path.abspath(path)))


def _main(argv: Sequence[str] | None) -> int:
    try:
        defaults = _file_defaults(argv)
    except (OSError, ValueError) as exc:
        return errors.report(f"config: {exc}", errors.USAGE)
    parser = build_parser(defaults)
    args = parser.parse_args(argv)
    if args.command == "serve":
        try:
            config = _config_from_args(args, defaults)
        except ValueError as exc:
            parser.error(str(exc))
        configure_logging(config.log_level, config.log_format)
        try:
            _make_store_directory(config.storage)  # before the warehouse: they may share ./var
            Path(config.warehouse).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            return errors.report(
                f"--warehouse {config.warehouse}: {exc.strerror or exc}", errors.USAGE
            )
        worker_argv = list(sys.argv[1:] if argv is None else argv)
        return serving.serve(config, worker_argv, args.worker_channel_fd, args.rest_process)
    if args.command == "explain":
        return cli_explain.run(args)
    if args.command == "values":
        return cli_values.run(args)
    if args.command == "timeline":
        return cli_timeline.run(args)
    if args.command == "dependency":
        return cli_dependency.run(args)
    if args.command == "bench":
        return cli_bench.run(args)
    if args.command == "hash-password":
        return cli_password.run(args)
    if args.command == "import":
        configure_logging(args.log_level)  # to stderr, never into the report
        return cli_import.run(args)
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
