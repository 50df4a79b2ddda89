"""A plan in words, for EXPLAIN: the normalized filter, then one line per scan.

Example::

    filter: ds = "a" and hr >= 3 and hr < 7 and region like "e.*"
    plan: 1 scan
      scan [ds="a", hr=3] .. [ds="a", hr=7)  where region like "e.*"

A bound is the block of keys with the leading values shown; the outer bracket says whether the
block is included (``[`` at the start, ``]`` at the end) or not (``(``, ``)``). ``<start>`` and
``<end>`` are the table's ends, ``hr=<typed end>`` the end of the typed values of an int or date
key (its raw texts, such as the default partition, come after). On an int or date key ``hr=7``
is the value 7 in every spelling ("7", "007", ...), a quoted text such as
``hr="__HIVE_DEFAULT_PARTITION__"`` a stored text that is no int. O(size of the plan).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence

from metastore_server.planner.ast import Literal, format_key
from metastore_server.planner.bounds import TYPED_END, Bound, Component
from metastore_server.planner.plan import FilterPlan, Get, MultiScanPlan, ScanPlan


def explain(plan: FilterPlan, keys: Sequence[tuple[str, str]]) -> str:
    """The plan as text: its filter (when known), a summary, and one line per scan."""
    names = [name for name, _ in keys]
    lines = []
    if isinstance(plan, MultiScanPlan):
        text = "(none: every partition)" if plan.filter is None else plan.filter.to_filter_string()
        lines.append(f"filter: {text}")
    lines.append(f"plan: {summary(plan)}")
    lines.extend(f"  {describe_scan(scan, names)}" for scan in plan.scans)
    return "\n".join(lines)


def summary(plan: FilterPlan) -> str:
    """How many scans and gets a plan has, in a few words."""
    if plan.is_empty:
        return "empty (no partition can match)"
    if plan.is_full_scan:
        return "full table scan"
    gets = sum(isinstance(scan, Get) for scan in plan.scans)
    scans = len(plan.scans) - gets
    parts = [f"{n} {word}{'' if n == 1 else 's'}" for n, word in ((gets, "get"), (scans, "scan"))]
    return ", ".join(part for part in parts if not part.startswith("0 "))


def describe_scan(scan: ScanPlan, names: Sequence[str]) -> str:
    """One scan: ``get [..]`` or ``scan [..] .. [..)``, then ``where <residual>`` if any."""
    if isinstance(scan, Get):
        text = f"get [{format_values(scan.values, names)}]"
    else:
        text = f"scan {format_bound(scan.lower, names, upper=False)} .. "
        text += format_bound(scan.upper, names, upper=True)
    if scan.residual is not None:
        text += f"  where {scan.residual.to_filter_string()}"
    return text


def format_bound(bound: Bound, names: Sequence[str], *, upper: bool) -> str:
    """A bound as ``[values]`` with its outer bracket showing inclusion."""
    if not bound.values:
        inner = "<end>" if upper else "<start>"
    else:
        inner = format_values(bound.values, names)
    if upper:
        return f"[{inner}{']' if bound.inclusive else ')'}"
    return f"{'[' if bound.inclusive else '('}{inner}]"


def format_values(values: Sequence[Component], names: Sequence[str]) -> str:
    """``name=value, ...`` for the leading keys."""
    return ", ".join(
        f"{format_key(names[i]) if i < len(names) else f'#{i}'}={format_component(v)}"
        for i, v in enumerate(values)
    )


def format_component(value: Component) -> str:
    """One component as filter text: a quoted text (an exact stored value), an integer or a
    date (the value in any spelling), or a marker."""
    if value is TYPED_END:
        return "<typed end>"
    if isinstance(value, str):
        try:
            return Literal.string(value).to_filter_string()
        except ValueError:
            return repr(value)
    if isinstance(value, _dt.date):
        return value.isoformat()
    return str(value)
