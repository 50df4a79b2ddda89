"""Partition listings sorted in bounded memory.

A table's partitions and names are answered sorted by name, which is not the order its rows
are read in (an ``int`` key orders 2 before 10; names order ``hr=10`` before ``hr=2``), so
every row is read before the first goes out. Up to a run's worth (:data:`RUN_NAMES` names, or
:data:`RUN_BYTES` of stored partitions) this is a sort in memory. Past it, what was read so far
is sorted and written to a temporary file (a *run*), and the reply is the runs merged as it is
written: the server holds one run while reading, and a block of each run while answering,
whatever the table's size (a table of 10,000,000 partitions holds some 2 GB of names, or 6 GB
of partitions, in memory otherwise). The files are deleted as soon as they are closed (unnamed
temporary files, in ``TMPDIR``).
"""

from __future__ import annotations

import heapq
import struct
import tempfile
from collections.abc import Generator, Iterator, Sequence
from typing import IO, cast

from metastore_server.storage.row_scan import length_prefixed
from metastore_server.thrift_api import hms
from metastore_server.wire.encoded import EncodedNames, EncodedPartitions

#: Names sorted in memory before they go to a run on disk.
RUN_NAMES = 1_000_000
#: Bytes of stored partitions (with their names) sorted in memory before they go to a run.
RUN_BYTES = 128 * 1024 * 1024
#: Bytes read from a run at a time while merging.
_READ_BLOCK = 1 << 20
#: Names written to the wire per block of a merged reply.
_WRITE_NAMES = 65_536


class _Runs:
    """Sorted runs on disk: each a file of length-prefixed fields, ``fields`` a record."""

    def __init__(self, fields: int) -> None:
        self.fields = fields
        self.files: list[IO[bytes]] = []
        self.count = 0

    def write(self, body: bytes, count: int) -> None:
        run = tempfile.TemporaryFile(prefix="metastore-listing-")  # noqa: SIM115 - kept open
        run.write(body)
        run.seek(0)
        self.files.append(run)
        self.count += count

    def merged(self) -> Generator[bytes | tuple[bytes, ...], None, None]:
        """Every record in order (a name, or a tuple of the fields); the runs are closed
        (and so deleted) at the end."""
        try:
            yield from heapq.merge(*(_read_run(run, self.fields) for run in self.files))
        finally:
            self.close()

    def close(self) -> None:
        """Delete the runs."""
        for run in self.files:
            run.close()


class NameSorter:
    """Collects names and answers them sorted, in memory or through runs on disk."""

    def __init__(self, run_names: int | None = None) -> None:
        self._run_names = run_names if run_names is not None else RUN_NAMES
        self._names: list[bytes] = []
        self._runs = _Runs(1)
        self._body_size = 0

    def add(self, names: Sequence[bytes]) -> None:
        """Take more names (in any order); those held go to a run first when these would
        make more than a run (all of a table that fits one are sorted in memory)."""
        if self._names and len(self._names) + len(names) > self._run_names:
            self._spill()
        self._names.extend(names)

    def _spill(self) -> None:
        self._names.sort()
        body = length_prefixed(self._names)
        self._runs.write(body, len(self._names))
        self._body_size += len(body)
        self._names = []

    def sorted(self, limit: int | None) -> EncodedNames:
        """The names sorted, the first ``limit`` of them (all when None)."""
        if not self._runs.files:
            self._names.sort()
            if limit is not None:
                del self._names[limit:]
            return EncodedNames(self._names)
        if self._names:
            self._spill()
        merged = MergedNames(self._runs, self._body_size)
        return merged if limit is None else merged.first(limit)


class _FromRuns:
    """An answer held in runs on disk (``runs``) of ``size`` bytes: as long as the runs'
    records, and written once (the runs are deleted as they are merged)."""

    replayable = False
    runs: _Runs
    size: int

    def _attach(self, runs: _Runs, size: int) -> None:
        object.__setattr__(self, "runs", runs)  # (the answers are frozen dataclasses)
        object.__setattr__(self, "size", size)

    def __len__(self) -> int:
        return self.runs.count


