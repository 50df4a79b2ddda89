"""Partition names sorted in bounded memory.

A table's names are answered sorted by name, which is not the order its rows are read in (an
``int`` key orders 2 before 10; names order ``hr=10`` before ``hr=2``), so every name is read
before the first goes out. Up to :data:`RUN_NAMES` names this is a sort in memory. Past it, the
names read so far are sorted and written to a temporary file (a *run*), and the reply is the
runs merged as it is written: the server holds one run's names while reading, and a block of
each run while answering, whatever the table's size (a table of 10,000,000 partitions holds
some 2 GB of names in memory otherwise). The files are deleted as soon as they are closed
(unnamed temporary files, in ``TMPDIR``).
"""

from __future__ import annotations

import heapq
import struct
import tempfile
from collections.abc import Iterable, Iterator
from typing import IO

from metastore_server.catalog.basics.encoded import EncodedNames
from storage.row_scan import length_prefixed

#: Names sorted in memory before they go to a run on disk.
RUN_NAMES = 1_000_000
#: Bytes read from a run at a time while merging.
_READ_BLOCK = 1 << 20
#: Names written to the wire per block of a merged reply.
_WRITE_NAMES = 65_536


class NameSorter:
    """Collects names and answers them sorted, in memory or through runs on disk."""

    def __init__(self, run_names: int | None = None) -> None:
        self._run_names = run_names if run_names is not None else RUN_NAMES
        self._names: list[bytes] = []
        self._runs: list[IO[bytes]] = []
        self._count = 0
        self._body_size = 0

    def add(self, names: Iterable[bytes]) -> None:
        """Take more names (in any order)."""
        self._names.extend(names)
        if len(self._names) >= self._run_names:
            self._spill()

    def _spill(self) -> None:
        self._names.sort()
        body = length_prefixed(self._names)
        run = tempfile.TemporaryFile(prefix="metastore-names-")  # noqa: SIM115 - kept open
        run.write(body)
        run.seek(0)
        self._runs.append(run)
        self._count += len(self._names)
        self._body_size += len(body)
        self._names = []

    def sorted(self, limit: int | None) -> EncodedNames:
        """The names sorted, the first ``limit`` of them (all when None)."""
        if not self._runs:
            self._names.sort()
            if limit is not None:
                del self._names[limit:]
            return EncodedNames(self._names)
        if self._names:
            self._spill()
        merged = MergedNames(self._runs, self._count, self._body_size)
        self._runs = []
        return merged if limit is None else merged.first(limit)


class MergedNames(EncodedNames):
    """Sorted names answered from runs on disk, merged as the reply is written (once)."""

    def __init__(self, runs: list[IO[bytes]], count: int, body_size: int) -> None:
        super().__init__([])
        object.__setattr__(self, "count", count)
        object.__setattr__(self, "runs", runs)
        object.__setattr__(self, "size", body_size)

    count: int
    runs: list[IO[bytes]]
    size: int
    replayable = False

    def __len__(self) -> int:
        return self.count

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

    def merged(self) -> Iterator[bytes]:
        """Every name in order; the runs are closed (and so deleted) at the end."""
        try:
            yield from heapq.merge(*(_read_run(run) for run in self.runs))
        finally:
            self.close()

    def first(self, limit: int) -> EncodedNames:
        """The first ``limit`` names (held in memory), or all of them as they are."""
        if limit >= self.count:
            return self
        first = []
        merged = self.merged()
        for name in merged:
            if len(first) == limit:
                break
            first.append(name)
        merged.close()  # type: ignore[attr-defined]  # a generator: its runs close
        return EncodedNames(first)

    def close(self) -> None:
        """Delete the runs."""
        for run in self.runs:
            run.close()


def _read_run(run: IO[bytes]) -> Iterator[bytes]:
    """The names of a run, read a block at a time."""
    unpack = struct.Struct("!I").unpack_from
    rest = b""
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
            yield data[pos + 4 : pos + 4 + size]
            pos += 4 + size
        rest = data[pos:]
