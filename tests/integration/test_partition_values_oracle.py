"""get_partition_values over a real socket, checked against the brute-force oracle of
:mod:`support.values_oracle` (written from the specification in the docstring of
``metastore_server.api.values``, not from the server code).

The property tests draw a table (1-3 keys of string/int/date types) and its partitions from
small value domains (so duplicates and ties happen, with the default partition and non-canonical
spellings such as "07", "+7", "2024-1-5" now and then), then requests (key subsets with repeats
and in any case, order lists, distinct, direction, maxParts, an optional filter), and assert
the server answers exactly the oracle's rows, in the oracle's order:

* ``test_rows_are_the_oracles``: up to 20 partitions, added in two batches with requests before
  and after, and a few dropped;
* ``test_rows_are_the_oracles_on_wide_blocks``: blocks of 20-60 partitions under each first
  value, where a server may read a block in part and skip past the rest.

Which partitions a filter matches is what ``get_partitions_by_filter`` answers on the same
server (tested on its own: tests/storage/test_filter_execution.py, and against the reference
metastore in tests/compat); the oracle takes that set as given. (The independent filter oracle
of support.typed_filters does not fit: it knows one fixed table, keys (d, b, s), whose values
all parse, with no default partition and no other spellings.)

The example tests below pin the tricky cases with literal expected rows. Knobs:
VALUES_ORACLE_EXAMPLES (60) to search longer, VALUES_ORACLE_SHRINK=1 to shrink a failure.
"""

from __future__ import annotations

import datetime as dt
import itertools
import os
from collections.abc import Iterator, Sequence

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from support.values_oracle import DEFAULT_PARTITION as DEF
from support.values_oracle import InvalidRequest, ValuesRequest, expected_rows

from metastore_server.thrift_api import hms

from .conftest import RunningServer, create_db, make_partition, make_table

DB = "values_oracle"
_TABLES = itertools.count()

NAMES = ("x", "y", "z")
TYPES = {
    "string": ["string", "varchar(20)"],
    "integer": ["int", "bigint", "smallint", "tinyint"],
    "date": ["date"],
}
#: (common values, values drawn now and then: spellings, the default partition, unparseable)
DOMAINS = {
    "string": (
        ["a", "b", "ab", "B"],
        ["7", "07", DEF, "a b", "a\x00", "a\x01", "a/b", "é", "\ufffd", "\U0001f600"],
    ),
    "integer": (
        ["-3", "0", "7", "12"],
        ["07", "+7", "007", "-0", " 7", DEF, "abc", str(2**63 - 1), str(-(2**63)), str(2**63)],
    ),
    "date": (
        ["2023-12-31", "2024-01-05", "2024-01-06"],
        ["2024-1-5", "2024-01-5", "2024-1-06", DEF, "2024-02-30", "20240105", "0001-01-01",
         "9999-12-31"],
    ),
}  # fmt: skip
#: Leaves of generated filters, per key kind ({k}: the key's name).
LEAVES = {
    "string": [
        '{k} = "a"',
        '{k} != "b"',
        '{k} < "b"',
        '{k} >= "B"',
        '({k}) in ("a", "7")',
        '{k} like "a.*"',
        '{k} between "a" and "b"',
    ],
    "integer": [
        "{k} = 7",
        "{k} > 0",
        "{k} <= 7",
        "{k} != 12",
        "({k}) in (7, -3)",
        "{k} between 0 and 7",
        "{k} not between 0 and 7",
    ],
    "date": [
        "{k} = 2024-01-05",
        '{k} >= "2024-01-05"',
        "{k} < 2024-01-06",
        "{k} between 2024-01-01 and 2024-01-05",
        '{k} != "2024-01-06"',
    ],
}
MAX_PARTS = [-1, 0, 1, 2, 5, 2**40]
#: Examples of the main property test (the wide-block one runs a quarter as many); raise it
#: to search longer, e.g. VALUES_ORACLE_EXAMPLES=1000.
EXAMPLES = int(os.environ.get("VALUES_ORACLE_EXAMPLES", "60"))
#: Every example builds a table on the server, so shrinking a failure takes minutes: it is off
#: unless VALUES_ORACLE_SHRINK=1 (the failure message shows the table and the request anyway).
PHASES = (Phase.explicit, Phase.reuse, Phase.generate) + (
    (Phase.shrink,) if os.environ.get("VALUES_ORACLE_SHRINK") else ()
)

Keys = list[tuple[str, str]]


