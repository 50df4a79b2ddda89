"""Server settings: one dataclass, filled from flags > environment variables > a config file >
defaults."""

from __future__ import annotations

import math
import os
import tomllib
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import cast

from metastore_server.api.proxy_users import ProxyUsers, parse_option
from metastore_server.catalog.core.context import WRITER_LEASE_S
from metastore_server.server.transport_limits import (
    DEFAULT_MAX_MESSAGE_SIZE,
    DEFAULT_MESSAGE_TIMEOUT,
    server_tls_context,
)

ENV_PREFIX = "METASTORE_"
#: Bounds of max_message_size: Thrift lengths are signed 32-bit integers.
MIN_MESSAGE_SIZE = 1024
MAX_MESSAGE_SIZE = 2**31 - 1


#: The delegation-token lifetimes (seconds).
DELEGATION_SETTINGS = (
    "delegation_key_update_interval",
    "delegation_token_renew_interval",
    "delegation_token_max_lifetime",
)

#: The ``ldap_*`` settings that are text (METASTORE_LDAP_URL, ...).
LDAP_TEXT_SETTINGS = (
    "ldap_url",
    "ldap_starttls",
    "ldap_ca_file",
    "ldap_user_dn_pattern",
    "ldap_base_dn",
    "ldap_guid_key",
    "ldap_user_filter",
    "ldap_group_filter",
    "ldap_group_dn_pattern",
    "ldap_group_membership_key",
    "ldap_group_class_key",
    "ldap_bind_dn",
    "ldap_bind_password_file",
)

#: Settings given as tables of a config file, not as ``name = value``.
_TABLE_SETTINGS = ("extra_config", "fs_options", "proxy_users")

_KIND_WORDS = {int: "a whole number", float: "a number", str: "a string", bool: "true or false"}


def with_proxy_rules(
    base: dict[str, dict[str, object]], rules: list[str]
) -> dict[str, dict[str, object]]:
    """``base`` with the ``SUPERUSER:users=..;groups=..;hosts=..`` rules over it (a rule
    replaces the superuser's rule of ``base``); ValueError on one of another form."""
    merged = {superuser: dict(spec) for superuser, spec in base.items()}
    given: set[str] = set()
    for text in rules:
        superuser, spec = parse_option(text)
        if superuser in given:
            raise ValueError(f"--proxy-user {superuser}: given twice (one rule a superuser)")
        given.add(superuser)
        merged[superuser] = dict(spec)
    return merged


