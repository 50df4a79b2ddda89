"""Transactional tables' properties over a real socket: HMS 3/4's rules on create and alter
(kinds, ACID formats, external and sorted tables, no way back), with HMS's messages."""

from __future__ import annotations

import pytest

from metastore_server.thrift_api import hms

from .conftest import create_db, make_table

DB = "txdb"
ORC_IN = "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat"
ORC_OUT = "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"
ACID = {"transactional": "true", "transactional_properties": "default"}
MM = {"transactional": "true", "transactional_properties": "insert_only"}
#: Parameters the server adds (DDL time, fast statistics).
SERVER_KEYS = {"transient_lastDdlTime", "numFiles", "totalSize", "numFilesErasureCoded"}


@pytest.fixture(scope="module", autouse=True)
def transactional_db(running) -> None:
    connection = running.client()
    create_db(connection, DB)
    connection.close()


def orc_table(name: str, params: dict[str, str] | None = None, **extra: object) -> hms.Table:
    """An ORC table definition (formats that support full ACID)."""
    table = make_table(DB, name, parameters=dict(params or {}), **extra)
    table.sd.inputFormat, table.sd.outputFormat = ORC_IN, ORC_OUT
    return table


def parquet_table(name: str, params: dict[str, str] | None = None, **extra: object) -> hms.Table:
    """A Parquet table definition (no full ACID)."""
    return make_table(DB, name, parameters=dict(params or {}), **extra)


def stored_params(client, name: str) -> dict[str, str]:  # noqa: ANN001
    """The table's stored parameters without the DDL time and fast statistics."""
    params = dict(client.get_table(DB, name).parameters)
    return {k: v for k, v in params.items() if k not in SERVER_KEYS}


def refused(call, *args, error: type[Exception] = hms.MetaException) -> str:  # noqa: ANN001
    """The message of the error ``call(*args)`` raises."""
    with pytest.raises(error) as info:
        call(*args)
    return info.value.message


def alter(client, name: str, **changes: object) -> None:  # noqa: ANN001
    """Alter a stored table with ``changes`` applied to it (``params`` replaces parameters)."""
    table = client.get_table(DB, name)
    if "params" in changes:
        table.parameters = changes.pop("params")  # type: ignore[assignment]
    for key, value in changes.items():
        setattr(table, key, value)
    client.alter_table(DB, name, table)


# -- create ------------------------------------------------------------------------------------


def test_create_full_acid_gets_default_kind(client) -> None:
    client.create_table(orc_table("acid_a", {"Transactional": "TRUE"}))
    assert stored_params(client, "acid_a") == ACID


def test_create_insert_only_any_format(client) -> None:
    params = {"transactional": "true", "TRANSACTIONAL_PROPERTIES": "Insert_Only"}
    client.create_table(parquet_table("mm_a", params))
    assert stored_params(client, "mm_a") == MM


def test_create_false_is_dropped(client) -> None:
    client.create_table(parquet_table("plain_a", {"transactional": "false", "k": "v"}))
    assert stored_params(client, "plain_a") == {"k": "v"}


def test_create_other_value_refused(client) -> None:
    message = refused(client.create_table, orc_table("bad_a", {"transactional": "yes"}))
    assert (
        message
        == f"'transactional' property of TBLPROPERTIES may only have value 'true': {DB}.bad_a"
    )
    assert "bad_a" not in client.get_all_tables(DB)


def test_create_unknown_kind_refused(client) -> None:
    params = {"transactional": "true", "transactional_properties": "sometimes"}
    assert refused(client.create_table, orc_table("bad_b", params)) == (
        f"Invalid transactional properties specified for {DB}.bad_b with the error "
        "unknown value sometimes for transactional_properties"
    )


def test_create_full_acid_needs_orc(client) -> None:
    assert refused(client.create_table, parquet_table("bad_c", {"transactional": "true"})) == (
        f"The table must be stored using an ACID compliant format (such as ORC): {DB}.bad_c"
    )
    with pytest.raises(hms.NoSuchObjectException):
        client.get_table(DB, "bad_c")


def test_create_external_refused(client) -> None:
    table = orc_table(
        "bad_d",
        {"transactional": "true", "EXTERNAL": "TRUE"},
        tableType="EXTERNAL_TABLE",
    )
    assert refused(client.create_table, table) == (
        f"{DB}.bad_d cannot be declared transactional because it's an external table"
    )


