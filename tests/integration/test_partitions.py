"""Partitions over a real socket: add/get/list/filter/alter/rename/drop, HMS names and errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from metastore_server.thrift_api import hms

from .conftest import create_db, make_partition, make_table

DB = "pdb"
SPEC = [
    ["2024-01-01", "1"],
    ["2024-01-01", "2"],
    ["2024-01-01", "10"],
    ["2024-01-02", "1"],
    ["2024-01-03", "5"],
    ["2024-02-01", "__HIVE_DEFAULT_PARTITION__"],
]


@pytest.fixture(scope="module", autouse=True)
def events(running) -> None:
    connection = running.client()
    create_db(connection, DB)
    connection.create_table(make_table(DB, "events", keys=[("ds", "string"), ("hr", "int")]))
    request = hms.AddPartitionsRequest(
        dbName=DB,
        tblName="events",
        parts=[make_partition(DB, "events", values) for values in SPEC],
        ifNotExists=False,
        needResult=True,
    )
    added = connection.add_partitions_req(request)
    assert len(added.partitions) == len(SPEC)
    connection.close()


def names_of(parts: list[hms.Partition]) -> list[str]:
    return sorted("/".join(p.values) for p in parts)


def test_partition_names_are_hms_names_sorted(client) -> None:
    assert client.get_partition_names(DB, "events", -1) == sorted(
        f"ds={ds}/hr={hr}" for ds, hr in SPEC
    )
    assert len(client.get_partition_names(DB, "events", 2)) == 2


def test_default_location_under_table(client, running) -> None:
    part = client.get_partition(DB, "events", ["2024-01-01", "1"])
    table = client.get_table(DB, "events")
    assert part.sd.location == table.sd.location + "/ds=2024-01-01/hr=1"
    assert Path(part.sd.location[len("file:") :]).is_dir()
    assert int(part.parameters["transient_lastDdlTime"]) > 0


def test_get_by_name_and_names(client) -> None:
    part = client.get_partition_by_name(DB, "events", "ds=2024-01-02/hr=1")
    assert part.values == ["2024-01-02", "1"]
    parts = client.get_partitions_by_names(
        DB, "events", ["ds=2024-01-02/hr=1", "ds=1999-01-01/hr=1"]
    )
    assert [p.values for p in parts] == [["2024-01-02", "1"]]


def test_names_in_any_key_order_and_incomplete_names(client) -> None:
    part = client.get_partition_by_name(DB, "events", "hr=5/ds=2024-01-03")
    assert part.values == ["2024-01-03", "5"]
    with pytest.raises(hms.NoSuchObjectException, match="incomplete partition name - missing hr"):
        client.get_partition_by_name(DB, "events", "ds=2024-01-03")
    with pytest.raises(hms.NoSuchObjectException, match="missing ds"):
        client.drop_partition_by_name(DB, "events", "garbage", False)


def test_get_by_names_answers_in_name_order(client) -> None:
    parts = client.get_partitions_by_names(
        DB, "events", ["ds=2024-01-03/hr=5", "ds=2024-01-01/hr=2", "ds=2024-01-01/hr=10"]
    )
    assert [p.values for p in parts] == [
        ["2024-01-01", "10"],
        ["2024-01-01", "2"],
        ["2024-01-03", "5"],
    ]


def test_partition_name_helpers_are_lenient_like_hms(client) -> None:
    assert client.partition_name_to_vals("garbage") == []
    assert client.partition_name_to_spec("") == {}
    assert client.partition_name_to_vals("ds=a=b/hr=1") == ["b", "1"]
    assert client.partition_name_to_spec("DS=x/junk/HR=1") == {"DS": "x", "HR": "1"}


def test_missing_partition(client) -> None:
    with pytest.raises(hms.NoSuchObjectException):
        client.get_partition(DB, "events", ["1999-01-01", "1"])
    with pytest.raises(hms.MetaException):
        client.get_partition(DB, "events", ["only-one-value"])


def test_partial_specs(client) -> None:
    parts = client.get_partitions_ps(DB, "events", ["2024-01-01", ""], -1)
    assert names_of(parts) == ["2024-01-01/1", "2024-01-01/10", "2024-01-01/2"]
    parts = client.get_partitions_ps_with_auth(DB, "events", ["", "1"], -1, "u", ["g"])
    assert names_of(parts) == ["2024-01-01/1", "2024-01-02/1"]
    assert client.get_partition_names_ps(DB, "events", ["2024-01-03"], -1) == ["ds=2024-01-03/hr=5"]


@pytest.mark.parametrize(
    ("filter_text", "expected"),
    [
        ('ds = "2024-01-01" and hr = 1', ["2024-01-01/1"]),
        ("hr = 2", ["2024-01-01/2"]),
        ('ds > "2024-01-01" and ds <= "2024-01-03"', ["2024-01-02/1", "2024-01-03/5"]),
        ("hr >= 2 and hr < 10", ["2024-01-01/2", "2024-01-03/5"]),
        ("hr > 9", ["2024-01-01/10"]),
        ('(ds) in ("2024-01-02", "2024-01-03")', ["2024-01-02/1", "2024-01-03/5"]),
        ("(hr) in (1, 5)", ["2024-01-01/1", "2024-01-02/1", "2024-01-03/5"]),
        (
            'ds like "2024-01.*"',
            ["2024-01-01/1", "2024-01-01/10", "2024-01-01/2", "2024-01-02/1", "2024-01-03/5"],
        ),
        ('ds like ".*-02"', ["2024-01-02/1"]),
        ('(ds = "2024-01-02" or hr = 10)', ["2024-01-01/10", "2024-01-02/1"]),
        (
            'ds != "2024-01-01"',
            ["2024-01-02/1", "2024-01-03/5", "2024-02-01/__HIVE_DEFAULT_PARTITION__"],
        ),
        ("hr != 1", ["2024-01-01/10", "2024-01-01/2", "2024-01-03/5"]),
        ("", [f"{ds}/{hr}" for ds, hr in SPEC]),
    ],
)
def test_filters(client, filter_text: str, expected: list[str]) -> None:
    parts = client.get_partitions_by_filter(DB, "events", filter_text, -1)
    assert names_of(parts) == sorted(expected)
    assert client.get_num_partitions_by_filter(DB, "events", filter_text) == len(expected)


def test_bad_filter_is_meta_exception(client) -> None:
    with pytest.raises(hms.MetaException) as info:
        client.get_partitions_by_filter(DB, "events", 'ds = "unterminated', -1)
    assert "Error parsing partition filter" in info.value.message


def test_unknown_filter_key_is_named(client) -> None:
    with pytest.raises(hms.MetaException) as info:
        client.get_partitions_by_filter(DB, "events", 'nokey = "x"', -1)
    assert "nokey" in info.value.message


def test_filter_on_missing_table(client) -> None:
    with pytest.raises(hms.NoSuchObjectException):
        client.get_partitions_by_filter(DB, "nope", "hr = 1", -1)


def test_add_existing_partition(client) -> None:
    with pytest.raises(hms.AlreadyExistsException):
        client.add_partition(make_partition(DB, "events", ["2024-01-01", "1"]))


def test_add_if_not_exists_returns_only_new(client) -> None:
    request = hms.AddPartitionsRequest(
        dbName=DB,
        tblName="events",
        parts=[
            make_partition(DB, "events", ["2024-01-01", "1"]),
            make_partition(DB, "events", ["2024-05-05", "5"]),
        ],
        ifNotExists=True,
        needResult=True,
    )
    result = client.add_partitions_req(request)
    assert [p.values for p in result.partitions] == [["2024-05-05", "5"]]
    client.drop_partition(DB, "events", ["2024-05-05", "5"], True)


def test_add_partitions_all_or_nothing(client) -> None:
    parts = [
        make_partition(DB, "events", ["2030-01-01", "1"]),
        make_partition(DB, "events", ["2024-01-01", "1"]),
    ]
    with pytest.raises(hms.AlreadyExistsException):
        client.add_partitions(parts)
    with pytest.raises(hms.NoSuchObjectException):
        client.get_partition(DB, "events", ["2030-01-01", "1"])


def test_add_partitions_reports_the_first_bad_partition_in_order(client) -> None:
    """The rows present are looked up in one read, but the error is still that of the first
    partition in the list that cannot be added."""
    existing = make_partition(DB, "events", ["2024-01-01", "1"])
    short = make_partition(DB, "events", ["2031-01-01"])  # one value for two keys
    with pytest.raises(hms.AlreadyExistsException):
        client.add_partitions([existing, short])
    with pytest.raises(hms.MetaException, match="Invalid partition key & values"):
        client.add_partitions([short, existing])
    with pytest.raises(hms.NoSuchObjectException):
        client.get_partition(DB, "events", ["2031-01-01", "1"])


def test_a_large_batch_with_one_bad_partition_stores_nothing(client) -> None:
    """500 partitions whose directories the call makes: with the last a duplicate of the
    first, or with the last one's directory blocked by a file (found after the others were
    made), nothing is added, and every directory the call made is removed again."""
    client.create_table(make_table(DB, "bulk", keys=[("ds", "string"), ("hr", "int")]))
    table_dir = Path(client.get_table(DB, "bulk").sd.location[len("file:") :])
    parts = [make_partition(DB, "bulk", [f"d{i // 24}", str(i % 24)]) for i in range(499)]
    with pytest.raises(hms.MetaException, match="Duplicate partitions in the list"):
        client.add_partitions([*parts, make_partition(DB, "bulk", ["d0", "0"])])
    assert client.get_partition_names(DB, "bulk", -1) == []
    table_dir.mkdir(parents=True, exist_ok=True)
    (table_dir / "ds=zz").write_text("not a directory")
    with pytest.raises(hms.MetaException, match="ds=zz"):
        client.add_partitions([*parts, make_partition(DB, "bulk", ["zz", "0"])])
    assert client.get_partition_names(DB, "bulk", -1) == []
    assert [p.name for p in table_dir.iterdir()] == ["ds=zz"]
    (table_dir / "ds=zz").unlink()
    assert client.add_partitions(parts) == 499
    assert all((table_dir / f"ds=d{i // 24}" / f"hr={i % 24}").is_dir() for i in range(499))


def test_the_answer_keeps_the_storage_as_sent_and_the_row_holds_hms_defaults(client) -> None:
    """An added partition is answered with its storage fields as the client sent them; it is
    stored (and read back) with HMS's defaults: empty skew information, not stored as
    subdirectories; with or without them in the request, the partitions read back alike."""
    client.create_table(make_table(DB, "sds", keys=[("ds", "string")]))
    bare = make_partition(DB, "sds", ["a"])
    full = make_partition(DB, "sds", ["b"])
    full.sd.skewedInfo = hms.SkewedInfo(
        skewedColNames=[], skewedColValues=[], skewedColValueLocationMaps={}
    )
    full.sd.storedAsSubDirectories = False
    request = hms.AddPartitionsRequest(
        dbName=DB, tblName="sds", parts=[bare, full], ifNotExists=False, needResult=True
    )
    answered = client.add_partitions_req(request).partitions
    assert answered[0].sd.skewedInfo is None and answered[0].sd.storedAsSubDirectories is None
    assert answered[1].sd.skewedInfo == full.sd.skewedInfo
    read = {p.values[0]: p for p in client.get_partitions(DB, "sds", -1)}
    for value, sent in (("a", answered[0]), ("b", answered[1])):
        stored = read[value]
        assert stored.sd.skewedInfo == hms.SkewedInfo(
            skewedColNames=[], skewedColValues=[], skewedColValueLocationMaps={}
        )
        assert stored.sd.storedAsSubDirectories is False
        assert (stored.sd.location, stored.parameters) == (sent.sd.location, sent.parameters)
    assert read["a"].sd.location.endswith("/sds/ds=a")
    a, b = read["a"], read["b"]
    a.sd.location = b.sd.location = None
    a.values = b.values = None
    a.createTime = b.createTime = a.parameters = b.parameters = None
    assert a == b


def test_special_characters_are_escaped_in_names(client) -> None:
    client.create_table(make_table(DB, "odd", keys=[("path", "string")]))
    client.add_partition(make_partition(DB, "odd", ["a/b:c=d"]))
    assert client.get_partition_names(DB, "odd", -1) == ["path=a%2Fb%3Ac%3Dd"]
    assert client.get_partition_by_name(DB, "odd", "path=a%2Fb%3Ac%3Dd").values == ["a/b:c=d"]
    assert client.partition_name_to_vals("path=a%2Fb%3Ac%3Dd/x=1") == ["a/b:c=d", "1"]
    assert client.partition_name_to_spec("path=a%2Fb/x=1") == {"path": "a/b", "x": "1"}


def test_alter_and_rename_partition(client) -> None:
    client.create_table(make_table(DB, "alt", keys=[("ds", "string")]))
    client.add_partition(make_partition(DB, "alt", ["a"]))
    part = client.get_partition(DB, "alt", ["a"])
    part.parameters["note"] = "hello"
    client.alter_partition(DB, "alt", part)
    assert client.get_partition(DB, "alt", ["a"]).parameters["note"] == "hello"
    missing = make_partition(DB, "alt", ["zzz"])
    with pytest.raises(hms.InvalidOperationException):
        client.alter_partitions(DB, "alt", [missing])
    renamed = client.get_partition(DB, "alt", ["a"])
    renamed.values = ["b"]
    client.rename_partition(DB, "alt", ["a"], renamed)
    assert client.get_partition_names(DB, "alt", -1) == ["ds=b"]
    moved = client.get_partition(DB, "alt", ["b"])
    assert moved.sd.location.endswith("/alt/ds=b")
    assert Path(moved.sd.location[len("file:") :]).is_dir()


def test_drop_partition_variants(client) -> None:
    client.create_table(make_table(DB, "drops", keys=[("ds", "string")]))
    client.add_partitions([make_partition(DB, "drops", [v]) for v in ("a", "b", "c", "d")])
    location = Path(client.get_partition(DB, "drops", ["a"]).sd.location[len("file:") :])
    assert client.drop_partition(DB, "drops", ["a"], True) is True
    assert not location.exists()
    assert client.drop_partition_by_name(DB, "drops", "ds=b", False) is True
    with pytest.raises(hms.NoSuchObjectException):
        client.drop_partition(DB, "drops", ["a"], True)
    request = hms.DropPartitionsRequest(
        dbName=DB,
        tblName="drops",
        parts=hms.RequestPartsSpec(names=["ds=c", "ds=zz"]),
        deleteData=False,
        ifExists=True,
        needResult=True,
    )
    result = client.drop_partitions_req(request)
    assert [p.values for p in result.partitions] == [["c"]]
    assert client.get_partition_names(DB, "drops", -1) == ["ds=d"]


def test_typed_ordering_and_values(client) -> None:
    request = hms.PartitionValuesRequest(
        dbName=DB,
        tblName="events",
        partitionKeys=[hms.FieldSchema(name="hr", type="int")],
        ascending=False,
        maxParts=2,
    )
    rows = [r.row for r in client.get_partition_values(request).partitionValues]
    assert rows == [["10"], ["5"]]


def _distinct_first_key(client, table: str) -> list[list[str]]:
    request = hms.PartitionValuesRequest(
        dbName=DB, tblName=table, partitionKeys=[hms.FieldSchema(name="hr", type="int")]
    )
    return [r.row for r in client.get_partition_values(request).partitionValues]


def test_distinct_values_keep_every_spelling_of_a_leading_typed_key(client) -> None:
    # Distinct hr values would seek past all partitions of hr 7 after the first one; "07" is
    # another row sharing that prefix, so the table remembers it holds such a spelling and
    # the read does not seek (also after a rename).
    client.create_table(make_table(DB, "spelled_first", keys=[("hr", "int"), ("ds", "string")]))
    client.add_partitions(
        [make_partition(DB, "spelled_first", v) for v in (["7", "a"], ["7", "c"], ["8", "a"])]
    )
    assert _distinct_first_key(client, "spelled_first") == [["7"], ["8"]]
    client.add_partition(make_partition(DB, "spelled_first", ["07", "b"]))
    assert _distinct_first_key(client, "spelled_first") == [["7"], ["07"], ["8"]]
    renamed = client.get_table(DB, "spelled_first")
    renamed.tableName = "spelled_renamed"
    client.alter_table(DB, "spelled_first", renamed)
    assert _distinct_first_key(client, "spelled_renamed") == [["7"], ["07"], ["8"]]


def test_partial_spec_on_a_leading_int_key_matches_the_exact_spelling(client) -> None:
    client.create_table(make_table(DB, "spelled", keys=[("hr", "int"), ("ds", "string")]))
    client.add_partitions(
        [
            make_partition(DB, "spelled", v)
            for v in (["7", "a"], ["007", "a"], ["7", "b"], ["8", "a"])
        ]
    )
    assert [p.values for p in client.get_partitions_ps(DB, "spelled", ["7"], -1)] == [
        ["7", "a"],
        ["7", "b"],
    ]
    assert [p.values for p in client.get_partitions_ps(DB, "spelled", ["007", ""], -1)] == [
        ["007", "a"]
    ]
    assert client.get_partition_names_ps(DB, "spelled", ["7", "b"], -1) == ["hr=7/ds=b"]
    # A filter compares int keys as numbers: every spelling of 7 matches.
    found = client.get_partitions_by_filter(DB, "spelled", 'hr = 7 and ds = "a"', -1)
    assert sorted(p.values[0] for p in found) == ["007", "7"]


def test_rename_partition_to_its_own_values_keeps_it(client) -> None:
    client.add_partition(make_partition(DB, "events", ["2031-01-01", "1"]))
    part = client.get_partition(DB, "events", ["2031-01-01", "1"])
    part.parameters["note"] = "kept"
    client.rename_partition(DB, "events", ["2031-01-01", "1"], part)
    again = client.get_partition(DB, "events", ["2031-01-01", "1"])
    assert again.parameters["note"] == "kept"
    client.drop_partition(DB, "events", ["2031-01-01", "1"], False)
