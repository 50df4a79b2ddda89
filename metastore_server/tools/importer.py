"""Copy databases, tables, partitions and functions from a running Hive Metastore into ours.

Both sides are spoken to over Thrift (any Hive Metastore 2.3+ as the source). Partitions are
listed by name first and fetched with ``get_partitions_by_names`` in bounded batches, each batch
added with ``add_partitions_req(ifNotExists=true)``. What the target already holds is kept: an
existing database, table or function is compared (differences reported, nothing overwritten),
and partitions already present are skipped by name before anything is fetched, so a run that
was interrupted is resumed by running it again. What either side refuses (say the source's
partition request limit) fails that one object, reported with the reason; the import goes on.

Transactional (ACID) tables are not copied: their files are only readable together with the
source's transaction state (open and aborted write ids), which is not part of what is copied.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import structlog
from thriftpy2.thrift import TApplicationException
from thriftpy2.transport import TTransportException

from metastore_server.thrift_api import hms
from metastore_server.tools.import_report import (
    NOT_FOUND,
    ImportReport,
    ObjectResult,
    Progress,
    TableResult,
    VerifyReport,
    columns_of,
    database_differences,
    function_differences,
    is_transactional,
    table_differences,
)

__all__ = [
    "ConnectionLost",
    "Importer",
    "ImportReport",
    "ObjectResult",
    "Progress",
    "Refused",
    "Selection",
    "TableResult",
    "VerifyReport",
]

log = structlog.get_logger("metastore.import")

#: What the metastore answers when it refuses one object (the import goes on with the next).
REFUSALS: tuple[type[BaseException], ...] = (
    hms.MetaException,
    hms.NoSuchObjectException,
    hms.AlreadyExistsException,
    hms.InvalidObjectException,
    hms.InvalidOperationException,
    hms.InvalidInputException,
    hms.UnknownDBException,
    TApplicationException,
)
#: Fields a Hive 3/4 source may fill that are the source's own state, not the object's.
_SOURCE_ONLY_FIELDS = ("privileges", "catName", "catalogName", "colStats")
#: How many examples of one kind of difference are printed per table.
EXAMPLES = 5


class ConnectionLost(Exception):
    """A side of the import cannot be reached any more (or never could)."""

    def __init__(self, side: str, uri: str, cause: BaseException) -> None:
        super().__init__(f"connection to the {side} {uri} failed: {cause}")
        self.side = side
        self.uri = uri


class Refused(Exception):
    """A side of the import refused a call with one of :data:`REFUSALS`."""

    def __init__(self, side: str, method: str, cause: BaseException) -> None:
        self.side = side
        self.method = method
        self.text = refusal_text(cause)
        super().__init__(f"the {side} refused {method}: {self.text}")

    @property
    def reason(self) -> str:
        """The refusal as a report gives it: ``source refused: <message> (<call>)``."""
        return f"{self.side} refused: {self.text} ({self.method})"


class Side:
    """One metastore of the import: its calls raise :class:`ConnectionLost` on transport errors
    and :class:`Refused` on refusals."""

    def __init__(self, name: str, uri: str, client: Any) -> None:
        self.name = name
        self.uri = uri
        self.client = client

    def call(self, method: str, *args: Any, allow: tuple[type[BaseException], ...] = ()) -> Any:
        """``client.method(*args)``; the refusals in ``allow`` are raised as they are."""
        try:
            return getattr(self.client, method)(*args)
        except allow:
            raise
        except REFUSALS as exc:
            raise Refused(self.name, method, exc) from exc
        except (TTransportException, OSError, EOFError) as exc:
            raise ConnectionLost(self.name, self.uri, exc) from exc


def refusal_text(exc: BaseException) -> str:
    """The message of a metastore refusal, with its exception type."""
    message = getattr(exc, "message", None) or str(exc) or repr(exc)
    return f"{type(exc).__name__}: {message}"


def chunks(items: Sequence[str], size: int) -> Iterator[list[str]]:
    """``items`` in consecutive lists of at most ``size``."""
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


# -- what to copy ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Selection:
    """Which databases and tables to copy: ``databases`` whole, plus the ``tables`` named
    (``(db, table)``); everything when both are None."""

    databases: frozenset[str] | None = None
    tables: frozenset[tuple[str, str]] | None = None

    @classmethod
    def of(
        cls, databases: Iterable[str] | None = None, tables: Iterable[tuple[str, str]] | None = None
    ) -> Selection:
        """A selection from names as typed (metastore names are case-insensitive)."""
        return cls(
            None if databases is None else frozenset(d.lower() for d in databases),
            None if tables is None else frozenset((d.lower(), t.lower()) for d, t in tables),
        )

    @property
    def everything(self) -> bool:
        """No filter given."""
        return self.databases is None and self.tables is None

    def whole(self, db: str) -> bool:
        """Whether all of ``db`` (its tables and functions) is copied."""
        return self.everything or (self.databases is not None and db in self.databases)

    def wants_db(self, db: str) -> bool:
        """Whether ``db`` itself is copied (whole or for some of its tables)."""
        return self.whole(db) or any(d == db for d, _ in self.tables or ())

    def named_tables(self, db: str) -> list[str]:
        """The tables of ``db`` named one by one."""
        return sorted(t for d, t in self.tables or () if d == db)


# -- results --------------------------------------------------------------------------------------


# -- the import -----------------------------------------------------------------------------------


def _clean(obj: Any) -> Any:
    """``obj`` without the source's own fields (privileges, catalog, statistics)."""
    for name in _SOURCE_ONLY_FIELDS:
        if getattr(obj, name, None) is not None:
            setattr(obj, name, None)
    return obj