def test_create_sorted_full_acid_refused(client) -> None:
    table = orc_table("bad_e", {"transactional": "true"})
    table.sd.sortCols = [hms.Order(col="v", order=1)]
    assert refused(client.create_table, table) == (
        f"Table {DB}.bad_e cannot support full ACID functionality since it is sorted."
    )
    sorted_mm = parquet_table("mm_sorted", dict(MM))
    sorted_mm.sd.sortCols = [hms.Order(col="v", order=1)]
    client.create_table(sorted_mm)
    assert stored_params(client, "mm_sorted") == MM


def test_create_with_environment_context_checked(client) -> None:
    context = hms.EnvironmentContext(properties={})
    table = parquet_table("bad_f", {"transactional": "true"})
    with pytest.raises(hms.MetaException, match="ACID compliant format"):
        client.create_table_with_environment_context(table, context)


# -- alter -------------------------------------------------------------------------------------


def test_alter_plain_orc_to_full_acid(client) -> None:
    client.create_table(orc_table("conv_a"))
    alter(client, "conv_a", params={"transactional": "true"})
    assert stored_params(client, "conv_a") == ACID


def test_alter_plain_parquet_to_full_acid_refused(client) -> None:
    client.create_table(parquet_table("conv_b"))
    message = refused(
        client.alter_table, DB, "conv_b", _with(client, "conv_b", {"transactional": "true"})
    )
    assert message == (
        f"The table must be stored using an ACID compliant format (such as ORC): {DB}.conv_b"
    )
    alter(client, "conv_b", params=dict(MM))
    assert stored_params(client, "conv_b") == MM


def test_alter_cannot_unset(client) -> None:
    client.create_table(orc_table("unset_a", {"transactional": "true"}))
    message = f"TBLPROPERTIES with 'transactional'='true' cannot be unset: {DB}.unset_a"
    for params in ({"transactional": "false"}, {"other": "x"}):
        new = _with(client, "unset_a", params)
        assert refused(client.alter_table, DB, "unset_a", new) == message
    assert stored_params(client, "unset_a") == ACID


def test_alter_full_acid_kind_cannot_change(client) -> None:
    client.create_table(orc_table("kind_a", {"transactional": "true"}))
    new = _with(client, "kind_a", dict(MM))
    assert refused(client.alter_table, DB, "kind_a", new) == (
        "TBLPROPERTIES with 'transactional_properties' cannot be altered after the table is created"
    )


def test_alter_insert_only_may_go_back(client) -> None:
    """HMS lets an insert-only table change kind or stop being transactional."""
    client.create_table(orc_table("mm_b", dict(MM)))
    alter(client, "mm_b", params=dict(ACID))
    assert stored_params(client, "mm_b") == ACID
    client.create_table(parquet_table("mm_c", dict(MM)))
    alter(client, "mm_c", params={"k": "v"})
    assert stored_params(client, "mm_c") == {"k": "v"}


def test_alter_to_external_refused(client) -> None:
    client.create_table(orc_table("ext_a", {"transactional": "true"}))
    new = _with(client, "ext_a", dict(ACID))
    new.tableType = "EXTERNAL_TABLE"
    assert refused(client.alter_table, DB, "ext_a", new) == (
        f"{DB}.ext_a cannot be converted to external table as it is transactional table."
    )
    client.create_table(orc_table("ext_b", {"EXTERNAL": "TRUE"}, tableType="EXTERNAL_TABLE"))
    new = _with(client, "ext_b", {"EXTERNAL": "TRUE", "transactional": "true"})
    assert refused(client.alter_table, DB, "ext_b", new) == (
        f"{DB}.ext_b cannot be declared transactional because it's an external table"
    )


def test_alter_sorted_full_acid_refused(client) -> None:
    client.create_table(orc_table("sort_a", {"transactional": "true"}))
    new = client.get_table(DB, "sort_a")
    new.sd.sortCols = [hms.Order(col="v", order=1)]
    assert refused(client.alter_table, DB, "sort_a", new) == (
        f"Table {DB}.sort_a cannot support full ACID functionality since it is sorted."
    )


def test_alter_with_environment_context_checked(client) -> None:
    client.create_table(orc_table("ctx_a", {"transactional": "true"}))
    new = _with(client, "ctx_a", {"transactional": "false"})
    context = hms.EnvironmentContext(properties={})
    with pytest.raises(hms.MetaException, match="cannot be unset"):
        client.alter_table_with_environment_context(DB, "ctx_a", new, context)


def _with(client, name: str, params: dict[str, str]) -> hms.Table:  # noqa: ANN001
    """The stored table with ``params`` as its parameters."""
    table = client.get_table(DB, name)
    table.parameters = params
    return table
