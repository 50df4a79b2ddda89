"""Dependent tables (docs/dependent-tables.md) end to end over real sockets: the seed's scenarios
(``T(ds, hr)``, ``Tdep`` by ``ds``, ``T`` deprecated for ``T2(ds, hr, min)``), dynamic resolution
after adds and drops, reverse lookup, every drop and schema-change policy, completeness, and the
refusals, through the HMS calls any client makes and our extension methods."""

from __future__ import annotations

import pytest

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

COLUMNS = [("key", "string"), ("value", "string")]
HOURS = [f"{h:02d}" for h in range(24)]


def base_table(client, db: str, name: str, keys=(("ds", "string"), ("hr", "string"))) -> None:
    client.create_table(make_table(db, name, keys=list(keys), columns=COLUMNS))


def add_base(client, db: str, table: str, *values_list: list[str]) -> None:
    client.add_partitions([make_partition(db, table, list(v)) for v in values_list])


def dependent(client, db: str, name: str, base: str, **params: str) -> None:
    parameters = {BASE_KEY: base, **params}
    table = make_table(db, name, keys=[("ds", "string")], parameters=parameters)
    table.sd.cols = []  # inherited from the base
    client.create_table(table)


def resolve(client, db: str, table: str, part: str | None = None, max_parts: int = -1):
    return client.resolve_dependencies(
        hms.ResolveDependenciesRequest(dbName=db, tblName=table, partName=part, maxParts=max_parts)
    )


def one(client, db: str, table: str, part: str) -> hms.ResolvedDependency:
    (resolved,) = resolve(client, db, table, part).partitions
    return resolved


def dependents(client, db: str, table: str, part: str | None = None) -> hms.GetDependentsResult:
    return client.get_dependents(hms.GetDependentsRequest(dbName=db, tblName=table, partName=part))


@pytest.fixture()
def db(client, request) -> str:
    """A fresh database per test."""
    name = "dp_" + request.node.name.removeprefix("test_")[:40].lower()
    create_db(client, name)
    return name


def test_seed_scenario_t_deprecated_for_t2(client, db) -> None:
    # create table T (key, value) partitioned by (ds, hr); Tdep partitioned by (ds) on T.
    base_table(client, db, "t")
    dependent(client, db, "tdep", f"{db}.t", **{ON_BASE_DROP_KEY: "allow"})
    stored = client.get_table(db, "tdep")
    assert [(c.name, c.type) for c in stored.sd.cols] == COLUMNS  # inherited from T
    for day in ("1", "2"):
        add_base(client, db, "t", *[[day, hr] for hr in HOURS])
        client.add_partition(make_partition(db, "tdep", [day]))  # alter table Tdep add partition

    resolved = one(client, db, "tdep", "ds=1")
    assert resolved.dependsOn == f"{db}.t@ds=1"
    assert (resolved.baseDbName, resolved.baseTblName, resolved.baseSpec) == (db, "t", "ds=1")
    assert resolved.basePartNames == [f"ds=1/hr={h}" for h in HOURS]
    assert resolved.basePartCount == 24

    # Dynamic: a base partition added later is included, a dropped one disappears.
    add_base(client, db, "t", ["1", "24"])
    client.drop_partition(db, "t", ["1", "00"], True)
    names = one(client, db, "tdep", "ds=1").basePartNames
    assert "ds=1/hr=24" in names and "ds=1/hr=00" not in names and len(names) == 24

    # T is deprecated for T2 (same columns, keys ds, hr, min): new partitions depend on T2.
    base_table(client, db, "t2", keys=(("ds", "string"), ("hr", "string"), ("min", "string")))
    table = client.get_table(db, "tdep")
    table.parameters[BASE_KEY] = f"{db}.t2"
    client.alter_table(db, "tdep", table)
    add_base(client, db, "t2", *[["11", hr, m] for hr in HOURS for m in ("00", "30")])
    client.add_partition(make_partition(db, "tdep", ["11"]))

    assert one(client, db, "tdep", "ds=2").dependsOn == f"{db}.t@ds=2"  # unchanged
    eleven = one(client, db, "tdep", "ds=11")
    assert eleven.dependsOn == f"{db}.t2@ds=11"
    assert eleven.basePartCount == 48
    assert eleven.basePartNames[:2] == ["ds=11/hr=00/min=00", "ds=11/hr=00/min=30"]
    partition = client.get_partition(db, "tdep", ["11"])
    assert partition.sd.location == client.get_table(db, "t2").sd.location + "/ds=11"

    everything = resolve(client, db, "tdep")
    assert [p.partName for p in everything.partitions] == ["ds=1", "ds=11", "ds=2"]
    assert everything.table.base == f"{db}.t2"
    assert everything.table.bases == [f"{db}.t", f"{db}.t2"]  # Tdep depends on (T, T2)

    # The dependency of an existing partition can be changed: Tdep@ds=2 now on T2@ds=2.
    add_base(client, db, "t2", ["2", "05", "00"])
    moved = client.alter_dependency(
        hms.AlterDependencyRequest(
            dbName=db, tblName="tdep", baseDbName=db, baseTblName="t2", partName="ds=2"
        )
    )
    assert moved.partitions[0].dependsOn == f"{db}.t2@ds=2"
    assert one(client, db, "tdep", "ds=2").basePartNames == ["ds=2/hr=05/min=00"]
    repointed = client.get_partition(db, "tdep", ["2"])
    assert repointed.sd.location == client.get_table(db, "t2").sd.location + "/ds=2"

    # Reverse lookup, on both bases.
    assert dependents(client, db, "t").tables == [f"{db}.tdep"]
    assert [p.partName for p in dependents(client, db, "t").partitions] == ["ds=1"]
    on_t2 = dependents(client, db, "t2", "ds=11/hr=03/min=30")
    assert [(p.tblName, p.partName, p.dependsOn) for p in on_t2.partitions] == [
        ("tdep", "ds=11", f"{db}.t2@ds=11")
    ]


