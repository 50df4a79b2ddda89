"""thriftpy2's ``load`` with a linear lookup of type references.

thriftpy2 (0.7) resolves each type name of an IDL by walking ``dir()`` of the module being
built, looking for an included file's prefix: one walk of every name defined so far for every
reference, so our 3,700-line IDL costs each process (every worker, the supervisor, the REST
catalog's process, every command) about half a second of CPU in that walk alone, half of its
load. A name can only match the include named by its first dotted part, so that part is looked
up directly here; the rest of the rule is thriftpy2's (same results, same errors,
``tests/unit/test_idl_loading.py`` compares every struct, enum and call of the two loads).

The grammar rule is swapped in while this module loads an IDL, under thriftpy2's own parse
lock, and put back after; any other thriftpy2 version than the one checked keeps its own rule.
"""

from __future__ import annotations

import contextlib
import os
import types
from collections.abc import Iterator, Sequence
from typing import Any

import thriftpy2
from thriftpy2.parser import parser as _parser

#: Names of a module under construction the reference rule never takes for an include.
_NOT_INCLUDES = frozenset({"__doc__", "__loader__", "__name__", "__package__", "__spec__",
                           "__thrift_file__", "__thrift_meta__"})  # fmt: skip
#: The thriftpy2 rule replaced, as that version writes it (its grammar docstring).
_RULE_DOC = "ref_type : IDENTIFIER"
_original = _parser.p_ref_type


def _ref_type(p: Any) -> None:
    """thriftpy2's ``ref_type`` rule, the include found by name instead of by a walk."""
    module = p.parser.context.thrift_stack[-1]
    name: str = p[1]
    head, dot, rest = name.partition(".")
    ref_type: Any = None
    if dot and head not in _NOT_INCLUDES and head in vars(module):
        ref_type = getattr(getattr(module, head), rest, None)
    if ref_type is None:
        ref_type = module
        parts = name.split(".")
        for index, part in enumerate(parts):
            ref_type = getattr(ref_type, part, None)
            if ref_type is None:
                if index != len(parts) - 1:
                    raise _parser.ThriftParserError(
                        f"No type found: {name!r}, at line {p.lineno(1)}")
                p[0] = p.parser.context.incomplete_type.set_info((name, p.lineno(1)))
                return
    p[0] = (ref_type._ttype, ref_type) if hasattr(ref_type, "_ttype") else ref_type


def _as_rule(function: Any) -> Any:
    """``function`` as a grammar rule PLY orders where thriftpy2's own rule stands (PLY sorts
    rules by their first line; the first rule names the grammar's start)."""
    code = function.__code__.replace(co_firstlineno=_original.__code__.co_firstlineno,
                                     co_filename=_original.__code__.co_filename)  # fmt: skip
    rule = types.FunctionType(code, function.__globals__, _original.__name__)
    rule.__doc__ = _original.__doc__
    rule.__module__ = _original.__module__
    return rule


_RULE = _as_rule(_ref_type)
#: The fast rule is used only where thriftpy2's is the one it was written from.
FAST = (_original.__doc__ or "").strip() == _RULE_DOC and hasattr(_parser, "_parse_lock")


@contextlib.contextmanager
def _fast_rule() -> Iterator[None]:
    if not FAST:
        yield
        return
    with _parser._parse_lock:  # a reentrant lock: thriftpy2's parse takes it again inside
        _parser.p_ref_type = _RULE
        try:
            yield
        finally:
            _parser.p_ref_type = _original


def load(path: str | os.PathLike[str], module_name: str,
         include_dirs: Sequence[str] = ()) -> types.ModuleType:  # fmt: skip
    """``thriftpy2.load`` of ``path`` as ``module_name``, with the linear reference lookup."""
    with _fast_rule():
        return thriftpy2.load(path, module_name=module_name,
                              include_dirs=list(include_dirs) or None)  # fmt: skip