def _kind(hive_type: str) -> str:
    return next(kind for kind, types in TYPES.items() if hive_type in types)


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """The module's server, with data operations off: the values drawn include ``a\x00``,
    which sorts first but names no directory on any file system (HMS cannot create its
    partition directory either)."""
    server = RunningServer(tmp_path_factory.mktemp("metastore"), data_operations="off")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def conn(running) -> Iterator[object]:
    """One connection for the module (hypothesis examples reuse it)."""
    connection = running.client()
    create_db(connection, DB)
    yield connection
    connection.close()


def _new_table(conn, keys: Keys, partitions: Sequence[Sequence[str]]) -> str:
    name = f"t{next(_TABLES)}"
    conn.create_table(make_table(DB, name, keys=keys))
    if partitions:
        conn.add_partitions([make_partition(DB, name, list(values)) for values in partitions])
    return name


def _request(
    name: str,
    keys: Keys,
    columns: Sequence[str],
    order: Sequence[str] | None = None,
    distinct: bool | None = True,
    ascending: bool | None = True,
    max_parts: int | None = -1,
    filter: str | None = None,
) -> hms.PartitionValuesRequest:
    types = {n.lower(): t for n, t in keys}

    def fields(names: Sequence[str]) -> list[hms.FieldSchema]:
        return [hms.FieldSchema(name=n, type=types.get(n.lower(), "string")) for n in names]

    return hms.PartitionValuesRequest(
        dbName=DB,
        tblName=name,
        partitionKeys=fields(columns),
        applyDistinct=distinct,
        filter=filter,
        partitionOrder=None if order is None else fields(order),
        ascending=ascending,
        maxParts=max_parts,
    )


def _rows(conn, request: hms.PartitionValuesRequest) -> list[list[str]]:
    return [list(row.row) for row in conn.get_partition_values(request).partitionValues]


def _matching(conn, table: str, filter: str | None) -> list[tuple[str, ...]] | None:
    """The partitions the filter selects, as get_partitions_by_filter answers (None: all)."""
    if not filter:
        return None
    return [tuple(p.values) for p in conn.get_partitions_by_filter(DB, table, filter, -1)]


def _oracle(conn, table: str, keys: Keys, partitions, request) -> list[list[str]]:
    matching = _matching(conn, table, request.filter)
    return expected_rows(keys, partitions, ValuesRequest.of(request), matching)


def _show(request: hms.PartitionValuesRequest) -> str:
    def names(fields):
        return None if fields is None else [f.name for f in fields]

    return (
        f"keys={names(request.partitionKeys)} order={names(request.partitionOrder)} "
        f"distinct={request.applyDistinct} ascending={request.ascending} "
        f"maxParts={request.maxParts} filter={request.filter!r}"
    )


# --------------------------------------------------------------------------- strategies


@st.composite
def tables(draw: st.DrawFn) -> tuple[Keys, list[tuple[str, ...]]]:
    """Partition keys (1-3 of string/int/date types) and a set of partitions."""
    kinds = draw(st.lists(st.sampled_from(sorted(TYPES)), min_size=1, max_size=3))
    names = [draw(st.sampled_from([n, n, n.upper()])) for n in NAMES[: len(kinds)]]
    keys = [(n, draw(st.sampled_from(TYPES[k]))) for n, k in zip(names, kinds, strict=True)]
    columns = []
    for kind in kinds:
        common, rare = DOMAINS[kind]
        columns.append(st.one_of(st.sampled_from(common), st.sampled_from(common),
                                 st.sampled_from(rare)))  # fmt: skip
    rows = draw(st.lists(st.tuples(*columns), max_size=20))
    return keys, sorted(set(rows))


def key_names(keys: Keys) -> st.SearchStrategy[str]:
    """A key name as a client may spell it (any case)."""
    return st.sampled_from([n.lower() for n, _ in keys]).flatmap(
        lambda n: st.sampled_from([n, n, n.upper()])
    )


def filters(keys: Keys) -> st.SearchStrategy[str | None]:
    """None, "" (both: every partition) or a small valid filter over the keys."""
    leaves = st.one_of(
        *(st.sampled_from(LEAVES[_kind(t)]).map(lambda s, n=n: s.format(k=n)) for n, t in keys)
    )
    pairs = st.tuples(leaves, st.sampled_from(["and", "or"]), leaves).map(
        lambda t: f"({t[0]}) {t[1]} ({t[2]})"
    )
    return st.one_of(st.none(), st.just(""), leaves, leaves, pairs)


