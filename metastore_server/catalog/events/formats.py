"""The formats of notification messages, as HMS's message encoders write them (chosen by its
``metastore.event.message.factory``; here ``--event-messages``):

* ``json-0.2`` (``JSONMessageEncoder``, the default): the message's JSON as it is. Impala's
  and StarRocks' event processors read only this one.
* ``gzip(json-2.0)`` (``GzipJSONMessageEncoder``): the same JSON, UTF-8, gzip-compressed and
  then Base64-encoded. Hive replication and Doris read it (by ``messageFormat``).

Each event keeps the format it was written in (``NotificationEvent.messageFormat``).
"""

from __future__ import annotations

import base64
import gzip

JSON = "json-0.2"
GZIP = "gzip(json-2.0)"
#: The choices of ``--event-messages`` and the format each writes.
SETTINGS = {"json": JSON, "gzip": GZIP}
#: HMS's encoder class of each format (what ``metastore.event.message.factory`` names).
ENCODERS = {
    JSON: "org.apache.hadoop.hive.metastore.messaging.json.JSONMessageEncoder",
    GZIP: "org.apache.hadoop.hive.metastore.messaging.json.gzip.GzipJSONMessageEncoder",
}


def factory_settings(setting: str) -> dict[str, str]:
    """HMS's ``metastore.event.message.factory`` (and its Hive name) for ``--event-messages``
    ``setting``, as ``get_config_value`` answers it."""
    encoder = ENCODERS[SETTINGS[setting]]
    return {"metastore.event.message.factory": encoder,
            "hive.metastore.event.message.factory": encoder}  # fmt: skip


def encode(text: str, message_format: str | None) -> str:
    """The message ``text`` (JSON) as an event of ``message_format`` carries it."""
    if message_format != GZIP:
        return text
    packed = gzip.compress(text.encode("utf-8"), mtime=0)
    return base64.b64encode(packed).decode("ascii")


def decode(message: str, message_format: str | None) -> str:
    """The JSON text of a message carried in ``message_format`` (as a reader decodes it)."""
    if message_format is not None and message_format.startswith("gzip"):
        return gzip.decompress(base64.b64decode(message)).decode("utf-8")
    return message
