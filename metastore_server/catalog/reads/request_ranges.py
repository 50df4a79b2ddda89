"""The key ranges a partition read asks for, from what the request names: an HMS filter
string, a get_partitions_by_expr expression, partition names, or a partial spec (leading
values, with the others tested on each key). See ``docs/filters.md`` for the filter language.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from metastore_server import audit
from metastore_server.catalog.basics.names import parse_partition_name
from metastore_server.catalog.objects.tables import TableRef
from metastore_server.catalog.reads.expr import expression_text, msck_partition_names
from metastore_server.catalog.reads.scan import KeyRange, plan_ranges, prefix, whole_table
from metastore_server.planner.errors import FilterError
from metastore_server.planner.explain import summary
from metastore_server.planner.grammar import parse_filter
from metastore_server.planner.plan import MultiScanPlan, plan_filter
from metastore_server.planner.types import KeyKind
from metastore_server.storage.codec import encode_id, order_part
from metastore_server.thrift_api import hms

#: A test of a partition's values (those a key range cannot fix).
Predicate = Callable[[Sequence[str]], bool]


def filter_plan(ref: TableRef, filter_text: str | None, *, like: str = "regex") -> MultiScanPlan:
    """The scan plan of a filter on a table; MetaException for a filter HMS refuses."""
    try:
        plan = plan_filter(parse_filter(filter_text or ""), ref.key_types, like=like)
    except FilterError as exc:
        raise hms.MetaException(message=str(exc)) from exc
    audit.note(plan=summary(plan))
    return plan


def filter_ranges(
    ref: TableRef, filter_text: str | None, *, like: str = "regex"
) -> list[KeyRange]:
    """The key ranges (with residuals) holding the partitions a filter selects; MetaException
    for a filter HMS refuses."""
    return plan_ranges(ref, filter_plan(ref, filter_text, like=like), like=like)


def expr_ranges(ref: TableRef, expr: bytes | str | None) -> tuple[list[KeyRange], bool]:
    """The key ranges of a get_partitions_by_expr expression, and whether they may hold
    partitions that do not match (an expression we cannot read: then the whole table)."""
    text = expression_text(expr)
    if text is None:
        return whole_table(ref), True
    listed = msck_partition_names(text, ref.key_names)
    if listed is not None:
        return name_ranges(ref, listed), False
    try:
        plan = plan_filter(parse_filter(text), ref.key_types, like="sql")
    except FilterError:
        return whole_table(ref), True
    return plan_ranges(ref, plan, like="sql"), False


def name_ranges(ref: TableRef, part_names: Sequence[str] | None) -> list[KeyRange]:
    """Point ranges of the partitions named, in key order, each once (names that lack a key
    are skipped)."""
    return [KeyRange(key, key + b"\x00", None, key) for key in name_keys(ref, part_names)]


def name_keys(ref: TableRef, part_names: Sequence[str] | None) -> list[bytes]:
    """The row keys of the partitions named, in key order, each once (names that lack a key
    are skipped). Names share their components (``ds=2024-01-01``): each distinct component is
    parsed, and each distinct value encoded, once."""
    kinds = ref.kinds
    key_names = ref.key_names
    table_prefix = encode_id(ref.table_id)
    components: dict[str, tuple[str, str] | None] = {}
    encoded: dict[tuple[int, str], tuple[bytes, bytes | None]] = {}
    keys = set()
    for name in part_names or []:
        spec: dict[str, str] = {}
        for component in (name or "").split("/"):
            pair = components.get(component, _UNSEEN)
            if pair is _UNSEEN:
                parsed = parse_partition_name(component)
                pair = components[component] = parsed[0] if parsed else None
            if pair is not None:
                spec.pop(pair[0], None)  # a later duplicate key wins
                spec[pair[0]] = pair[1]
        parts, forms = [table_prefix], []
        for index, key in enumerate(key_names):
            raw = spec.get(key)
            if raw is None:
                break
            found = encoded.get((index, raw))
            if found is None:
                found = encoded[(index, raw)] = order_part(kinds[index], raw)
            parts.append(found[0])
            if found[1] is not None:
                forms.append(found[1])
        else:
            keys.add(b"".join(parts) + b"".join(forms))
    return sorted(keys)


_UNSEEN: tuple[str, str] = ("", "")


def spec_ranges(ref: TableRef, part_vals: Sequence[str] | None) -> list[KeyRange]:
    """The key range of a partial spec (leading values), with a test of the other values;
    MetaException when it has more values than the table has keys."""
    leading, residual = partial_spec(ref, part_vals)
    return [prefix(ref, leading, residual)]


def partial_spec(
    ref: TableRef, part_vals: Sequence[str] | None
) -> tuple[list[str], Predicate | None]:
    """Leading fixed values and a predicate for the other fixed ones of a partial spec (empty
    values are wildcards); MetaException when it has more values than the table has keys."""
    part_vals = list(part_vals or [])
    if len(part_vals) > len(ref.key_names):
        raise hms.MetaException(
            message=(
                f"Incorrect number of partition values. numPartKeys={len(ref.key_names)}, "
                f"part_val={len(part_vals)}"
            )
        )
    leading: list[str] = []
    for value in part_vals:
        if not value:
            break
        leading.append(value)
    # The prefix holds every spelling of a leading int or date value; specs match exactly.
    fixed = [
        (i, v)
        for i, v in enumerate(part_vals)
        if v and (i >= len(leading) or ref.kinds[i] is not KeyKind.STRING)
    ]
    if not fixed:
        return leading, None

    def predicate(values: Sequence[str]) -> bool:
        return all(values[i] == v for i, v in fixed)

    return leading, predicate
