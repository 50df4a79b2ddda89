"""``get_table_names_by_filter``: HMS 2.3's filter over tables, in the partition filter's grammar
(``planner.grammar``) with three kinds of key (``hive_metastoreConstants``):

- ``hive_filter_field_owner__``: the owner; =, <>, <, <=, >, >= compare text, LIKE matches a
  Java regular expression against the whole owner (HMS hands the pattern to JDOQL ``matches``);
- ``hive_filter_field_last_access__``: the last access time, compared with an integer (LIKE is
  refused);
- ``hive_filter_field_params__<key>``: the table parameter ``<key>`` (case as written), with =,
  <>/!= or LIKE only; the literal is compared as text (an integer by its digits).

As in HMS (SQL underneath), a table without an owner matches no comparison on it, ``<>``
included, and a literal of the wrong kind (text for the access time, a number for the owner)
matches nothing. A parameter is joined in (JDOQL ``parameters.get``): a table lacking any
parameter the filter names is never selected, whatever the rest of the filter says. Any other
key, and any refused operator, is a MetaException with HMS's message, whether or not a table
would be looked at.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from metastore_server.planner import java_regex
from metastore_server.planner.ast import And, Expr, Leaf, LiteralKind, Op, iter_leaves
from metastore_server.planner.errors import FilterError
from metastore_server.planner.grammar import parse_filter
from metastore_server.storage import layout
from metastore_server.storage.port import StoragePort
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import from_bytes

OWNER = "hive_filter_field_owner__"
LAST_ACCESS = "hive_filter_field_last_access__"
PARAMS = "hive_filter_field_params__"
_PARAM_OPS = (Op.EQ, Op.NE, Op.LIKE)
#: Both operands are of one kind (two texts or two integers).
_COMPARE: dict[Op, Callable[[Any, Any], bool]] = {
    Op.EQ: operator.eq, Op.NE: operator.ne, Op.LT: operator.lt,
    Op.LE: operator.le, Op.GT: operator.gt, Op.GE: operator.ge,
}  # fmt: skip


def _refusal(leaf: Leaf) -> str | None:
    """HMS's message for a leaf it cannot turn into a query, or None."""
    if leaf.key == OWNER:
        return None
    if leaf.key == LAST_ACCESS:
        if leaf.op is Op.LIKE:
            return "Like is not supported for HIVE_FILTER_FIELD_LAST_ACCESS"
        return None
    if leaf.key.startswith(PARAMS):
        if leaf.op not in _PARAM_OPS:
            return "Only [<>, !=, =, LIKE] are supported operators for HIVE_FILTER_FIELD_PARAMS"
        return None
    return "Invalid key name in filter.  Use constants from org.apache.hadoop.hive.metastore.api"


def parse_table_filter(text: str) -> Expr | None:
    """The filter's tree (None: every table); MetaException when HMS refuses it."""
    try:
        tree = parse_filter(text)
    except FilterError as err:
        raise hms.MetaException(message=str(err)) from None
    for leaf in iter_leaves(tree):
        reason = _refusal(leaf)
        if reason is not None:
            raise hms.MetaException(message=reason)
    return tree


def _matches(pattern: str, text: str) -> bool:
    """Java ``text.matches(pattern)``, in linear time (RE2); an invalid pattern (or one that
    needs backtracking) matches nothing."""
    try:
        return java_regex.full_matcher(pattern)(text)
    except java_regex.RegexError:
        return False


def _leaf_holds(leaf: Leaf, table: hms.Table) -> bool:
    """Whether one comparison holds for a table."""
    literal = leaf.value
    if leaf.key == LAST_ACCESS:
        if literal.kind is not LiteralKind.INTEGER:
            return False
        return _COMPARE[leaf.op](table.lastAccessTime or 0, literal.value)
    if leaf.key == OWNER:
        value: str | None = table.owner
        if value is None or literal.kind is not LiteralKind.STRING:
            return False
    else:
        value = (table.parameters or {}).get(leaf.key[len(PARAMS) :])
        if value is None:
            return False
    if leaf.op is Op.LIKE:
        return _matches(literal.text, value)
    return _COMPARE[leaf.op](value, literal.text)


def _holds(tree: Expr, table: hms.Table) -> bool:
    """Whether the whole filter holds for a table (no recursion: trees may be deep)."""
    pending: list[tuple[Expr, bool]] = [(tree, False)]
    results: list[bool] = []
    while pending:
        node, expanded = pending.pop()
        if isinstance(node, Leaf):
            results.append(_leaf_holds(node, table))
        elif not expanded:
            pending.append((node, True))
            pending.extend((child, False) for child in reversed(node.children))
        else:
            count = len(node.children)
            values = results[-count:]
            del results[-count:]
            results.append(all(values) if isinstance(node, And) else any(values))
    return results[0]


def _param_keys(tree: Expr | None) -> frozenset[str]:
    """The table parameters a filter names (each must be present for a table to match)."""
    return frozenset(
        leaf.key[len(PARAMS) :] for leaf in iter_leaves(tree) if leaf.key.startswith(PARAMS)
    )


def table_names_by_filter(
    store: StoragePort, db: str, text: str, max_tables: int | None
) -> list[str]:
    """Names of the tables of ``db`` the filter selects, sorted, at most ``max_tables``
    (negative: all). A database that does not exist has no tables (as HMS)."""
    tree = parse_table_filter(text)
    needed = _param_keys(tree)
    limit = -1 if max_tables is None else max_tables
    found: list[str] = []
    start, stop = layout.children_range(db)
    for key, row in store.scan(layout.TABLES, start, stop):
        if 0 <= limit <= len(found):
            break
        if layout.OBJECT not in row:
            continue  # a row of marks alone is no table
        table = from_bytes(hms.Table, row[layout.OBJECT])
        if needed and not needed <= (table.parameters or {}).keys():
            continue
        if tree is None or _holds(tree, table):
            found.append(layout.name_from_child_key(key))
    return found
