"""Dependent tables at their edges, over real sockets: a managed dependent sharing its base's
directory, a schema change refused part-way down a chain, a base dropped and created again,
re-pointing to an unfit base, specs off the leading keys, cycles, property spelling, and
completeness for values that name no time."""

from __future__ import annotations

import pytest

from metastore_server.catalog.data.warehouse import local_path
from metastore_server.catalog.dependencies.model import (
    BASE_KEY,
    COMPLETENESS_COLUMNS_KEY,
    COMPLETENESS_PERIOD_KEY,
    DEPENDS_ON_KEY,
    INCOMPLETE_KEY,
    ON_BASE_DROP_KEY,
    ON_SCHEMA_CHANGE_KEY,
)
from metastore_server.thrift_api import hms

from .conftest import column, create_db, make_partition, make_table
from .test_dependency_policies import add_base, base_table, dependent, dependents, one

COLUMNS = [("key", "string"), ("value", "string")]


@pytest.fixture()
def db(client, request) -> str:
    """A fresh database per test."""
    name = "de_" + request.node.name.removeprefix("test_")[:40].lower()
    create_db(client, name)
    return name


def _columns(client, db: str, table: str) -> list[str]:
    return [c.name for c in client.get_table(db, table).sd.cols]


def test_dropping_a_managed_dependent_in_its_bases_directory_keeps_the_base_data(
    client, db
) -> None:
    base_table(client, db, "t")
    add_base(client, db, "t", ["1", "01"])
    base_location = client.get_table(db, "t").sd.location
    partition_dir = local_path(client.get_partition(db, "t", ["1", "01"]).sd.location)
    assert partition_dir is not None and partition_dir.is_dir()
    (partition_dir / "part-0.parquet").write_bytes(b"base data")

    for location in (base_location, base_location + "/ds=1"):
        client.create_dependent_table(
            hms.CreateDependentTableRequest(
                dbName=db, tblName="tdep", baseDbName=db, baseTblName="t",
                location=location, external=False,
            )
        )  # fmt: skip
        assert client.get_table(db, "tdep").tableType == "MANAGED_TABLE"
        client.add_partition(make_partition(db, "tdep", ["1"]))
        client.drop_partition(db, "tdep", ["1"], True)
        client.drop_table(db, "tdep", True)
        assert (partition_dir / "part-0.parquet").read_bytes() == b"base data"

    # A managed dependent at its own location still has its directory deleted.
    client.create_dependent_table(
        hms.CreateDependentTableRequest(
            dbName=db, tblName="tdep", baseDbName=db, baseTblName="t", external=False
        )
    )
    own = local_path(client.get_table(db, "tdep").sd.location)
    assert own is not None and own.is_dir()
    client.drop_table(db, "tdep", True)
    assert not own.exists()


def test_a_schema_change_refused_down_a_chain_leaves_every_table_unchanged(client, db) -> None:
    base_table(client, db, "t")
    dependent(client, db, "d1", f"{db}.t", **{ON_SCHEMA_CHANGE_KEY: "propagate"})
    dependent(client, db, "d2", f"{db}.d1")  # refuses

    table = client.get_table(db, "t")
    table.sd.cols.append(column("extra", "int"))
    with pytest.raises(hms.InvalidOperationException) as caught:
        client.alter_table(db, "t", table)
    assert f"Cannot change the columns of table {db}.d1: dependent table {db}.d2" in (
        caught.value.message
    )
    for name in ("t", "d1", "d2"):
        assert _columns(client, db, name) == ["key", "value"], name

    # With propagate all the way down, the column reaches every table.
    d2 = client.get_table(db, "d2")
    d2.parameters[ON_SCHEMA_CHANGE_KEY] = "propagate"
    client.alter_table(db, "d2", d2)
    client.alter_table(db, "t", table)
    for name in ("t", "d1", "d2"):
        assert _columns(client, db, name) == ["key", "value", "extra"], name


def test_a_base_dropped_and_created_again_keeps_its_dependents(client, db) -> None:
    base_table(client, db, "t")
    dependent(client, db, "tdep", f"{db}.t", **{ON_BASE_DROP_KEY: "mark_incomplete"})
    add_base(client, db, "t", ["1", "01"])
    client.add_partition(make_partition(db, "tdep", ["1"]))
    client.drop_table(db, "t", True)

    base_table(client, db, "t")
    add_base(client, db, "t", ["2", "01"], ["2", "02"])
    client.add_partition(make_partition(db, "tdep", ["2"]))
    found = dependents(client, db, "t")
    assert found.tables == [f"{db}.tdep"]
    assert [p.partName for p in found.partitions] == ["ds=1", "ds=2"]

    client.drop_partitions_req(
        hms.DropPartitionsRequest(
            dbName=db, tblName="t", parts=hms.RequestPartsSpec(names=["ds=2/hr=01"]),
            deleteData=True,
        )
    )  # fmt: skip
    assert client.get_partition(db, "tdep", ["2"]).parameters[INCOMPLETE_KEY] == "true"

    # ... and its refusals: the dependent's policy now refuses.
    tdep = client.get_table(db, "tdep")
    tdep.parameters[ON_BASE_DROP_KEY] = "refuse"
    client.alter_table(db, "tdep", tdep)
    with pytest.raises(hms.MetaException, match=f"dependent partition {db}.tdep@ds=2"):
        client.drop_partition_by_name(db, "t", "ds=2/hr=02", True)
    with pytest.raises(hms.MetaException, match=f"dependent table {db}.tdep depends on it"):
        client.drop_table(db, "t", True)


