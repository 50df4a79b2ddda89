"""The Hive Metastore Thrift interface: our IDL loaded with thriftpy2, plus protocol helpers.

``hms`` is the loaded IDL module (structs, enums, exceptions, constants and the
``ThriftHiveMetastore`` service). It is loaded once, at import, under the module name
``hive_metastore_thrift`` so that its structs can be pickled.

thriftpy2 cannot decode a non-empty ``map<list<string>, string>`` (``SkewedInfo.
skewedColValueLocationMaps``): it builds the list key and then fails with ``TypeError:
unhashable type: 'list'``. The protocol factories here decode such keys as tuples. Writing
is unaffected (a tuple key is written as a list), so the fast Cython protocol still does all
writing, and all reading of structs that cannot contain such a map.
"""

from __future__ import annotations

import contextlib
import importlib.resources
import os
import ssl
import tempfile
from collections.abc import Iterator, Sequence
from importlib.resources.abc import Traversable
from pathlib import Path
from types import FunctionType, ModuleType
from typing import TYPE_CHECKING, Any, Protocol, cast

import thriftpy2
from thriftpy2.parser import parser as _parser
from thriftpy2.protocol import binary as _pybin
from thriftpy2.protocol.base import TProtocolFactory
from thriftpy2.protocol.compact import TCompactProtocol, TCompactProtocolFactory
from thriftpy2.rpc import make_client as _thriftpy_make_client
from thriftpy2.thrift import TClient, TException, TPayload, TType
from thriftpy2.transport import TBufferedTransportFactory, TFramedTransportFactory

try:  # the Cython extensions are absent on PyPy and on builds without a compiler
    from thriftpy2.protocol.cybin import TCyBinaryProtocol, TCyBinaryProtocolFactory
    from thriftpy2.transport.cybase import CyTransportBase
except ImportError:  # pragma: no cover - exercised only without the Cython extensions
    TCyBinaryProtocol = None
    TCyBinaryProtocolFactory = None
    CyTransportBase = None

__all__ = [
    "MODULE_NAME",
    "IDL_FILE",
    "IDL_DIR",
    "hms",
    "hms23",
    "fb303",
    "ThriftHiveMetastore",
    "KeyFixingBinaryProtocol",
    "KeyFixingBinaryProtocolFactory",
    "KeyFixingCompactProtocol",
    "KeyFixingCompactProtocolFactory",
    "binary_protocol_factory",
    "compact_protocol_factory",
    "output_binary_protocol_factory",
    "output_compact_protocol_factory",
    "make_client",
    "find_idl_dir",
    "load_idl",
    "load_wire_2_3",
    "needs_key_fix",
    "ErrorClass",
]

MODULE_NAME = "hive_metastore_thrift"
IDL_FILE = "hive_metastore.thrift"
#: The HMS 2.3 layouts that HMS 3/4 changed in place (see that file's header).
WIRE_2_3_FILE = "hive_metastore_2_3_wire.thrift"
WIRE_2_3_MODULE_NAME = "hive_metastore_2_3_wire_thrift"
_IDL_PACKAGE = "metastore_server.idl"


class ErrorClass(Protocol):
    """An exception class of the IDL, made with its message (MetaException, ...)."""

    def __call__(self, *, message: str | None = None) -> TException: ...


# --------------------------------------------------------------------------- loading the IDL
# thriftpy2's ``load`` with a linear lookup of type references.
#
# thriftpy2 (0.7) resolves each type name of an IDL by walking ``dir()`` of the module being
# built, looking for an included file's prefix: one walk of every name defined so far for every
# reference, so our 3,700-line IDL costs each process (every worker, the supervisor, the REST
# catalog's process, every command) about half a second of CPU in that walk alone, half of its
# load. A name can only match the include named by its first dotted part, so that part is looked
# up directly here; the rest of the rule is thriftpy2's (same results, same errors,
# ``tests/unit/test_idl_loading.py`` compares every struct, enum and call of the two loads).
#
# The grammar rule is swapped in while this module loads an IDL, under thriftpy2's own parse
# lock, and put back after; any other thriftpy2 version than the one checked keeps its own rule.

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
    rule = FunctionType(code, function.__globals__, _original.__name__)
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


