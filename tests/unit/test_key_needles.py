"""``storage.filters.key_needles``: strings every matching row key holds, tested by SQLite
below the row loop. The property: no row the residual passes lacks a needle of some group."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metastore_server.planner.evaluate import compile_predicate
from metastore_server.planner.grammar import parse_filter
from metastore_server.planner.types import key_kind
from metastore_server.storage.codec import encode_values
from metastore_server.storage.embedded import SqliteStore
from metastore_server.storage.filters import MAX_GROUPS, MAX_NEEDLES, key_needles
from metastore_server.storage.port import Put, TableSpec
from support.filter_strategies import filters, tables

KEYS = [("ds", "string"), ("hr", "int"), ("region", "string")]


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_every_passing_key_holds_a_needle_of_each_group(data: st.DataObject) -> None:
    keys, rows = data.draw(tables())
    like = data.draw(st.sampled_from(["regex", "sql"]))
    expr = data.draw(filters(tuple(n for n, _ in keys), like))
    predicate = compile_predicate(expr, keys, like=like)
    kinds = [key_kind(t) for _, t in keys]
    groups = key_needles(expr, keys, like=like)
    assert len(groups) <= MAX_GROUPS
    for group in groups:
        assert 0 < len(group) <= MAX_NEEDLES
    for row in rows:
        if predicate(row):
            key = b"\x00" * 8 + encode_values(kinds, row)
            for group in groups:
                assert any(needle in key for needle in group), (row, expr, group)


def test_equalities_pin_their_values_and_the_rest_pins_nothing() -> None:
    in_list = key_needles(parse_filter('(region) in ("r1", "r2")'), KEYS)
    assert in_list == ((b"\x02r1\x00\x00", b"\x02r2\x00\x00"),)
    both = key_needles(parse_filter('hr = 7 and region = "x"'), KEYS)
    assert len(both) == 2 and (b"\x02x\x00\x00",) in both
    assert key_needles(parse_filter('ds = "a" or hr > 3'), KEYS) == ()
    assert key_needles(parse_filter('region like "r1.*"'), KEYS) == ((b"\x02r1",),)
    assert key_needles(parse_filter('region like "r1?x"'), KEYS) == ((b"\x02r",),)
    assert key_needles(parse_filter('region like "r1|x"'), KEYS) == ()
    assert key_needles(parse_filter('region like ".*r1"'), KEYS) == ()
    assert key_needles(parse_filter('region like "r_1%"'), KEYS, like="sql") == ((b"\x02r",),)
    assert key_needles(parse_filter('hr like "1.*"'), KEYS) == ()
    assert key_needles(parse_filter('region != "r1"'), KEYS) == ()
    assert key_needles(None, KEYS) == ()
    many = " or ".join(f'region = "r{i}"' for i in range(MAX_NEEDLES + 1))
    assert key_needles(parse_filter(many), KEYS) == ()


def test_the_store_keeps_only_rows_holding_a_needle_of_each_group(tmp_path) -> None:
    store = SqliteStore(str(tmp_path / "m.db"))
    store.ensure_tables([TableSpec("t", ("c",))])
    keys = [b"a-x-1", b"a-y-1", b"b-x-2", b"b-y-2", b"c-z-3"]
    store.mutate([Put("t", key, {b"c:v": key[-1:]}) for key in keys])

    def scanned(needles, **kwargs):
        rows, read, _ = store.scan_columns("t", b"", None, (b"c:v",), needles=needles, **kwargs)
        return [row[-1] for row in rows], read

    assert scanned(()) == (keys, 5)
    assert scanned(((b"-x-",),)) == ([b"a-x-1", b"b-x-2"], 2)
    assert scanned(((b"-x-", b"-z-"),)) == ([b"a-x-1", b"b-x-2", b"c-z-3"], 3)
    assert scanned(((b"-x-", b"-y-"), (b"b",))) == ([b"b-x-2", b"b-y-2"], 2)
    assert scanned(((b"-x-",),), key_filter=lambda key: key.startswith(b"b")) == ([b"b-x-2"], 2)
    with store.transaction():  # the paged read of a transaction tests them too
        assert scanned(((b"-y-",),)) == ([b"a-y-1", b"b-y-2"], 2)
    for bad in [((),), ((b"",),), (("x",),)]:
        with pytest.raises((ValueError, TypeError)):
            scanned(bad)
