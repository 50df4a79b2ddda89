"""The pure part of warehouses: which prefixes can name a catalog, and one spelling of a
catalog's location."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette", reason="the 'rest' extra is not installed")
from metastore_server.rest import warehouses  # noqa: E402
from metastore_server.rest.errors import RestError  # noqa: E402


def test_a_path_without_prefix_is_the_default_catalog() -> None:
    assert warehouses.catalog_of({}) == "hive"
    assert warehouses.catalog_of({"namespace": "x"}) == "hive"


@pytest.mark.parametrize("prefix", ["Lake", "lake", "LAKE_2"])
def test_a_prefix_names_its_catalog_in_lower_case(prefix: str) -> None:
    assert warehouses.catalog_of({"prefix": prefix}) == prefix.lower()


@pytest.mark.parametrize("prefix", ["", "a b", "a%20b", "..", "%2E%2E", "@x", "a#b",
                                    "namespaces", "Tables", "views", "oauth", "config"])
def test_a_prefix_that_cannot_name_a_catalog_is_a_404(prefix: str) -> None:
    with pytest.raises(RestError) as info:
        warehouses.catalog_of({"prefix": prefix})
    assert (info.value.code, info.value.kind) == (404, "NoSuchWarehouseException")


def test_locations_compare_in_one_spelling() -> None:
    assert warehouses.same_place("file:///data/lake/") == warehouses.same_place("file:/data/lake")
    assert warehouses.same_place("s3://b/lake/") == "s3://b/lake"
    assert warehouses.same_place("file:/data/lake") != warehouses.same_place("file:/data/lake2")
