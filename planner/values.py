"""How a get_partition_values request is read: its strategy (pure; no I/O).

Partition rows are stored in key order: by the first key's values (typed order, unparseable
texts after the values that parse), then the second's, and so on. The strategies:

* **stream**: the order keys are the table's first keys, in table order (``ds`` or
  ``ds, hr`` on keys ds, hr, region), so the rows' key order *is* the requested order (read
  backwards for descending). Rows are read in that order and reading stops once ``limit``
  rows are out: "latest ds" is one row read from the end of the table whatever its size.
* **seek past each prefix**: with distinct, when every requested key and every order key is
  among the first ``p`` keys, all partitions sharing their first ``p`` values give the same
  row; after one, the read seeks past all of them, so rows read ~ distinct rows. Spellings of
  one typed value ("7", "007") are different rows but share a prefix, so this is only done
  where no typed key among the first ``p`` holds a non-canonical spelling (``exact_prefixes``).
* otherwise every matching row is read and ordered: **top-k** (a bounded heap) with a limit,
  **sort** without one. With distinct and a prefix as above, the rows are first reduced to one
  per prefix by seeking, then ordered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class ValuesPlan:
    """The strategy of one request (key positions are indexes into the table's keys)."""

    columns: tuple[int, ...]
    #: Every key, order keys first, then the rest in table order: the full sort order.
    order: tuple[int, ...]
    distinct: bool
    descending: bool
    limit: int | None
    #: Rows come from the store already in the requested order.
    stream: bool
    #: > 0: after a row, seek past every partition sharing its first ``prefix`` values.
    prefix: int
    #: With distinct: the order keys are exactly the requested keys and no typed key holds
    #: two spellings of a value, so all partitions of a row sort alike up to the other keys,
    #: and rows differ at an order key: any partition of a row places it.
    rows_order_themselves: bool = False

    @property
    def strategy(self) -> str:
        """A short name of the strategy: stream, seek, top-k or sort (combined)."""
        if self.stream:
            name = "stream in key order" + (", backwards" if self.descending else "")
        else:
            name = "read all, then " + ("top-k" if self.limit is not None else "sort")
        if self.prefix:
            name += f"; seek past each distinct prefix of {self.prefix} key(s)"
        if self.stream and self.limit is not None:
            name += f"; stop after {self.limit} row(s)"
        return name

    def describe(self, key_names: Sequence[str]) -> str:
        """The strategy with the keys named, one line."""
        order = ", ".join(key_names[i] for i in self.order)
        columns = ", ".join(key_names[i] for i in self.columns)
        direction = "descending" if self.descending else "ascending"
        parts = [
            f"rows ({columns})",
            f"order ({order}) {direction}",
            "distinct" if self.distinct else "all rows",
            f"limit {self.limit}" if self.limit is not None else "no limit",
        ]
        if self.prefix:
            parts.append(f"distinct prefix ({', '.join(key_names[: self.prefix])})")
        return f"{self.strategy}: " + "; ".join(parts)


def plan_values(
    key_count: int,
    columns: Sequence[int],
    order_keys: Sequence[int],
    *,
    distinct: bool,
    descending: bool,
    max_parts: int | None,
    exact_prefixes: Sequence[bool],
) -> ValuesPlan:
    """The plan of a request on a table of ``key_count`` keys.

    ``columns``: the requested keys (repeats allowed); ``order_keys``: the order keys (default
    the columns; repeats count once); ``max_parts`` > 0 limits the rows, anything else does
    not; ``exact_prefixes[p - 1]``: whether seeking past prefixes of ``p`` keys is exact (no
    non-canonical spelling of a typed value among the first ``p`` keys). O(key_count).
    """
    if not columns:
        raise ValueError("at least one key is needed")
    if any(not 0 <= i < key_count for i in (*columns, *order_keys)):
        raise ValueError("a key position is out of range")
    leading: list[int] = []
    for i in order_keys or columns:
        if i not in leading:
            leading.append(i)
    order = (*leading, *(i for i in range(key_count) if i not in leading))
    limit = max_parts if max_parts is not None and max_parts > 0 else None
    stream = leading == list(range(len(leading)))
    prefix = 0
    if distinct:
        needed = max((*columns, *leading)) + 1
        if needed < key_count and exact_prefixes[needed - 1]:
            prefix = needed
    return ValuesPlan(
        columns=tuple(columns),
        order=order,
        distinct=distinct,
        descending=descending,
        limit=limit,
        stream=stream,
        prefix=prefix,
        rows_order_themselves=distinct and set(leading) == set(columns) and exact_prefixes[-1],
    )
