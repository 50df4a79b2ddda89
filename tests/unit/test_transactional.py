"""HMS's rules for transactional tables' properties (``catalog.objects.transactional``)."""

from __future__ import annotations

import pytest

from metastore_server.catalog.objects import transactional
from metastore_server.thrift_api import hms

ORC = (
    "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
    "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
)
PARQUET = (
    "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
    "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
)


def _table(
    params: dict[str, str] | None,
    formats: tuple[str, str] = ORC,
    table_type: str | None = "MANAGED_TABLE",
    sort: bool = False,
) -> hms.Table:
    sd = hms.StorageDescriptor(
        inputFormat=formats[0],
        outputFormat=formats[1],
        sortCols=[hms.Order(col="v", order=1)] if sort else [],
    )
    return hms.Table(dbName="db", tableName="t", sd=sd, parameters=params, tableType=table_type)


def _refused(call, *args) -> str:  # noqa: ANN001
    with pytest.raises(hms.MetaException) as info:
        call(*args)
    return info.value.message


# -- create ------------------------------------------------------------------------------------


def test_create_without_transactional_keeps_parameters() -> None:
    assert transactional.on_create(_table(None)) is None
    assert transactional.on_create(_table({"a": "1"}, PARQUET)) == {"a": "1"}


def test_create_true_normalised_with_default_kind() -> None:
    assert transactional.on_create(_table({"TRANSACTIONAL": "TRUE"})) == {
        "transactional": "true",
        "transactional_properties": "default",
    }


def test_create_false_dropped() -> None:
    assert transactional.on_create(_table({"Transactional": "False", "a": "1"}, PARQUET)) == {
        "a": "1"
    }


def test_create_other_value_refused() -> None:
    assert _refused(transactional.on_create, _table({"transactional": "yes"})) == (
        "'transactional' property of TBLPROPERTIES may only have value 'true': db.t"
    )


def test_create_kind_lowered_and_checked() -> None:
    params = {"transactional": "true", "Transactional_Properties": "INSERT_ONLY"}
    assert transactional.on_create(_table(params, PARQUET)) == {
        "transactional": "true",
        "transactional_properties": "insert_only",
    }
    bad = {"transactional": "true", "transactional_properties": "Bogus"}
    assert _refused(transactional.on_create, _table(bad)) == (
        "Invalid transactional properties specified for db.t with the error unknown value "
        "bogus for transactional_properties"
    )


def test_create_full_acid_needs_acid_formats() -> None:
    message = _refused(transactional.on_create, _table({"transactional": "true"}, PARQUET))
    assert message == "The table must be stored using an ACID compliant format (such as ORC): db.t"


def test_create_external_refused() -> None:
    table = _table({"transactional": "true", "EXTERNAL": "true"}, table_type="EXTERNAL_TABLE")
    assert _refused(transactional.on_create, table) == (
        "db.t cannot be declared transactional because it's an external table"
    )


def test_create_sorted_full_acid_refused_insert_only_allowed() -> None:
    table = _table({"transactional": "true"}, sort=True)
    assert _refused(transactional.on_create, table) == (
        "Table db.t cannot support full ACID functionality since it is sorted."
    )
    params = {"transactional": "true", "transactional_properties": "insert_only"}
    assert transactional.on_create(_table(params, sort=True))["transactional"] == "true"


# -- alter -------------------------------------------------------------------------------------

ACID = {"transactional": "true", "transactional_properties": "default"}
MM = {"transactional": "true", "transactional_properties": "insert_only"}


def test_alter_to_full_acid_gets_default_kind() -> None:
    params = transactional.on_alter(_table({"transactional": "true"}), _table({}))
    assert params == ACID


def test_alter_to_full_acid_needs_formats_and_managed() -> None:
    old = _table({}, PARQUET)
    assert _refused(transactional.on_alter, _table({"transactional": "true"}, PARQUET), old) == (
        "The table must be stored using an ACID compliant format (such as ORC): db.t"
    )
    assert transactional.on_alter(_table(dict(MM), PARQUET), old) == MM
    external = _table({"transactional": "true"}, table_type="EXTERNAL_TABLE")
    old_external = _table({}, table_type="EXTERNAL_TABLE")
    assert _refused(transactional.on_alter, external, old_external) == (
        "db.t cannot be declared transactional because it's an external table"
    )


def test_alter_cannot_unset() -> None:
    message = "TBLPROPERTIES with 'transactional'='true' cannot be unset: db.t"
    for params in ({"transactional": "false"}, {"a": "1"}):
        assert _refused(transactional.on_alter, _table(params), _table(dict(ACID))) == message


def test_alter_insert_only_may_be_unset_or_changed() -> None:
    assert transactional.on_alter(_table({"a": "1"}, PARQUET), _table(dict(MM))) == {"a": "1"}
    assert transactional.on_alter(_table(dict(ACID)), _table(dict(MM))) == ACID


def test_alter_full_acid_kind_cannot_change() -> None:
    assert _refused(transactional.on_alter, _table(dict(MM)), _table(dict(ACID))) == (
        "TBLPROPERTIES with 'transactional_properties' cannot be altered after the table is created"
    )


def test_alter_transactional_cannot_become_external() -> None:
    new = _table(dict(ACID), table_type="EXTERNAL_TABLE")
    assert _refused(transactional.on_alter, new, _table(dict(ACID))) == (
        "db.t cannot be converted to external table as it is transactional table."
    )


def test_alter_sorted_full_acid_refused() -> None:
    assert _refused(transactional.on_alter, _table(dict(ACID), sort=True), _table(dict(ACID)))


def test_alter_unchanged_and_empty_pass() -> None:
    assert transactional.on_alter(_table(dict(ACID)), _table(dict(ACID))) == ACID
    assert transactional.on_alter(_table({}), _table(dict(ACID))) == {}
    assert transactional.on_alter(_table({"transactional": "false"}), _table({})) == {}


def test_alter_kind_on_non_transactional_checked() -> None:
    bad = {"transactional_properties": "nope"}
    assert "unknown value nope" in _refused(transactional.on_alter, _table(bad), _table({}))