@st.composite
def requests(draw: st.DrawFn, name: str, keys: Keys) -> hms.PartitionValuesRequest:
    """A valid request: 1-4 keys (repeats and any case allowed); no order, any order, or the
    requested keys among other order keys (the request's rows then place themselves only by
    their first partition in that order)."""
    names = key_names(keys)
    columns = draw(st.lists(names, min_size=1, max_size=4))
    shape = draw(st.sampled_from(["default", "any", "around"]))
    order = None
    if shape == "any":
        order = draw(st.lists(names, min_size=1, max_size=3))
    elif shape == "around":
        order = draw(st.permutations(columns + draw(st.lists(names, min_size=1, max_size=2))))
    return _request(
        name,
        keys,
        columns,
        order=order,
        distinct=draw(st.sampled_from([None, True, True, False])),
        ascending=draw(st.sampled_from([None, True, False])),
        max_parts=draw(st.sampled_from([None, *MAX_PARTS])),
        filter=draw(filters(keys)),
    )


def _check_requests(conn, name, keys, partitions, drawn) -> None:
    """Each request's rows are the oracle's, given the table's partitions now."""
    for request in drawn:
        expected = _oracle(conn, name, keys, partitions, request)
        actual = _rows(conn, request)
        assert actual == expected, (
            f"\nkeys {keys}\npartitions {sorted(partitions)}\nrequest {_show(request)}"
            f"\nexpected {expected}\nactual   {actual}"
        )


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    phases=PHASES,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(table=tables(), data=st.data())
def test_rows_are_the_oracles(conn, table, data: st.DataObject) -> None:
    """Requests on a table, then more partitions (a spelling may appear only now) and fewer
    (some dropped), then requests again: answers follow the partitions as they are now."""
    keys, partitions = table
    partitions = data.draw(st.permutations(partitions))
    first = data.draw(st.integers(0, len(partitions)))
    name = _new_table(conn, keys, partitions[:first])
    try:
        before = data.draw(st.lists(requests(name, keys), max_size=3))
        _check_requests(conn, name, keys, partitions[:first], before)
        if partitions[first:]:
            conn.add_partitions([make_partition(DB, name, list(v)) for v in partitions[first:]])
        dropped = data.draw(st.sets(st.sampled_from(partitions), max_size=3)) if partitions else []
        for values in dropped:
            assert conn.drop_partition(DB, name, list(values), True)
        now = sorted(set(partitions) - set(dropped))
        stored = sorted(tuple(p.values) for p in conn.get_partitions(DB, name, -1))
        assert stored == now, "the server stores other values than were added"
        after = data.draw(st.lists(requests(name, keys), min_size=2, max_size=8))
        _check_requests(conn, name, keys, now, after)
    finally:
        conn.drop_table(DB, name, True)


def _wide_value(kind: str, n: int) -> str:
    if kind == "integer":
        return str(n)
    if kind == "date":
        return (dt.date(2024, 1, 1) + dt.timedelta(days=n)).isoformat()
    return f"v{n:02d}"


@st.composite
def wide_tables(draw: st.DrawFn) -> tuple[Keys, list[tuple[str, ...]]]:
    """2-3 keys with blocks of 20-60 partitions under each first value (a server that reads
    a block only in part, then skips past it, has to get each skip right); half of them hold
    no non-canonical spelling at all (skipping is only possible on such tables)."""
    kinds = draw(st.lists(st.sampled_from(sorted(TYPES)), min_size=2, max_size=3))
    keys = [(n, draw(st.sampled_from(TYPES[k]))) for n, k in zip(NAMES, kinds, strict=False)]
    rng = draw(st.randoms(use_true_random=False))
    spelled = draw(st.booleans())

    def domain(kind: str, count: int) -> list[str]:
        common = DOMAINS[kind][0][:count]
        rare = [v for v in DOMAINS[kind][1] if spelled or v == DEF or kind == "string"]
        return common + rng.sample(rare, k=min(len(rare), rng.randint(0, 2)))

    firsts = domain(kinds[0], draw(st.integers(1, 3)))
    block = draw(st.integers(20, 60))
    seconds = [_wide_value(kinds[1], n) for n in range(block)] + domain(kinds[1], 0)
    thirds = domain(kinds[2], 2) if len(kinds) > 2 else []
    rows = set()
    for first in firsts:
        for second in seconds:
            if rng.random() < 0.8:
                rows.add((first, second, *([rng.choice(thirds)] if thirds else [])))
    return keys, sorted(rows)


