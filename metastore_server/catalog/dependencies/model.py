"""The rules of dependent tables (docs/dependent-tables.md), pure: no I/O, no store code.

A dependent table ``Tdep`` depends on a base table ``T``: it inherits ``T``'s schema and is
partitioned by a non-empty prefix of ``T``'s partition keys. Any HMS client declares one with
table properties (``CREATE TABLE ... TBLPROPERTIES (...)`` from PySpark works):

* ``metastore.dependent.base`` = ``db.table``: the current base (required; its presence makes
  the table dependent);
* ``metastore.dependent.on.base.drop`` = ``refuse`` (default) | ``allow`` | ``mark_incomplete``;
* ``metastore.dependent.on.base.schema.change`` = ``refuse`` (default) | ``propagate``;
* ``metastore.dependent.completeness.period`` = an update period name (``HOURLY``) and
  ``metastore.dependent.completeness.columns`` = the base's time keys (``ds,hr``): both or
  neither (no completeness check by default).

The table is dependent iff ``metastore.dependent.base`` is set. Both defaults are the choices
that lose nothing and change nothing behind the user's back: a refused drop or schema change can
be retried after the policy is relaxed, a silently broken dependency or a silently rewritten
dependent schema cannot be undone. Policy and period values are case-insensitive. Any other
table property under ``metastore.dependent.`` is refused (a typo must not silently fall back to
a default).

Completeness: the base's time partition is read from ``completeness.columns``, whose values,
joined with ``-`` (one-digit numbers zero-padded after the first column), form a name of
``completeness.period`` in the timeline package's format: with ``ds,hr`` and ``HOURLY``,
``ds=2024-01-01/hr=3`` is the hour ``2024-01-01-03``; a single column (``dt=2024-01-01-03``,
Lens's style) works as well. A dependent partition that fixes a leading part of those columns
(``ds=2024-01-01``) covers one unit of a coarser period (the day), and is complete when every
unit of ``period`` inside it (the 24 hours) is present in the base.

A dependent partition records its dependency in its parameter ``metastore.dependent.depends.on``
as ``db.table@k1=v1/k2=v2``: the partial spec, on the base's leading keys, of the base
partitions it stands for (keys and values escaped as in partition names). Resolution is
dynamic: the base partitions matching the spec now. A partition marked incomplete by the
``mark_incomplete`` drop policy carries ``metastore.dependent.incomplete`` = ``true``.

Schema: a dependent's columns are its base's data columns (the partition keys are not
columns): ``select key, value from Tdep where ds = 1`` reads what ``select key, value from T
where ds = 1`` reads. A table created without columns gets them from its base; declared columns
must be the base's. Re-pointing to a new base (``T`` deprecated for ``T2``, partitioned by
``ds, hr, min``) needs only the same data columns and keys that start with the dependent's.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from metastore_server.catalog.basics.names import (
    escape_path_name,
    is_valid_name,
    unescape_path_name,
)
from metastore_server.planner.ast import Literal, format_key, quote_string
from metastore_server.planner.evaluate import Domain, comparison_domain
from metastore_server.planner.types import key_kind, parse_date, parse_integral
from metastore_server.timeline import TimePartition, UpdatePeriod

#: A column or partition key: (name, Hive type).
Column = tuple[str, str]

PREFIX = "metastore.dependent."
BASE_KEY = PREFIX + "base"
ON_BASE_DROP_KEY = PREFIX + "on.base.drop"
ON_SCHEMA_CHANGE_KEY = PREFIX + "on.base.schema.change"
COMPLETENESS_PERIOD_KEY = PREFIX + "completeness.period"
COMPLETENESS_COLUMNS_KEY = PREFIX + "completeness.columns"
#: Partition parameter: the partition's dependency (``Dependency.to_text``).
DEPENDS_ON_KEY = PREFIX + "depends.on"
#: Partition parameter set to ``"true"`` when a base partition it depends on was dropped under
#: the ``mark_incomplete`` policy.
INCOMPLETE_KEY = PREFIX + "incomplete"

TABLE_KEYS = frozenset(
    {BASE_KEY, ON_BASE_DROP_KEY, ON_SCHEMA_CHANGE_KEY, COMPLETENESS_PERIOD_KEY,
     COMPLETENESS_COLUMNS_KEY}
)  # fmt: skip
PARTITION_KEYS = frozenset({DEPENDS_ON_KEY, INCOMPLETE_KEY})


class DropPolicy(enum.Enum):
    """What dropping a base partition does while dependent partitions depend on it."""

    REFUSE = "refuse"
    ALLOW = "allow"
    MARK_INCOMPLETE = "mark_incomplete"


class SchemaChangePolicy(enum.Enum):
    """What changing the base table's schema does to its dependent tables."""

    REFUSE = "refuse"
    PROPAGATE = "propagate"