def _load_thrift(path: str | os.PathLike[str], module_name: str,
         include_dirs: Sequence[str] = ()) -> ModuleType:  # fmt: skip
    """``thriftpy2.load`` of ``path`` as ``module_name``, with the linear reference lookup."""
    with _fast_rule():
        return thriftpy2.load(path, module_name=module_name,
                              include_dirs=list(include_dirs) or None)  # fmt: skip


# --------------------------------------------------------------------------- locating the IDL


def _materialize(resource: Traversable) -> Path:
    """Copy the ``*.thrift`` files of a non-filesystem resource (e.g. a zip) to a temp dir."""
    target = Path(tempfile.mkdtemp(prefix="hms-idl-"))
    for item in resource.iterdir():
        if item.name.endswith(".thrift"):
            (target / item.name).write_bytes(item.read_bytes())
    return target


def find_idl_dir() -> Path:
    """Directory holding ``hive_metastore.thrift`` and ``fb303.thrift``.

    Looks first in the installed package data (``metastore_server.idl``), then in the
    ``thrift/`` directory of a source checkout next to this package.
    """
    try:
        resource = importlib.resources.files(_IDL_PACKAGE)
    except ModuleNotFoundError:
        resource = None
    if resource is not None and resource.joinpath(IDL_FILE).is_file():
        if isinstance(resource, Path):
            return resource
        first = resource.joinpath(IDL_FILE)
        if isinstance(first, Path):  # e.g. a namespace package spread over several dirs
            return first.parent
        return _materialize(resource)
    fallback = Path(__file__).resolve().parent.parent / "thrift"
    if (fallback / IDL_FILE).is_file():
        return fallback
    raise FileNotFoundError(f"{IDL_FILE} not found in package {_IDL_PACKAGE} nor in {fallback}")


def load_idl(idl_dir: Path | None = None, module_name: str = MODULE_NAME) -> ModuleType:
    """Load ``hive_metastore.thrift`` (and its ``fb303.thrift`` include) with thriftpy2."""
    directory = idl_dir if idl_dir is not None else find_idl_dir()
    return _load_thrift(directory / IDL_FILE, module_name, include_dirs=[str(directory)])


def _bind_exceptions(wire: ModuleType, main: ModuleType) -> None:
    """Make the calls of ``wire`` declare ``main``'s exception classes (same names), so that
    an exception raised by the server matches the field that declares it."""
    for cls in vars(wire.HiveMetastore23Wire).values():
        spec = getattr(cls, "thrift_spec", None)
        if not isinstance(spec, dict):
            continue
        for fid, field in list(spec.items()):
            target = field[2] if len(field) == 4 else None
            if isinstance(target, type) and issubclass(target, TException):
                spec[fid] = (field[0], field[1], getattr(main, target.__name__), field[3])


def load_wire_2_3(main: ModuleType, idl_dir: Path | None = None) -> ModuleType:
    """Load ``hive_metastore_2_3_wire.thrift``: the 2.3 layouts HMS 3/4 changed in place."""
    directory = idl_dir if idl_dir is not None else find_idl_dir()
    wire = _load_thrift(directory / WIRE_2_3_FILE, WIRE_2_3_MODULE_NAME)
    _bind_exceptions(wire, main)
    return wire


IDL_DIR: Path = find_idl_dir()
if TYPE_CHECKING:  # stubs of the loaded modules, written by tests/typecheck.py for mypy
    import fb303
    import hive_metastore_2_3_wire_thrift as hms23
    import hive_metastore_thrift as hms
else:
    hms = load_idl(IDL_DIR)
    fb303 = hms.fb303
    #: The HMS 2.3 wire layouts of the few structs and calls HMS 3/4 changed in place.
    hms23 = load_wire_2_3(hms, IDL_DIR)