@dataclass
class ServerConfig:
    """Everything ``metastore-server serve`` needs."""

    host: str = "127.0.0.1"
    port: int = 9083
    storage: str = "sqlite:///./var/metastore.db"
    warehouse: str = "./var/warehouse"
    transport: str = "buffered"  # buffered | framed
    protocol: str = "binary"  # binary | compact
    #: Which HMS generation's wire layouts clients get where 2.3 and 3.x/4.x differ: auto (each
    #: connection by what its calls show), 2.3 or 4 (every connection).
    hms_api: str = "auto"
    max_connections: int = 1000
    #: Worker processes serving calls (0: serve in this one process, no supervisor).
    workers: int = field(default_factory=lambda: os.cpu_count() or 1)
    call_timeout: float = 300.0  # s a call may run before its worker is replaced; 0: never
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE  # bytes of one incoming message
    message_timeout: float = DEFAULT_MESSAGE_TIMEOUT  # s for a begun message to arrive; 0: none
    tls_cert: str = ""  # PEM certificate (chain); with tls_key, the server speaks TLS
    tls_key: str = ""  # PEM private key
    auth: str = "none"  # none | password, ldap (SASL PLAIN) | kerberos (SASL GSSAPI)
    password_file: str = ""  # user:argon2-hash lines (auth password)
    # auth ldap (metastore_server.server.ldap_auth; HMS's hive.metastore.authentication.ldap.*)
    ldap_url: str = ""  # ldap://host[:port] or ldaps://host[:port], space-separated, in order
    ldap_starttls: str = "off"  # on: StartTLS on ldap:// URLs
    ldap_ca_file: str = ""  # PEM CAs the LDAP server's certificate is checked against
    ldap_user_dn_pattern: str = ""  # uid=%s,ou=people,dc=example,dc=com (colon-separated)
    ldap_base_dn: str = ""  # users (<guid key>=name,<base>) and groups are under it
    ldap_guid_key: str = "uid"  # the attribute holding the user name
    ldap_user_filter: str = ""  # comma-separated users who may log in ('': all)
    ldap_group_filter: str = ""  # comma-separated groups whose members may log in ('': all)
    ldap_group_dn_pattern: str = ""  # cn=%s,ou=groups,dc=example,dc=com (colon-separated)
    ldap_group_membership_key: str = "member"  # the group attribute naming its members
    ldap_group_class_key: str = "groupOfNames"  # the object class of groups
    ldap_bind_dn: str = ""  # a search user that finds the user's DN under ldap_base_dn
    ldap_bind_password_file: str = ""  # the file holding ldap_bind_dn's password
    ldap_timeout: float = 10.0  # s one login may take against the directory
    kerberos_principal: str = ""  # the server's principal, service/_HOST@REALM (auth kerberos)
    kerberos_keytab: str = ""  # the keytab holding its keys (auth kerberos)
    sasl_qop: str = "auth"  # auth | auth-int | auth-conf: the GSSAPI layers offered
    #: Delegation tokens (auth kerberos), in seconds, as HMS's hive.cluster.delegation.*:
    #: how often a new master key is made, how long a token lives past its issue or last
    #: renewal, and how long it may be renewed for at most.
    delegation_key_update_interval: float = 86400.0
    delegation_token_renew_interval: float = 86400.0
    delegation_token_max_lifetime: float = 7 * 86400.0
    authorization: str = "off"  # off | the modes of metastore_server.api.authorization
    #: Comma-separated users who are administrators (HMS's hive.users.in.admin.role).
    admin_users: str = ""
    #: Proxy users (Hadoop's hadoop.proxyuser.*): {superuser: {"users": [...], "groups":
    #: [...], "hosts": [...]}}; ``[proxy_users.SUPERUSER]`` in a config file,
    #: ``--proxy-user`` on the command line, METASTORE_PROXY_USERS (space-separated rules).
    proxy_users: dict[str, dict[str, object]] = field(default_factory=dict)
    partition_request_limit: int = -1  # HMS hive.metastore.limit.partition.request
    listing_cache_mb: int = 256  # whole-table listings kept while the store is unchanged
    writer_lease: float = WRITER_LEASE_S  # s before a write-in-progress mark counts as dead
    txn_timeout: float = 300.0  # s a lock or transaction lives without a heartbeat (HMS's)
    event_ttl: float = 86400.0  # s a notification event is kept (HMS's event listener TTL)
    notification_log: str = "on"  # on: record an event for every change; off: none (HMS default)
    #: json: messages as JSON (json-0.2, HMS's default encoder); gzip: gzip(json-2.0)
    event_messages: str = "json"
    data_operations: str = "on"  # on: create/delete/move managed data; off: data is not ours
    trash_root: str = ""  # comma-separated trash URIs (one per file system); '': delete
    data_roots: str = ""  # comma-separated URIs data may be created/moved/deleted under; '': any
    s3_endpoint: str = ""  # S3-compatible endpoint URL (else AWS_ENDPOINT_URL / AWS's)
    s3_region: str = ""  # S3 region (else AWS_REGION / AWS_DEFAULT_REGION / config files)
    #: fsspec options per scheme (``{"s3": {"anon": False}}``): ``[filesystems.s3]`` in a
    #: config file, ``--fs-option s3.KEY=VALUE`` on the command line.
    fs_options: dict[str, dict[str, object]] = field(default_factory=dict)
    #: The Iceberg REST catalog's port on ``host`` (0: not served; ``metastore_server.rest``).
    rest_port: int = 0
    #: Seconds the REST catalog keeps the answer of a request sent with an Idempotency-Key
    #: (advertised as ``idempotency-key-lifetime``; 0: keys not taken).
    rest_idempotency_lifetime: int = 1800
    #: Server-side scan planning: plan in the background (``submitted``) when the scanned
    #: snapshot holds more data files than this (0: never), and file scan tasks an answer
    #: holds (more behind ``plan-tasks`` tokens).
    rest_plan_async_files: int = 100_000
    rest_plan_batch: int = 1000
    #: Bearer JWTs of the users' identity provider for the REST catalog: its issuer (``iss``;
    #: '': none taken), its JWKS URL, the audience (``aud``) tokens must name, the claims
    #: naming the user and the groups, and the clock skew allowed (s).
    rest_jwt_issuer: str = ""
    rest_jwt_jwks_url: str = ""
    rest_jwt_audience: str = ""
    rest_jwt_user_claim: str = "sub"
    rest_jwt_groups_claim: str = ""
    rest_jwt_leeway: float = 30.0
    #: on: the REST catalog's deprecated ``POST /v1/oauth/tokens`` issues tokens (under
    #: ``--auth password``/``ldap``); off (the default, as the spec deprecates it): it issues
    #: none and its tokens are not taken.
    rest_oauth_tokens: str = "off"
    #: Vended credentials of the REST catalog: the role STS ``AssumeRole`` mints them from
    #: ('': none vended), the STS endpoint ('': AWS's), their lifetime (s, 900 to 43200).
    rest_vend_role_arn: str = ""
    rest_vend_sts_endpoint: str = ""
    rest_vend_duration: int = 3600
    #: on: a credential minted is handed again for the same table, access and user while half
    #: its lifetime is left (STS asked once, not at every load); off: minted at every request.
    rest_vend_reuse: str = "on"
    #: Remote signing of S3 requests for REST clients that ask (on/off), with the server's
    #: own credentials, for ``s3_endpoint`` and ``s3_region``.
    rest_remote_signing: str = "off"
    #: The port of /health, /ready and /metrics on ``host`` (0: not served;
    #: ``metastore_server.server.monitoring``).
    metrics_port: int = 0
    log_level: str = "info"
    log_format: str = "console"  # console | json
    extra_config: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> ServerConfig:
        """Defaults overridden by a TOML file of the same settings (``port = 9183``, ...), at
        top level or under ``[server]``; ``[hive]`` holds extra values for get_config_value.
        ValueError names an unknown or mistyped setting."""
        try:
            with open(path, "rb") as handle:
                document = tomllib.load(handle)
        except FileNotFoundError:
            raise ValueError(f"{os.fspath(path)}: no such file") from None
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{os.fspath(path)}: not valid TOML: {exc}") from None
        settings = dict(document.get("server", {}))
        tables = ("server", "hive", "filesystems", "proxy_users")
        settings.update({k: v for k, v in document.items() if k not in tables})
        config = cls()
        known = {f.name: f for f in fields(cls) if f.name not in _TABLE_SETTINGS}
        for name, value in settings.items():
            attribute = name.replace("-", "_")
            if attribute not in known:
                raise ValueError(f"{path}: unknown setting {name!r}; known: {sorted(known)}")
            expected = type(getattr(config, attribute))
            if expected is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)  # ``message_timeout = 60`` is a TOML integer
            if not isinstance(value, expected) or isinstance(value, bool):
                kind = _KIND_WORDS.get(expected, expected.__name__)
                raise ValueError(f"{path}: {name} must be {kind}, not {value!r}")
            setattr(config, attribute, value)
        config.extra_config = {str(k): str(v) for k, v in document.get("hive", {}).items()}
        filesystems = document.get("filesystems", {})
        if not isinstance(filesystems, dict) or not all(
            isinstance(v, dict) for v in filesystems.values()
        ):
            raise ValueError(f"{path}: [filesystems.SCHEME] tables of fsspec options expected")
        config.fs_options = {str(k).lower(): dict(v) for k, v in filesystems.items()}
        proxy_users = document.get("proxy_users", {})
        if not isinstance(proxy_users, dict) or not all(
            isinstance(v, dict) for v in proxy_users.values()
        ):
            raise ValueError(f"{path}: [proxy_users.SUPERUSER] tables of users, groups, hosts")
        config.proxy_users = {str(k): dict(v) for k, v in proxy_users.items()}
        return config

    @classmethod
    def from_env(
        cls, environ: dict[str, str] | None = None, base: ServerConfig | None = None
    ) -> ServerConfig:
        """``base`` (default: the defaults; else a config file's) overridden by
        ``METASTORE_<FIELD>`` environment variables."""
        env = os.environ if environ is None else environ
        config = base if base is not None else cls()
        for name in (
            "host",
            "storage",
            "warehouse",
            "transport",
            "protocol",
            "hms_api",
            "log_level",
            "log_format",
            "tls_cert",
            "tls_key",
            "auth",
            "password_file",
            *LDAP_TEXT_SETTINGS,
            "kerberos_principal",
            "kerberos_keytab",
            "sasl_qop",
            "authorization",
            "admin_users",
            "data_operations",
            "notification_log",
            "event_messages",
            "trash_root",
            "data_roots",
            "s3_endpoint",
            "s3_region",
            "rest_jwt_issuer",
            "rest_jwt_jwks_url",
            "rest_jwt_audience",
            "rest_jwt_user_claim",
            "rest_jwt_groups_claim",
            "rest_oauth_tokens",
            "rest_vend_role_arn",
            "rest_vend_sts_endpoint",
            "rest_remote_signing",
        ):
            value = env.get(ENV_PREFIX + name.upper())
            if value:
                setattr(config, name, value)
        for name in (
            "port",
            "max_connections",
            "workers",
            "max_message_size",
            "partition_request_limit",
            "listing_cache_mb",
            "rest_port",
            "rest_idempotency_lifetime",
            "rest_vend_duration",
            "rest_plan_async_files",
            "rest_plan_batch",
            "metrics_port",
        ):
            value = env.get(ENV_PREFIX + name.upper())
            if value:
                setattr(config, name, int(value))
        for name in (
            "message_timeout",
            "writer_lease",
            "txn_timeout",
            "event_ttl",
            "call_timeout",
            "rest_jwt_leeway",
            *DELEGATION_SETTINGS,
            "ldap_timeout",
        ):
            value = env.get(ENV_PREFIX + name.upper())
            if value:
                setattr(config, name, float(value))
        rules = env.get(ENV_PREFIX + "PROXY_USERS", "").split()
        if rules:
            config.proxy_users = with_proxy_rules(config.proxy_users, rules)
        return config

    def validate(self) -> None:
        """Raise ValueError on a setting that cannot work."""
        if self.transport not in ("buffered", "framed"):
            raise ValueError(f"transport must be buffered or framed, not {self.transport!r}")
        if self.protocol not in ("binary", "compact"):
            raise ValueError(f"protocol must be binary or compact, not {self.protocol!r}")
        if self.hms_api not in ("auto", "2.3", "4"):
            raise ValueError(f"hms_api must be auto, 2.3 or 4, not {self.hms_api!r}")
        if not 0 <= self.port <= 65535:
            raise ValueError(f"port out of range: {self.port}")
        if not 0 <= self.rest_port <= 65535:
            raise ValueError(f"rest_port out of range: {self.rest_port}")
        if not 0 <= self.rest_idempotency_lifetime <= 7 * 86400:
            raise ValueError("rest_idempotency_lifetime must be 0 to 604800 seconds, not "
                             f"{self.rest_idempotency_lifetime}")  # fmt: skip
        if not 0 <= self.rest_plan_async_files <= 10**9 or not 1 <= self.rest_plan_batch <= 100_000:
            raise ValueError("rest_plan_async_files must be 0 to 10**9 and rest_plan_batch 1 to "
                             f"100000, not {self.rest_plan_async_files}, {self.rest_plan_batch}")
        self._check_rest_jwt()
        if self.rest_vend_reuse not in ("on", "off"):
            raise ValueError(f"rest_vend_reuse must be on or off, not {self.rest_vend_reuse!r}")
        if not 900 <= self.rest_vend_duration <= 43200:
            raise ValueError("rest_vend_duration must be 900 to 43200 seconds (STS's bounds), "
                             f"not {self.rest_vend_duration}")  # fmt: skip
        if self.rest_port and self.rest_port == self.port:
            raise ValueError(f"rest_port {self.rest_port} is the Thrift port too")
        if not 0 <= self.metrics_port <= 65535:
            raise ValueError(f"metrics_port out of range: {self.metrics_port}")
        if self.metrics_port and self.metrics_port in (self.port, self.rest_port):
            which = "Thrift" if self.metrics_port == self.port else "REST catalog"
            raise ValueError(f"metrics_port {self.metrics_port} is the {which} port too")
        if self.rest_port and self.auth == "kerberos":
            raise ValueError("rest_port: the REST catalog authenticates with --auth password "
                             "or ldap (HTTP Basic, OAuth2 tokens), not kerberos")
        if self.max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        if self.workers < 0:
            raise ValueError(f"workers must be 0 (no supervisor) or more, not {self.workers}")
        if not (math.isfinite(self.call_timeout) and self.call_timeout >= 0):
            raise ValueError(
                f"call_timeout must be 0 (none) or a positive number of seconds, "
                f"not {self.call_timeout}"
            )
        if self.listing_cache_mb < 0:
            raise ValueError("listing_cache_mb must not be negative")
        if not MIN_MESSAGE_SIZE <= self.max_message_size <= MAX_MESSAGE_SIZE:
            raise ValueError(
                f"max_message_size must be between {MIN_MESSAGE_SIZE} and {MAX_MESSAGE_SIZE} "
                f"bytes, not {self.max_message_size}"
            )
        if not (math.isfinite(self.message_timeout) and self.message_timeout >= 0):
            raise ValueError(
                "message_timeout must be 0 (none) or a positive number of seconds, "
                f"not {self.message_timeout}"
            )
        if not (math.isfinite(self.writer_lease) and self.writer_lease > 0):
            raise ValueError(
                f"writer_lease must be a positive number of seconds, not {self.writer_lease}"
            )
        if not (math.isfinite(self.txn_timeout) and self.txn_timeout > 0):
            raise ValueError(
                f"txn_timeout must be a positive number of seconds, not {self.txn_timeout}"
            )
        if not (math.isfinite(self.event_ttl) and self.event_ttl > 0):
            raise ValueError(
                f"event_ttl must be a positive number of seconds, not {self.event_ttl}"
            )
        if self.notification_log not in ("on", "off"):
            raise ValueError(f"notification_log must be on or off, not {self.notification_log!r}")
        if self.event_messages not in ("json", "gzip"):
            raise ValueError(f"event_messages must be json or gzip, not {self.event_messages!r}")
        if self.data_operations not in ("on", "off"):
            raise ValueError(f"data_operations must be on or off, not {self.data_operations!r}")
        if bool(self.tls_cert) != bool(self.tls_key):
            given, missing = ("tls_cert", "tls_key") if self.tls_cert else ("tls_key", "tls_cert")
            raise ValueError(f"{given} is set but {missing} is not: TLS needs both or neither")
        if self.tls_cert:
            server_tls_context(self.tls_cert, self.tls_key)
        self._validate_auth()

    def _validate_auth(self) -> None:
        """Raise ValueError on an auth mode this server lacks or a password file it cannot use."""
        from metastore_server.server.auth import AUTH_CHOICES
        from metastore_server.server.passwords import parse_password_file

        if self.auth not in AUTH_CHOICES:
            raise ValueError(f"auth must be one of {', '.join(AUTH_CHOICES)}, not {self.auth!r}")
        if self.auth == "password":
            if not self.password_file:
                raise ValueError("auth password needs password_file (user:hash lines)")
            parse_password_file(self.password_file)
        elif self.password_file:
            raise ValueError(f"password_file is set but auth is {self.auth}, not password")
        if self.auth == "ldap":
            from metastore_server.server.ldap_auth import LdapSettings

            LdapSettings.from_settings(self.ldap_settings())
        elif self.ldap_url:
            raise ValueError(f"ldap_url is set but auth is {self.auth}, not ldap")
        if self.auth == "kerberos":
            if not self.kerberos_principal or not self.kerberos_keytab:
                raise ValueError(
                    "auth kerberos needs kerberos_principal (e.g. hive/_HOST@REALM) and "
                    "kerberos_keytab"
                )
            if not os.access(self.kerberos_keytab, os.R_OK):
                raise ValueError(f"kerberos_keytab {self.kerberos_keytab}: cannot be read")
        for name in DELEGATION_SETTINGS:
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number of seconds, not {value}")
        if self.sasl_qop not in ("auth", "auth-int", "auth-conf"):
            raise ValueError(f"sasl_qop must be auth, auth-int or auth-conf, not {self.sasl_qop!r}")
        if self.proxy_user_rules() and self.auth == "none":
            raise ValueError(
                "proxy users are set but auth is none: without authentication every client "
                "is whoever it claims (set_ugi), so there is nobody to act for another"
            )
        from metastore_server.api.authorization import AUTHORIZATION_CHOICES

        if self.authorization not in AUTHORIZATION_CHOICES:
            raise ValueError(
                f"authorization must be one of {', '.join(AUTHORIZATION_CHOICES)}, "
                f"not {self.authorization!r}"
            )

    def _check_rest_jwt(self) -> None:
        """ValueError for REST JWT settings that would take tokens unsafely: an issuer
        without a JWKS URL or an audience, a JWKS fetched over plain HTTP from another host
        than this one's loopback."""
        if self.rest_oauth_tokens not in ("on", "off"):
            raise ValueError(f"rest_oauth_tokens must be on or off, not {self.rest_oauth_tokens!r}")
        if self.rest_remote_signing not in ("on", "off"):
            raise ValueError("rest_remote_signing must be on or off, not "
                             f"{self.rest_remote_signing!r}")  # fmt: skip
        if not 0 <= self.rest_jwt_leeway <= 600:
            raise ValueError(f"rest_jwt_leeway must be 0 to 600 s, not {self.rest_jwt_leeway}")
        if not self.rest_jwt_issuer:
            return
        if not self.rest_jwt_jwks_url or not self.rest_jwt_audience:
            raise ValueError("rest_jwt_issuer needs rest_jwt_jwks_url and rest_jwt_audience")
        if not self.rest_jwt_user_claim:
            raise ValueError("rest_jwt_user_claim must name a claim")
        parsed = urllib.parse.urlsplit(self.rest_jwt_jwks_url)
        loopback = parsed.hostname in ("127.0.0.1", "::1", "localhost")
        if parsed.scheme != "https" and not (parsed.scheme == "http" and loopback):
            raise ValueError("rest_jwt_jwks_url must be https (plain http only on loopback)")

    def proxy_user_rules(self) -> ProxyUsers:
        """The proxy-user rules of ``proxy_users`` (ValueError on a bad one)."""
        return ProxyUsers.from_settings(self.proxy_users)

    def ldap_settings(self) -> dict[str, object]:
        """The ``ldap_*`` settings (``--auth ldap``)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name.startswith("ldap_")}

    def filesystem_options(self) -> dict[str, dict[str, object]]:
        """fsspec options per scheme: ``fs_options``, with ``s3_endpoint`` and ``s3_region``
        over them."""
        options = {scheme: dict(values) for scheme, values in self.fs_options.items()}
        s3 = options.setdefault("s3", {})
        if self.s3_endpoint:  # a setting of its own wins over the generic options
            s3["endpoint_url"] = self.s3_endpoint
        if self.s3_region:
            # fsspec's client_kwargs: a mapping of botocore's arguments.
            client_kwargs = dict(cast(Mapping[str, object], s3.get("client_kwargs") or {}))
            client_kwargs["region_name"] = self.s3_region
            s3["client_kwargs"] = client_kwargs
        return {scheme: values for scheme, values in options.items() if values}

    def trash_roots(self) -> list[str]:
        """The trash URIs of ``trash_root``."""
        return [root.strip() for root in self.trash_root.split(",") if root.strip()]

    def data_root_uris(self) -> list[str]:
        """The URIs of ``data_roots``; none: data may be anywhere."""
        return [root.strip() for root in self.data_roots.split(",") if root.strip()]
