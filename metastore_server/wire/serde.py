"""Thrift binary encoding of catalog objects, as stored in rows and sent on the wire."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, TypeVar

from thriftpy2.protocol import TCyBinaryProtocolFactory
from thriftpy2.thrift import TPayload, TType
from thriftpy2.utils import deserialize, serialize

from metastore_server import thrift_api

T = TypeVar("T")

_FAST = TCyBinaryProtocolFactory()


def to_bytes(obj: object) -> bytes:
    """Thrift binary encoding of a struct."""
    return serialize(obj, _FAST)


def shallow_copy(obj: T) -> T:
    """A new struct holding the same field values (six times faster than ``copy.copy``)."""
    copied = obj.__class__.__new__(obj.__class__)
    copied.__dict__.update(obj.__dict__)
    return copied


def deep_copy(obj: T) -> T:
    """A copy of a struct sharing nothing mutable with it (structs, lists, sets and maps copied
    down to their strings and numbers), as ``copy.deepcopy`` makes it, five times faster."""
    copied: T = _copied(obj)
    return copied


def _copied(value: Any) -> Any:
    kind = type(value)
    if kind in _ATOMS or value is None:
        return value
    if kind is list:
        return [_copied(item) for item in value]
    if kind is dict:
        return {_copied(k): _copied(v) for k, v in value.items()}
    if isinstance(value, TPayload):
        copied = value.__class__.__new__(value.__class__)
        copied.__dict__.update({name: _copied(v) for name, v in value.__dict__.items()})
        return copied
    return copy.deepcopy(value)


_ATOMS = frozenset({str, int, bool, float, bytes})


def stored_partition_bytes(partition: thrift_api.hms.Partition) -> bytes:
    """A partition's stored encoding: without its database and table names, which the table
    row holds (a rename rewrites no partition) and readers put back."""
    bare = shallow_copy(partition)
    bare.dbName = bare.tableName = bare.catName = None
    return to_bytes(bare)


def from_bytes(cls: type[T], data: bytes) -> T:
    """Decode a struct of type ``cls``.

    The fast protocol cannot decode maps keyed by lists (skewed-column locations); such rows are
    decoded again with the protocol that can.
    """
    try:
        decoded: T = deserialize(cls(), data, _FAST)
    except TypeError:
        decoded = deserialize(cls(), data, thrift_api.binary_protocol_factory())
    return decoded


def from_bytes_into(make: Callable[[], T], data: bytes) -> T:
    """Decode a struct into one ``make`` gives (fields the encoding leaves out keep its
    values), as :func:`from_bytes`."""
    try:
        decoded: T = deserialize(make(), data, _FAST)
    except TypeError:
        decoded = deserialize(make(), data, thrift_api.binary_protocol_factory())
    return decoded


class _StorageLocation(TPayload):
    """StorageDescriptor's ``location`` (field 2) alone: the decoder skips the rest."""

    thrift_spec = {2: (TType.STRING, "location", False)}
    default_spec = [("location", None)]


class _PartitionLocation(TPayload):
    """Partition's ``sd`` (field 6) alone, holding its location."""

    thrift_spec = {6: (TType.STRUCT, "sd", _StorageLocation, False)}
    default_spec = [("sd", None)]


def partition_location(data: bytes) -> str | None:
    """The location in a stored partition encoding, without decoding the rest of it (a table
    drop reads every partition's location)."""
    try:
        found = deserialize(_PartitionLocation(), data, _FAST)
    except TypeError:
        return from_bytes(thrift_api.hms.Partition, data).sd.location
    return found.sd.location if found.sd is not None else None
