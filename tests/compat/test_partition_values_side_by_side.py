"""get_partition_values sent to the reference Hive Metastore 2.3.10 and to our server, on the same
partitions, compared where HMS defines an answer; everywhere, ours must also be what the oracle
of :mod:`support.values_oracle` (our specification) answers.

What HMS 2.3.10 does (ObjectStore.listPartitionValues), and how each request is compared:

* no filter (absent or ""): HMS answers the requested keys' values, DISTINCT unless
  ``applyDistinct`` is false, still path-escaped (the values here need no escaping), in no
  defined order (``ascending`` and ``partitionOrder`` are ignored), and ``maxParts`` > 0 only
  bounds the number of rows. So: the same rows as a set (distinct) or multiset (not distinct);
  with a ``maxParts`` that cuts, the same number of rows, each one of the full answer's.
* a filter: HMS answers every key's values of each matching partition, ordered by partition
  name, whatever ``partitionKeys``, ``applyDistinct`` and ``partitionOrder`` say, and its
  ``maxParts`` handling is its own (0 gives no rows; past 2**15 it wraps through a 16-bit cast).
  We differ by design (we honour every field), so the rows are not compared; what is compared
  is which partitions match: HMS's rows (asked without maxParts) are exactly the partitions
  whose values we return when asked for every key, without distinct and without a limit.
* either way our rows, in order, are the oracle's, given the partitions HMS's
  ``get_partitions_by_filter`` says match (an independent referee for the filter).

The reference metastore listens on every interface, so it only starts inside a private network
namespace (``sh tests/run-isolated.sh .venv/bin/python -m pytest tests/compat/...``); without
one, or without java or the pyspark jars, these tests skip (``reference_hms`` fixture).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from support.hms_scenario import make_database, make_partition, make_table
from support.net import MetastoreEndpoint
from support.values_oracle import DEFAULT_PARTITION as DEF
from support.values_oracle import ValuesRequest, expected_rows

thrift_api = pytest.importorskip(
    "metastore_server.thrift_api", reason="metastore_server.thrift_api is not importable"
)
hms = thrift_api.hms

pytestmark = pytest.mark.compat

DB = "compat_values"
MAX_PARTS = [-1, 0, 1, 2, 5, 2**40]


@dataclass(frozen=True)
class Table:
    """A partitioned table created identically on both servers, with filters HMS accepts."""

    name: str
    keys: tuple[tuple[str, str], ...]
    partitions: tuple[tuple[str, ...], ...]
    filters: tuple[str, ...]


def _subset(seed: int, product: list[tuple[str, ...]], count: int) -> tuple[tuple[str, ...], ...]:
    return tuple(sorted(random.Random(seed).sample(product, count)))


# ASCII values HMS stores unescaped: no '/', '=', ':', '%' or the like.
_EVENTS = [
    (ds, hr, region)
    for ds in ("2024-01-01", "2024-01-02", "2024-01-10", DEF)
    for hr in ("1", "2", "7", "07", "10", DEF)
    for region in ("ap", "eu", "us")
]
_DAILY = [
    (d, n)
    for d in ("2023-12-31", "2024-01-05", "2024-1-5", "2024-01-06", DEF)
    for n in ("-3", "0", "7", "+7", "12")
]
TABLES = [
    Table(
        "events",
        (("ds", "string"), ("hr", "int"), ("region", "string")),
        _subset(5, _EVENTS, 36),
        (
            'ds = "2024-01-01"',
            'ds >= "2024-01-02"',
            '(ds) in ("2024-01-01", "2024-01-10")',
            "hr > 1",
            "hr = 7",
            "hr between 2 and 10",
            'region = "eu"',
            'region != "us" and hr >= 2',
            'ds = "2024-01-02" or region = "ap"',
            'ds = "2024-01-02" and hr = 1 and region = "us"',
            'ds = "2099-01-01"',
        ),
    ),
    Table(
        "daily",
        (("d", "date"), ("n", "bigint")),
        _subset(6, _DAILY, 17),
        (
            "d = 2024-01-05",
            'd >= "2024-01-05"',
            "d < 2024-01-06",
            "n >= 0",
            "n = 7",
            "d > 2023-12-31 and n < 10",
        ),
    ),
    Table(
        "single",
        (("k", "int"),),
        (("1",), ("01",), ("10",), ("2",), (DEF,)),
        ("k >= 1", "k = 1", "k < 0"),
    ),
]
TABLES_BY_NAME = {t.name: t for t in TABLES}


@dataclass(frozen=True)
class Case:
    """One request, by its fields (key names as sent)."""

    table: str
    keys: tuple[str, ...]
    order: tuple[str, ...] | None = None
    distinct: bool | None = None
    ascending: bool | None = None
    max_parts: int | None = None
    filter: str | None = None

    @property
    def id(self) -> str:
        parts = [self.table, ",".join(self.keys)]
        if self.order is not None:
            parts.append("order=" + ",".join(self.order))
        for name in ("distinct", "ascending", "max_parts", "filter"):
            value = getattr(self, name)
            if value is not None:
                parts.append(f"{name}={value}")
        return " ".join(parts)

    def request(self, **changes: Any) -> Any:
        fields = {**self.__dict__, **changes}
        types = dict(TABLES_BY_NAME[self.table].keys)

        def schema(names: tuple[str, ...]) -> list[Any]:
            return [hms.FieldSchema(name=n, type=types.get(n.lower(), "string")) for n in names]

        order = fields["order"]
        return hms.PartitionValuesRequest(
            dbName=DB,
            tblName=self.table,
            partitionKeys=schema(fields["keys"]),
            applyDistinct=fields["distinct"],
            filter=fields["filter"],
            partitionOrder=None if order is None else schema(order),
            ascending=fields["ascending"],
            maxParts=fields["max_parts"],
        )


def _generated(table: Table, count: int, seed: int) -> list[Case]:
    """``count`` random requests on ``table``, the same every run."""
    rng = random.Random(seed)
    names = [n for n, _ in table.keys]
    cases = []
    for _ in range(count):
        keys = tuple(rng.choice(names) for _ in range(rng.randint(1, 3)))
        order = None
        if rng.random() < 0.4:
            order = tuple(rng.choice(names) for _ in range(rng.randint(1, 2)))
        cases.append(
            Case(
                table.name,
                keys,
                order,
                distinct=rng.choice([None, True, False]),
                ascending=rng.choice([None, True, False]),
                max_parts=rng.choice([None, *MAX_PARTS]),
                filter=rng.choice([None, "", *table.filters, *table.filters]),
            )
        )
    return cases


CASES = [
    # Pinned: the shapes clients send (latest/earliest, distinct, all spellings).
    Case("events", ("ds",)),
    Case("events", ("hr",), ascending=False, max_parts=1),
    Case("events", ("hr",), max_parts=0),
    Case("events", ("hr",), max_parts=2**40),
    Case("events", ("hr", "hr")),
    Case("events", ("HR", "Ds")),
    Case("events", ("region", "ds"), distinct=False),
    Case("events", ("hr",), filter=""),
    Case("events", ("region",), filter="hr > 1"),
    Case("events", ("region",), filter="hr > 1", distinct=False, ascending=False),
    Case("events", ("hr",), filter='ds = "2024-01-01"', max_parts=0),
    Case("events", ("hr",), filter='ds = "2024-01-01"', max_parts=2**16 + 1),
    Case("daily", ("d",)),
    Case("daily", ("d",), ascending=False, max_parts=1),
    Case("daily", ("n",), order=("d",), filter="d = 2024-01-05"),
    Case("single", ("k",)),
    Case("single", ("k",), ascending=False, filter="k >= 1"),
    *(case for i, t in enumerate(TABLES) for case in _generated(t, 30, 20261123 + i)),
]


def _rows(client: Any, request: Any) -> list[list[str]]:
    return [list(row.row) for row in client.get_partition_values(request).partitionValues]


@dataclass
class Servers:
    """Connections to both servers, with the tables created on each."""

    reference: Any
    ours: Any


def _connect(endpoint: MetastoreEndpoint) -> Any:
    return thrift_api.make_client(endpoint.host, endpoint.port)


def _create_tables(client: Any) -> None:
    client.create_database(make_database(hms, DB))
    for table in TABLES:
        client.create_table(make_table(hms, DB, table.name, part_keys=table.keys))
        client.add_partitions(
            [make_partition(hms, DB, table.name, list(v)) for v in table.partitions]
        )


@pytest.fixture(scope="module")
def servers(
    reference_hms: MetastoreEndpoint, our_metastore: MetastoreEndpoint
) -> Iterator[Servers]:
    """Both servers, each holding the tables of TABLES."""
    pair = Servers(_connect(reference_hms), _connect(our_metastore))
    for client in (pair.reference, pair.ours):
        _create_tables(client)
    yield pair
    for client in (pair.reference, pair.ours):
        for table in TABLES:
            client.drop_table(DB, table.name, True)
        client.drop_database(DB, True, True)
        client.close()


def _reference_matching(servers: Servers, case: Case) -> list[tuple[str, ...]] | None:
    """The partitions HMS's get_partitions_by_filter selects (None: no filter, all)."""
    if not case.filter:
        return None
    found = servers.reference.get_partitions_by_filter(DB, case.table, case.filter, -1)
    return [tuple(p.values) for p in found]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_same_values_where_hms_defines_them(servers: Servers, case: Case) -> None:
    table = TABLES_BY_NAME[case.table]
    request = case.request()
    ours = _rows(servers.ours, request)
    matching = _reference_matching(servers, case)
    expected = expected_rows(table.keys, table.partitions, ValuesRequest.of(request), matching)
    assert ours == expected, "ours differs from the specification (values_oracle)"

    if case.filter:
        # HMS ignores partitionKeys/distinct/order with a filter and has its own maxParts: we
        # compare which partitions match, asking both for every key, all rows, no limit.
        every_key = tuple(n for n, _ in table.keys)
        full = case.request(keys=every_key, order=None, distinct=False, max_parts=-1)
        theirs = _rows(servers.reference, full)
        assert Counter(map(tuple, theirs)) == Counter(map(tuple, _rows(servers.ours, full)))
        assert sorted(map(tuple, theirs)) == sorted(matching or [])
        return

    # No filter: HMS's rows in no defined order; maxParts > 0 bounds the count only. HMS finds
    # a key's values in the partition name by its exact name: it is sent lower-case.
    lower = tuple(n.lower() for n in case.keys)
    theirs = _rows(servers.reference, case.request(keys=lower))
    whole = _rows(servers.reference, case.request(keys=lower, max_parts=-1))
    assert Counter(map(tuple, _rows(servers.ours, case.request(max_parts=-1)))) == Counter(
        map(tuple, whole)
    )
    limit = case.max_parts if case.max_parts is not None else -1
    if 0 < limit < len(whole):
        assert len(ours) == len(theirs) == limit
        assert not Counter(map(tuple, ours)) - Counter(map(tuple, whole))
    else:
        assert Counter(map(tuple, ours)) == Counter(map(tuple, theirs))


def test_both_refuse_a_blank_filter_and_a_missing_table(servers: Servers) -> None:
    blank = Case("events", ("hr",), filter="   ").request()
    for client in (servers.reference, servers.ours):
        with pytest.raises(hms.MetaException):
            _rows(client, blank)
    missing = Case("events", ("hr",)).request()
    missing.tblName = "no_such_table"
    # HMS 2.3.10 answers a MetaException wrapping a NullPointerException; the specification
    # (and Hive 3+ clients) expect NoSuchObjectException.
    with pytest.raises(hms.MetaException):
        _rows(servers.reference, missing)
    with pytest.raises(hms.NoSuchObjectException):
        _rows(servers.ours, missing)