ThriftHiveMetastore: Any = hms.ThriftHiveMetastore


# --------------------------------------------------------------------------- spec analysis

_BIN_TYPES = (TType.STRING, TType.BINARY)
_LIST_LIKE = (TType.LIST, TType.SET)
_fix_cache: dict[type, bool] = {}


def _split_spec(spec: Any) -> tuple[int, Any]:
    """Split a thriftpy2 element spec into (ttype, nested spec)."""
    if isinstance(spec, int):
        return spec, None
    return spec[0], spec[1]


def _field_parts(field: tuple) -> tuple[int, str, Any]:
    """(ttype, name, nested spec) of a ``thrift_spec`` entry."""
    if len(field) == 3:
        return field[0], field[1], None
    return field[0], field[1], field[2]


def _value_has_list_keys(ttype: int, spec: Any, seen: set[type]) -> bool:
    if ttype == TType.STRUCT:
        return _struct_has_list_keys(spec, seen)
    if ttype in _LIST_LIKE:
        return _value_has_list_keys(*_split_spec(spec), seen)
    if ttype == TType.MAP:
        k_type, k_spec = _split_spec(spec[0])
        if k_type in _LIST_LIKE:
            return True
        return _value_has_list_keys(k_type, k_spec, seen) or _value_has_list_keys(
            *_split_spec(spec[1]), seen
        )
    return False


def _struct_has_list_keys(cls: type[TPayload], seen: set[type]) -> bool:
    if cls in seen:
        return False
    seen.add(cls)
    for field in cls.thrift_spec.values():
        ttype, _, spec = _field_parts(field)
        if _value_has_list_keys(ttype, spec, seen):
            return True
    return False


def needs_key_fix(cls: type[TPayload]) -> bool:
    """Whether instances of struct ``cls`` can contain a map keyed by a list or set."""
    cached = _fix_cache.get(cls)
    if cached is None:
        cached = _fix_cache[cls] = _struct_has_list_keys(cls, set())
    return cached


def _has_struct(ttype: int, spec: Any) -> bool:
    """Whether a value of this type is or contains a struct."""
    if ttype == TType.STRUCT:
        return True
    if ttype in _LIST_LIKE:
        return _has_struct(*_split_spec(spec))
    if ttype == TType.MAP:
        return _has_struct(*_split_spec(spec[0])) or _has_struct(*_split_spec(spec[1]))
    return False


_plan_cache: dict[type, dict[int, tuple[int, str, Any, bool]]] = {}


def _read_plan(cls: type[TPayload]) -> dict[int, tuple[int, str, Any, bool]]:
    """{field id: (ttype, name, spec, plain)}; plain values hold no struct and no list key."""
    plan = _plan_cache.get(cls)
    if plan is None:
        plan = {}
        for fid, field in cls.thrift_spec.items():
            ttype, name, spec = _field_parts(field)
            plain = not _has_struct(ttype, spec) and not _value_has_list_keys(ttype, spec, set())
            plan[fid] = (ttype, name, spec, plain)
        _plan_cache[cls] = plan
    return plan


def _hashable(value: Any) -> Any:
    """A list (or list of lists) as nested tuples, usable as a dict key."""
    if isinstance(value, list):
        return tuple(_hashable(item) for item in value)
    return value


# --------------------------------------------------------------------------- binary protocol