@dataclass(frozen=True, order=True)
class TableName:
    """A base table: database and table names, lower-case; text form ``db.table``."""

    db: str
    table: str

    def __post_init__(self) -> None:
        for what, name in (("database", self.db), ("table", self.table)):
            if not is_valid_name(name) or name != name.lower():
                raise ValueError(f"invalid {what} name {name!r} (lower-case word characters)")

    @classmethod
    def parse(cls, text: str) -> TableName:
        """``db.table`` (case-insensitive, blanks around the parts ignored)."""
        db, dot, table = text.strip().partition(".")
        if not dot or not db.strip() or not table.strip():
            raise ValueError(f"expected a table as db.table, got {text!r}")
        return cls(db.strip().lower(), table.strip().lower())

    def __str__(self) -> str:
        return f"{self.db}.{self.table}"


@dataclass(frozen=True)
class CompletenessRule:
    """How a base partition names a time partition: ``period`` and the time keys forming it."""

    period: UpdatePeriod
    columns: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.columns:
            raise ValueError("completeness needs at least one time column")
        lowered = tuple(c.strip().lower() for c in self.columns)
        if any(not c for c in lowered):
            raise ValueError(f"empty time column name in {','.join(self.columns)!r}")
        if len(set(lowered)) != len(lowered):
            raise ValueError(f"repeated time column in {','.join(self.columns)!r}")
        object.__setattr__(self, "columns", lowered)


@dataclass(frozen=True)
class DependentSpec:
    """What a dependent table's properties declare."""

    base: TableName
    on_base_drop: DropPolicy = DropPolicy.REFUSE
    on_schema_change: SchemaChangePolicy = SchemaChangePolicy.REFUSE
    completeness: CompletenessRule | None = None

    @classmethod
    def from_parameters(cls, params: Mapping[str, str] | None) -> DependentSpec | None:
        """The spec a table's parameters declare; None when the table is not dependent.

        ValueError with the property's name for a bad value, an unknown ``metastore.dependent.``
        property, a policy without a base, or only one of the two completeness properties.
        """
        params = params or {}
        ours = {k: v for k, v in params.items() if k.startswith(PREFIX)}
        unknown = sorted(k for k in ours if k not in TABLE_KEYS)
        if unknown:
            known = ", ".join(sorted(TABLE_KEYS))
            what = "a partition parameter, not a" if unknown[0] in PARTITION_KEYS else "unknown"
            raise ValueError(f"{what} table property {unknown[0]!r} (known: {known})")
        if BASE_KEY not in ours:
            stray = sorted(k for k in ours if k in TABLE_KEYS)
            if stray:
                raise ValueError(f"{stray[0]} is set but {BASE_KEY} (the base table) is not")
            return None
        try:
            base = TableName.parse(ours[BASE_KEY])
        except ValueError as error:
            raise ValueError(f"{BASE_KEY}: {error}") from None
        drop = _enum_value(DropPolicy, ON_BASE_DROP_KEY, ours.get(ON_BASE_DROP_KEY))
        change = _enum_value(
            SchemaChangePolicy, ON_SCHEMA_CHANGE_KEY, ours.get(ON_SCHEMA_CHANGE_KEY)
        )
        return cls(base, drop or DropPolicy.REFUSE, change or SchemaChangePolicy.REFUSE,
                   _completeness(ours.get(COMPLETENESS_PERIOD_KEY),
                                 ours.get(COMPLETENESS_COLUMNS_KEY)))  # fmt: skip


