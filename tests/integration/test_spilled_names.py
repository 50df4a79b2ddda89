"""Partition names of a table larger than one sorting run (``catalog/reads/spilled_names.py``,
here a run of 7 names) are answered through runs on disk exactly as a sort in memory answers
them: whole and limited, for the whole table and a partial spec, on every transport and
protocol, and again after the table changes."""

from __future__ import annotations

import pytest

from metastore_server.catalog.reads import selection, spilled_names

from .conftest import create_db, make_partition, make_table

DB, TABLE = "spill", "t"


def _name(ds: str, hr: int) -> str:
    return f"ds={ds}/hr={hr}"


@pytest.fixture()
def small_runs(monkeypatch) -> list[int]:
    """Runs of 7 names; counts the answers merged from runs."""
    monkeypatch.setattr(spilled_names, "RUN_NAMES", 7)
    merges = [0]
    merged = spilled_names.MergedNames.merged

    def counted(self):  # noqa: ANN001, ANN202
        merges[0] += 1
        return merged(self)

    monkeypatch.setattr(spilled_names.MergedNames, "merged", counted)
    return merges


@pytest.mark.parametrize(("framed", "compact"), [(False, False), (True, False), (False, True)])
def test_names_through_runs_are_the_sorted_names(start_server, small_runs, framed, compact):
    server = start_server(
        transport="framed" if framed else "buffered", protocol="compact" if compact else "binary"
    )
    client = server.client(framed=framed, compact=compact)
    create_db(client, DB)
    client.create_table(make_table(DB, TABLE, keys=[("ds", "string"), ("hr", "int")]))
    # int hours: key order (2 before 10) is not name order ("hr=10" before "hr=2")
    days = ["2024-01-0" + str(d) for d in range(1, 4)] + ["2024-01-0a b", "2024-01-0é"]
    parts = [(ds, hr) for ds in days for hr in range(0, 24, 2)]
    client.add_partitions([make_partition(DB, TABLE, [ds, str(hr)]) for ds, hr in parts])
    wanted = sorted(_name(ds, hr) for ds, hr in parts)
    assert client.get_partition_names(DB, TABLE, -1) == wanted
    assert client.get_partition_names(DB, TABLE, -1) == wanted  # asked again
    assert client.get_partition_names(DB, TABLE, 10) == wanted[:10]
    assert client.get_partition_names(DB, TABLE, 1000) == wanted
    one_day = sorted(_name("2024-01-02", hr) for hr in range(0, 24, 2))
    assert client.get_partition_names_ps(DB, TABLE, ["2024-01-02", ""], -1) == one_day
    assert client.get_partition_names_ps(DB, TABLE, ["2024-01-02", ""], 3) == one_day[:3]
    assert small_runs[0] >= 5  # every whole or limited listing above went through runs
    client.drop_partition(DB, TABLE, ["2024-01-03", "10"], True)
    wanted.remove(_name("2024-01-03", 10))
    assert client.get_partition_names(DB, TABLE, -1) == wanted
    client.close()


@pytest.fixture()
def small_partition_runs(monkeypatch) -> list[int]:
    """Runs of a few partitions, read from the store 5 at a time; counts the merged answers."""
    monkeypatch.setattr(spilled_names, "RUN_BYTES", 2000)
    monkeypatch.setattr(selection, "PARTITION_BATCH", 5)
    merges = [0]
    chunks = spilled_names.MergedPartitions.blob_chunks

    def counted(self, size):  # noqa: ANN001, ANN202
        merges[0] += 1
        return chunks(self, size)

    monkeypatch.setattr(spilled_names.MergedPartitions, "blob_chunks", counted)
    return merges


@pytest.mark.parametrize(("framed", "compact"), [(False, False), (True, False), (False, True)])
def test_partitions_through_runs_are_in_name_order(
    start_server, small_partition_runs, framed, compact
):
    server = start_server(
        transport="framed" if framed else "buffered",
        protocol="compact" if compact else "binary",
        listing_cache_mb=0,  # no listing kept: every listing is read from the store
    )
    client = server.client(framed=framed, compact=compact)
    create_db(client, DB)
    client.create_table(make_table(DB, TABLE, keys=[("ds", "string"), ("hr", "int")]))
    parts = [(ds, hr) for ds in ("2024-01-01", "2024-01-02", "x y") for hr in range(0, 24, 2)]
    client.add_partitions([make_partition(DB, TABLE, [ds, str(hr)]) for ds, hr in parts])
    wanted = sorted(parts, key=lambda p: _name(*p))

    def listed(found: list) -> list[tuple[str, int]]:
        return [(p.values[0], int(p.values[1])) for p in found]

    whole = client.get_partitions(DB, TABLE, -1)
    assert listed(whole) == wanted
    assert all((p.dbName, p.tableName) == (DB, TABLE) for p in whole)
    assert listed(client.get_partitions(DB, TABLE, 7)) == wanted[:7]
    hr_6 = [p for p in wanted if p[1] == 6]
    assert listed(client.get_partitions_by_filter(DB, TABLE, "hr = 6", -1)) == hr_6
    assert listed(client.get_partitions_by_filter(DB, TABLE, 'ds >= "2024-01-02"', -1)) == [
        p for p in wanted if p[0] >= "2024-01-02"
    ]
    assert small_partition_runs[0] >= 2  # the whole listings above went through runs
    client.close()
