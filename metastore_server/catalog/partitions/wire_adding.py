"""The add of partitions that came as Thrift binary bytes (``basics.wire_partitions``): each
partition checked and prepared as ``adding.Adding`` prepares a decoded one, its row holding its
bytes as they came with the fields the add sets encoded anew. Anything out of the ordinary (an
error of any partition, a dependent table, a partition without a storage descriptor, one that
exists without ``ifNotExists``, a table changed meanwhile) gives None: the caller then decodes
the partitions and adds them the usual way, which raises HMS's errors in HMS's order."""

from __future__ import annotations

from collections.abc import Sequence

from metastore_server.catalog.basics import names
from metastore_server.catalog.basics.serde import from_bytes
from metastore_server.catalog.basics.wire_partitions import (
    NotFast,
    WirePartition,
    WireSd,
    stored_bytes,
)
from metastore_server.catalog.data.warehouse import Warehouse
from metastore_server.catalog.dependencies.model import DEPENDS_ON_KEY
from metastore_server.catalog.objects.tables import DDL_TIME, TableRef
from metastore_server.catalog.reads.partition_rows import checked_values, new_row_key_named
from metastore_server.thrift_api import hms
from storage import layout


class WireAnswer:
    """One partition of a wire add as prepared: what the add's write, statistics and event
    read (``parameters``, ``sd.location``), and its answer made on demand (``decode``)."""

    __slots__ = ("part", "ref", "key", "name", "values", "create_time", "last_access_time",
                 "parameters", "location", "sd")  # fmt: skip

    def __init__(self, part: WirePartition, ref: TableRef, values: list[str], now: int) -> None:
        self.part, self.ref, self.values = part, ref, values
        self.key, self.name = new_row_key_named(ref, values)
        self.create_time = part.createTime or now
        self.last_access_time = part.lastAccessTime or 0
        params = dict(part.parameters or {})
        if DEPENDS_ON_KEY in params:
            raise NotFast("a partition naming its base")
        params[DDL_TIME] = str(now)
        self.parameters = params
        assert part.sd is not None
        self.location = None  # None: as sent
        if not part.sd.location and ref.location:
            self.location = Warehouse.child_location(ref.location, self.name)
        self.sd = WireSd(self.location or part.sd.location, part.sd.fields)

    def encoded(self, defaults: bool) -> bytes:
        """The stored encoding (``defaults``: with HMS's storage defaults) or the answer's."""
        return stored_bytes(self.part, self.values, self.create_time, self.last_access_time,
                            self.parameters, self.location, defaults=defaults)  # fmt: skip

    def columns(self) -> dict[bytes, bytes]:
        """The partition's row columns."""
        return layout.partition_columns(self.encoded(True), self.name, self.ref.kinds, self.values)

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

    def __getitem__(self, index):  # type: ignore[no-untyped-def,override]
        if isinstance(index, slice):
            return [answer.decode() for answer in self._answers[index]]
        return self._answers[index].decode()


def wire_parts(parts: Sequence[object]) -> bool:
    """Whether the partitions of an add came as wire bytes."""
    return bool(parts) and all(isinstance(part, WirePartition) for part in parts)


def prepared(
    ref: TableRef,
    parts: Sequence[WirePartition],
    target: tuple[str, str],
    now: int,
) -> list[WireAnswer] | None:
    """Each partition checked and prepared as the add stores it (before its statistics are
    counted); None when one is out of the ordinary (see the module)."""
    db, table = target
    answers = []
    try:
        for part in parts:
            if part.sd is None:
                return None
            if (names.normalize(part.dbName) or db, names.normalize(part.tableName) or table) != (
                db,
                table,
            ):
                return None  # (a partition of another table)
            answers.append(WireAnswer(part, ref, checked_values(ref, part.values), now))
    except Exception:  # noqa: BLE001 - the usual add does it again and raises it in order
        return None
    return answers