class KeyFixingBinaryProtocol:
    """Binary protocol that decodes list-keyed maps with tuple keys.

    Everything except reading structs that can contain such a map is delegated to thriftpy2's
    Cython protocol (or to its pure-Python one when the transport is not a Cython transport).
    Affected structs are walked field by field in Python; their unaffected sub-structs go back
    to the fast reader.
    """

    def __init__(
        self,
        trans: Any,
        strict_read: bool = True,
        strict_write: bool = True,
        decode_response: bool = True,
        strict_decode: bool = False,
    ) -> None:
        self.trans = trans
        self.decode_response = decode_response
        self.strict_decode = strict_decode
        if TCyBinaryProtocol is not None and isinstance(trans, CyTransportBase):
            self._fast: Any = TCyBinaryProtocol(
                trans, strict_read, strict_write, decode_response, strict_decode
            )
        else:
            self._fast = _pybin.TBinaryProtocol(
                trans, strict_read, strict_write, decode_response, strict_decode
            )

    # messages, writing and skipping: plain delegation
    def read_message_begin(self) -> tuple[str, int, int]:
        """Read a message header: (name, message type, sequence id)."""
        return self._fast.read_message_begin()

    def read_message_end(self) -> None:
        """Finish reading a message."""
        self._fast.read_message_end()

    def write_message_begin(self, name: str, ttype: int, seqid: int) -> None:
        """Write a message header."""
        self._fast.write_message_begin(name, ttype, seqid)

    def write_message_end(self) -> None:
        """Finish writing a message."""
        self._fast.write_message_end()

    def write_struct(self, obj: Any) -> None:
        """Write a struct (tuple map keys are written as lists)."""
        self._fast.write_struct(obj)

    def skip(self, ttype: int) -> None:
        """Skip one value of wire type ``ttype``."""
        self._fast.skip(ttype)

    #: Whether the message being read may hold maps keyed by lists or sets (False: the wire
    #: walker followed it whole and found none, so the Cython decoder reads all of it).
    lists_as_keys = True

    # reading
    def read_struct(self, obj: Any) -> Any:
        """Read the fields of ``obj`` from the transport."""
        cls = type(obj)
        if not self.lists_as_keys or not needs_key_fix(cls):
            self._fast.read_struct(obj)
            return obj
        plan = _read_plan(cls)
        trans = self.trans
        while True:
            f_type, fid = _pybin.read_field_begin(trans)
            if f_type == TType.STOP:
                return obj
            step = plan.get(fid)
            if step is None:
                self.skip(f_type)
                continue
            s_type, name, s_spec, plain = step
            if f_type != s_type and not (f_type in _BIN_TYPES and s_type in _BIN_TYPES):
                self.skip(f_type)
                continue
            if plain:
                value = _pybin.read_val(
                    trans, s_type, s_spec, self.decode_response, self.strict_decode
                )
            else:
                value = self._read_value(s_type, s_spec)
            setattr(obj, name, value)

    def _read_value(self, ttype: int, spec: Any) -> Any:
        if ttype == TType.STRUCT:
            return self.read_struct(spec())
        if ttype in _LIST_LIKE:
            e_type, e_spec = _split_spec(spec)
            w_type, size = _pybin.read_list_begin(self.trans)
            if w_type != e_type and not (w_type in _BIN_TYPES and e_type in _BIN_TYPES):
                for _ in range(size):
                    self.skip(w_type)
                return []
            return [self._read_value(e_type, e_spec) for _ in range(size)]
        if ttype == TType.MAP:
            k_type, k_spec = _split_spec(spec[0])
            v_type, v_spec = _split_spec(spec[1])
            wk_type, wv_type, size = _pybin.read_map_begin(self.trans)
            if wk_type in _BIN_TYPES and k_type in _BIN_TYPES:
                wk_type = k_type
            if wv_type in _BIN_TYPES and v_type in _BIN_TYPES:
                wv_type = v_type
            if wk_type != k_type or wv_type != v_type:
                for _ in range(size):
                    self.skip(wk_type)
                    self.skip(wv_type)
                return {}
            result = {}
            for _ in range(size):
                key = _hashable(self._read_value(k_type, k_spec))
                result[key] = self._read_value(v_type, v_spec)
            return result
        return _pybin.read_val(self.trans, ttype, spec, self.decode_response, self.strict_decode)


