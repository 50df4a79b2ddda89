"""The settings a client may read with ``get_config_value``, and which keys it may not read.

HMS 2.3 answers only keys that start with ``hive``, ``hdfs`` or ``mapred``; HMS 3+ also
``metastore`` (its MetastoreConf names); never secrets; anything else is a
ConfigValSecurityException. The values are the HiveConf defaults clients commonly ask for,
overridden by what this server really does (its warehouse directory, whether it records
notification events); a MetastoreConf name (``metastore.warehouse.dir``) answers the value of
its Hive name, as HMS 3+'s ``MetastoreConf.get`` does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import overload

from metastore_server.catalog import DEFAULT_CATALOG

_READABLE_2_3 = re.compile(r"(hive|hdfs|mapred).*")
_READABLE = re.compile(r"(hive|hdfs|mapred|metastore).*")
_SECRET_WORDS = ("password", "secret", "keystore", "truststore", "credential")

#: HiveConf defaults of HMS 2.3 for keys clients read from the metastore (HMS answers every
#: key of its configuration that has a value, whatever default the caller gives).
HIVE_DEFAULTS: dict[str, str] = {
    "hive.exec.dynamic.partition": "true",
    "hive.stats.autogather": "true",
    "hive.exec.dynamic.partition.mode": "strict",
    "hive.exec.max.dynamic.partitions": "1000",
    "hive.exec.max.dynamic.partitions.pernode": "100",
    "hive.metastore.try.direct.sql": "true",
    "hive.metastore.try.direct.sql.ddl": "true",
    "hive.metastore.batch.retrieve.max": "300",
    "hive.metastore.integral.jdo.pushdown": "false",
    "hive.default.fileformat": "TextFile",
    "hive.default.fileformat.managed": "none",
    "hive.exec.default.partition.name": "__HIVE_DEFAULT_PARTITION__",
    "hive.exec.max.created.files": "100000",
    "hive.exec.compress.output": "false",
    "hive.exec.stagingdir": ".hive-staging",
    "hive.exec.scratchdir": "/tmp/hive",
    "hive.metastore.batch.retrieve.table.partition.max": "1000",
    "hive.metastore.client.socket.timeout": "600s",
    "hive.metastore.execute.setugi": "true",
    "hive.metastore.server.max.message.size": "104857600",
    "hive.metastore.disallow.incompatible.col.type.changes": "true",
    "hive.metastore.limit.partition.request": "-1",
    "hive.metastore.event.clean.freq": "0s",
    "hive.metastore.event.expiry.duration": "0s",
    "hive.support.concurrency": "false",
    "hive.txn.manager": "org.apache.hadoop.hive.ql.lockmgr.DummyTxnManager",
    "hive.compactor.initiator.on": "false",
}


#: MetastoreConf names (HMS 3+) -> the Hive names this server keeps their values under (the
#: pairs of HMS's ``MetastoreConf.ConfVars``).
METASTORE_NAMES: dict[str, str] = {
    "metastore.warehouse.dir": "hive.metastore.warehouse.dir",
    "metastore.txn.timeout": "hive.txn.timeout",
    "metastore.limit.partition.request": "hive.metastore.limit.partition.request",
    "metastore.event.db.listener.timetolive": "hive.metastore.event.db.listener.timetolive",
    "metastore.default.partition.name": "hive.exec.default.partition.name",
    "metastore.notification.parameters.exclude.patterns": (
        "hive.metastore.notification.parameters.exclude.patterns"
    ),
}
_HIVE_NAMES = {hive: metastore for metastore, hive in METASTORE_NAMES.items()}


#: What this server does with notification events, as event followers check it before
#: following the log (Impala's catalogd): full ALTER messages, no parameter left out of the
#: objects in messages, the default catalog. ``hive.metastore.dml.events`` is the
#: notification log's state (:func:`value_of`).
EVENT_FACTS: dict[str, str] = {
    "hive.metastore.alter.notifications.basic": "false",
    # Every message carries the objects followers read (tests/integration/test_event_objects.py
    # fails the day one does not).
    "hive.metastore.notifications.add.thrift.objects": "true",
    "hive.metastore.notification.parameters.exclude.patterns": "",
    "metastore.catalog.default": DEFAULT_CATALOG,
}
DML_EVENTS = "hive.metastore.dml.events"


def is_readable(name: str, *, hms_2_3: bool = False) -> bool:
    """Whether a client may read the setting ``name`` (HMS's rule, HMS 2.3's when
    ``hms_2_3``, plus no secrets)."""
    lowered = name.lower()
    rule = _READABLE_2_3 if hms_2_3 else _READABLE
    return rule.fullmatch(name) is not None and not any(word in lowered for word in _SECRET_WORDS)


@overload
def value_of(
    values: Mapping[str, str], name: str, default: str, *, notification_log: bool
) -> str: ...
@overload
def value_of(
    values: Mapping[str, str], name: str, default: str | None, *, notification_log: bool
) -> str | None: ...
def value_of(
    values: Mapping[str, str], name: str, default: str | None, *, notification_log: bool
) -> str | None:
    """The value of setting ``name``: as configured (``values``), else what the server does
    (``EVENT_FACTS``; ``hive.metastore.dml.events`` true when the notification log records
    the INSERT events clients fire), else ``default``. A setting
    is looked up under its MetastoreConf name, then its Hive name (HMS 3+'s order)."""
    facts = {**EVENT_FACTS, DML_EVENTS: "true" if notification_log else "false"}
    metastore = name if name in METASTORE_NAMES else _HIVE_NAMES.get(name)
    keys = [key for key in (metastore, METASTORE_NAMES.get(metastore or ""), name) if key]
    for known in (values, facts):
        for key in keys:
            if key in known:
                return known[key]
    return default


def refusal_message(name: str) -> str:
    """HMS's message for a setting a client may not read."""
    return f"For security reasons, the config key {name} cannot be accessed"