def _repointed_scenario(client, db: str, policy: str) -> None:
    """The scenario of docs/dependent-tables.md up to the re-point: Tdep@ds=1..10 on T(ds, hr),
    then Tdep's base is T2(ds, hr, min) and Tdep@ds=11 stands on it."""
    base_table(client, db, "t")
    dependent(client, db, "tdep", f"{db}.t", **{ON_SCHEMA_CHANGE_KEY: policy})
    for day in range(1, 11):
        add_base(client, db, "t", [str(day), "00"])
        client.add_partition(make_partition(db, "tdep", [str(day)]))
    base_table(client, db, "t2", keys=(("ds", "string"), ("hr", "string"), ("min", "string")))
    table = client.get_table(db, "tdep")
    table.parameters[BASE_KEY] = f"{db}.t2"
    client.alter_table(db, "tdep", table)
    add_base(client, db, "t2", ["11", "00", "00"])
    client.add_partition(make_partition(db, "tdep", ["11"]))


def _with_extra_column(client, db: str, name: str) -> hms.Table:
    table = client.get_table(db, name)
    table.sd.cols.append(column("extra", "int"))
    return table


def test_a_schema_change_of_a_former_base_obeys_the_policy_after_the_repoint(client, db) -> None:
    _repointed_scenario(client, db, "refuse")
    with pytest.raises(hms.InvalidOperationException) as caught:
        client.alter_table(db, "t", _with_extra_column(client, db, "t"))
    assert caught.value.message == (
        f"Cannot change the columns of table {db}.t: dependent table {db}.tdep has them "
        "(its partitions ds=1, ds=10, ds=2 and 7 more depend on it; "
        f"metastore.dependent.on.base.schema.change=refuse on {db}.tdep); set the policy to "
        "propagate, or re-point or drop the dependent partitions first"
    )
    assert [c.name for c in client.get_table(db, "t").sd.cols] == ["key", "value"]
    # Renaming or dropping the former base is refused as well: Tdep@ds=1..10 stand on it.
    renamed = client.get_table(db, "t")
    renamed.tableName = "t_old"
    with pytest.raises(hms.InvalidOperationException, match="dependent tables depend on it"):
        client.alter_table(db, "t", renamed)
    with pytest.raises(hms.MetaException, match=f"refuse on {db}.tdep"):
        client.drop_table(db, "t", True)
    # Re-pointing Tdep back to T still works: T and Tdep never came to disagree.
    table = client.get_table(db, "tdep")
    table.parameters[BASE_KEY] = f"{db}.t"
    client.alter_table(db, "tdep", table)
    assert client.get_table(db, "tdep").parameters[BASE_KEY] == f"{db}.t"


