"""What an import reports: the result of each database, function and table, the whole run's
report and its verification, the progress shown while it runs, and how an existing object
differs from the source's (see :mod:`metastore_server.tools.importer`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from metastore_server.thrift_api import hms
from metastore_server.tools.progress import ProgressBar, is_terminal


@dataclass
class ObjectResult:
    """What happened to one database or function: created, existing, skipped or failed."""

    kind: str
    name: str
    status: str
    reason: str = ""
    differences: list[str] = field(default_factory=list)


@dataclass
class TableResult:
    """What happened to one table and its partitions."""

    db: str
    table: str
    status: str  # created | existing | skipped | failed | interrupted
    reason: str = ""
    table_type: str = ""
    partitioned: bool = True
    source_partitions: int = 0
    copied: int = 0
    present: int = 0
    vanished: int = 0
    seconds: float = 0.0
    differences: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        """``db.table``."""
        return f"{self.db}.{self.table}"


#: The reason of a named database or table the source does not have.
NOT_FOUND = "not found on the source"


@dataclass
class ImportReport:
    """Everything one import did, in the order it did it."""

    databases: list[ObjectResult] = field(default_factory=list)
    tables: list[TableResult] = field(default_factory=list)
    functions: list[ObjectResult] = field(default_factory=list)
    #: Whether the import ran to its end (False while running or when interrupted).
    finished: bool = False

    @property
    def failed(self) -> bool:
        """Whether something could not be copied (not counting deliberate skips)."""
        objects: list[ObjectResult | TableResult] = [*self.databases, *self.tables, *self.functions]
        return any(o.status == "failed" for o in objects)

    @property
    def not_found(self) -> list[str]:
        """The databases and tables (``db.table``) named for the import that the source lacks."""
        missing = [db.name for db in self.databases if db.reason == NOT_FOUND]
        return missing + [t.name for t in self.tables if t.reason == NOT_FOUND]

    def lines(self) -> list[str]:
        """The report as text lines."""
        out: list[str] = []
        for db in self.databases:
            out.append(_object_line(db))
        if self.tables:
            width = max(len(t.name) for t in self.tables)
            out.append("tables:")
            for t in self.tables:
                out.append(f"  {t.name:<{width}}  {_table_summary(t)}")
                out.extend(f"    differs (kept ours): {d}" for d in t.differences)
        for function in self.functions:
            out.append(_object_line(function))
        copied = sum(t.copied for t in self.tables)
        present = sum(t.present for t in self.tables)
        counts: dict[str, int] = {}
        for t in self.tables:
            counts[t.status] = counts.get(t.status, 0) + 1
        states = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "none"
        out.append(
            f"total: {len(self.tables)} table(s) ({states}); {copied} partition(s) copied, "
            f"{present} skipped as present"
        )
        return out


def _object_line(result: ObjectResult) -> str:
    text = f"{result.kind} {result.name}: {result.status}"
    if result.reason:
        text += f" ({result.reason})"
    if result.differences:
        text += "; differs (kept ours): " + "; ".join(result.differences)
    return text


def _table_summary(t: TableResult) -> str:
    if t.status in ("skipped", "failed") and not t.copied:
        return f"{t.status}: {t.reason}"
    if not t.partitioned:
        kind = "view" if "VIEW" in t.table_type else "not partitioned"
        return f"{t.status} ({kind})"
    text = f"{t.status}; {t.copied} partition(s) copied, {t.present} skipped as present"
    if t.vanished:
        text += f", {t.vanished} gone from the source meanwhile"
    if t.status == "failed":
        text += f"; failed: {t.reason}"
    elif t.reason:
        text += f" ({t.reason})"
    return text


@dataclass
class VerifyReport:
    """Differences between the two sides, per table (``db.table``); empty when equal."""

    tables_checked: int = 0
    partitions_checked: int = 0
    differences: dict[str, list[str]] = field(default_factory=dict)

    def add(self, table: str, text: str) -> None:
        """Record one difference of ``table``."""
        self.differences.setdefault(table, []).append(text)

    def lines(self) -> list[str]:
        """The verification as text lines."""
        out = [
            f"verify: {self.tables_checked} table(s), {self.partitions_checked} partition(s) "
            f"compared; {len(self.differences)} table(s) differ"
        ]
        for table, texts in self.differences.items():
            out.append(f"  {table}:")
            out.extend(f"    {text}" for text in texts)
        return out


# -- progress -------------------------------------------------------------------------------------


class Progress:
    """Progress on ``stream``: mode ``bar`` (a ``ProgressBar`` redrawn in place), ``lines``
    (one line per table) or ``off``."""

    def __init__(
        self, stream: TextIO, mode: str, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.stream = stream
        self.mode = mode
        self._bar = ProgressBar(stream, clock, visible=mode == "bar")

    @property
    def clock(self) -> Callable[[], float]:
        return self._bar.clock

    @clock.setter
    def clock(self, clock: Callable[[], float]) -> None:
        self._bar.clock = clock

    @classmethod
    def for_stream(cls, stream: TextIO, enabled: bool) -> Progress:
        """A bar on a terminal, one line per table elsewhere, nothing when not ``enabled``."""
        if not enabled:
            return cls(stream, "off")
        return cls(stream, "bar" if is_terminal(stream) else "lines")

    def start(self, label: str, total: int) -> None:
        """A table begins, with ``total`` partitions to copy."""
        self._bar.visible = self.mode == "bar" and total > 0
        self._bar.start(label, total)

    def advance(self, count: int) -> None:
        """``count`` more partitions copied."""
        self._bar.advance(count)

    def finish(self, result: TableResult) -> None:
        """The table is done."""
        if self.mode == "off":
            return
        line = f"{result.name}: {_table_summary(result)}"
        if result.copied:
            line += f" in {result.seconds:.1f} s ({self._bar.rate:.0f} partitions/s)"
        if self._bar.visible:
            self._bar.end(line)
        else:
            self.stream.write(line + "\n")
            self.stream.flush()


def is_transactional(table: Any) -> bool:
    """Whether the table is a transactional (ACID or insert-only) table."""
    params = table.parameters or {}
    return str(params.get("transactional", "")).strip().lower() == "true"


def columns_of(cols: Any) -> list[tuple[str, str]]:
    """(name, type) of each column."""
    return [(c.name, c.type) for c in cols or []]


def table_differences(ours: Any, theirs: Any) -> list[str]:
    """How our existing table differs from the source's, in what matters to readers."""
    sd_o, sd_t = ours.sd or hms.StorageDescriptor(), theirs.sd or hms.StorageDescriptor()
    serde_o = sd_o.serdeInfo.serializationLib if sd_o.serdeInfo else None
    serde_t = sd_t.serdeInfo.serializationLib if sd_t.serdeInfo else None
    pairs = [
        ("tableType", ours.tableType, theirs.tableType),
        ("partitionKeys", columns_of(ours.partitionKeys), columns_of(theirs.partitionKeys)),
        ("columns", columns_of(sd_o.cols), columns_of(sd_t.cols)),
        ("location", sd_o.location, sd_t.location),
        ("inputFormat", sd_o.inputFormat, sd_t.inputFormat),
        ("outputFormat", sd_o.outputFormat, sd_t.outputFormat),
        ("serde", serde_o, serde_t),
        ("viewOriginalText", ours.viewOriginalText, theirs.viewOriginalText),
    ]
    return [f"{name}: ours {o!r}, source {t!r}" for name, o, t in pairs if o != t]


def database_differences(ours: Any, theirs: Any) -> list[str]:
    """How our existing database differs from the source's (not the location of ``default``,
    which is each metastore's own warehouse)."""
    pairs = [
        ("description", ours.description or "", theirs.description or ""),
        ("locationUri", ours.locationUri, theirs.locationUri),
        ("parameters", dict(ours.parameters or {}), dict(theirs.parameters or {})),
    ]
    if (ours.name or "").lower() == "default":
        pairs = [pair for pair in pairs if pair[0] != "locationUri"]
    return [f"{name}: ours {o!r}, source {t!r}" for name, o, t in pairs if o != t]


def function_differences(ours: Any, theirs: Any) -> list[str]:
    """How our existing function differs from the source's."""

    def resources(f: Any) -> list[tuple[Any, str]]:
        return [(r.resourceType, r.uri) for r in f.resourceUris or []]

    pairs = [
        ("className", ours.className, theirs.className),
        ("functionType", ours.functionType, theirs.functionType),
        ("resourceUris", resources(ours), resources(theirs)),
    ]
    return [f"{name}: ours {o!r}, source {t!r}" for name, o, t in pairs if o != t]
