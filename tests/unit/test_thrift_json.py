"""Why the event messages' Thrift JSON is our own encoder and not thriftpy2's
``TApacheJSONProtocol``: the points where thriftpy2's differs from what Java's
``TJSONProtocol`` writes and reads (see ``thrift_json``'s docstring). When one of these fails,
thriftpy2 changed: see whether it can now replace ``thrift_json``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.tjson import TJSONError, decode
from thriftpy2.protocol import TApacheJSONProtocol
from thriftpy2.transport import TMemoryBuffer

from metastore_server.thrift_api import hms
from metastore_server.wire.thrift_json import to_json


def _thriftpy2(obj: Any) -> str:
    buffer = TMemoryBuffer()
    protocol = TApacheJSONProtocol(buffer)
    protocol.write_message_begin("event", 1, 0)
    protocol.write_struct(obj)
    return str(buffer.getvalue().decode("utf-8"))


def _table() -> Any:
    """A table as Hive clients make it: an empty SkewedInfo in its StorageDescriptor."""
    skewed = hms.SkewedInfo(skewedColNames=[], skewedColValues=[], skewedColValueLocationMaps={})
    sd = hms.StorageDescriptor(cols=[hms.FieldSchema(name="id", type="int")], location="file:/t",
                               serdeInfo=hms.SerDeInfo(name="s", parameters={}),
                               skewedInfo=skewed, parameters={})  # fmt: skip
    return hms.Table(tableName="t", dbName="d", sd=sd, parameters={"k": "v"})


def test_thriftpy2_cannot_write_a_table() -> None:
    table = _table()
    with pytest.raises(KeyError):
        _thriftpy2(table)
    assert decode(to_json(table), hms.Table) == table


def test_thriftpy2_writes_bare_non_finite_doubles() -> None:
    stats = hms.DoubleColumnStatsData(lowValue=float("-inf"), highValue=float("inf"),
                                      numNulls=0, numDVs=1)  # fmt: skip
    theirs = _thriftpy2(stats)
    assert "Infinity" in theirs and '"Infinity"' not in theirs
    struct = theirs[theirs.index("{") : -1]  # the message's struct, as written
    with pytest.raises(TJSONError, match="bare"):
        decode(struct, hms.DoubleColumnStatsData)
    ours = to_json(stats)
    assert ours == '{"1":{"dbl":"-Infinity"},"2":{"dbl":"Infinity"},"3":{"i64":0},"4":{"i64":1}}'
    assert decode(ours, hms.DoubleColumnStatsData) == stats


def test_thriftpy2_writes_a_message_and_other_bytes() -> None:
    decimal = hms.Decimal(unscaled=b"\x01\x02", scale=2)
    theirs = json.loads(_thriftpy2(decimal))
    assert theirs[:4] == [1, "event", 1, 0]  # a message, not a bare struct
    assert theirs[4] == {"1": {"str": "AQI="}, "3": {"i16": 2}}  # padded base64
    assert to_json(decimal) == '{"1":{"str":"AQI"},"3":{"i16":2}}'  # as Java writes it
    field = hms.FieldSchema(name="é", type="int")
    assert "\\u00e9" in _thriftpy2(field)  # escaped; Java writes the UTF-8 text
    assert to_json(field) == '{"1":{"str":"é"},"2":{"str":"int"}}'


def test_same_body_where_no_such_point_is_met() -> None:
    function = hms.Function(functionName="f", dbName="d", ownerType=1,
                            resourceUris=[hms.ResourceUri(resourceType=1, uri="u")])  # fmt: skip
    database = hms.Database(name="d", parameters={"a": "b"}, ownerName="o")
    for obj in (function, database):
        body = json.loads(_thriftpy2(obj))[4]
        assert json.dumps(body, separators=(",", ":")) == to_json(obj)
