"""The decode budget of a request: the structs thriftpy2 builds while decoding one message are
charged to its connection's meter (each struct class's ``__init__`` is wrapped once, at
start-up, by ``install_decode_metering``), and a message that decodes to more than
``DECODE_RATIO`` bytes of objects per byte received (past ``DECODE_FLOOR``) is refused with
``DecodeLimitExceeded``. See :mod:`metastore_server.server.transport_limits` (the socket that
owns each meter) and ``docs/operations.md`` ("Bounded decoding")."""

from __future__ import annotations

import functools
import linecache
import threading
from collections.abc import Callable
from typing import Any

from thriftpy2.thrift import TPayload, TType
from thriftpy2.transport import TTransportException

#: Bytes of decoded structs (and compact containers) allowed per byte of the message.
DECODE_RATIO = 16
#: Bytes of decoded structs every message may reach whatever its size.
DECODE_FLOOR = 1024 * 1024
#: Charge of one list, set or map decoded by the (pure-Python) compact protocol.
CONTAINER_COST = 64
#: Charge of one struct: CPython 3.11 measures 72 bytes plus 8 per field for an empty one.
_STRUCT_BASE_COST = 80
_FIELD_COST = 8


class DecodeLimitExceeded(TTransportException):
    """A request decodes to more objects than its size allows."""

    def __init__(self, spent: int, received: int, ratio: int) -> None:
        self.spent = spent
        self.received = received
        self.ratio = ratio
        super().__init__(
            TTransportException.UNKNOWN,
            f"request decodes to more than {ratio} bytes of objects per byte sent "
            f"({spent} bytes of structs from {received} bytes)",
        )


class _Active(threading.local):
    meter: DecodeMeter | None = None


_active = _Active()


class DecodeMeter:
    """The decode budget of the message being read on one connection.

    ``received`` tells how many bytes of the message the decoder may have read so far."""

    __slots__ = ("spent", "ratio", "floor", "_allowance", "_received", "_previous")

    def __init__(
        self, received: Callable[[], int], ratio: int = DECODE_RATIO, floor: int = DECODE_FLOOR
    ) -> None:
        self.ratio = ratio
        self.floor = floor
        self._received = received
        self.spent = 0
        self._allowance = floor
        self._previous: DecodeMeter | None = None

    def reset(self) -> None:
        """A new message begins."""
        self.spent = 0
        self._allowance = self.floor

    def charge(self, cost: int) -> None:
        """Add ``cost`` bytes; raises DecodeLimitExceeded past the budget."""
        self.spent += cost
        if self.spent > self._allowance:
            received = self._received()
            self._allowance = self.ratio * received + self.floor
            if self.spent > self._allowance:
                raise DecodeLimitExceeded(self.spent, received, self.ratio)

    def active(self) -> DecodeMeter:
        """Charge the structs built in this thread to this meter: ``with meter.active():``
        (the meter is its own context manager, entered on every call: no generator)."""
        return self

    def __enter__(self) -> DecodeMeter:
        self._previous = _active.meter
        _active.meter = self
        return self

    def __exit__(self, *_exc: object) -> None:
        _active.meter, self._previous = self._previous, None


def charge(cost: int) -> None:
    """Charge ``cost`` bytes to the meter active in this thread, if any."""
    meter = _active.meter
    if meter is not None:
        meter.charge(cost)


_metered: set[type] = set()
_metering_lock = threading.Lock()


def install_decode_metering(service: Any) -> None:
    """Make every struct a request to ``service`` can hold charge the active meter when built.

    Idempotent. Outside a decode (no meter active in the thread) a struct costs one more Python
    call to build and nothing else."""
    with _metering_lock:
        for cls in _request_structs(service):
            if cls not in _metered:
                _meter_init(cls)
                _metered.add(cls)


def _request_structs(service: Any) -> set[type]:
    """The struct classes reachable from the arguments of every method of ``service``."""
    found: set[type] = set()
    pending = [getattr(service, name + "_args") for name in service.thrift_services]
    while pending:
        for field in pending.pop().thrift_spec.values():
            _collect(field[0], field[2] if len(field) > 3 else None, found, pending)
    return found


def _collect(ttype: int, spec: Any, found: set[type], pending: list[type]) -> None:
    if ttype == TType.STRUCT:
        if spec not in found:
            found.add(spec)
            pending.append(spec)
    elif ttype in (TType.LIST, TType.SET):
        _collect(*_element(spec), found, pending)
    elif ttype == TType.MAP:
        _collect(*_element(spec[0]), found, pending)
        _collect(*_element(spec[1]), found, pending)


def _element(spec: Any) -> tuple[int, Any]:
    return (spec, None) if isinstance(spec, int) else (spec[0], spec[1])


def _meter_init(cls: type[TPayload]) -> None:
    """Make each instance of ``cls`` charge its empty size when built.

    thriftpy2 generates ``__init__(self, f1=default, ...)`` assigning each field; that one is
    generated again with the charge in front (no extra call: a struct's build cost only grows by
    a thread-local lookup). Any other ``__init__`` is wrapped."""
    original = cls.__init__
    cost = _STRUCT_BASE_COST + _FIELD_COST * len(cls.thrift_spec)
    code = getattr(original, "__code__", None)
    if code is not None and code.co_filename.startswith("<generated "):
        fields = code.co_varnames[1 : code.co_argcount]
        plain = all(name.isidentifier() and not name.startswith("_hms_") for name in fields)
        if plain and not code.co_kwonlyargcount:
            # The generated constructor, made again with the charge in front.
            metered = _metered_init(cls, fields, original.__defaults__, cost, original)
            cls.__init__ = metered  # type: ignore[method-assign]
            return

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        meter = _active.meter
        if meter is not None:
            meter.charge(cost)
        original(self, *args, **kwargs)

    cls.__init__ = __init__  # type: ignore[method-assign]  # wrapped with the charge


def _metered_init(
    cls: type[TPayload],
    fields: tuple[str, ...],
    defaults: tuple[Any, ...] | None,
    cost: int,
    original: Callable[..., None],
) -> Callable[..., None]:
    """``__init__(self, <fields>)`` charging ``cost`` to the active meter, then assigning each
    field as thriftpy2's does (same defaults, same objects)."""
    lines = [
        f"def __init__(self, {', '.join(fields)}):",
        "    _hms_meter = _hms_active.meter",
        "    if _hms_meter is not None:",
        f"        _hms_meter.charge({cost})",
        *(f"    self.{name} = {name}" for name in fields),
    ]
    source = "\n".join(lines) + "\n"
    filename = f"<metered {cls.__name__}.__init__>"
    namespace: dict[str, Any] = {"_hms_active": _active}
    exec(compile(source, filename, "exec"), namespace)  # our own source, built just above
    function = namespace["__init__"]
    function.__defaults__ = defaults
    function.__qualname__ = f"{cls.__qualname__}.__init__"
    function.__wrapped__ = original
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return function