def test_repointing_a_partition_to_a_base_with_other_columns_is_refused(client, db) -> None:
    base_table(client, db, "t")
    dependent(client, db, "tdep", f"{db}.t")
    add_base(client, db, "t", ["1", "01"])
    client.add_partition(make_partition(db, "tdep", ["1"]))
    client.create_table(
        make_table(db, "t3", keys=[("ds", "string"), ("hr", "string")], columns=[("o", "int")])
    )

    with pytest.raises(hms.InvalidOperationException) as caught:
        client.alter_dependency(
            hms.AlterDependencyRequest(
                dbName=db, tblName="tdep", baseDbName=db, baseTblName="t3", partName="ds=1"
            )
        )
    assert caught.value.message.startswith(
        f"dependent table {db}.tdep: cannot depend on {db}.t3: column 1 of the dependent table "
        "is 'key string' but the base has 'o int'"
    )
    # The same through alter_partition, and for a new partition naming its base.
    part = client.get_partition(db, "tdep", ["1"])
    part.parameters[DEPENDS_ON_KEY] = f"{db}.t3@ds=1"
    with pytest.raises(hms.InvalidOperationException, match="cannot depend on"):
        client.alter_partition(db, "tdep", part)
    other = make_partition(db, "tdep", ["2"])
    other.parameters = {DEPENDS_ON_KEY: f"{db}.t3@ds=2"}
    with pytest.raises(hms.InvalidObjectException, match="cannot depend on"):
        client.add_partition(other)
    assert one(client, db, "tdep", "ds=1").dependsOn == f"{db}.t@ds=1"


def test_repointing_to_a_malformed_base_name_is_an_invalid_operation(client, db) -> None:
    base_table(client, db, "t")
    dependent(client, db, "tdep", f"{db}.t")
    add_base(client, db, "t", ["1", "01"])
    client.add_partition(make_partition(db, "tdep", ["1"]))
    for bad in ("", "t-x"):
        with pytest.raises(hms.InvalidOperationException, match=f"dependent table {db}.tdep"):
            client.alter_dependency(
                hms.AlterDependencyRequest(
                    dbName=db, tblName="tdep", baseDbName=db, baseTblName=bad, partName="ds=1"
                )
            )
    assert client.get_all_databases()  # the connection is still usable


def test_a_dependency_must_fix_leading_keys_of_its_base(client, db) -> None:
    base_table(client, db, "t")
    dependent(client, db, "tdep", f"{db}.t")
    part = make_partition(db, "tdep", ["1"])
    part.parameters = {DEPENDS_ON_KEY: f"{db}.t@hr=01"}
    with pytest.raises(hms.InvalidObjectException) as caught:
        client.add_partition(part)
    assert caught.value.message == (
        f"dependent table {db}.tdep: {db}.t@hr=01 must fix leading partition keys of {db}.t "
        "(ds), in order"
    )
    assert client.get_partition_names(db, "tdep", -1) == []


def test_dependencies_cannot_form_a_cycle(client, db) -> None:
    base_table(client, db, "t", keys=(("ds", "string"),))
    dependent(client, db, "d1", f"{db}.t")
    dependent(client, db, "d2", f"{db}.d1")
    table = client.get_table(db, "t")
    table.parameters[BASE_KEY] = f"{db}.d2"
    with pytest.raises(hms.InvalidOperationException) as caught:
        client.alter_table(db, "t", table)
    assert caught.value.message == (
        f"dependent table {db}.t: {db}.d2 would depend on it in turn ({db}.d2 -> {db}.d1 -> "
        f"{db}.t); dependencies cannot form a cycle"
    )
    assert BASE_KEY not in client.get_table(db, "t").parameters


def test_the_base_property_is_stored_as_records_name_it(client, db) -> None:
    base_table(client, db, "t")
    dependent(client, db, "tdep", f" {db.upper()}.T ")
    assert client.get_table(db, "tdep").parameters[BASE_KEY] == f"{db}.t"
    assert dependents(client, db, "t").tables == [f"{db}.tdep"]


def test_partition_parameters_are_refused_as_table_properties(client, db) -> None:
    base_table(client, db, "t")
    for key in (DEPENDS_ON_KEY, INCOMPLETE_KEY):
        with pytest.raises(hms.InvalidObjectException) as caught:
            dependent(client, db, "tdep", f"{db}.t", **{key: "true"})
        assert f"a partition parameter, not a table property '{key}'" in caught.value.message


def test_completeness_says_why_when_values_name_no_time(client, db) -> None:
    # The seed's own example: ds='1', hr='1'..'24' name no calendar hour.
    base_table(client, db, "t")
    dependent(
        client, db, "tdep", f"{db}.t",
        **{COMPLETENESS_PERIOD_KEY: "HOURLY", COMPLETENESS_COLUMNS_KEY: "ds,hr"},
    )  # fmt: skip
    add_base(client, db, "t", *[["1", str(h)] for h in range(1, 25)])
    add_base(client, db, "t", *[["2024-01-01", f"{h:02d}"] for h in range(24)])
    client.add_partition(make_partition(db, "tdep", ["1"]))
    client.add_partition(make_partition(db, "tdep", ["2024-01-01"]))

    seed = one(client, db, "tdep", "ds=1")
    assert seed.basePartCount == 24
    assert seed.completeness is None
    assert seed.completenessUnknown == (
        f"dependency {db}.t@ds=1: '1' does not name a HOURLY partition or a coarser one"
    )
    dated = one(client, db, "tdep", "ds=2024-01-01")
    assert dated.completenessUnknown is None
    assert dated.completeness.complete and dated.completeness.expected == 24