def _enum_value(kind: type[enum.Enum], key: str, text: str | None) -> Any:
    if text is None:
        return None
    try:
        return kind(text.strip().lower())
    except ValueError:
        allowed = " | ".join(member.value for member in kind)
        raise ValueError(f"{key}: {text!r} is not one of {allowed}") from None


def _completeness(period: str | None, columns: str | None) -> CompletenessRule | None:
    if period is None and columns is None:
        return None
    if period is None or columns is None:
        given, missing = (
            (COMPLETENESS_COLUMNS_KEY, COMPLETENESS_PERIOD_KEY)
            if period is None
            else (COMPLETENESS_PERIOD_KEY, COMPLETENESS_COLUMNS_KEY)
        )
        raise ValueError(f"{given} is set but {missing} is not (set both or neither)")
    try:
        update_period = UpdatePeriod[period.strip().upper()]
    except KeyError:
        allowed = " | ".join(p.name for p in UpdatePeriod.by_weight())
        raise ValueError(f"{COMPLETENESS_PERIOD_KEY}: {period!r} is not one of {allowed}") from None
    try:
        return CompletenessRule(update_period, tuple(columns.split(",")))
    except ValueError as error:
        raise ValueError(f"{COMPLETENESS_COLUMNS_KEY}: {error}") from None


# --- validation ------------------------------------------------------------------------------


def _same_type(a: str, b: str) -> bool:
    return re.sub(r"\s+", "", a).lower() == re.sub(r"\s+", "", b).lower()


def check_prefix(dependent_keys: Sequence[Column], base_keys: Sequence[Column]) -> None:
    """ValueError unless the dependent's partition keys are a non-empty prefix of the base's
    (names case-insensitively, Hive types ignoring case and blanks)."""
    if not dependent_keys:
        raise ValueError("a dependent table must be partitioned by a prefix of its base's keys")
    base_text = ", ".join(f"{n} {t}" for n, t in base_keys) or "none"
    if len(dependent_keys) > len(base_keys):
        raise ValueError(
            f"the dependent table has {len(dependent_keys)} partition keys but its base has only "
            f"{len(base_keys)} ({base_text}); they must be a prefix of the base's"
        )
    for position, ((name, hive_type), (b_name, b_type)) in enumerate(
        zip(dependent_keys, base_keys, strict=False), start=1
    ):
        if name.lower() != b_name.lower():
            raise ValueError(
                f"partition key {position} of the dependent table is {name!r} but the base's is "
                f"{b_name!r}; the keys must be a prefix of the base's ({base_text})"
            )
        if not _same_type(hive_type, b_type):
            raise ValueError(
                f"partition key {name!r} is {hive_type} in the dependent table but {b_type} in "
                f"the base"
            )


def check_columns(declared: Sequence[Column], base_columns: Sequence[Column]) -> None:
    """ValueError naming the first difference when a dependent's declared columns are not its
    base's data columns (names case-insensitively, types ignoring case and blanks; an empty
    declaration is accepted: the server fills them in)."""
    if not declared:
        return
    shown = ", ".join(f"{n} {t}" for n, t in base_columns) or "none"
    for position, (got, want) in enumerate(zip(declared, base_columns, strict=False), start=1):
        if got[0].lower() != want[0].lower() or not _same_type(got[1], want[1]):
            raise ValueError(
                f"column {position} of the dependent table is '{got[0]} {got[1]}' but the base "
                f"has '{want[0]} {want[1]}' (a dependent table has its base's columns: {shown})"
            )
    if len(declared) != len(base_columns):
        raise ValueError(
            f"the dependent table declares {len(declared)} columns but its base has "
            f"{len(base_columns)} ({shown})"
        )


