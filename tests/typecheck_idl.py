"""Stubs of the IDL's modules for mypy (``tests/typecheck.py`` writes them into its tree).

thriftpy2 builds the IDL's structs, enums, exceptions and constants at run time, so mypy sees
none of them; ``metastore_server.thrift_api`` imports these stubs under ``TYPE_CHECKING``, each
named as the module thriftpy2 loads (``hive_metastore_thrift``, ...). A field reads as set
(``str``, not ``str | None``): thriftpy2 leaves an unset field None, and the code tests the
fields the IDL leaves optional where it reads them; None may be written to a field (unsetting
it) and given for any constructor argument.
"""

from __future__ import annotations

import keyword
from pathlib import Path
from types import ModuleType

from thriftpy2.thrift import TType

_SCALARS = {
    TType.BOOL: "bool",
    TType.BYTE: "int",
    TType.I16: "int",
    TType.I32: "int",
    TType.I64: "int",
    TType.DOUBLE: "float",
    TType.STRING: "str",
    TType.BINARY: "bytes",
}
#: Names a field cannot take in a stub (TPayload's own methods).
_RESERVED = {"read", "write", "validate"}


class _Writer:
    """The stub of one loaded IDL module."""

    def __init__(self, module: ModuleType) -> None:
        self.module = module
        self.imports: set[str] = set()

    def _class(self, cls: type) -> str:
        if cls.__module__ == self.module.__name__:
            return cls.__name__
        self.imports.add(cls.__module__)
        return f"{cls.__module__}.{cls.__name__}"

    def type_of(self, ttype: int, info: object, key: bool = False) -> str:
        """The Python type of a value of ``ttype`` (``info``: the spec's type detail)."""
        if ttype in (TType.STRUCT,) and isinstance(info, type):
            return self._class(info)
        if ttype == TType.I32 and isinstance(info, type):
            return "int"  # an enum's value
        if ttype == TType.MAP and isinstance(info, tuple):
            return f"dict[{self.element(info[0], key=True)}, {self.element(info[1])}]"
        if ttype in (TType.LIST, TType.SET):
            inner = self.element(info)
            if key:  # decoded as a tuple (thrift_api's key-fixing protocols)
                return f"tuple[{inner}, ...]"
            return f"{'list' if ttype == TType.LIST else 'set'}[{inner}]"
        return _SCALARS.get(ttype, "Any")

    def element(self, info: object, key: bool = False) -> str:
        """The type of a container's element, told as ``ttype`` or ``(ttype, detail)``."""
        if isinstance(info, tuple):
            return self.type_of(info[0], info[1], key)
        assert isinstance(info, int)
        return self.type_of(info, None, key)

    def struct(self, cls: type) -> list[str]:
        """A struct, union or exception: its fields and its constructor."""
        base = "TException" if issubclass(cls, Exception) else "TPayload"
        lines = [f"class {cls.__name__}({base}):"]
        params = []
        for spec in getattr(cls, "thrift_spec", {}).values():
            name = spec[1]
            if keyword.iskeyword(name) or name in _RESERVED:
                continue
            kind = self.type_of(spec[0], spec[2] if len(spec) == 4 else None)
            lines += [
                "    @property",
                f"    def {name}(self) -> {kind}: ...",
                f"    @{name}.setter",
                f"    def {name}(self, value: {kind} | None) -> None: ...",
            ]
            params.append(f"{name}: {kind} | None = None")
        lines.append(f"    def __init__(self, {', '.join(params)}) -> None: ...")
        return lines

    def enum(self, cls: type) -> list[str]:
        """An enum: its members as ints and thriftpy2's two name tables."""
        lines = [f"class {cls.__name__}:"]
        lines += [f"    {name}: ClassVar[int]" for name in vars(cls)["_NAMES_TO_VALUES"]]
        lines.append("    _VALUES_TO_NAMES: ClassVar[dict[int, str]]")
        lines.append("    _NAMES_TO_VALUES: ClassVar[dict[str, int]]")
        return lines

    def text(self) -> str:
        """The whole stub."""
        meta = self.module.__thrift_meta__
        body: list[str] = []
        for cls in meta["enums"]:
            body += self.enum(cls)
        for group in ("structs", "unions", "exceptions"):
            for cls in meta[group]:
                body += self.struct(cls)
        for service in meta["services"]:
            body.append(f"{service.__name__}: Any")
        for name, value in vars(self.module).items():
            if name.startswith("_") or isinstance(value, type):
                continue
            if isinstance(value, ModuleType):
                self.imports.add(value.__name__)
                body.append(f"{name} = {value.__name__}")
            else:
                body.append(f"{name}: {type(value).__name__}")
        head = [
            "from typing import Any, ClassVar",
            "from thriftpy2.thrift import TException, TPayload",
            *(f"import {name}" for name in sorted(self.imports)),
        ]
        return "\n".join(head + body) + "\n"


def write_stubs(tree: Path) -> list[str]:
    """Writes the stub of every loaded IDL module into ``tree``; returns their module names."""
    from metastore_server.thrift_api import hms, hms23

    done: list[str] = []
    pending = [hms, hms23]
    while pending:
        module = pending.pop()
        if module.__name__ in done:
            continue
        writer = _Writer(module)
        (tree / f"{module.__name__}.pyi").write_text(writer.text())
        done.append(module.__name__)
        pending += module.__thrift_meta__["includes"]
    return done