def test_propagating_to_a_dependent_that_stands_on_another_base_is_refused(client, db) -> None:
    _repointed_scenario(client, db, "propagate")
    with pytest.raises(hms.InvalidOperationException) as caught:
        client.alter_table(db, "t", _with_extra_column(client, db, "t"))
    assert caught.value.message == (
        f"Cannot change the columns of table {db}.t: dependent table {db}.tdep (its partitions "
        f"ds=1, ds=10, ds=2 and 7 more depend on it) also stands on {db}.t2, whose columns would "
        "then differ from its own; a dependent table has one schema: re-point or drop its "
        "partitions on one of the bases first"
    )
    # Once no partition stands on T2 any more, the change propagates to Tdep.
    client.drop_partition(db, "tdep", ["11"], True)
    table = client.get_table(db, "tdep")
    table.parameters[BASE_KEY] = f"{db}.t"
    client.alter_table(db, "tdep", table)
    client.alter_table(db, "t", _with_extra_column(client, db, "t"))
    assert [c.name for c in client.get_table(db, "tdep").sd.cols] == ["key", "value", "extra"]


def test_repointing_one_partition_with_alter_partition(client, db) -> None:
    base_table(client, db, "t")
    base_table(client, db, "t2")
    dependent(client, db, "tdep", f"{db}.t")
    add_base(client, db, "t", ["10", "01"])
    add_base(client, db, "t2", ["10", "01"], ["10", "02"])
    client.add_partition(make_partition(db, "tdep", ["10"]))

    # alter table Tdep partition (ds=10) depends on table T2, from any HMS client.
    partition = client.get_partition(db, "tdep", ["10"])
    partition.parameters[DEPENDS_ON_KEY] = f"{db}.t2@ds=10"
    client.alter_partition(db, "tdep", partition)
    assert one(client, db, "tdep", "ds=10").basePartCount == 2
    assert dependents(client, db, "t2").tables == [f"{db}.tdep"]  # marked on T2 as well

    # A client that leaves the record out keeps it; a bad one is refused.
    partition = client.get_partition(db, "tdep", ["10"])
    del partition.parameters[DEPENDS_ON_KEY]
    client.alter_partition(db, "tdep", partition)
    assert client.get_partition(db, "tdep", ["10"]).parameters[DEPENDS_ON_KEY] == (f"{db}.t2@ds=10")
    for record, message in (
        (f"{db}.gone@ds=10", f"base table {db}.gone does not exist"),
        (f"{db}.t2@day=10", f"{db}.t2@day=10 names 'day', which is not a partition key"),
        ("no-at-sign", "expected db.table@key=value/..."),
    ):
        partition.parameters[DEPENDS_ON_KEY] = record
        with pytest.raises(hms.InvalidOperationException) as caught:
            client.alter_partition(db, "tdep", partition)
        assert caught.value.message.startswith(f"dependent table {db}.tdep: ")
        assert message in caught.value.message
    assert client.get_partition(db, "tdep", ["10"]).parameters[DEPENDS_ON_KEY] == (f"{db}.t2@ds=10")


