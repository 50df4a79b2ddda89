"""The catalog prefix of ``get_databases`` (``@cat#pattern``) as Hive 3/4 clients send it."""

from __future__ import annotations

import pytest

from metastore_server.catalog.basics import names


@pytest.mark.parametrize(
    ("argument", "expected"),
    [
        ("@hive#", ("hive", None)),
        ("@HIVE", ("hive", None)),
        ("@hive#!", ("hive", "")),
        ("@Spark#Sales*", ("spark", "Sales*")),
        ("@hive#a#b", ("hive", "a#b")),
        ("sales*", ("hive", "sales*")),
        ("", ("hive", "")),
        (None, ("hive", None)),
    ],
)
def test_split_catalog_pattern(argument: str | None, expected: tuple[str, str | None]) -> None:
    assert names.split_catalog_pattern(argument) == expected