class MergedNames(_FromRuns, EncodedNames):
    """Sorted names answered from runs on disk, merged as the reply is written (once)."""

    def __init__(self, runs: _Runs, body_size: int) -> None:
        super().__init__([])
        self._attach(runs, body_size)

    def body(self) -> bytes:
        """The whole body at once (only for a caller that needs it so: the wire takes
        ``body_chunks``)."""
        return b"".join(self.body_chunks())

    def body_size(self) -> int:
        return self.size

    def body_chunks(self) -> Iterator[bytes]:
        """The body in blocks, merged from the runs as they are taken."""
        block: list[bytes] = []
        for name in self.merged():
            block.append(name)
            if len(block) == _WRITE_NAMES:
                yield length_prefixed(block)
                block = []
        if block:
            yield length_prefixed(block)

    def decode(self) -> list[str]:
        return [name.decode("utf-8") for name in self.merged()]

    def merged(self) -> Generator[bytes, None, None]:
        """Every name in order (once: the runs are deleted at the end)."""
        # Runs of names alone (no fields).
        return cast(Generator[bytes, None, None], self.runs.merged())

    def first(self, limit: int) -> EncodedNames:
        """The first ``limit`` names (held in memory), or all of them as they are."""
        if limit >= len(self):
            return self
        merged = self.merged()
        first = [name for _, name in zip(range(limit), merged, strict=False)]
        merged.close()  # its runs close
        return EncodedNames(first)


class PartitionSorter:
    """Collects (name, stored partition) pairs and answers the partitions sorted by name, in
    memory or through runs on disk."""

    def __init__(self, run_bytes: int | None = None) -> None:
        self._run_bytes = run_bytes if run_bytes is not None else RUN_BYTES
        self._named: list[tuple[bytes, bytes]] = []
        self._held = 0
        self._runs = _Runs(2)
        self._blob_bytes = 0

    def __len__(self) -> int:
        return self._runs.count + len(self._named)

    def add(self, named: Sequence[tuple[bytes, bytes]]) -> None:
        """Take more (name, stored partition) pairs (in any order); those held go to a run
        first when these would make more than a run."""
        size = sum(len(name) + len(blob) + 100 for name, blob in named)
        if self._named and self._held + size > self._run_bytes:
            self._spill()
        self._named.extend(named)
        self._held += size

    def _spill(self) -> None:
        self._named.sort()
        fields = [field for pair in self._named for field in pair]
        self._runs.write(length_prefixed(fields), len(self._named))
        self._blob_bytes += sum(len(blob) for _, blob in self._named)
        self._named, self._held = [], 0

    def close(self) -> None:
        """Delete the runs written so far (a listing given up)."""
        self._runs.close()

    def sorted(self, db: str, table: str, limit: int | None) -> EncodedPartitions:
        """The partitions sorted by name, the first ``limit`` of them (all when None)."""
        if not self._runs.files:
            self._named.sort()
            if limit is not None:
                del self._named[limit:]
            return EncodedPartitions(db, table, [blob for _, blob in self._named])
        if self._named:
            self._spill()
        merged = MergedPartitions(db, table, self._runs, self._blob_bytes)
        if limit is None or limit >= len(merged):
            return merged
        # Runs of (name, stored partition) records.
        records = cast(Generator[tuple[bytes, bytes], None, None], merged.runs.merged())
        first = [pair[1] for _, pair in zip(range(limit), records, strict=False)]
        records.close()  # its runs close
        return EncodedPartitions(db, table, first)


class MergedPartitions(_FromRuns, EncodedPartitions):
    """Stored partitions answered from runs on disk in name order, merged as the reply is
    written (once)."""

    def __init__(self, db: str, table: str, runs: _Runs, blob_bytes: int) -> None:
        super().__init__(db, table, [])
        self._attach(runs, blob_bytes)

    def blobs_size(self) -> int:
        return self.size

    def blob_chunks(self, size: int) -> Iterator[Sequence[bytes]]:
        """The stored partitions in name order, ``size`` at a time."""
        block: list[bytes] = []
        # Runs of (name, stored partition) records.
        for _name, blob in cast(Iterator[tuple[bytes, bytes]], self.runs.merged()):
            block.append(blob)
            if len(block) == size:
                yield block
                block = []
        if block:
            yield block

    def decode(self) -> list[hms.Partition]:
        """The partitions as objects (all held: protocols other than binary)."""
        blobs = [blob for chunk in self.blob_chunks(4096) for blob in chunk]
        return EncodedPartitions(self.db, self.table, blobs).decode()


def _read_run(run: IO[bytes], fields: int) -> Iterator[bytes | tuple[bytes, ...]]:
    """The records of a run (a name, or a tuple of ``fields`` fields), a block at a time."""
    unpack = struct.Struct("!I").unpack_from
    rest = b""
    record: list[bytes] = []
    while True:
        block = run.read(_READ_BLOCK)
        if not block:
            return
        data = rest + block if rest else block
        pos, end = 0, len(data)
        while pos + 4 <= end:
            (size,) = unpack(data, pos)
            if pos + 4 + size > end:
                break
            field = data[pos + 4 : pos + 4 + size]
            pos += 4 + size
            if fields == 1:
                yield field
                continue
            record.append(field)
            if len(record) == fields:
                yield tuple(record)
                record = []
        rest = data[pos:]