class KeyFixingBinaryProtocolFactory:
    """Factory of :class:`KeyFixingBinaryProtocol` (thriftpy2 protocol-factory interface)."""

    def __init__(
        self,
        strict_read: bool = True,
        strict_write: bool = True,
        decode_response: bool = True,
        strict_decode: bool = False,
    ) -> None:
        self.strict_read = strict_read
        self.strict_write = strict_write
        self.decode_response = decode_response
        self.strict_decode = strict_decode

    def get_protocol(self, trans: Any) -> KeyFixingBinaryProtocol:
        """A protocol bound to ``trans``."""
        return KeyFixingBinaryProtocol(
            trans, self.strict_read, self.strict_write, self.decode_response, self.strict_decode
        )


# --------------------------------------------------------------------------- compact protocol


class KeyFixingCompactProtocol(TCompactProtocol):
    """thriftpy2's compact protocol, decoding list-keyed maps with tuple keys."""

    def _read_val(self, ttype: int, spec: Any = None) -> Any:
        if ttype == TType.MAP and _split_spec(spec[0])[0] in _LIST_LIKE:
            return self._read_list_keyed_map(spec)
        return super()._read_val(ttype, spec)

    def _read_list_keyed_map(self, spec: Any) -> dict:
        k_type, k_spec = _split_spec(spec[0])
        v_type, v_spec = _split_spec(spec[1])
        wk_type, wv_type, size = self._read_map_begin()
        if wv_type in _BIN_TYPES and v_type in _BIN_TYPES:
            wv_type = v_type
        result: dict = {}
        if size and (wk_type != k_type or wv_type != v_type):
            for _ in range(size):
                self.skip(wk_type)
                self.skip(wv_type)
        else:
            for _ in range(size):
                key = _hashable(self._read_val(k_type, k_spec))
                result[key] = self._read_val(v_type, v_spec)
        self._read_collection_end()
        return result


class KeyFixingCompactProtocolFactory(TCompactProtocolFactory):
    """Factory of :class:`KeyFixingCompactProtocol`."""

    def get_protocol(self, trans: Any) -> KeyFixingCompactProtocol:
        """A protocol bound to ``trans``."""
        return KeyFixingCompactProtocol(
            trans, decode_response=self.decode_response, strict_decode=self.strict_decode
        )


# --------------------------------------------------------------------------- public factories


def binary_protocol_factory(*, decode_response: bool = True) -> TProtocolFactory:
    """Binary protocol factory for reading (server input, clients); it writes fast too."""
    factory = KeyFixingBinaryProtocolFactory(decode_response=decode_response)
    # A thriftpy2 protocol by delegation (every call it does not fix goes to thriftpy2's).
    return cast(TProtocolFactory, factory)


def compact_protocol_factory(*, decode_response: bool = True) -> KeyFixingCompactProtocolFactory:
    """Compact protocol factory for reading (server input, clients); it writes as well."""
    return KeyFixingCompactProtocolFactory(decode_response=decode_response)


def output_binary_protocol_factory() -> Any:
    """Fastest binary protocol factory, for writing only (server output)."""
    if TCyBinaryProtocolFactory is not None:
        return TCyBinaryProtocolFactory()
    return _pybin.TBinaryProtocolFactory()  # pragma: no cover


def output_compact_protocol_factory() -> TCompactProtocolFactory:
    """Compact protocol factory for writing only (server output)."""
    return TCompactProtocolFactory()


def make_client(
    host: str,
    port: int,
    *,
    framed: bool = False,
    compact: bool = False,
    timeout_ms: int = 30000,
    tls_ca: str | None = None,
) -> TClient:
    """Open a ThriftHiveMetastore client; close it with ``client.close()``.

    ``tls_ca``: a PEM file of the CA certificate(s) to trust; the connection then uses TLS and
    the server's certificate must match ``host``.
    """
    proto = compact_protocol_factory() if compact else binary_protocol_factory()
    trans = TFramedTransportFactory() if framed else TBufferedTransportFactory()
    context = ssl.create_default_context(cafile=tls_ca) if tls_ca else None
    return _thriftpy_make_client(
        ThriftHiveMetastore,
        host,
        port,
        proto_factory=proto,
        trans_factory=trans,
        timeout=timeout_ms,
        ssl_context=context,
    )
