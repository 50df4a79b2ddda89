"""Column types as HMS judges them: the type names it stores and the type changes it allows."""

from __future__ import annotations

import pytest

from metastore_server.catalog.basics import column_types
from metastore_server.thrift_api import hms


def _cols(*types: str | None) -> list[hms.FieldSchema]:
    return [hms.FieldSchema(name=f"c{i}", type=t) for i, t in enumerate(types)]


@pytest.mark.parametrize(
    ("text", "word"),
    [("int", "int"), ("decimal(10,2)", "decimal"), ("array<notatype>", "array"),
     ("notatype<", "notatype"), ("<int>", "<"), (" int", " "), ("", "")],
)  # fmt: skip
def test_first_word(text: str, word: str) -> None:
    assert column_types.first_word(text) == word


def test_only_the_first_word_must_be_a_type_name() -> None:
    assert column_types.invalid_type(_cols("int", "array<notatype>", "map<string,int>")) is None
    assert column_types.invalid_type(_cols("int", "notatype<", "nope")) == "type: notatype<"
    assert column_types.invalid_type(_cols("varchar(10)", "")) == "type: "


@pytest.mark.parametrize(
    ("old", "new", "allowed"),
    [
        ("string", "int", False), ("int", "bigint", True), ("bigint", "int", False),
        ("int", "string", True), ("double", "decimal(10,2)", False), ("decimal", "double", True),
        ("string", "double", True), ("string", "decimal(5,1)", False),
        ("varchar(10)", "string", True),
        ("string", "char(3)", True), ("date", "string", True), ("string", "date", False),
        ("timestamp", "varchar(20)", True), ("boolean", "string", False), ("int", "boolean", False),
        ("binary", "string", False), ("void", "int", True), ("array<int>", "array<bigint>", False),
        ("array<int>", "array< int >", True), ("varchar(10)", "varchar(20)", True),
        ("map<string,int>", "string", False), ("float", "double", True), ("tinyint", "float", True),
    ],
)  # fmt: skip
def test_compatible_changes(old: str, new: str, allowed: bool) -> None:
    assert column_types.compatible(old, new) is allowed


def test_incompatible_columns_compares_positions_only() -> None:
    old = _cols("string", "int", "date")
    new = [hms.FieldSchema(name="s", type="int"), hms.FieldSchema(name="n", type="bigint")]
    assert column_types.incompatible_columns(old, new) == ["s"]
    assert column_types.incompatible_message(["s", "t"]).endswith("positions :\ns,t")