def check_completeness_rule(
    rule: CompletenessRule, dependent_keys: Sequence[Column], base_keys: Sequence[Column]
) -> None:
    """ValueError unless the rule's time columns are base keys and the dependent's keys fix a
    non-empty leading part of them (so each dependent partition covers a bounded time window)."""
    base_names = [n.lower() for n, _ in base_keys]
    for column in rule.columns:
        if column not in base_names:
            raise ValueError(
                f"{COMPLETENESS_COLUMNS_KEY}: {column!r} is not a partition key of the base "
                f"({', '.join(base_names)})"
            )
    fixed = {n.lower() for n, _ in dependent_keys}
    count = _leading_fixed(rule.columns, fixed)
    if count == 0:
        raise ValueError(
            f"{COMPLETENESS_COLUMNS_KEY}: the dependent table's keys must include the first "
            f"time column {rule.columns[0]!r}, or its partitions cover unbounded time"
        )
    if any(c in fixed for c in rule.columns[count:]):
        raise ValueError(
            f"{COMPLETENESS_COLUMNS_KEY}: the dependent table's keys must fix a leading part of "
            f"({', '.join(rule.columns)})"
        )


def _leading_fixed(columns: Sequence[str], fixed: Iterable[str]) -> int:
    fixed = set(fixed)
    count = 0
    while count < len(columns) and columns[count] in fixed:
        count += 1
    return count


# --- dependency records ------------------------------------------------------------------------


@dataclass(frozen=True)
class Dependency:
    """A dependent partition's dependency: the base partitions matching ``spec`` (key=value
    pairs on the base's leading keys, keys lower-case) of ``base_db.base_table``."""

    base_db: str
    base_table: str
    spec: tuple[tuple[str, str], ...]

    def __post_init__(self) -> None:
        TableName(self.base_db, self.base_table)  # validates
        if not self.spec:
            raise ValueError("a dependency needs a non-empty partition spec")
        keys = [k.lower() for k, _ in self.spec]
        if any(not k for k in keys):
            raise ValueError("empty key in a dependency spec")
        if len(set(keys)) != len(keys):
            raise ValueError(f"repeated key in a dependency spec: {keys}")
        if any(not v for _, v in self.spec):
            raise ValueError("empty value in a dependency spec")
        object.__setattr__(self, "spec", tuple((k.lower(), v) for k, v in self.spec))

    @property
    def base(self) -> TableName:
        return TableName(self.base_db, self.base_table)

    def partition_name(self) -> str:
        """The spec as a (partial) partition name, ``k1=v1/k2=v2``, escaped."""
        return "/".join(f"{escape_path_name(k)}={escape_path_name(v)}" for k, v in self.spec)

    def to_text(self) -> str:
        """``db.table@k1=v1/k2=v2``: the form stored in ``metastore.dependent.depends.on``."""
        return f"{self.base_db}.{self.base_table}@{self.partition_name()}"

    def __str__(self) -> str:
        return self.to_text()

    @classmethod
    def parse(cls, text: str) -> Dependency:
        """The dependency ``to_text`` printed; ValueError for anything else."""
        table, at, name = text.partition("@")
        if not at:
            raise ValueError(f"expected db.table@key=value/..., got {text!r}")
        try:
            base = TableName.parse(table)
        except ValueError as error:
            raise ValueError(f"bad dependency {text!r}: {error}") from None
        spec = []
        for component in name.split("/"):
            key, eq, value = component.partition("=")
            if not eq or not key or not value or "=" in value:
                raise ValueError(f"bad dependency {text!r}: {component!r} is not key=value")
            spec.append((unescape_path_name(key), unescape_path_name(value)))
        return cls(base.db, base.table, tuple(spec))


def dependency_for(
    dependent_values: Sequence[str], dependent_keys: Sequence[Column | str], base: TableName
) -> Dependency:
    """The dependency of a new dependent partition on the table's current ``base``."""
    if len(dependent_values) != len(dependent_keys):
        raise ValueError(
            f"{len(dependent_values)} partition values for {len(dependent_keys)} partition keys"
        )
    names = [k if isinstance(k, str) else k[0] for k in dependent_keys]
    return Dependency(base.db, base.table, tuple(zip(names, dependent_values, strict=True)))


# --- resolution --------------------------------------------------------------------------------


def _equal(hive_type: str, raw: str, spec_value: str) -> bool:
    """``raw = "spec_value"`` on a key of ``hive_type``, as the filter evaluator decides it."""
    domain, operand = comparison_domain(key_kind(hive_type), Literal.string(spec_value))
    if domain is Domain.INTEGRAL:
        return parse_integral(raw) == operand
    if domain is Domain.DATE:
        return parse_date(raw) == operand
    return raw == operand


