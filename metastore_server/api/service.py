"""fb303's service calls and the metastore-wide ones: name, version, status, options, the
connection's settable configuration (``setMetaConf``), the server settings clients may read
(``get_config_value``), ``set_ugi`` and the cache and profile calls HMS answers without a store.
See ``docs/hms-api.md``.
"""

from __future__ import annotations

import time

from metastore_server import __version__, metrics
from metastore_server.api import client_settings
from metastore_server.api.area import Area, ServerSettings
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.declaration import thrift
from metastore_server.caller import current_session
from metastore_server.catalog import Catalog
from metastore_server.thrift_api import hms

SERVICE_NAME = "hbase-metastore"

#: fb303's ``fb_status.ALIVE`` and ``WARNING``, where the IDL loaded lacks the enum.
_ALIVE = 2
_WARNING = 5


class ServiceCalls(Area):
    """The service itself. Raises MetaException (a key ``setMetaConf``/``getMetaConf`` does
    not know, or a value not of its kind) and ConfigValSecurityException (a setting clients
    may not read)."""

    def __init__(self, catalog: Catalog, settings: ServerSettings) -> None:
        super().__init__(catalog, settings)
        self._alive_since = int(time.time())
        self._options: dict[str, str] = {}

    # -- fb303 -------------------------------------------------------------------------------

    @thrift(rule=auth.OPEN)
    def getName(self) -> str:  # noqa: N802 (IDL name)
        """The service's name."""
        return SERVICE_NAME

    @thrift(rule=auth.OPEN)
    def getVersion(self) -> str:  # noqa: N802
        """This server's version."""
        return __version__

    @thrift(rule=auth.OPEN)
    def getStatus(self) -> int:  # noqa: N802
        """ALIVE while the store answers a cheap read (the check of ``/ready``), else WARNING
        (the server answers, but its calls of the store fail)."""
        if self._store_problem() is not None:
            return hms.fb_status.WARNING if hasattr(hms, "fb_status") else _WARNING
        return hms.fb_status.ALIVE if hasattr(hms, "fb_status") else _ALIVE

    @thrift(rule=auth.OPEN)
    def getStatusDetails(self) -> str:  # noqa: N802
        """A word on the status: ``serving``, or why the store does not answer."""
        return self._store_problem() or "serving"

    def _store_problem(self) -> str | None:
        check = self.settings.store_health
        return check() if check is not None else None

    @thrift(rule=auth.OPEN)
    def getCounters(self) -> dict[str, int]:  # noqa: N802
        """The figures of ``/metrics`` (every process of the server's): each method called
        under its own name with its calls (as HMS counts them), ``total_api_calls``,
        ``open_connections``, and each sample of ours under its Prometheus name and labels
        (``metastore_server.metrics.fb303_counters``)."""
        return metrics.fb303_counters()

    @thrift(rule=auth.OPEN)
    def getCounter(self, key: str) -> int:  # noqa: N802
        """One of ``getCounters``; 0 for a key it does not hold."""
        return metrics.fb303_counters().get(key, 0)

    @thrift(rule=auth.API)
    def setOption(self, key: str, value: str) -> None:  # noqa: N802
        """Keep an fb303 option (it changes nothing)."""
        self._options[key] = value

    @thrift(rule=auth.OPEN)
    def getOption(self, key: str) -> str:  # noqa: N802
        """An option as set, or empty."""
        return self._options.get(key, "")

    @thrift(rule=auth.OPEN)
    def getOptions(self) -> dict[str, str]:  # noqa: N802
        """Every option set."""
        return dict(self._options)

    @thrift(rule=auth.API)
    def getCpuProfile(self, profileDurationInSec: int) -> str:  # noqa: N802, N803
        """No profile: empty."""
        return ""

    @thrift(rule=auth.OPEN)
    def aliveSince(self) -> int:  # noqa: N802
        """When this server started (seconds since the epoch)."""
        return self._alive_since

    @thrift(rule=auth.API)
    def reinitialize(self) -> None:
        """Accepted and ignored (oneway)."""

    @thrift(rule=auth.API)
    def shutdown(self) -> None:
        """Accepted and ignored: a client must not be able to stop a shared metastore."""

    # -- the metastore as a whole ------------------------------------------------------------

    @thrift(rule=auth.OPEN)
    def getMetaConf(self, key: str) -> str:  # noqa: N802
        """This connection's value of a settable key; MetaException for any other key."""
        return self.settings.meta_conf.get(key)

    @thrift(rule=auth.OPEN)
    def setMetaConf(self, key: str, value: str) -> None:  # noqa: N802
        """Set a key for this connection only; MetaException for a key that is not settable or
        a value not of its kind."""
        self.settings.meta_conf.set(key, value)

    @thrift(rule=auth.OPEN)
    def get_config_value(self, name: str, defaultValue: str) -> str:  # noqa: N803
        """A server setting clients may read (e.g. the warehouse dir); else the default.

        Keys outside ``hive*``/``hdfs*``/``mapred*``/``metastore*`` (HMS 3+'s rule; HMS
        2.3's, without ``metastore*``, under ``--hms-api 2.3``) and secrets are refused, as
        HMS does (ConfigValSecurityException).
        """
        hms_2_3 = self.settings.hms_api == "2.3"
        if not client_settings.is_readable(name or "", hms_2_3=hms_2_3):
            raise hms.ConfigValSecurityException(message=client_settings.refusal_message(name))
        return client_settings.value_of(
            self.settings.config_values,
            name,
            defaultValue,
            notification_log=self.catalog.ctx.notification_log,
        )

    @thrift(rule=auth.OPEN)
    def set_ugi(self, user_name: str, group_names: list[str] | None) -> list[str]:
        """Record who the connection claims to be (believed only without authentication,
        see :mod:`metastore_server.caller`); HMS 2.3 answers with the group list as sent."""
        current_session().claim(user_name, group_names)
        return list(group_names or [])

    @thrift(rule=auth.OPEN)
    def flushCache(self) -> None:  # noqa: N802 (IDL name)
        """Nothing to flush: listings are cached only while the store is unchanged."""
