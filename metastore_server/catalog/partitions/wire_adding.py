"""The add of partitions that came as Thrift binary bytes (``wire.partitions``): each
partition checked and prepared as ``adding.Adding`` prepares a decoded one, its row holding its
bytes as they came with the fields the add sets encoded anew. Anything out of the ordinary (an
error of any partition, a dependent table, a partition without a storage descriptor, one that
exists without ``ifNotExists``, a table changed meanwhile) gives None: the caller then decodes
the partitions and adds them the usual way, which raises HMS's errors in HMS's order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeGuard, overload

from metastore_server.catalog.basics import names
from metastore_server.catalog.data.warehouse import Warehouse
from metastore_server.catalog.dependencies.model import DEPENDS_ON_KEY
from metastore_server.catalog.objects.tables import DDL_TIME, TableRef
from metastore_server.catalog.reads.partition_rows import (
    DERIVED_KEY_ROOM,
    checked_values,
    new_row_key_named,
)
from metastore_server.planner.types import DEFAULT_PARTITION_NAME
from metastore_server.storage import layout
from metastore_server.storage.codec import encode_id, order_part
from metastore_server.storage.port import MAX_ROW_KEY
from metastore_server.thrift_api import hms
from metastore_server.wire.partitions import (
    NotFast,
    WirePartition,
    WireSd,
    stored_bytes,
)
from metastore_server.wire.serde import from_bytes


class _Keyed:
    """The row keys, names and value columns of one add's partitions, as ``new_row_key_named``
    and ``layout.partition_columns`` make them, each distinct value's pieces made once (an add
    repeats a few values of each key)."""

    def __init__(self, ref: TableRef, now: int) -> None:
        self._ref = ref
        #: The partitions' ``transient_lastDdlTime``.
        self.ddl_time = str(now)
        self._prefix = encode_id(ref.table_id)
        self._kinds = ref.kinds
        self._names = [names.escape_path_name(key.lower()) + "=" for key in ref.key_names]
        self._columns = [layout.value_column(index) for index in range(len(self._kinds))]
        #: Per key: value -> (order part, form or b"", value column, name piece).
        self._memo: list[dict[str, tuple[bytes, bytes, bytes, str]]] = [{} for _ in self._kinds]
        #: Whether a key made holds a non-canonical spelling (``codec.has_spelling``).
        self.spelled = False

    def of(self, values: list[str]) -> tuple[bytes, str, dict[bytes, bytes]]:
        """The row key, the name, and the value columns of the partition with ``values``
        (checked: one per key); MetaException as ``new_row_key_named`` raises it."""
        parts, forms, pieces = [], [], []
        columns: dict[bytes, bytes] = {}
        for index, value in enumerate(values):
            memo = self._memo[index]
            made = memo.get(value)
            if made is None:
                made = memo[value] = self._made(index, value)
            parts.append(made[0])
            forms.append(made[1])
            columns[self._columns[index]] = made[2]
            pieces.append(made[3])
        key = self._prefix + b"".join(parts)
        suffix = b"".join(forms)
        if suffix:
            key += suffix
            self.spelled = self.spelled or any(suffix)
        name = "/".join(pieces)
        longest = max(len(key), len(name) if name.isascii() else len(name.encode()))
        if longest > MAX_ROW_KEY - DERIVED_KEY_ROOM:
            new_row_key_named(self._ref, values)  # raises the error
        return key, name, columns

    def _made(self, index: int, value: str) -> tuple[bytes, bytes, bytes, str]:
        part, form = order_part(self._kinds[index], value)
        shown = names.escape_path_name(value if value else DEFAULT_PARTITION_NAME)
        column = part if form is None else part + form
        return part, form or b"", column, self._names[index] + shown


class WireAnswer:
    """One partition of a wire add as prepared: what the add's write, statistics and event
    read (``parameters``, ``sd.location``), and its answer made on demand (``decode``)."""

    __slots__ = ("part", "ref", "key", "name", "values", "create_time", "last_access_time",
                 "parameters", "location", "value_columns", "_sd")  # fmt: skip

    def __init__(
        self, part: WirePartition, ref: TableRef, values: list[str], now: int, keyed: _Keyed
    ) -> None:
        self.part, self.ref, self.values = part, ref, values
        self.key, self.name, self.value_columns = keyed.of(values)
        self.create_time = part.createTime or now
        self.last_access_time = part.lastAccessTime or 0
        params = dict(part.parameters or {})
        if DEPENDS_ON_KEY in params:
            raise NotFast("a partition naming its base")
        params[DDL_TIME] = keyed.ddl_time
        self.parameters = params
        assert part.sd is not None
        self.location = None  # None: as sent
        if not part.sd.location and ref.location:
            self.location = Warehouse.child_location(ref.location, self.name)
        self._sd: WireSd | None = None

    @property
    def sd(self) -> WireSd:
        """The storage descriptor as added (its location is read), made when first read."""
        if self._sd is None:
            assert self.part.sd is not None
            self._sd = WireSd(self.location or self.part.sd.location)
        return self._sd

    def encoded(self, defaults: bool) -> bytes:
        """The stored encoding (``defaults``: with HMS's storage defaults) or the answer's."""
        return stored_bytes(self.part, self.values, self.create_time, self.last_access_time,
                            self.parameters, self.location, defaults=defaults)  # fmt: skip

    def columns(self) -> dict[bytes, bytes]:
        """The partition's row columns."""
        columns = {layout.OBJECT: self.encoded(True), layout.NAME: self.name.encode("utf-8")}
        columns.update(self.value_columns)
        return columns

    def decode(self) -> hms.Partition:
        """The partition as the add answers it."""
        answer = from_bytes(hms.Partition, self.encoded(False))
        answer.dbName, answer.tableName = self.ref.db, self.ref.name
        return answer


class AddedWire(Sequence[hms.Partition]):
    """The partitions a wire add added, decoded only when read (``needResult``)."""

    def __init__(self, answers: list[WireAnswer]) -> None:
        self._answers = answers

    def __len__(self) -> int:
        return len(self._answers)

    @overload
    def __getitem__(self, index: int) -> hms.Partition: ...
    @overload
    def __getitem__(self, index: slice) -> list[hms.Partition]: ...
    def __getitem__(self, index: int | slice) -> hms.Partition | list[hms.Partition]:
        if isinstance(index, slice):
            return [answer.decode() for answer in self._answers[index]]
        return self._answers[index].decode()


def wire_parts(parts: Sequence[object]) -> TypeGuard[Sequence[WirePartition]]:
    """Whether the partitions of an add came as wire bytes."""
    return bool(parts) and all(isinstance(part, WirePartition) for part in parts)


def prepared(
    ref: TableRef,
    parts: Sequence[WirePartition],
    target: tuple[str, str],
    now: int,
) -> tuple[list[WireAnswer], bool] | None:
    """Each partition checked and prepared as the add stores it (before its statistics are
    counted), and whether a row key holds a non-canonical spelling of a typed value
    (``codec.has_spelling``); None when one is out of the ordinary (see the module)."""
    db, table = target
    answers = []
    keyed = _Keyed(ref, now)
    named = set()  # (database, table) as sent, found to name the target
    try:
        for part in parts:
            if part.sd is None:
                return None
            sent = (part.dbName, part.tableName)
            if sent not in named:
                if (names.normalize(sent[0]) or db, names.normalize(sent[1]) or table) != target:
                    return None  # (a partition of another table)
                named.add(sent)
            answers.append(WireAnswer(part, ref, checked_values(ref, part.values), now, keyed))
    except Exception:  # noqa: BLE001 - the usual add does it again and raises it in order
        return None
    return answers, keyed.spelled
