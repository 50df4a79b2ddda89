"""Dependent tables (docs/dependent-tables.md), server side step 1, over real sockets: declaring one
with table properties (create / alter checks) and the dependency and default location a new
dependent partition gets."""

from __future__ import annotations

from pathlib import Path

import pytest

from metastore_server.catalog.dependencies.model import (
    BASE_KEY,
    COMPLETENESS_PERIOD_KEY,
    DEPENDS_ON_KEY,
    ON_BASE_DROP_KEY,
)
from metastore_server.thrift_api import hms

from .conftest import create_db, make_partition, make_table

DB = "dep"
BASE_KEYS = [("ds", "string"), ("hr", "string")]
COLUMNS = [("key", "string"), ("value", "string")]


@pytest.fixture(scope="module", autouse=True)
def bases(running) -> None:
    """T(ds, hr) and T2(ds, hr, min), each with a partition, in database ``dep``."""
    connection = running.client()
    create_db(connection, DB)
    connection.create_table(make_table(DB, "t", keys=BASE_KEYS, columns=COLUMNS))
    connection.create_table(
        make_table(DB, "t2", keys=[*BASE_KEYS, ("min", "string")], columns=COLUMNS)
    )
    connection.add_partition(make_partition(DB, "t", ["2024-01-01", "1"]))
    connection.close()


def dependent(
    name: str, base: str | None = "dep.t", keys=None, columns=None, **params: str
) -> hms.Table:
    parameters = dict(params)
    if base is not None:
        parameters[BASE_KEY] = base
    return make_table(
        DB,
        name,
        keys=[("ds", "string")] if keys is None else keys,
        columns=COLUMNS if columns is None else columns,
        parameters=parameters,
    )


def refused_create(client, table: hms.Table) -> str:
    with pytest.raises(hms.InvalidObjectException) as caught:
        client.create_table(table)
    assert DB + "." + table.tableName not in [f"{DB}.{n}" for n in client.get_all_tables(DB)]
    return caught.value.message


def location_of(client, table: str) -> str:
    return client.get_table(DB, table).sd.location


def test_missing_base_is_refused(client) -> None:
    message = refused_create(client, dependent("d_nobase", base="dep.nope"))
    assert message == "dependent table dep.d_nobase: base table dep.nope does not exist"


def test_keys_not_a_prefix_are_refused(client) -> None:
    message = refused_create(client, dependent("d_hr", keys=[("hr", "string")], columns=COLUMNS))
    assert message == (
        "dependent table dep.d_hr: partition key 1 of the dependent table is 'hr' but the "
        "base's is 'ds'; the keys must be a prefix of the base's (ds string, hr string)"
    )
    message = refused_create(client, dependent("d_int", keys=[("ds", "int")]))
    assert message == (
        "dependent table dep.d_int: partition key 'ds' is int in the dependent table but string "
        "in the base"
    )
    message = refused_create(client, dependent("d_none", keys=[]))
    assert message == (
        "dependent table dep.d_none: a dependent table must be partitioned by a prefix of its "
        "base's keys"
    )


def test_malformed_properties_are_refused(client) -> None:
    message = refused_create(client, dependent("d_bad", base="nodot"))
    assert message == (
        "dependent table dep.d_bad: metastore.dependent.base: expected a table as db.table, "
        "got 'nodot'"
    )
    message = refused_create(client, dependent("d_pol", **{ON_BASE_DROP_KEY: "maybe"}))
    assert message == (
        "dependent table dep.d_pol: metastore.dependent.on.base.drop: 'maybe' is not one of "
        "refuse | allow | mark_incomplete"
    )
    message = refused_create(client, dependent("d_half", **{COMPLETENESS_PERIOD_KEY: "HOURLY"}))
    assert message == (
        "dependent table dep.d_half: metastore.dependent.completeness.period is set but "
        "metastore.dependent.completeness.columns is not (set both or neither)"
    )
    message = refused_create(client, dependent("d_typo", **{"metastore.dependent.bse": "x"}))
    assert message.startswith(
        "dependent table dep.d_typo: unknown table property 'metastore.dependent.bse'"
    )


def test_dependent_partition_records_dependency_and_base_location(client, running) -> None:
    client.create_table(dependent("tdep"))
    stored = client.get_table(DB, "tdep")
    assert [(c.name, c.type) for c in stored.sd.cols] == COLUMNS
    assert stored.parameters[BASE_KEY] == "dep.t"

    added = client.add_partition(make_partition(DB, "tdep", ["2024-01-01"]))
    expected_location = location_of(client, "t") + "/ds=2024-01-01"
    assert added.parameters[DEPENDS_ON_KEY] == "dep.t@ds=2024-01-01"
    assert added.sd.location == expected_location
    got = client.get_partition(DB, "tdep", ["2024-01-01"])
    assert got.parameters[DEPENDS_ON_KEY] == "dep.t@ds=2024-01-01"
    assert got.sd.location == expected_location
    # No directory of its own: the data is the base's.
    own = Path(location_of(client, "tdep").removeprefix("file:")) / "ds=2024-01-01"
    assert not own.exists()

    # Every add path: add_partitions and add_partitions_req.
    client.add_partitions([make_partition(DB, "tdep", ["2024-01-02"])])
    request = hms.AddPartitionsRequest(
        dbName=DB,
        tblName="tdep",
        parts=[make_partition(DB, "tdep", ["2024-01-03"])],
        ifNotExists=False,
        needResult=True,
    )
    client.add_partitions_req(request)
    for day in ("2024-01-02", "2024-01-03"):
        got = client.get_partition(DB, "tdep", [day])
        assert got.parameters[DEPENDS_ON_KEY] == f"dep.t@ds={day}"
        assert got.sd.location == location_of(client, "t") + f"/ds={day}"

    # Dropping a dependent partition with its data leaves the base's directory alone.
    base_dir = Path(location_of(client, "t").removeprefix("file:")) / "ds=2024-01-01"
    assert base_dir.exists()
    client.drop_partition(DB, "tdep", ["2024-01-01"], True)
    assert base_dir.exists()


