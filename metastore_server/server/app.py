"""Assemble a running metastore from a config: store, catalog, handler, server."""

from __future__ import annotations

import gc
import ipaddress
from collections.abc import Callable
from pathlib import Path

import structlog

from metastore_server import __version__
from metastore_server.api.authorization import build_authorizer
from metastore_server.api.client_settings import HIVE_DEFAULTS
from metastore_server.api.handler import MetastoreHandler
from metastore_server.catalog.core.context import MOVE_NOTE
from metastore_server.catalog.data.filesystems import FileSystems, FileSystemUnavailable
from metastore_server.catalog.data.operations import DataOperations
from metastore_server.catalog.data.roots import DataRoots
from metastore_server.catalog.data.warehouse import Warehouse, to_uri
from metastore_server.catalog.events.formats import factory_settings
from metastore_server.catalog.facade import Catalog
from metastore_server.catalog.security.delegation import DelegationTokens, TokenLifetimes
from metastore_server.server.auth import build_sasl_server
from metastore_server.server.config import ServerConfig
from metastore_server.server.monitoring import StoreHealth
from metastore_server.server.thrift_server import MetastoreServer
from metastore_server.storage import row_scan
from metastore_server.storage.open import describe, open_store
from metastore_server.wire import walk as wire_walk

#: HMS's switch of fast statistics on create and add (``[hive]`` in the config file).
AUTOGATHER = "hive.stats.autogather"

log = structlog.get_logger(__name__)


def build_handler(config: ServerConfig) -> tuple[MetastoreHandler, Callable[[], None]]:
    """The handler over a freshly opened store, and a function that closes the store."""
    warehouse = Warehouse(config.warehouse)
    data = data_operations(config, warehouse)
    store = open_store(
        config.storage,
        writer_lease_s=config.writer_lease,
        undoers={MOVE_NOTE: data.undo_noted_move},
    )
    catalog = Catalog(
        store,
        warehouse,
        partition_request_limit=config.partition_request_limit,
        listing_cache_bytes=config.listing_cache_mb * 1024 * 1024,
        writer_lease_s=config.writer_lease,
        data=data,
        txn_timeout_s=config.txn_timeout,
        event_ttl_s=config.event_ttl,
        notification_log=config.notification_log == "on",
        event_messages=config.event_messages,
        stats_autogather=config.extra_config.get(AUTOGATHER, "true").strip().lower() == "true",
    )
    config_values = {
        **HIVE_DEFAULTS,
        "hive.metastore.limit.partition.request": str(config.partition_request_limit),
        "hive.metastore.warehouse.dir": to_uri(Path(config.warehouse).absolute()),
        "hive.txn.timeout": f"{config.txn_timeout:g}s",
        "hive.metastore.event.db.listener.timetolive": f"{config.event_ttl:g}s",
        **factory_settings(config.event_messages),
        **config.extra_config,
    }
    if config.authorization != "off" and config.auth == "none":
        log.warning(
            "authorization_without_authentication",
            authorization=config.authorization,
            detail="with --auth none a user is only claimed (set_ugi): any client may claim "
            "to be an administrator or an owner",
        )
    if passwords_in_clear(config.auth, config.host, config.tls_cert):
        log.warning(
            "passwords_in_clear_text",
            auth=config.auth,
            host=config.host,
            detail="without TLS, PLAIN logins (and the REST catalog's Basic credentials and "
            "bearer tokens) cross the network as they are: anyone on the path reads them",
            hint="give the server --tls-cert and --tls-key, or bind it to loopback",
        )
    authorizer = build_authorizer(
        config.authorization,
        catalog,
        auth=config.auth,
        config_values=config_values,
        admin_users=config.admin_users,
    )
    tokens = delegation_tokens(config, catalog)
    proxy_users = config.proxy_user_rules()
    if proxy_users:
        log.info("proxy_users", superusers=sorted(proxy_users.rules))
    handler = MetastoreHandler(catalog, config_values, authorizer, tokens, proxy_users)
    handler.settings.store_health = StoreHealth(config.storage)
    return handler, catalog.close


def passwords_in_clear(auth: str, host: str, tls_cert: str) -> bool:
    """Whether clients send passwords unencrypted beyond this machine: ``--auth password``
    or ``ldap`` without TLS on a ``--host`` other than loopback (a name other than
    ``localhost``, or an address of every interface, counts as beyond)."""
    return auth in ("password", "ldap") and not tls_cert and not is_loopback(host)


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) is this machine's loopback only."""
    name = host.strip().strip("[]").rstrip(".").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False  # a host name: its addresses are not looked up
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1
    return address.is_loopback or (mapped is not None and mapped.is_loopback)


