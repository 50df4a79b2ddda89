"""setMetaConf / getMetaConf: HMS's settable keys, per connection."""

from __future__ import annotations

import pytest

from metastore_server.thrift_api import hms

pytestmark = pytest.mark.any_store

KEY = "hive.metastore.disallow.incompatible.col.type.changes"


def test_settable_keys_are_per_connection(running) -> None:
    first, second = running.client(), running.client()
    try:
        assert first.getMetaConf(KEY) == "true"
        first.setMetaConf(KEY, "FALSE")
        assert first.getMetaConf(KEY) == "false"
        assert second.getMetaConf(KEY) == "true"  # another connection keeps the default
        first.setMetaConf("hive.metastore.client.socket.timeout", "30s")
        assert first.getMetaConf("hive.metastore.client.socket.timeout") == "30s"
    finally:
        first.close()
        second.close()


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("hive.metastore.warehouse.dir", "/x", "Invalid configuration key hive.metastore.ware"),
        (KEY, "maybe", f"Invalid configuration value maybe for key {KEY}"),
        ("hive.metastore.client.socket.timeout", "soon", "Invalid configuration value soon"),
        ("hive.metastore.partition.name.whitelist.pattern", "[", "Invalid configuration value ["),
    ],
)
def test_other_keys_and_bad_values_are_refused(client, key: str, value: str, message: str) -> None:
    with pytest.raises(hms.MetaException) as refused:
        client.setMetaConf(key, value)
    assert refused.value.message.startswith(message)
    with pytest.raises(hms.MetaException, match="Invalid configuration key"):
        client.getMetaConf("no.such.key")