def test_refuse_is_the_default_drop_policy(client, db) -> None:
    base_table(client, db, "t")
    dependent(client, db, "tdep", f"{db}.t")
    add_base(client, db, "t", ["1", "01"], ["1", "02"], ["2", "01"])
    client.add_partition(make_partition(db, "tdep", ["1"]))

    with pytest.raises(hms.MetaException) as caught:
        client.drop_partition(db, "t", ["1", "02"], True)
    assert caught.value.message == (
        f"Cannot drop partition ds=1/hr=02 of table {db}.t: dependent partition {db}.tdep@ds=1 "
        f"depends on it (metastore.dependent.on.base.drop=refuse on {db}.tdep); drop or "
        "re-point the dependent partition, or set the policy to allow or mark_incomplete"
    )
    with pytest.raises(hms.MetaException, match="Cannot drop partition ds=1/hr=01"):
        client.drop_partitions_req(
            hms.DropPartitionsRequest(
                dbName=db,
                tblName="t",
                parts=hms.RequestPartsSpec(names=["ds=2/hr=01", "ds=1/hr=01"]),
                deleteData=False,
            )
        )
    with pytest.raises(hms.MetaException, match="Cannot drop partition ds=1/hr=01"):
        client.drop_partition_by_name(db, "t", "ds=1/hr=01", True)
    # Nothing was dropped, not even the partition no dependent needs.
    assert client.get_partition_names(db, "t", -1) == ["ds=1/hr=01", "ds=1/hr=02", "ds=2/hr=01"]
    client.drop_partition(db, "t", ["2", "01"], True)  # no dependent: fine

    # The table: refused while Tdep depends on it (even without partitions on it).
    with pytest.raises(hms.MetaException) as caught:
        client.drop_table(db, "t", True)
    assert caught.value.message.startswith(
        f"Cannot drop table {db}.t: dependent table {db}.tdep depends on it (its partition "
        f"ds=1 depends on {db}.t@ds=1; metastore.dependent.on.base.drop=refuse on {db}.tdep)"
    )
    client.drop_partition(db, "tdep", ["1"], True)
    with pytest.raises(hms.MetaException, match="it is its current base"):
        client.drop_table(db, "t", True)
    client.drop_partition(db, "t", ["1", "02"], True)  # the dependent partition is gone

    # Dropping both in one call is fine.
    client.drop_database(db, True, True)
    assert db not in client.get_all_databases()


def test_allow_drops_and_resolution_follows(client, db) -> None:
    base_table(client, db, "t")
    dependent(client, db, "tdep", f"{db}.t", **{ON_BASE_DROP_KEY: "allow"})
    add_base(client, db, "t", ["1", "01"], ["1", "02"])
    client.add_partition(make_partition(db, "tdep", ["1"]))
    client.drop_partition(db, "t", ["1", "01"], True)
    resolved = one(client, db, "tdep", "ds=1")
    assert (resolved.basePartNames, resolved.markedIncomplete) == (["ds=1/hr=02"], False)

    client.drop_table(db, "t", True)
    gone = one(client, db, "tdep", "ds=1")
    assert (gone.baseExists, gone.basePartNames, gone.basePartCount) == (False, [], 0)
    # The dependent partition's data was its base's: the dependent keeps its record.
    assert client.get_partition(db, "tdep", ["1"]).parameters[DEPENDS_ON_KEY] == f"{db}.t@ds=1"
    with pytest.raises(hms.InvalidObjectException, match=f"base table {db}.t does not exist"):
        client.add_partition(make_partition(db, "tdep", ["2"]))


def test_mark_incomplete(client, db) -> None:
    base_table(client, db, "t")
    dependent(client, db, "tdep", f"{db}.t", **{ON_BASE_DROP_KEY: "mark_incomplete"})
    add_base(client, db, "t", ["1", "01"], ["1", "02"], ["2", "01"])
    client.add_partition(make_partition(db, "tdep", ["1"]))
    client.add_partition(make_partition(db, "tdep", ["2"]))

    client.drop_partition(db, "t", ["1", "02"], True)
    assert client.get_partition(db, "tdep", ["1"]).parameters[INCOMPLETE_KEY] == "true"
    assert INCOMPLETE_KEY not in client.get_partition(db, "tdep", ["2"]).parameters
    assert one(client, db, "tdep", "ds=1").markedIncomplete
    assert not one(client, db, "tdep", "ds=2").markedIncomplete
    on_t = dependents(client, db, "t")
    assert [(p.partName, p.markedIncomplete) for p in on_t.partitions] == [
        ("ds=1", True),
        ("ds=2", False),
    ]

    # Dropping the whole base marks every dependent partition on it.
    client.drop_table(db, "t", True)
    assert client.get_partition(db, "tdep", ["2"]).parameters[INCOMPLETE_KEY] == "true"