def test_explicit_location_and_dependency_are_kept(client, tmp_path: Path) -> None:
    client.create_table(dependent("tdep_explicit"))
    elsewhere = f"file:{tmp_path}/elsewhere/x"
    part = make_partition(DB, "tdep_explicit", ["2024-02-01"], location=elsewhere)
    added = client.add_partition(part)
    assert added.sd.location == elsewhere
    assert added.parameters[DEPENDS_ON_KEY] == "dep.t@ds=2024-02-01"

    # Re-pointing one partition: the client's dependency is kept, and the default location
    # follows it.
    part = make_partition(DB, "tdep_explicit", ["2024-02-02"])
    part.parameters = {DEPENDS_ON_KEY: "dep.t2@ds=2024-02-01"}
    added = client.add_partition(part)
    assert added.parameters[DEPENDS_ON_KEY] == "dep.t2@ds=2024-02-01"
    assert added.sd.location == location_of(client, "t2") + "/ds=2024-02-01"

    part = make_partition(DB, "tdep_explicit", ["2024-02-03"])
    part.parameters = {DEPENDS_ON_KEY: "garbage"}
    with pytest.raises(hms.InvalidObjectException) as caught:
        client.add_partition(part)
    assert caught.value.message == (
        "dependent table dep.tdep_explicit: expected db.table@key=value/..., got 'garbage'"
    )


def test_repointing_the_table_affects_new_partitions_only(client) -> None:
    client.create_table(dependent("tdep_move"))
    client.add_partition(make_partition(DB, "tdep_move", ["2024-03-01"]))

    table = client.get_table(DB, "tdep_move")
    table.parameters[BASE_KEY] = "dep.t2"
    client.alter_table(DB, "tdep_move", table)
    assert client.get_table(DB, "tdep_move").parameters[BASE_KEY] == "dep.t2"

    client.add_partition(make_partition(DB, "tdep_move", ["2024-03-02"]))
    old = client.get_partition(DB, "tdep_move", ["2024-03-01"])
    new = client.get_partition(DB, "tdep_move", ["2024-03-02"])
    assert old.parameters[DEPENDS_ON_KEY] == "dep.t@ds=2024-03-01"
    assert old.sd.location == location_of(client, "t") + "/ds=2024-03-01"
    assert new.parameters[DEPENDS_ON_KEY] == "dep.t2@ds=2024-03-02"
    assert new.sd.location == location_of(client, "t2") + "/ds=2024-03-02"


def test_alter_checks_a_new_base(client) -> None:
    client.create_table(dependent("tdep_alter"))
    table = client.get_table(DB, "tdep_alter")

    table.parameters[BASE_KEY] = "dep.gone"
    with pytest.raises(hms.InvalidOperationException) as caught:
        client.alter_table(DB, "tdep_alter", table)
    assert caught.value.message == (
        "dependent table dep.tdep_alter: base table dep.gone does not exist"
    )

    client.create_table(make_table(DB, "by_hr", keys=[("hr", "string")], columns=COLUMNS))
    table.parameters[BASE_KEY] = "dep.by_hr"
    with pytest.raises(hms.InvalidOperationException) as caught:
        client.alter_table(DB, "tdep_alter", table)
    assert caught.value.message == (
        "dependent table dep.tdep_alter: partition key 1 of the dependent table is 'ds' but the "
        "base's is 'hr'; the keys must be a prefix of the base's (hr string)"
    )

    table.parameters[BASE_KEY] = "dep.t"
    table.parameters[ON_BASE_DROP_KEY] = "sometimes"
    with pytest.raises(hms.InvalidOperationException) as caught:
        client.alter_table(DB, "tdep_alter", table)
    assert caught.value.message == (
        "dependent table dep.tdep_alter: metastore.dependent.on.base.drop: 'sometimes' is not "
        "one of refuse | allow | mark_incomplete"
    )
    assert client.get_table(DB, "tdep_alter").parameters[BASE_KEY] == "dep.t"

    # A valid policy change keeps the same base: accepted.
    table.parameters[ON_BASE_DROP_KEY] = "allow"
    client.alter_table(DB, "tdep_alter", table)
    assert client.get_table(DB, "tdep_alter").parameters[ON_BASE_DROP_KEY] == "allow"


def test_plain_tables_are_unaffected(client) -> None:
    client.create_table(make_table(DB, "plain", keys=[("ds", "string")], columns=COLUMNS))
    added = client.add_partition(make_partition(DB, "plain", ["2024-01-01"]))
    assert DEPENDS_ON_KEY not in (added.parameters or {})
    assert added.sd.location == location_of(client, "plain") + "/ds=2024-01-01"