def delegation_tokens(config: ServerConfig, catalog: Catalog) -> DelegationTokens | None:
    """The delegation-token manager of a Kerberos server (None otherwise: no tokens)."""
    if config.auth != "kerberos":
        return None
    if config.sasl_qop == "auth-conf":
        log.warning("delegation_token_logins_off", reason="DIGEST-MD5 has no auth-conf layer "
                    "here: tokens are issued but logins with them are refused")  # fmt: skip
    lifetimes = TokenLifetimes(
        key_update_interval=config.delegation_key_update_interval,
        renew_interval=config.delegation_token_renew_interval,
        max_lifetime=config.delegation_token_max_lifetime,
    )
    return DelegationTokens(catalog.secrets, lifetimes)


def data_operations(config: ServerConfig, warehouse: Warehouse) -> DataOperations:
    """The data operations of ``config`` (the warehouse root is never deleted), logged: a
    deployment must see at start whether this server deletes data, and where it goes."""
    options = config.filesystem_options()
    filesystems = FileSystems(options)
    roots = data_roots(config, filesystems, warehouse)
    try:
        data = DataOperations(
            filesystems,
            enabled=config.data_operations == "on",
            trash_roots=config.trash_roots(),
            protected=[warehouse.root_uri],
            roots=roots,
        )
    except FileSystemUnavailable as exc:
        raise ValueError(f"trash root: {exc}") from None
    if data.enabled:
        log.info(
            "data_operations_on",
            trash=config.trash_roots() or None,
            data_roots=roots.describe() or None,
            filesystem_options={scheme: sorted(values) for scheme, values in options.items()},
        )
    else:
        log.warning("data_operations_off", detail="no directory is created, deleted or moved")
    return data


def data_roots(config: ServerConfig, filesystems: FileSystems, warehouse: Warehouse) -> DataRoots:
    """The data roots of ``config``; ValueError when one cannot be resolved, or the warehouse
    or a trash root (places the server itself writes to) lies outside them."""
    roots = DataRoots.parse(config.data_root_uris(), filesystems)
    if not roots.active:
        return roots
    named = [("warehouse", "--warehouse", warehouse.root_uri)]
    named += [("trash root", "--trash-root", uri) for uri in config.trash_roots()]
    for what, flag, uri in named:
        try:
            outside = roots.outside(filesystems.resolve(uri))
        except FileSystemUnavailable as exc:
            raise ValueError(f"{what} {uri}: {exc}") from None
        if outside is not None:
            raise ValueError(
                f"data roots: the {what} ({flag}) {outside}; add it to --data-roots "
                "or move it under one"
            )
    return roots


#: Allocations (less deallocations) between collections of the youngest generation, and how
#: many collections of each generation make one of the next: a call adding 1,000 partitions
#: makes some 20,000 objects that all live to its end, and with Python's defaults (700, 10,
#: 10) the collector walked them again and again (a quarter of such a call's time).
GC_THRESHOLDS = (20_000, 20, 20)


def tune_garbage_collector() -> None:
    """Set the serving process's collector: everything made while starting (modules, Thrift
    specs, the catalog) is frozen out of collections, and ``GC_THRESHOLDS`` apply. Only for a
    process that serves (not for code that builds a server inside another program)."""
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def build_server(config: ServerConfig) -> tuple[MetastoreServer, Callable[[], None]]:
    """A started-on-demand server for ``config`` and the function that releases its store."""
    handler, close = build_handler(config)
    server = MetastoreServer(
        handler,
        config.host,
        config.port,
        transport=config.transport,
        protocol=config.protocol,
        hms_api=config.hms_api,
        max_connections=config.max_connections,
        max_message_size=config.max_message_size,
        message_timeout=config.message_timeout,
        call_timeout=config.call_timeout,
        tls_cert=config.tls_cert,
        tls_key=config.tls_key,
        sasl=build_sasl_server(
            config.auth,
            password_file=config.password_file,
            kerberos_principal=config.kerberos_principal,
            kerberos_keytab=config.kerberos_keytab,
            sasl_qop=config.sasl_qop,
            tokens=handler.tokens,
            impersonation=handler.proxy_users,
            **config.ldap_settings(),
        ),
    )
    log.info(
        "metastore_starting",
        version=__version__,
        storage=describe(config.storage),
        warehouse=str(Path(config.warehouse).absolute()),
        transport=config.transport,
        protocol=config.protocol,
        tls=bool(config.tls_cert),
        auth=config.auth,
        authorization=config.authorization,
        max_message_size=config.max_message_size,
    )
    if config.protocol != "compact" and not wire_walk.compiled():
        log.warning(
            "wire_walker_not_compiled",
            hint="every request is checked by plain Python (about 40 us a partition); "
            "install a C compiler and reinstall to compile metastore_server/wire/walk",
        )
    if not row_scan.compiled():
        log.warning(
            "row_scan_not_compiled",
            hint="big reads step their rows in plain Python (about twice as slow); install a "
            "C compiler and reinstall to compile storage/row_scan",
        )
    return server, close