def matches(
    dependency: Dependency, base_partition_values: Sequence[str], base_keys: Sequence[Column]
) -> bool:
    """Whether a base partition (raw values in key order) is one ``dependency`` stands for.

    Equality is the filter's (``filter_for``): an int key's ``"01"`` equals ``"1"``. A spec key
    the base no longer has matches nothing.
    """
    positions = {name.lower(): (i, hive_type) for i, (name, hive_type) in enumerate(base_keys)}
    for key, value in dependency.spec:
        if key not in positions:
            return False
        index, hive_type = positions[key]
        if not _equal(hive_type, base_partition_values[index], value):
            return False
    return True


def filter_for(dependency: Dependency) -> str:
    """The HMS partition filter selecting the base partitions of ``dependency``, e.g.
    ``ds = "2024-01-01" AND hr = "3"`` (string literals: the evaluator compares them as the
    key's type). ValueError when a value cannot be written in the dialect (both quote kinds,
    a trailing backslash): resolve with ``matches`` then."""
    return " AND ".join(f"{format_key(k)} = {quote_string(v)}" for k, v in dependency.spec)


# --- completeness ------------------------------------------------------------------------------


def _time_text(values: Sequence[str]) -> str:
    parts = [values[0]]
    parts += [f"0{v}" if len(v) == 1 and v.isdigit() else v for v in values[1:]]
    return "-".join(parts)


def time_partition_of(
    rule: CompletenessRule, base_partition_values: Sequence[str], base_keys: Sequence[Column]
) -> TimePartition | None:
    """The time partition of ``rule.period`` a base partition holds, or None when its time
    values do not name one (or a time column is not a base key)."""
    positions = {name.lower(): i for i, (name, _) in enumerate(base_keys)}
    if any(c not in positions for c in rule.columns):
        return None
    text = _time_text([base_partition_values[positions[c]] for c in rule.columns])
    try:
        return TimePartition.parse(rule.period, text)
    except ValueError:
        return None


def window_of(rule: CompletenessRule, dependency: Dependency) -> TimePartition:
    """The time unit a dependent partition covers: its leading time values, as a partition of
    ``rule.period`` or of a coarser period (``ds=2024-01-01`` with ``ds,hr``: that day)."""
    spec = dict(dependency.spec)
    count = _leading_fixed(rule.columns, spec)
    if count == 0:
        raise ValueError(
            f"dependency {dependency} fixes no leading time column of ({', '.join(rule.columns)})"
        )
    text = _time_text([spec[c] for c in rule.columns[:count]])
    for period in UpdatePeriod.by_weight():
        if period < rule.period:
            continue
        try:
            unit = TimePartition.parse(period, text)
        except ValueError:
            continue
        if unit.name == text:
            return unit
    raise ValueError(
        f"dependency {dependency}: {text!r} does not name a {rule.period.name} partition or a "
        f"coarser one"
    )


@dataclass(frozen=True)
class Completeness:
    """A dependent partition's completeness: the window, the expected base time partitions
    (in time order) and the missing ones."""

    window: TimePartition
    expected: tuple[TimePartition, ...]
    missing: tuple[TimePartition, ...]

    @property
    def complete(self) -> bool:
        return not self.missing


def expected_partitions(rule: CompletenessRule, dependency: Dependency) -> list[TimePartition]:
    """Every unit of ``rule.period`` in the dependency's window, in time order."""
    window = window_of(rule, dependency)
    found = []
    unit = TimePartition.of(rule.period, window.start)
    end: datetime = window.end
    while unit.start < end:
        found.append(unit)
        unit = unit.next()
    return found


def completeness(
    rule: CompletenessRule, dependency: Dependency, present: Iterable[TimePartition]
) -> Completeness:
    """Which expected base time partitions of a dependent partition are missing from
    ``present`` (the base's time partitions of ``rule.period``; others are ignored)."""
    have = {p for p in present if p.period is rule.period}
    expected = tuple(expected_partitions(rule, dependency))
    missing = tuple(p for p in expected if p not in have)
    return Completeness(window_of(rule, dependency), expected, missing)
