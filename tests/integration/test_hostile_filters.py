"""Hostile filters and expressions over a real socket: the answer is a MetaException with a
message (or, for get_partitions_by_expr, every partition with hasUnknownPartitions set), never
an internal error, and the same connection answers get_all_databases afterwards."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metastore_server.thrift_api import hms

from .conftest import create_db, make_partition, make_table

DB = "hostile"
VALUES = [["2024-01-01", "1"], ["2024-01-01", "2"], ["2024-01-02", "1"]]
HOSTILE: dict[str, str | bytes] = {
    "unterminated quote": "ds = 'abc",
    "unknown key": "zz = 1",
    "1000 digits": "hr = " + "9" * 1000,
    "5000 digits": "hr = -" + "1" * 5000,
    "nested too deeply": "(" * 100_001 + "ds = 'a'" + ")" * 100_001,
    "10,000 nots": "not " * 10_000 + "ds = 'a'",
    "unbalanced": "(" * 10_000 + "ds = 'a'",
    "NUL": "d\x00s = 'a'",
    "bad regex": "ds like '(('",
    "non-UTF-8": b"ds = '\xff\xfe'",
    "encoded surrogate": b"ds = '\xed\xa0\x80'",
    "blank": "   ",
}


@pytest.fixture(scope="module", autouse=True)
def table(running) -> None:
    connection = running.client()
    create_db(connection, DB)
    connection.create_table(make_table(DB, "t", keys=[("ds", "string"), ("hr", "int")]))
    connection.add_partitions([make_partition(DB, "t", values) for values in VALUES])
    connection.close()


def still_serving(client) -> None:
    assert DB in client.get_all_databases()


def meta_error(call) -> str:
    """The MetaException message ``call()`` raises (a non-empty one)."""
    with pytest.raises(hms.MetaException) as caught:
        call()
    assert caught.value.message
    return caught.value.message


FILTER_CALLS = {
    "get_partitions_by_filter": lambda c, f: c.get_partitions_by_filter(DB, "t", f, -1),
    "get_num_partitions_by_filter": lambda c, f: c.get_num_partitions_by_filter(DB, "t", f),
    "get_partitions_by_filter_req": lambda c, f: c.get_partitions_by_filter_req(
        hms.GetPartitionsByFilterRequest(dbName=DB, tblName="t", filter=f, maxParts=-1)
    ),
    "get_partition_values": lambda c, f: c.get_partition_values(
        hms.PartitionValuesRequest(
            dbName=DB,
            tblName="t",
            partitionKeys=[hms.FieldSchema(name="ds", type="string")],
            filter=f,
        )
    ),  # fmt: skip
}


@pytest.mark.parametrize("method", list(FILTER_CALLS))
@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_filters_are_meta_exceptions(client, method: str, name: str) -> None:
    message = meta_error(lambda: FILTER_CALLS[method](client, HOSTILE[name]))
    assert "internal" not in message.lower()
    still_serving(client)


def test_messages_say_what_is_wrong(client) -> None:
    call = FILTER_CALLS["get_partitions_by_filter"]
    assert "unterminated string literal" in meta_error(lambda: call(client, "ds = 'abc"))
    assert "not a partitioning key" in meta_error(lambda: call(client, "zz = 1"))
    assert "nested too deeply" in meta_error(lambda: call(client, HOSTILE["nested too deeply"]))
    assert "filter is not valid UTF-8" in meta_error(lambda: call(client, b"ds = '\xff'"))
    still_serving(client)


def test_big_valid_filters_are_answered(client) -> None:
    ors = " or ".join(f"(ds = '2024-01-{i:02d}' and hr = {i})" for i in range(10_000))
    assert client.get_num_partitions_by_filter(DB, "t", ors) == 1
    ands = " and ".join(f"hr != {i}" for i in range(3, 10_003))
    assert client.get_num_partitions_by_filter(DB, "t", ands) == 3
    huge = "ds = '" + "x" * 1_000_000 + "'"
    assert client.get_partitions_by_filter(DB, "t", huge, -1) == []
    still_serving(client)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.binary(max_size=200))
def test_random_filter_bytes(client, data: bytes) -> None:
    try:
        client.get_num_partitions_by_filter(DB, "t", data)
    except hms.MetaException as exc:
        assert exc.message
    still_serving(client)


# --- get_partitions_by_expr ---------------------------------------------------------------------


def by_expr(client, expr: bytes) -> tuple[int, bool]:
    request = hms.PartitionsByExprRequest(dbName=DB, tblName="t", expr=expr, maxParts=-1)
    result = client.get_partitions_by_expr(request)
    return len(result.partitions), result.hasUnknownPartitions


KRYO_LIKE = bytes.fromhex("01006f72672e6170616368652e6861646f6f702e686976652e716c2e706c616e2e")


@pytest.mark.parametrize(
    "expr",
    [
        b"\xff\xfe\x00\x01",
        KRYO_LIKE,
        KRYO_LIKE[:7],
        b"((ds = '2024-01-01') and (hr >",  # a truncated display form
        b"((ds = '2024-01-01') and (hr > \xff))",
        b"(" * 200_000,
        b"(ds='2024-01-01' AND hr='1') OR (ds='x",  # a truncated MSCK form
        b"",
    ],
)
def test_unreadable_expressions_answer_a_superset(client, expr: bytes) -> None:
    """Bytes the server cannot read (Kryo from Hive, garbage, a cut filter): every partition,
    flagged as possibly not matching, so that the client prunes them itself, as HMS's
    ``hasUnknownPartitions`` means. An empty expression selects everything."""
    assert by_expr(client, expr) == (len(VALUES), expr != b"")
    names = client.get_partition_names_req(
        hms.PartitionsByExprRequest(dbName=DB, tblName="t", expr=expr, maxParts=-1)
    )
    assert len(names) == len(VALUES)
    still_serving(client)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.binary(max_size=300))
def test_random_expression_bytes(client, data: bytes) -> None:
    count, unknown = by_expr(client, data)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        assert (count, unknown) == (len(VALUES), True)  # not text: the client prunes
    if unknown:
        assert count == len(VALUES)
    else:
        assert 0 <= count <= len(VALUES)
    still_serving(client)


def test_regex_bombs_are_answered_at_once(client) -> None:
    """``(a+)+b`` against a run of 40 a: 2^40 steps for a backtracking matcher (Java's, or
    Python's re), one pass for RE2. Filters, name patterns and the whitelist pattern alike."""
    bomb = "(a+)+b"
    long_a = "a" * 40
    client.create_table(make_table(DB, long_a, keys=[("s", "string")]))
    client.add_partitions([make_partition(DB, long_a, [long_a])])
    assert client.get_partitions_by_filter(DB, long_a, f"s like '{bomb}'", -1) == []
    assert client.get_tables(DB, bomb) == []
    assert client.get_databases(bomb) == []
    assert client.get_table_names_by_filter(
        DB, f'hive_filter_field_owner__ like "{bomb}"', -1) == []  # fmt: skip
    client.setMetaConf("hive.metastore.partition.name.whitelist.pattern", bomb)
    assert client.partition_name_has_valid_characters([long_a], False) is False
    client.setMetaConf("hive.metastore.partition.name.whitelist.pattern", "")
    with pytest.raises(hms.MetaException, match="back-references"):
        client.get_partitions_by_filter(DB, long_a, "s like '(a)\\1'", -1)
    assert client.get_partitions_by_filter(DB, long_a, "s like '(a+)+'", -1)[0].values == [long_a]