def test_schema_change_refused_by_default(client, db) -> None:
    base_table(client, db, "t")
    dependent(client, db, "tdep", f"{db}.t")
    table = client.get_table(db, "t")
    table.sd.cols.append(column("extra", "int"))
    with pytest.raises(hms.InvalidOperationException) as caught:
        client.alter_table(db, "t", table)
    assert caught.value.message == (
        f"Cannot change the columns of table {db}.t: dependent table {db}.tdep has them "
        f"(it is its current base; metastore.dependent.on.base.schema.change=refuse on "
        f"{db}.tdep); set the policy to propagate, or re-point or drop the dependent partitions "
        "first"
    )
    assert [c.name for c in client.get_table(db, "t").sd.cols] == ["key", "value"]
    # Other changes of the base are fine.
    table = client.get_table(db, "t")
    table.parameters["comment"] = "hourly"
    client.alter_table(db, "t", table)
    # The dependent's own columns are its base's.
    tdep = client.get_table(db, "tdep")
    tdep.sd.cols.append(column("mine", "int"))
    with pytest.raises(hms.InvalidOperationException, match="declares 3 columns but its base"):
        client.alter_table(db, "tdep", tdep)


def test_schema_change_propagates_along_a_chain(client, db) -> None:
    base_table(client, db, "t")
    propagate = {ON_SCHEMA_CHANGE_KEY: "propagate"}
    dependent(client, db, "tdep", f"{db}.t", **propagate)
    dependent(client, db, "tdep2", f"{db}.tdep", **propagate)  # a dependent of a dependent
    table = client.get_table(db, "t")
    table.sd.cols.append(column("extra", "int"))
    client.alter_table(db, "t", table)
    expected = [("key", "string"), ("value", "string"), ("extra", "int")]
    for name in ("t", "tdep", "tdep2"):
        got = client.get_table(db, name)
        assert [(c.name, c.type) for c in got.sd.cols] == expected, name


def test_renames(client, db) -> None:
    base_table(client, db, "t")
    dependent(client, db, "tdep", f"{db}.t")
    add_base(client, db, "t", ["1", "01"])
    client.add_partition(make_partition(db, "tdep", ["1"]))

    renamed = client.get_table(db, "t")
    renamed.tableName = "t_new"
    with pytest.raises(hms.InvalidOperationException) as caught:
        client.alter_table(db, "t", renamed)
    assert caught.value.message == (
        f"Cannot rename table {db}.t: dependent tables depend on it ({db}.tdep); re-point or "
        "drop them first"
    )
    # The dependent can be renamed; the base still finds it.
    moved = client.get_table(db, "tdep")
    moved.tableName = "tdep_new"
    client.alter_table(db, "tdep", moved)
    assert dependents(client, db, "t").tables == [f"{db}.tdep_new"]
    with pytest.raises(hms.MetaException, match=f"dependent partition {db}.tdep_new@ds=1"):
        client.drop_partition(db, "t", ["1", "01"], True)
    # Dropped, it no longer holds the base.
    client.drop_table(db, "tdep_new", True)
    assert dependents(client, db, "t").tables == []
    client.drop_table(db, "t", True)


