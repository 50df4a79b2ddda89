"""``serde.deep_copy``: the copy ``copy.deepcopy`` makes of a catalog struct (equal, encoding
to the same bytes, of the same types), sharing nothing mutable with the original."""

from __future__ import annotations

import copy
from typing import Any

from metastore_server.thrift_api import hms
from metastore_server.wire.serde import deep_copy, from_bytes, to_bytes


def _table() -> hms.Table:
    cols = [hms.FieldSchema(name=f"c{i}", type="int", comment=None) for i in range(3)]
    skew = hms.SkewedInfo(skewedColNames=["c0"], skewedColValues=[["1"], ["2"]],
                          skewedColValueLocationMaps={("1",): "file:/s/1"})  # fmt: skip
    sd = hms.StorageDescriptor(
        cols=cols, location="file:/w/t", inputFormat="in", outputFormat="out", compressed=False,
        numBuckets=-1, serdeInfo=hms.SerDeInfo(name=None, serializationLib="s",
                                               parameters={"k": "v"}),
        bucketCols=[], sortCols=[hms.Order(col="c1", order=1)], parameters={}, skewedInfo=skew,
    )  # fmt: skip
    return hms.Table(tableName="t", dbName="d", owner="o", sd=sd, partitionKeys=[cols[0]],
                     parameters={"a": "b"}, tableType="MANAGED_TABLE", temporary=None,
                     privileges=hms.PrincipalPrivilegeSet(userPrivileges={"u": []}))  # fmt: skip


def _mutable(value: Any, found: list[Any]) -> list[Any]:
    """Every list, dict and struct reachable from ``value``."""
    if isinstance(value, list | dict) or hasattr(value, "thrift_spec"):
        found.append(value)
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    if hasattr(value, "thrift_spec"):
        items = value.__dict__.values()
    for item in items:
        _mutable(item, found)
    return found


def test_a_deep_copy_is_deepcopys_and_shares_nothing_mutable() -> None:
    for original in (_table(), from_bytes(hms.Table, to_bytes(_table())), hms.Database(name="x")):
        copied = deep_copy(original)
        assert copied == copy.deepcopy(original)
        assert copied.__dict__ == original.__dict__  # None fields stay None (no defaults)
        assert to_bytes(copied) == to_bytes(original)
        mine = {id(v) for v in _mutable(copied, [])}
        assert mine and not mine & {id(v) for v in _mutable(original, [])}
        assert [type(v) for v in _mutable(copied, [])] == [type(v) for v in _mutable(original, [])]