class Importer:
    """Copies from ``source`` to ``target`` (thriftpy2 metastore clients, e.g.
    :class:`~metastore_server.client.MetastoreClient`)."""

    def __init__(
        self,
        source: Any,
        target: Any,
        *,
        source_uri: str = "source",
        target_uri: str = "target",
        selection: Selection | None = None,
        batch_size: int = 1000,
        progress: Progress | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.source = Side("source", source_uri, source)
        self.target = Side("target", target_uri, target)
        self.selection = selection or Selection()
        self.batch_size = batch_size
        # A stream that drops everything: it writes and flushes as a TextIO does.
        self.progress = progress or Progress(_NullStream(), "off")  # type: ignore[arg-type]
        #: What the last :meth:`run` did so far (also when it was interrupted).
        self.report = ImportReport()

    # -- listing --------------------------------------------------------------------------------

    def source_databases(self) -> list[str]:
        """The selected databases of the source, in name order (named ones it lacks included)."""
        names = {name.lower() for name in self.source.call("get_all_databases")}
        wanted = {d for d in names if self.selection.wants_db(d)}
        named = set(self.selection.databases or ()) | {d for d, _ in self.selection.tables or ()}
        return sorted(wanted | named)

    def source_tables(self, db: str, present: bool) -> list[str]:
        """The selected tables of ``db`` on the source (``present``: the database exists)."""
        tables = set(self.selection.named_tables(db))
        if present and self.selection.whole(db):
            tables |= {t.lower() for t in self.source.call("get_all_tables", db)}
        return sorted(tables)

    # -- import ---------------------------------------------------------------------------------

    def run(self) -> ImportReport:
        """Copy everything selected; what either side refuses is reported per object, not
        raised (only a refused listing of the source's databases is)."""
        report = self.report = ImportReport()
        source_dbs = {name.lower() for name in self.source.call("get_all_databases")}
        for db in self.source_databases():
            if db not in source_dbs:
                report.databases.append(
                    ObjectResult("database", db, "skipped", NOT_FOUND)
                )
                continue
            self._copy_database(db)
        report.functions.extend(self._functions(report))
        report.finished = True
        log.info(
            "import_done",
            tables=len(report.tables),
            copied=sum(t.copied for t in report.tables),
            present=sum(t.present for t in report.tables),
            failed=report.failed,
        )
        return report

    def _copy_database(self, db: str) -> None:
        """Copy ``db`` and its selected tables into the report as it goes."""
        try:
            db_result = self._database(db)
        except Refused as exc:
            log.warning("import_database_refused", db=db, error=str(exc))
            db_result = ObjectResult("database", db, "failed", exc.reason)
        self.report.databases.append(db_result)
        try:
            tables = self.source_tables(db, True)
        except Refused as exc:
            tables = self.selection.named_tables(db)
            if db_result.status != "failed":
                db_result.status = "failed"
                db_result.reason = f"its tables could not be listed: {exc.reason}"
        for table in tables:
            if db_result.status == "failed":
                self.report.tables.append(
                    TableResult(db, table, "failed", f"its database: {db_result.reason}")
                )
            else:
                self._table(db, table)

    def _database(self, db: str) -> ObjectResult:
        theirs = self.source.call("get_database", db)
        try:
            ours = self.target.call("get_database", db, allow=(hms.NoSuchObjectException,))
        except hms.NoSuchObjectException:
            ours = None
        if ours is not None:
            return ObjectResult(
                "database", db, "existing", differences=database_differences(ours, theirs)
            )
        try:
            self.target.call("create_database", _clean(theirs))
        except Refused as exc:
            log.warning("import_database_refused", db=db, error=exc.text)
            return ObjectResult("database", db, "failed", exc.text)
        log.info("import_database_created", db=db)
        return ObjectResult("database", db, "created")

    def _table(self, db: str, name: str) -> TableResult:
        """Copy one table and its partitions. Its result is in the report from the start, so an
        interruption shows what was copied; a refusal fails the table, not the import."""
        result = TableResult(db, name, "created")
        self.report.tables.append(result)
        started = time.monotonic()
        try:
            self._copy_table(result)
        except Refused as exc:
            log.warning("import_table_refused", db=db, table=name, error=str(exc))
            result.status = "failed"
            result.reason = exc.reason
        except (ConnectionLost, KeyboardInterrupt):
            result.status = "interrupted"
            raise
        finally:
            result.seconds = time.monotonic() - started
            self.progress.finish(result)
        return result

    def _copy_table(self, result: TableResult) -> None:
        db, name = result.db, result.table
        try:
            theirs = self.source.call("get_table", db, name, allow=(hms.NoSuchObjectException,))
        except hms.NoSuchObjectException:
            result.status = "skipped"
            result.reason = NOT_FOUND
            return
        result.table_type = theirs.tableType or ""
        result.partitioned = bool(theirs.partitionKeys)
        if is_transactional(theirs):
            result.status = "skipped"
            result.reason = (
                "transactional (ACID) table: its files are only readable with the source's "
                "transaction state (write ids), which is not copied"
            )
            return
        try:
            ours = self.target.call("get_table", db, name, allow=(hms.NoSuchObjectException,))
        except hms.NoSuchObjectException:
            ours = None
        if ours is not None:
            result.status = "existing"
            result.differences = table_differences(ours, theirs)
            if columns_of(ours.partitionKeys) != columns_of(theirs.partitionKeys):
                result.reason = "partition keys differ: partitions not copied"
                return
        elif not self._create_table(result, theirs):
            return
        if theirs.partitionKeys:
            self._partitions(result, ours is not None)

    def _create_table(self, result: TableResult, theirs: Any) -> bool:
        """Create the source's table on the target; False (the result failed) when refused."""
        try:
            self.target.call("create_table", _clean(theirs))
        except Refused as exc:
            log.warning("import_table_refused", db=result.db, table=result.table, error=exc.text)
            result.status = "failed"
            result.reason = f"refused by the target: {exc.text}"
            return False
        log.info("import_table_created", db=result.db, table=result.table, type=theirs.tableType)
        return True

    def _partitions(self, result: TableResult, existing: bool) -> None:
        db, name = result.db, result.table
        names = list(self.source.call("get_partition_names", db, name, -1))
        result.source_partitions = len(names)
        present: set[str] = set()
        if existing:
            present = set(self.target.call("get_partition_names", db, name, -1))
        missing = [n for n in names if n not in present]
        result.present = len(names) - len(missing)
        self.progress.start(result.name, len(missing))
        for batch in chunks(missing, self.batch_size):
            parts = list(self.source.call("get_partitions_by_names", db, name, batch))
            result.vanished += len(batch) - len(parts)
            if not parts:
                continue
            request = hms.AddPartitionsRequest(
                dbName=db,
                tblName=name,
                parts=[_clean(p) for p in parts],
                ifNotExists=True,
                needResult=False,
            )
            try:
                self.target.call("add_partitions_req", request)
            except Refused as exc:
                log.warning("import_partitions_refused", db=db, table=name, error=exc.text)
                result.status = "failed"
                result.reason = f"a batch of {len(parts)} partitions refused: {exc.text}"
                return
            result.copied += len(parts)
            self.progress.advance(len(parts))
            log.debug("import_batch", db=db, table=name, partitions=len(parts))

    def _functions(self, report: ImportReport) -> list[ObjectResult]:
        copied_dbs = {d.name for d in report.databases if d.status in ("created", "existing")}
        dbs = {d for d in copied_dbs if self.selection.whole(d)}
        if not dbs:
            return []
        results: list[ObjectResult] = []
        functions = self._source_functions(dbs, results)
        for theirs in sorted(functions, key=lambda f: (f.dbName, f.functionName)):
            db = (theirs.dbName or "").lower()
            if db in dbs:
                results.append(self._function(db, theirs))
        return results

    def _source_functions(self, dbs: set[str], failures: list[ObjectResult]) -> list[Any]:
        """The source's functions (of ``dbs`` at least); what it refuses goes to ``failures``."""
        try:
            return list(self.source.call("get_all_functions").functions or [])
        except Refused:  # an older source (no get_all_functions): ask per database
            pass
        functions = []
        for db in sorted(dbs):
            try:
                names = self.source.call("get_functions", db, "*")
            except Refused as exc:
                failures.append(ObjectResult("function", f"{db}.*", "failed", exc.reason))
                continue
            for fname in names:
                try:
                    functions.append(self.source.call("get_function", db, fname))
                except Refused as exc:
                    label = f"{db}.{fname}"
                    failures.append(ObjectResult("function", label, "failed", exc.reason))
        return functions

    def _function(self, db: str, theirs: Any) -> ObjectResult:
        """Copy one function, or compare it with ours when we have it."""
        label = f"{db}.{theirs.functionName}"
        try:
            ours = self.target.call(
                "get_function",
                db,
                theirs.functionName,
                allow=(hms.NoSuchObjectException, hms.MetaException),
            )
        except (hms.NoSuchObjectException, hms.MetaException):
            ours = None
        if ours is not None:
            differences = function_differences(ours, theirs)
            return ObjectResult("function", label, "existing", differences=differences)
        try:
            self.target.call("create_function", _clean(theirs))
        except Refused as exc:
            return ObjectResult("function", label, "failed", exc.text)
        return ObjectResult("function", label, "created")

    # -- verification ---------------------------------------------------------------------------

    def verify(self, report: ImportReport | None = None) -> VerifyReport:
        """Compare the selected tables on both sides: partition names and each partition's
        location. Tables skipped on purpose (transactional) are left out; a table either side
        refuses to show is reported as differing."""
        verify = VerifyReport()
        skipped = {t.name for t in (report.tables if report else []) if t.status == "skipped"}
        source_dbs = {name.lower() for name in self.source.call("get_all_databases")}
        for db in self.source_databases():
            if db not in source_dbs:
                continue
            try:
                tables = self.source_tables(db, True)
            except Refused as exc:
                verify.add(db, f"its tables could not be listed: {exc.reason}")
                continue
            for name in tables:
                if f"{db}.{name}" in skipped:
                    continue
                try:
                    self._verify_table(verify, db, name)
                except Refused as exc:
                    verify.add(f"{db}.{name}", exc.reason)
        return verify

    def _verify_table(self, verify: VerifyReport, db: str, name: str) -> None:
        label = f"{db}.{name}"
        try:
            theirs = self.source.call("get_table", db, name, allow=(hms.NoSuchObjectException,))
        except hms.NoSuchObjectException:
            return
        if is_transactional(theirs):
            return
        verify.tables_checked += 1
        try:
            ours = self.target.call("get_table", db, name, allow=(hms.NoSuchObjectException,))
        except hms.NoSuchObjectException:
            verify.add(label, "table missing on the target")
            return
        for text in table_differences(ours, theirs):
            verify.add(label, text)
        if theirs.partitionKeys:
            self._verify_partitions(verify, db, name, theirs)

    def _verify_partitions(self, verify: VerifyReport, db: str, name: str, theirs: Any) -> None:
        label = f"{db}.{name}"
        source_names = list(self.source.call("get_partition_names", db, name, -1))
        target_names = set(self.target.call("get_partition_names", db, name, -1))
        missing = [n for n in source_names if n not in target_names]
        extra = sorted(target_names - set(source_names))
        if missing:
            verify.add(
                label, f"{len(missing)} partition(s) missing on the target: " + _examples(missing)
            )
        if extra:
            verify.add(label, f"{len(extra)} partition(s) only on the target: " + _examples(extra))
        common = [n for n in source_names if n in target_names]
        moved: list[str] = []
        for batch in chunks(common, self.batch_size):
            src = _by_values(self.source.call("get_partitions_by_names", db, name, batch))
            dst = _by_values(self.target.call("get_partitions_by_names", db, name, batch))
            verify.partitions_checked += len(batch)
            for values, part in src.items():
                other = dst.get(values)
                if other is None:
                    continue
                if _location(part) != _location(other):
                    moved.append(
                        f"{_part_label(theirs, values)} (ours {_location(other)!r}, "
                        f"source {_location(part)!r})"
                    )
        if moved:
            verify.add(label, f"{len(moved)} partition location(s) differ: " + _examples(moved))


class _NullStream:
    """A stream that drops everything."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return False


def _examples(items: Sequence[str]) -> str:
    shown = ", ".join(items[:EXAMPLES])
    return shown + (f", ... ({len(items) - EXAMPLES} more)" if len(items) > EXAMPLES else "")


def _location(part: Any) -> str | None:
    return part.sd.location if part.sd is not None else None


def _by_values(parts: Iterable[Any]) -> dict[tuple[str, ...], Any]:
    return {tuple(p.values or ()): p for p in parts}


def _part_label(table: Any, values: tuple[str, ...]) -> str:
    """``k1=v1/k2=v2`` of a partition of ``table`` (values unescaped, for reading)."""
    keys = [k.name for k in table.partitionKeys or []]
    return "/".join(f"{k}={v}" for k, v in zip(keys, values, strict=False))