@settings(
    max_examples=max(1, EXAMPLES // 4),
    deadline=None,
    phases=PHASES,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(table=wide_tables(), data=st.data())
def test_rows_are_the_oracles_on_wide_blocks(conn, table, data: st.DataObject) -> None:
    keys, partitions = table
    name = _new_table(conn, keys, partitions)
    try:
        first = keys[0][0]
        leading = st.lists(st.sampled_from([n for n, _ in keys[:2]]), min_size=1, max_size=2)
        # Mostly distinct values of leading keys (what skipping serves), and anything at all.
        skipping = st.builds(
            _request,
            st.just(name),
            st.just(keys),
            leading,
            order=st.none() | leading | st.just([first]),
            distinct=st.sampled_from([None, True]),
            ascending=st.booleans(),
            max_parts=st.sampled_from(MAX_PARTS),
            filter=filters(keys),
        )
        drawn = data.draw(st.lists(st.one_of(skipping, skipping, requests(name, keys)),
                                   min_size=4, max_size=10))  # fmt: skip
        _check_requests(conn, name, keys, partitions, drawn)
    finally:
        conn.drop_table(DB, name, True)


# --------------------------------------------------------------------------- pinned cases


@pytest.fixture(scope="module")
def typed(conn) -> Iterator[tuple[str, Keys, list[tuple[str, ...]]]]:
    """(ds date, hr int, tag string) with defaults, spellings and duplicates of each value."""
    keys = [("ds", "date"), ("hr", "int"), ("tag", "string")]
    partitions = [
        ("2024-01-05", "7", "a"),
        ("2024-01-05", "007", "a"),
        ("2024-01-05", "12", "b"),
        ("2024-01-05", DEF, "a"),
        ("2024-1-5", "7", "a"),
        ("2024-1-5", "7", "b"),
        ("2024-01-06", "-3", "a"),
        ("2024-01-06", "7", DEF),
        (DEF, "0", "a"),
        (DEF, DEF, DEF),
    ]
    name = _new_table(conn, keys, partitions)
    yield name, keys, sorted(partitions)
    conn.drop_table(DB, name, True)


def _check(conn, table, request, expected: list[list[str]]) -> None:
    """The server answers ``expected``, and so does the oracle (a check on the oracle too)."""
    name, keys, partitions = table
    assert _oracle(conn, name, keys, partitions, request) == expected, "oracle"
    assert _rows(conn, request) == expected, _show(request)


HR_ASCENDING = [["-3"], ["0"], ["7"], ["007"], ["12"], [DEF]]


def test_default_partition_last_in_both_directions(conn, typed) -> None:
    name, keys, _ = typed
    _check(conn, typed, _request(name, keys, ["hr"]), HR_ASCENDING)
    # hr=7 first comes from ds=2024-01-06 (ds descending breaks the tie between 7 and 007).
    descending = [["12"], ["7"], ["007"], ["0"], ["-3"], [DEF]]
    _check(conn, typed, _request(name, keys, ["hr"], ascending=False), descending)
    dates = [["2024-01-05"], ["2024-1-5"], ["2024-01-06"], [DEF]]
    _check(conn, typed, _request(name, keys, ["ds"]), dates)
    # 2024-01-05 first comes from hr=12 (hr descending breaks the tie between the spellings).
    dates = [["2024-01-06"], ["2024-01-05"], ["2024-1-5"], [DEF]]
    _check(conn, typed, _request(name, keys, ["ds"], ascending=False), dates)
    # The latest value is never the default partition while another value exists.
    _check(conn, typed, _request(name, keys, ["hr"], ascending=False, max_parts=1), [["12"]])
    _check(conn, typed, _request(name, keys, ["hr"], max_parts=1), [["-3"]])
    _check(conn, typed, _request(name, keys, ["hr"], filter="ds > 2024-02-01"), [])


def test_default_partition_is_a_plain_string_on_a_string_key(conn, typed) -> None:
    # Every text is a string: "__HIVE..." sorts by code point ('_' after 'B', before 'a').
    name, keys, _ = typed
    _check(conn, typed, _request(name, keys, ["tag"]), [[DEF], ["a"], ["b"]])
    _check(conn, typed, _request(name, keys, ["tag"], ascending=False), [["b"], ["a"], [DEF]])


def test_spellings_of_one_value_canonical_first(conn, typed) -> None:
    name, keys, _ = typed
    # ds=2024-01-05, tag=a: (2024-01-05, 7), (2024-01-05, 007), (2024-1-5, 7) are equal at
    # every key; canonical spellings first, key by key in table order (ds, then hr).
    request = _request(name, keys, ["ds", "hr"], filter='ds = 2024-01-05 and tag = "a"')
    rows = [["2024-01-05", "7"], ["2024-01-05", "007"], ["2024-1-5", "7"], ["2024-01-05", DEF]]
    _check(conn, typed, request, rows)
    # Descending reverses that tie-break too (only "unparseable last" stays).
    request.ascending = False
    rows = [["2024-1-5", "7"], ["2024-01-05", "007"], ["2024-01-05", "7"], ["2024-01-05", DEF]]
    _check(conn, typed, request, rows)
    # Different spellings are different rows for distinct.
    request = _request(name, keys, ["hr", "tag"], filter="ds = 2024-01-05", distinct=False)
    rows = [["7", "a"], ["007", "a"], ["7", "a"], ["7", "b"], ["12", "b"], [DEF, "a"]]
    _check(conn, typed, request, rows)
    request = _request(name, keys, ["ds", "hr"], filter="hr = 7")
    rows = [["2024-01-05", "7"], ["2024-01-05", "007"], ["2024-1-5", "7"], ["2024-01-06", "7"]]
    _check(conn, typed, request, rows)


def test_distinct_with_a_filter(conn, typed) -> None:
    name, keys, _ = typed
    request = _request(name, keys, ["tag"], filter="hr >= 0")
    _check(conn, typed, request, [[DEF], ["a"], ["b"]])
    request = _request(name, keys, ["tag"], filter="hr >= 0", distinct=False)
    _check(conn, typed, request, [[DEF], ["a"], ["a"], ["a"], ["a"], ["b"], ["b"]])
    # Distinct keeps each row where it first occurs in the requested order: hr descending,
    # then ds descending (12 -> b; 7 at 2024-01-06 -> DEF; ...).
    request = _request(name, keys, ["tag"], order=["hr"], filter="hr >= 0", ascending=False)
    _check(conn, typed, request, [["b"], [DEF], ["a"]])


def test_order_by_a_key_not_requested(conn, typed) -> None:
    name, keys, _ = typed
    # Ordered by hr, then ds, then tag; only tag is returned.
    request = _request(name, keys, ["tag"], order=["hr"], distinct=False, filter="hr >= -3")
    _check(conn, typed, request, [["a"], ["a"], ["a"], ["a"], ["a"], ["b"], [DEF], ["b"]])
    request = _request(name, keys, ["tag"], order=["HR", "hr"], filter="hr >= -3")
    _check(conn, typed, request, [["a"], ["b"], [DEF]])
    # Every requested key is an order key, but an order key before it is not requested: a
    # row's place is that of its first partition in the order (tag=a first at hr=-3).
    request = _request(name, keys, ["tag"], order=["hr", "tag"], filter="hr >= -3")
    _check(conn, typed, request, [["a"], [DEF], ["b"]])
    # tag descending (b, a, DEF), then ds descending, then hr descending.
    request = _request(name, keys, ["ds"], order=["tag"], ascending=False)
    _check(conn, typed, request, [["2024-01-05"], ["2024-1-5"], ["2024-01-06"], [DEF]])


def test_max_parts_zero_or_negative_means_all(conn, typed) -> None:
    name, keys, partitions = typed
    everything = _request(name, keys, ["ds", "hr", "tag"], distinct=False)
    assert len(_rows(conn, everything)) == len(partitions)
    for max_parts in (0, -1, -7):
        request = _request(name, keys, ["ds", "hr", "tag"], distinct=False, max_parts=max_parts)
        _check(conn, typed, request, _rows(conn, everything))
    _check(conn, typed, _request(name, keys, ["tag"], max_parts=0), [[DEF], ["a"], ["b"]])


def test_max_parts_beyond_16_and_32_bits(conn, typed) -> None:
    # maxParts is an i64: values a 16- or 32-bit field would wrap to 1 or 2 keep every row.
    name, keys, _ = typed
    for max_parts in (2**15, 2**16 + 1, 2**32 + 2, 2**40, 2**63 - 1):
        _check(
            conn,
            typed,
            _request(name, keys, ["hr"], max_parts=max_parts),
            HR_ASCENDING,
        )


def test_refusals(conn, typed) -> None:
    name, keys, partitions = typed
    for request in (
        _request(name, keys, ["nokey"]),
        _request(name, keys, ["hr"], order=["nokey"]),
        _request(name, keys, []),
    ):
        with pytest.raises(InvalidRequest):
            expected_rows(keys, partitions, ValuesRequest.of(request))
        with pytest.raises(hms.MetaException):
            _rows(conn, request)
    with pytest.raises(hms.MetaException, match="nokey"):
        _rows(conn, _request(name, keys, ["hr", "nokey"]))
    for bad in ("   ", "hr = ", "nokey = 1"):
        with pytest.raises(hms.MetaException):
            _rows(conn, _request(name, keys, ["hr"], filter=bad))
    with pytest.raises(hms.NoSuchObjectException):
        _rows(conn, _request("no_such_table", keys, ["hr"]))
    assert _rows(conn, _request(name, keys, ["hr"], max_parts=1)) == [["-3"]]  # still usable
