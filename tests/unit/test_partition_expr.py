"""Reading get_partitions_by_expr expressions: MSCK lists, display text, Kryo bytes."""

from __future__ import annotations

import pytest

from metastore_server.catalog.reads.expr import expression_text, msck_partition_names

KEYS = ["ds", "hr"]


def test_msck_form_lists_partition_names_in_key_order() -> None:
    text = "(ds='2024-01-01' AND hr='1') OR (hr='2' AND ds='a%2Fb')"
    assert msck_partition_names(text, KEYS) == ["ds=2024-01-01/hr=1", "ds=a%2Fb/hr=2"]


@pytest.mark.parametrize(
    "text",
    [
        "(ds='2024-01-01')",  # a key missing
        "(ds='a' AND hr='1' AND ds='b')",  # a key twice
        "((ds = '2024-01-01') and (hr = 1))",  # Hive's display form, not MSCK's
        "ds='a' AND hr='1'",  # no parentheses
        "(ds='a' AND region='x')",  # not a partition key
    ],
)
def test_other_text_is_not_msck_form(text: str) -> None:
    assert msck_partition_names(text, KEYS) is None


def test_kryo_bytes_are_not_text() -> None:
    kryo_like = b"\x01\x00org.apache.hadoop.hive.ql.plan.ExprNodeGenericFuncDesc\x01\x02"
    assert expression_text(kryo_like) is None
    assert expression_text(b"\xff\xfe\x00") is None
    assert expression_text(b"(ds = 'x')") == "(ds = 'x')"
    assert expression_text(None) == ""
