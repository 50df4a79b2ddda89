"""Invalid UTF-8 in every string field of the create and alter calls: each is refused naming
the field, and nothing is written."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from thriftpy2.thrift import TType

from metastore_server.thrift_api import hms

from .conftest import create_db, make_partition, make_table

BAD = b"\xc3\x28"  # a broken two-byte sequence
_names = itertools.count()


def _string_paths(cls: type, prefix: str = "", depth: int = 0) -> Iterator[tuple[str, ...]]:
    """Paths (attribute names; ``[0]`` for a first element, ``{k}``/``{v}`` for a map's key or
    value) of the string fields reachable in ``cls``, two structs deep."""
    for spec in cls.thrift_spec.values():
        ttype, name = spec[0], spec[1]
        element = spec[2] if len(spec) > 3 else None
        if name == "bitVectors":
            continue
        if ttype == TType.STRING:
            yield (name,)
        elif ttype == TType.STRUCT and depth < 2:
            for rest in _string_paths(element, depth=depth + 1):
                yield (name, *rest)
        elif ttype in (TType.LIST, TType.SET):
            if element == TType.STRING:
                yield (name, "[0]")
            elif isinstance(element, tuple) and element[0] == TType.STRUCT and depth < 2:
                for rest in _string_paths(element[1], depth=depth + 1):
                    yield (name, "[0]", *rest)
        elif ttype == TType.MAP and element == (TType.STRING, TType.STRING):
            yield (name, "{k}")
            yield (name, "{v}")


def _plant(obj: Any, path: tuple[str, ...]) -> None:
    """Put ``BAD`` at ``path`` in ``obj``, making the structs and containers on the way."""
    head, rest = path[0], path[1:]
    spec = next(s for s in obj.thrift_spec.values() if s[1] == head)
    if not rest:
        setattr(obj, head, BAD)
        return
    if rest[0] == "[0]":
        items = getattr(obj, head) or []
        if len(rest) == 1:
            setattr(obj, head, [BAD])
            return
        first = copy.deepcopy(items[0]) if items else spec[2][1]()
        _plant(first, rest[1:])
        setattr(obj, head, [first])
        return
    if rest[0] in ("{k}", "{v}"):
        setattr(obj, head, {BAD: "v"} if rest[0] == "{k}" else {"k": BAD})
        return
    child = getattr(obj, head) or spec[2]()
    _plant(child, rest)
    setattr(obj, head, child)


TABLE_PATHS = [p for p in _string_paths(hms.Table) if p[0] not in ("dbName", "tableName")]


@pytest.mark.parametrize("path", TABLE_PATHS, ids=lambda p: ".".join(p))
def test_create_table_refuses_each_string_that_is_not_text(client, path) -> None:
    db = f"ht{next(_names)}"
    create_db(client, db)
    table = make_table(db, "t", keys=[("ds", "string")])
    _plant(table, path)
    with pytest.raises((hms.InvalidObjectException, hms.MetaException), match="not valid UTF-8"):
        client.create_table(table)
    assert client.get_tables(db, "*") == []


@pytest.mark.parametrize("path", TABLE_PATHS, ids=lambda p: ".".join(p))
def test_alter_table_refuses_each_string_that_is_not_text(client, path) -> None:
    db = f"ha{next(_names)}"
    create_db(client, db)
    client.create_table(make_table(db, "t", keys=[("ds", "string")]))
    before = client.get_table(db, "t")
    table = copy.deepcopy(before)
    _plant(table, path)
    with pytest.raises((hms.InvalidOperationException, hms.MetaException),
                       match="not valid UTF-8"):  # fmt: skip
        client.alter_table(db, "t", table)
    after = client.get_table(db, "t")
    assert (after.sd, after.parameters, after.owner) == (before.sd, before.parameters, before.owner)


PARTITION_PATHS = [p for p in _string_paths(hms.Partition) if p[0] not in ("dbName", "tableName")]


@pytest.mark.parametrize("path", PARTITION_PATHS, ids=lambda p: ".".join(p))
def test_add_partitions_refuses_each_string_that_is_not_text(client, path) -> None:
    db = f"hp{next(_names)}"
    create_db(client, db)
    client.create_table(make_table(db, "t", keys=[("ds", "string")]))
    good = make_partition(db, "t", ["1"])
    bad = make_partition(db, "t", ["2"])
    _plant(bad, path)
    with pytest.raises((hms.InvalidObjectException, hms.MetaException), match="not valid UTF-8"):
        client.add_partitions([good, bad])
    assert client.get_partition_names(db, "t", -1) == []


@pytest.mark.parametrize("path", list(_string_paths(hms.Database)), ids=lambda p: ".".join(p))
def test_create_database_refuses_each_string_that_is_not_text(client, path) -> None:
    name = f"hd{next(_names)}"
    database = hms.Database(name=name, description="", parameters={})
    _plant(database, path)
    with pytest.raises((hms.InvalidObjectException, hms.MetaException), match="not valid UTF-8"):
        client.create_database(database)
    assert name not in client.get_all_databases()
