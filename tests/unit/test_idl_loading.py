"""The IDL load of ``thrift_api``: thriftpy2's load with a linear lookup of type references
gives the very module thriftpy2's own load gives (every struct's fields, defaults, enum, const
and call, the include's too), the same errors, and leaves thriftpy2's rule in place after."""

from __future__ import annotations

import enum
import itertools
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import thriftpy2
from thriftpy2.parser import parser as thrift_parser
from thriftpy2.parser.exc import ThriftParserError
from thriftpy2.thrift import TPayload

from metastore_server import thrift_api
from metastore_server.thrift_api import IDL_DIR, IDL_FILE, WIRE_2_3_FILE

_names = itertools.count()


def fresh_name() -> str:
    return f"idl_loading_case_{next(_names)}_thrift"


def shape(value: Any) -> Any:
    """A comparable picture of a loaded value: classes by name, specs and defaults unfolded."""
    if isinstance(value, type) and issubclass(value, TPayload):
        return ("struct", value.__name__)
    if isinstance(value, type) and issubclass(value, enum.Enum):
        return ("enum", value.__name__, sorted((m.name, m.value) for m in value))
    if isinstance(value, TPayload):
        return (type(value).__name__, shape(vars(value)))
    if isinstance(value, dict):
        return sorted((repr(shape(k)), shape(v)) for k, v in value.items())
    if isinstance(value, list | tuple | set | frozenset):
        return [shape(item) for item in value]
    if isinstance(value, type):
        return ("class", value.__name__, sorted(k for k in vars(value) if not k.startswith("__")))
    return value


def picture(module: ModuleType) -> dict[str, Any]:
    """Every definition of a loaded IDL module (and of its includes), comparable."""
    seen: dict[str, Any] = {}
    for name, value in vars(module).items():
        if name.startswith("__"):
            continue
        if isinstance(value, ModuleType):
            seen[name] = picture(value)
        elif isinstance(value, type) and issubclass(value, TPayload):
            seen[name] = ("struct", shape(value.thrift_spec), shape(value.default_spec))
        elif isinstance(value, type) and hasattr(value, "thrift_services"):
            seen[name] = {call: (shape(getattr(value, f"{call}_args").thrift_spec),
                                 shape(getattr(value, f"{call}_result").thrift_spec))
                          for call in value.thrift_services}  # fmt: skip
        else:
            seen[name] = shape(value)
    return seen


@pytest.mark.parametrize("file", [IDL_FILE, WIRE_2_3_FILE])
def test_our_idl_loads_as_thriftpy2_loads_it(file: str) -> None:
    path = str(IDL_DIR / file)
    theirs = thriftpy2.load(path, module_name=fresh_name(), include_dirs=[str(IDL_DIR)])
    ours = thrift_api._load_thrift(path, fresh_name(), include_dirs=[str(IDL_DIR)])
    assert picture(ours) == picture(theirs)
    assert len(picture(ours)) > 5  # a whole IDL was compared, not an empty module
    assert thrift_parser.p_ref_type is not thrift_api._RULE  # thriftpy2's rule is back


def test_the_fast_rule_is_in_use_with_the_locked_thriftpy2() -> None:
    """Were thriftpy2 to change the rule, ours would step aside (and this test says so)."""
    assert thrift_api.FAST


def write(directory: Path, name: str, text: str) -> str:
    (directory / name).write_text(text)
    return str(directory / name)


def test_includes_forward_references_and_dotted_names(tmp_path: Path) -> None:
    write(tmp_path, "base.thrift", "enum Color { RED = 1, BLUE = 2 }\n"
          "struct Inner { 1: string a, 2: optional Color c = Color.BLUE }\n")  # fmt: skip
    path = write(tmp_path, "top.thrift", 'include "base.thrift"\n'
                 "typedef base.Inner Alias\n"
                 "struct Outer { 1: base.Inner inner, 2: Later later, 3: list<Alias> many,\n"
                 "  4: map<string, base.Color> colors }\n"
                 "struct Later { 1: i32 n }\n"
                 "service S { Outer get(1: base.Inner i, 2: Later l) }\n")  # fmt: skip
    theirs = thriftpy2.load(path, module_name=fresh_name(), include_dirs=[str(tmp_path)])
    ours = thrift_api._load_thrift(path, fresh_name(), include_dirs=[str(tmp_path)])
    assert picture(ours) == picture(theirs)
    outer = ours.Outer(inner=ours.base.Inner(a="x"), later=ours.Later(n=1))
    assert outer.inner.c == ours.base.Color.BLUE


@pytest.mark.parametrize("text", [
    "struct A { 1: nowhere.Thing t }",  # an include that is not there
    "struct A { 1: B.c.d t }\nstruct B { 1: i32 c }",  # a path through a struct
])  # fmt: skip
def test_bad_references_fail_as_thriftpy2_fails(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, "bad.thrift", text)
    with pytest.raises(ThriftParserError) as theirs:
        thriftpy2.load(path, module_name=fresh_name())
    with pytest.raises(ThriftParserError) as ours:
        thrift_api._load_thrift(path, fresh_name())
    assert str(ours.value) == str(theirs.value)
    assert thrift_parser.p_ref_type is not thrift_api._RULE
