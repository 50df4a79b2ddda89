"""Which properties name code (``code_properties``): every key Iceberg's or pyiceberg's
readers load a class from, in any case, and no ordinary property."""

from __future__ import annotations

import pytest

from metastore_server.catalog.basics import code_properties


@pytest.mark.parametrize("key", [
    "py-io-impl", "io-impl", "py-catalog-impl", "catalog-impl", "lock-impl",
    "write.py-location-provider.impl", "write.location-provider.impl",
    "s3.retry-strategy-impl", "metrics-reporter-impl", "client.factory",
    "client.credentials-provider", "PY-IO-IMPL", " io-impl ", "x_impl", "impl",
])  # fmt: skip
def test_keys_naming_code(key: str) -> None:
    assert code_properties.names_code(key)


@pytest.mark.parametrize("key", [
    "owner", "write.metadata.path", "write.parquet.compression-codec", "s3.endpoint",
    "storage_handler", "implementation_notes", "simple", "EXTERNAL", "metadata_location",
])  # fmt: skip
def test_ordinary_keys(key: str) -> None:
    assert not code_properties.names_code(key)


def test_only_keys_set_anew_count() -> None:
    old = {"py-io-impl": "a.B", "k": "v"}
    assert code_properties.keys_set(old, old) == []
    assert code_properties.keys_set({**old, "k": "w"}, old) == []
    assert code_properties.keys_set({"py-io-impl": "c.D"}, old) == ["py-io-impl"]
    assert code_properties.keys_set({"io-impl": "x", "b.impl": "y"}, None) == ["b.impl", "io-impl"]
    assert code_properties.keys_set(None, old) == []
    message = code_properties.refusal(["io-impl"], "Table db.t")
    assert message.startswith("Table db.t may not set io-impl")
