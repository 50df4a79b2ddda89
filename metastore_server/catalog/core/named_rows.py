"""One helper for named objects kept as rows of ``meta`` (catalogs, data connectors and every
stored-only kind of ``registry``) under ``layout.registry_key(kind, name parts)``, the object
encoded in ``c:o`` (Thrift binary by default), plus optional extra columns of the caller's.

Writes are compare-and-set on the object column, so two server processes sharing a store never
both create one name, and a change based on a stale read is refused rather than lost.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Generic, TypeVar

from metastore_server.catalog.basics import names
from metastore_server.storage import layout
from metastore_server.storage.port import Condition, Delete, Put, StoragePort
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import from_bytes, to_bytes

T = TypeVar("T")

#: How many times a compare-and-set change is retried when another change came first.
CAS_TRIES = 16


@dataclass(frozen=True)
class Stored(Generic[T]):
    """One object as read: its name parts, the object, and the row it came from."""

    parts: tuple[str, ...]
    obj: T
    row: Mapping[bytes, bytes]

    @property
    def blob(self) -> bytes:
        """The object's stored bytes (what a compare-and-set on it expects)."""
        return self.row[layout.OBJECT]


class NamedRows(Generic[T]):
    """The objects of one kind on the store."""

    def __init__(
        self,
        store: StoragePort,
        kind: str,
        struct: type[T] | None = None,
        *,
        encode: Callable[[T], bytes] | None = None,
        decode: Callable[[bytes], T] | None = None,
    ) -> None:
        if (encode is None or decode is None) and struct is None:
            raise ValueError("a Thrift struct, or both encode and decode")
        self._store = store
        self.kind = kind
        self._encode = encode or to_bytes
        if decode is None:
            assert struct is not None  # (refused above without one)
            decode = partial(from_bytes, struct)
        self._decode = decode

    def key(self, parts: Sequence[str]) -> bytes:
        """The row key of a name."""
        return layout.registry_key(self.kind, parts)

    def read(self, parts: Sequence[str]) -> Stored[T] | None:
        """The object of that name with its row, or None."""
        row = self._store.get(layout.META, self.key(parts))
        if row is None or layout.OBJECT not in row:
            return None
        return Stored(tuple(parts), self._decode(row[layout.OBJECT]), row)

    def find(self, parts: Sequence[str]) -> T | None:
        """The object of that name, or None."""
        stored = self.read(parts)
        return None if stored is None else stored.obj

    def scan(self, prefix: Sequence[str] = ()) -> Iterator[Stored[T]]:
        """Every object whose name starts with the parts ``prefix``, in key order."""
        start, stop = layout.registry_range(self.kind, prefix)
        for key, row in self._store.scan(layout.META, start, stop):
            if layout.OBJECT in row:
                parts = layout.registry_parts(self.kind, key)
                yield Stored(parts, self._decode(row[layout.OBJECT]), row)

    def put_op(
        self, parts: Sequence[str], obj: T, extra: Mapping[bytes, bytes] | None = None
    ) -> Put:
        """The op writing an object (and extra columns) at its name."""
        return Put(
            layout.META, self.key(parts), {layout.OBJECT: self._encode(obj), **(extra or {})}
        )

    def delete_op(self, parts: Sequence[str], columns: Sequence[bytes] | None = None) -> Delete:
        """The op deleting an object's row (or only some of its columns)."""
        return Delete(layout.META, self.key(parts), columns)

    def guard(self, parts: Sequence[str], blob: bytes | None) -> Condition:
        """The condition that the name holds ``blob`` (None: holds nothing)."""
        return Condition(layout.META, self.key(parts), layout.OBJECT, blob)

    def create(
        self,
        parts: Sequence[str],
        obj: T,
        extra: Mapping[bytes, bytes] | None = None,
        also: Sequence[Put | Delete] = (),
    ) -> bool:
        """Write an object where its name holds none (with ``also``, other rows, in the same
        batch); False when the name is taken."""
        ops = [self.put_op(parts, obj, extra), *also]
        return self._store.mutate(ops, self.guard(parts, None))

    def replace(
        self,
        was: Stored[T],
        obj: T,
        extra: Mapping[bytes, bytes] | None = None,
        also: Sequence[Put | Delete] = (),
    ) -> bool:
        """Overwrite an object read as ``was`` (with ``also``, in the same batch); False when
        it changed or went meanwhile."""
        ops = [self.put_op(was.parts, obj, extra), *also]
        return self._store.mutate(ops, self.guard(was.parts, was.blob))

    def delete(self, was: Stored[T], also: Sequence[Put | Delete] = ()) -> bool:
        """Delete an object read as ``was`` (with ``also``); False when it changed or went."""
        ops = [self.delete_op(was.parts), *also]
        return self._store.mutate(ops, self.guard(was.parts, was.blob))


class SingleNameRows(NamedRows[T]):
    """The objects of one kind each named by one name, lower-cased as HMS keeps names
    (catalogs, data connectors)."""

    def read_name(self, name: str | None) -> Stored[T] | None:
        """The object of that name (normalised) with its row, or None (no name: None)."""
        name = names.normalize(name)
        return self.read([name]) if name else None

    def find_name(self, name: str | None) -> T | None:
        """The object of that name (normalised), or None."""
        stored = self.read_name(name)
        return None if stored is None else stored.obj

    def names(self) -> list[str]:
        """Every object's name, sorted."""
        return sorted(stored.parts[0] for stored in self.scan())

    @staticmethod
    def new_name(name: str | None, label: str) -> str:
        """The normalised name of a new object called ``name``: InvalidObjectException when it
        is empty or not a valid name (``label``: the kind as HMS's messages name it, e.g.
        ``Catalog``)."""
        if not name:
            raise hms.InvalidObjectException(message=f"{label} name cannot be empty")
        normalized = names.normalize(name)
        if not names.is_valid_name(normalized):
            raise hms.InvalidObjectException(message=f"{name} is not a valid {label.lower()} name")
        return normalized
