"""``storage.filters.compile_residual``: one call gives what the four separate compilations
give (predicate, HBase filter bytes, key needles, the keys read), for any filter."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from metastore_server.planner.evaluate import referenced_keys
from metastore_server.planner.grammar import parse_filter
from metastore_server.storage.filters import (
    compile_residual,
    hbase_filter_bytes,
    key_needles,
    residual_predicate,
)
from support.filter_strategies import filters, tables

KEYS = [("ds", "string"), ("hr", "int"), ("region", "string")]


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_one_compilation_gives_the_four(data: st.DataObject) -> None:
    keys, rows = data.draw(tables())
    like = data.draw(st.sampled_from(["regex", "sql"]))
    expr = data.draw(filters(tuple(n for n, _ in keys), like))
    compiled = compile_residual(expr, keys, like=like)
    assert compiled.hbase_filter == hbase_filter_bytes(expr, keys, like=like)
    assert compiled.needles == key_needles(expr, keys, like=like)
    named = referenced_keys(expr)
    assert compiled.keys == tuple(i for i, (n, _) in enumerate(keys) if n.lower() in named)
    predicate = residual_predicate(expr, keys, like=like)
    assert [compiled.predicate(row) for row in rows] == [predicate(row) for row in rows]


def test_the_keys_read_are_indexes_in_key_order() -> None:
    compiled = compile_residual(parse_filter('REGION = "r1" or ds > "a"'), KEYS)
    assert compiled.keys == (0, 2)
    assert compiled.needles == ()
    assert compiled.predicate(["b", "1", "x"]) and not compiled.predicate(["a", "1", "x"])
    assert compiled.hbase_filter is not None and compiled.hbase_filter.startswith(b"Single")
