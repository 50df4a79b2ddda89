"""Hive column types as HMS judges them: which type strings it stores, and which changes of a
column's type it allows while ``hive.metastore.disallow.incompatible.col.type.changes`` is on.

HMS looks only at a type's first word (the leading run of letters, digits and ``_``, or of
other characters): it must be a Hive type name, as written (``array<notatype>`` passes,
``INT`` does not). A changed type is compatible when Hive converts the old type to the new one
implicitly: a type to itself (parameters aside: ``varchar(10)`` to ``varchar(20)``), numbers
to wider numbers (tinyint, smallint, int, bigint, decimal, float, double in that order) and to
strings, strings to each other and to ``double``, dates and timestamps to strings, ``void`` to
anything. Complex types only to themselves.
"""

from __future__ import annotations

from collections.abc import Sequence

from metastore_server.thrift_api import hms

#: The type names HMS accepts as a column type's first word.
TYPE_NAMES = frozenset({
    "void", "boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "string",
    "varchar", "char", "date", "datetime", "timestamp", "decimal", "binary",
    "interval_year_month", "interval_day_time", "array", "map", "struct", "uniontype",
})  # fmt: skip
_COMPLEX = frozenset({"array", "map", "struct", "uniontype"})
#: Numbers (and strings last), narrowest first: a type converts to those after it.
_WIDENING = ("tinyint", "smallint", "int", "bigint", "decimal", "float", "double", "string")
_STRINGS = frozenset({"string", "varchar", "char"})
_NUMBERS = frozenset(_WIDENING[:-1])
_DATES = frozenset({"date", "timestamp"})


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def first_word(type_text: str) -> str:
    """The leading run of word characters (or of other characters) of a type string."""
    if not type_text:
        return ""
    word = _is_word_char(type_text[0])
    end = 1
    while end < len(type_text) and _is_word_char(type_text[end]) == word:
        end += 1
    return type_text[:end]


def invalid_type(columns: Sequence[hms.FieldSchema] | None) -> str | None:
    """The first type HMS refuses among ``columns``, as ``type: <type>``; None when all pass."""
    for column in columns or []:
        text = column.type or ""
        if first_word(text) not in TYPE_NAMES:
            return f"type: {text}"
    return None


def _name(type_text: str) -> str:
    return first_word(type_text.strip().lower())


def compatible(old: str | None, new: str | None) -> bool:
    """Whether HMS lets a column of type ``old`` become ``new``."""
    old_text, new_text = (old or "").strip().lower(), (new or "").strip().lower()
    if old_text.replace(" ", "") == new_text.replace(" ", ""):
        return True
    source, target = _name(old_text), _name(new_text)
    if source not in TYPE_NAMES or target not in TYPE_NAMES:
        return False
    if source in _COMPLEX or target in _COMPLEX:
        return False
    if source == target or source == "void":
        return True
    if source in _STRINGS:
        return target in _STRINGS or target == "double"
    if source in _DATES or source in _NUMBERS:
        if target in _STRINGS:
            return True
    if source in _NUMBERS and target in _NUMBERS:
        return _WIDENING.index(source) <= _WIDENING.index(target)
    return False


def incompatible_columns(
    old: Sequence[hms.FieldSchema] | None, new: Sequence[hms.FieldSchema] | None
) -> list[str]:
    """Names of the new columns whose type HMS refuses in place of the old column at the same
    position (columns past the shorter list are not compared)."""
    return [
        after.name or ""
        for before, after in zip(old or [], new or [], strict=False)
        if not compatible(before.type, after.type)
    ]


def incompatible_message(columns: Sequence[str]) -> str:
    """HMS's refusal of incompatible type changes."""
    return (
        "The following columns have types incompatible with the existing columns in their "
        "respective positions :\n" + ",".join(columns)
    )
