"""The strategy of get_partition_values requests (planner.values)."""

from __future__ import annotations

import pytest
from metastore_server.planner.values import plan_values

EXACT = [True, True, True]


def plan(columns, order=(), *, distinct=True, descending=False, max_parts=-1, exact=EXACT):
    return plan_values(
        3,
        list(columns),
        list(order),
        distinct=distinct,
        descending=descending,
        max_parts=max_parts,
        exact_prefixes=exact,
    )


def test_latest_leading_value_streams_backwards_and_stops_after_one_row() -> None:
    p = plan([0], descending=True, max_parts=1)
    assert (p.stream, p.descending, p.limit, p.prefix) == (True, True, 1, 1)
    assert p.order == (0, 1, 2)
    assert p.strategy == (
        "stream in key order, backwards; seek past each distinct prefix of 1 key(s); "
        "stop after 1 row(s)"
    )


def test_distinct_leading_prefix_seeks_past_each_prefix() -> None:
    assert plan([0, 1]).prefix == 2
    assert plan([1, 0]).prefix == 2  # rows (hr, ds), ordered by hr: not a stream
    assert not plan([1, 0]).stream
    assert plan([1, 0], order=[0, 1]).stream


def test_a_request_needing_the_last_key_reads_every_row() -> None:
    p = plan([2])
    assert (p.stream, p.prefix) == (False, 0)
    assert p.order == (2, 0, 1)
    assert p.strategy == "read all, then sort"
    assert plan([2], max_parts=5).strategy == "read all, then top-k"


def test_without_distinct_there_is_no_seeking() -> None:
    p = plan([0], distinct=False, max_parts=10)
    assert (p.stream, p.prefix, p.limit) == (True, 0, 10)


def test_seeking_needs_exact_prefixes() -> None:
    # A typed key among the first keys holds a non-canonical spelling: "7" and "007" share a
    # prefix but are different rows, so the prefix cannot be skipped.
    assert plan([0, 1], exact=[True, False, False]).prefix == 0
    assert plan([0], exact=[True, False, False]).prefix == 1


def test_order_keys_count_once_and_the_rest_follow_in_table_order() -> None:
    assert plan([0], order=[1, 1, 0]).order == (1, 0, 2)
    assert plan([2, 2]).order == (2, 0, 1)
    assert plan([0], order=[0, 0]).stream


@pytest.mark.parametrize("max_parts", [0, -1, -5, None])
def test_max_parts_zero_or_negative_is_no_limit(max_parts) -> None:
    assert plan([0], max_parts=max_parts).limit is None


def test_max_parts_is_64_bit() -> None:
    assert plan([0], max_parts=2**40).limit == 2**40


def test_bad_positions_are_refused() -> None:
    with pytest.raises(ValueError):
        plan([])
    with pytest.raises(ValueError):
        plan([3])
    with pytest.raises(ValueError):
        plan([0], order=[-1])


def test_describe_names_the_keys() -> None:
    text = plan([1], descending=True).describe(["ds", "hr", "region"])
    assert text.endswith(
        "rows (hr); order (hr, ds, region) descending; distinct; no limit; "
        "distinct prefix (ds, hr)"
    )


def test_rows_order_themselves_only_when_order_keys_are_the_requested_keys() -> None:
    assert plan([0, 2]).rows_order_themselves
    assert plan([2], order=[2, 2]).rows_order_themselves
    # An order key that is not requested can differ between the partitions of one row.
    assert not plan([0], order=[1, 0]).rows_order_themselves
    # A requested key that is not an order key: rows may tie on every order key.
    assert not plan([0, 1], order=[0]).rows_order_themselves
    assert not plan([0], distinct=False).rows_order_themselves


def test_rows_do_not_order_themselves_when_spellings_can_tie() -> None:
    # "7" and "07" are different rows with equal values: the other keys decide.
    assert not plan([1], exact=[True, False, False]).rows_order_themselves
