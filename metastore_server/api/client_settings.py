"""The settings a client may read with ``get_config_value``, and which keys it may not read.

HMS answers only keys that start with ``hive``, ``hdfs`` or ``mapred`` and never secrets;
anything else is a ConfigValSecurityException. The values are the HiveConf defaults clients
commonly ask for, overridden by what this server really does (its warehouse directory).
"""

from __future__ import annotations

import re

_READABLE = re.compile(r"(hive|hdfs|mapred).*")
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


def is_readable(name: str) -> bool:
    """Whether a client may read the setting ``name`` (HMS's rule, plus no secrets)."""
    lowered = name.lower()
    return _READABLE.fullmatch(name) is not None and not any(
        word in lowered for word in _SECRET_WORDS
    )


def refusal_message(name: str) -> str:
    """HMS's message for a setting a client may not read."""
    return f"For security reasons, the config key {name} cannot be accessed"