def test_completeness_against_the_base_timeline(client, db) -> None:
    base_table(client, db, "t")
    rule = {COMPLETENESS_PERIOD_KEY: "hourly", COMPLETENESS_COLUMNS_KEY: "ds,hr"}
    dependent(client, db, "tdep", f"{db}.t", **rule)
    add_base(client, db, "t", *[["2024-01-01", hr] for hr in HOURS])
    add_base(client, db, "t", *[["2024-01-02", hr] for hr in HOURS if hr not in ("05", "17")])
    client.add_partition(make_partition(db, "tdep", ["2024-01-01"]))
    client.add_partition(make_partition(db, "tdep", ["2024-01-02"]))

    day_one = one(client, db, "tdep", "ds=2024-01-01").completeness
    assert (day_one.period, day_one.window, day_one.expected) == ("HOURLY", "2024-01-01", 24)
    assert (day_one.startTime, day_one.endTime) == ("2024-01-01-00", "2024-01-02-00")
    assert (day_one.complete, day_one.missing) == (True, [])
    day_two = one(client, db, "tdep", "ds=2024-01-02").completeness
    assert (day_two.complete, day_two.missing) == (False, ["2024-01-02-05", "2024-01-02-17"])

    add_base(client, db, "t", ["2024-01-02", "05"], ["2024-01-02", "17"])
    assert one(client, db, "tdep", "ds=2024-01-02").completeness.complete

    info = resolve(client, db, "tdep", max_parts=0).table
    assert (info.completenessPeriod, info.completenessColumns) == ("HOURLY", ["ds", "hr"])
    # A rule that does not fit the keys is refused.
    with pytest.raises(hms.InvalidObjectException, match="'minute' is not a partition key"):
        dependent(
            client, db, "bad", f"{db}.t",
            **{COMPLETENESS_PERIOD_KEY: "MINUTELY", COMPLETENESS_COLUMNS_KEY: "ds,minute"},
        )  # fmt: skip


def test_create_dependent_table_extension(client, db) -> None:
    base_table(client, db, "t")
    created = client.create_dependent_table(
        hms.CreateDependentTableRequest(
            dbName=db, tblName="tdep", baseDbName=db, baseTblName="t", keyCount=2,
            onBaseDrop="allow", completenessPeriod="HOURLY", completenessColumns=["ds", "hr"],
        )
    )  # fmt: skip
    assert [k.name for k in created.partitionKeys] == ["ds", "hr"]
    assert [(c.name, c.type) for c in created.sd.cols] == COLUMNS
    assert created.tableType == "EXTERNAL_TABLE"
    assert created.parameters[BASE_KEY] == f"{db}.t"
    assert created.parameters[ON_BASE_DROP_KEY] == "allow"
    assert created.sd.inputFormat == client.get_table(db, "t").sd.inputFormat

    def refused(**fields) -> str:
        request = {"dbName": db, "tblName": "x", "baseDbName": db, "baseTblName": "t", **fields}
        with pytest.raises(hms.InvalidObjectException) as caught:
            client.create_dependent_table(hms.CreateDependentTableRequest(**request))
        return caught.value.message

    assert refused(baseTblName="nope") == (
        f"dependent table {db}.x: base table {db}.nope does not exist"
    )
    assert refused(keyCount=3) == (
        f"dependent table {db}.x: keyCount 3 is not in 1..2 (the base {db}.t has 2 partition keys)"
    )
    assert "'sometimes' is not one of refuse | allow | mark_incomplete" in refused(
        onBaseDrop="sometimes"
    )
    assert "x" not in client.get_all_tables(db)


def test_resolve_errors(client, db) -> None:
    base_table(client, db, "t")
    dependent(client, db, "tdep", f"{db}.t")
    with pytest.raises(hms.NoSuchObjectException, match=f"{db}.nope table not found"):
        resolve(client, db, "nope")
    with pytest.raises(hms.MetaException, match=f"{db}.t is not a dependent table"):
        resolve(client, db, "t")
    with pytest.raises(hms.NoSuchObjectException, match=f"partition ds=9 of {db}.tdep not found"):
        resolve(client, db, "tdep", "ds=9")
    with pytest.raises(hms.MetaException, match="no value for ds"):
        resolve(client, db, "tdep", "hr=9")
    with pytest.raises(hms.NoSuchObjectException, match=f"partition ds=1/hr=1 of {db}.t"):
        dependents(client, db, "t", "ds=1/hr=1")
    assert resolve(client, db, "tdep").partitions == []
