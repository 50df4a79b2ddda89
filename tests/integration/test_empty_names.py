"""Empty and null database and table names, sent to every method of the IDL that takes one (as
an argument or a field of a request, table, partition or key it sends): each call answers, or
refuses with an exception the method declares, in words of ours or HMS's; never an internal
error, a storage message or a Python exception turned into a MetaException. A call that would
create, change or drop something named so must refuse."""

from __future__ import annotations

from typing import Any

import pytest
from thriftpy2.thrift import TApplicationException, TException, TType

from metastore_server.server import processor
from metastore_server.thrift_api import hms

from .conftest import create_db, make_partition, make_table

DB, TABLE = "en_db", "en_t"
#: Argument and field names that hold a database name, and those that hold a table name.
DB_NAMES = frozenset({
    "db_name", "dbName", "dbname", "source_db", "dest_db", "table_db", "fktable_db",
    "pktable_db", "parent_db_name", "foreign_db_name",
})  # fmt: skip
TABLE_NAMES = frozenset({
    "tbl_name", "tableName", "table_name", "tblName", "tablename", "source_table_name",
    "dest_table_name", "base_tbl_name", "orig_tbl_name", "parent_tbl_name", "foreign_tbl_name",
    "fktable_name", "pktable_name",
})  # fmt: skip
#: Methods whose ``name`` argument is a database's, and those where it is a table's.
DB_NAME_METHODS = frozenset({"get_database", "drop_database", "alter_database"})
TABLE_NAME_METHODS = frozenset({"drop_table", "drop_table_with_environment_context"})
WRITES = ("create_", "add_", "alter_", "drop_", "append_", "rename_", "exchange_")
CREATES = ("create_", "add_", "append_")
#: Words of a storage or Python failure that must never reach a client.
INTERNAL_WORDS = (
    "row key", "NoneType", "object has no attribute", "Traceback", "not subscriptable",
)


def _scalar(ttype: int, name: str) -> Any:
    if ttype == TType.STRING:
        return DB if name in DB_NAMES else TABLE if name in TABLE_NAMES else "x"
    if ttype == TType.BOOL:
        return False
    if ttype in (TType.I16,):
        return -1
    if ttype in (TType.BYTE, TType.I32, TType.I64):
        return 1
    if ttype == TType.DOUBLE:
        return 0.0
    return None


def _value(spec: tuple, depth: int) -> Any:
    """A plausible value for one field or argument of a Thrift spec."""
    ttype, name = spec[0], spec[1]
    if ttype == TType.STRUCT:
        return _struct(spec[2], depth + 1) if depth < 2 else None
    if ttype in (TType.LIST, TType.SET):
        element = spec[2]
        if isinstance(element, tuple) and element[0] == TType.STRUCT:
            items = [_struct(element[1], depth + 1)] if depth < 2 else []
        elif isinstance(element, int) and element == TType.STRING:
            items = ["x"]
        else:
            items = []
        return items if ttype == TType.LIST else set(items)
    if ttype == TType.MAP:
        return {}
    return _scalar(ttype, name)


def _struct(cls: type, depth: int) -> Any:
    fields = {spec[1]: _value(spec, depth) for spec in cls.thrift_spec.values()}
    if "type" in fields and cls is hms.FieldSchema:
        fields["type"] = "string"
    return cls(**fields)


def _name_positions(method: str) -> list[tuple[str, str | None]]:
    """(argument, field or None) of each database or table name a method takes."""
    args = getattr(hms.ThriftHiveMetastore, f"{method}_args")
    positions: list[tuple[str, str | None]] = []
    for spec in args.thrift_spec.values():
        name = spec[1]
        if name in DB_NAMES or name in TABLE_NAMES or (
                name == "name" and method in DB_NAME_METHODS | TABLE_NAME_METHODS):  # fmt: skip
            positions.append((name, None))
            continue
        cls = _struct_class(spec)
        if cls is not None:
            positions.extend(
                (name, field[1]) for field in cls.thrift_spec.values()
                if field[1] in DB_NAMES or field[1] in TABLE_NAMES
                or (cls is hms.Database and field[1] == "name")
            )  # fmt: skip
    return positions


def _struct_class(spec: tuple) -> type | None:
    if spec[0] == TType.STRUCT:
        return spec[2]
    if spec[0] == TType.LIST and isinstance(spec[2], tuple) and spec[2][0] == TType.STRUCT:
        return spec[2][1]
    return None


def _arguments(method: str, position: tuple[str, str | None], probe: str | None) -> list[Any]:
    """The method's arguments, plausible, with ``probe`` at ``position``."""
    args = getattr(hms.ThriftHiveMetastore, f"{method}_args")
    values = {spec[1]: _value(spec, 0) for spec in args.thrift_spec.values()}
    if values.get("name") == "x" and method in DB_NAME_METHODS:
        values["name"] = DB
    if values.get("name") == "x" and method in TABLE_NAME_METHODS:
        values["name"] = TABLE
    arg, field = position
    if field is None:
        values[arg] = probe
    else:
        target = values[arg]
        for item in target if isinstance(target, list) else [target]:
            setattr(item, field, probe)
    return [values[spec[1]] for spec in args.thrift_spec.values()]


METHODS = sorted(
    name for name in hms.ThriftHiveMetastore.thrift_services if _name_positions(name)
)
CASES = [
    (method, position, probe)
    for method in METHODS
    for position in _name_positions(method)
    for probe in ("", None)
]


def _declared(method: str) -> list[str]:
    """The exceptions the IDL declares for ``method``."""
    result = getattr(hms.ThriftHiveMetastore, f"{method}_result")
    return [spec[1] for fid, spec in result.thrift_spec.items() if fid != 0]


class _Recorder:
    """Stands in for the server's logger: keeps the errors it would log with a traceback."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.errors: list[dict[str, Any]] = []

    def exception(self, event: str, **fields: Any) -> None:
        self.errors.append({"event": event, **fields})

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


@pytest.fixture(scope="module")
def prepared(running) -> Any:
    """A database with a partitioned table, so that only the probed name is wrong."""
    conn = running.client()
    create_db(conn, DB)
    conn.create_table(make_table(DB, TABLE, keys=[("p", "string")]))
    conn.add_partition(make_partition(DB, TABLE, ["x"]))
    yield running
    conn.close()


def test_every_method_with_names_is_covered() -> None:
    """The probe finds the methods that take names (a guard against a spec change)."""
    for method in ("get_database", "get_table", "get_partitions", "create_table",
                   "get_table_req", "add_partitions", "get_foreign_keys",
                   "drop_function"):  # fmt: skip
        assert method in METHODS
    assert len(METHODS) > 100


@pytest.mark.parametrize(
    ("method", "position", "probe"),
    CASES,
    ids=[f"{m}-{a}.{f or ''}-{'empty' if p == '' else 'null'}" for m, (a, f), p in CASES],
)
def test_an_empty_or_null_name_is_answered_or_refused_as_declared(
    prepared, monkeypatch: pytest.MonkeyPatch, method: str, position: tuple[str, str | None],
    probe: str | None,
) -> None:  # fmt: skip
    recorder = _Recorder(processor.log)
    monkeypatch.setattr(processor, "log", recorder)
    conn = prepared.client()
    try:
        getattr(conn, method)(*_arguments(method, position, probe))
        outcome: Exception | None = None
    except TApplicationException as exc:
        if exc.type == TApplicationException.UNKNOWN_METHOD:
            pytest.skip(f"{method} is not served (tests/integration/unserved_methods.txt)")
        # A method that declares no exception can refuse only so (as HMS does).
        assert not _declared(method), f"{method}: internal error {exc.type}: {exc.message}"
        outcome = exc
    except TException as exc:
        outcome = exc
    finally:
        conn.close()
    assert recorder.errors == [], f"{method} failed inside: {recorder.errors}"
    if outcome is None:
        # A change must refuse a name it acts on: an argument, or the object it creates (a
        # name inside the new definition of an altered object is not where the change goes).
        names_target = position[1] is None or method.startswith(CREATES)
        assert not (method.startswith(WRITES) and names_target), f"{method} took {probe!r}"
        return
    message = str(getattr(outcome, "message", "") or "")
    assert not any(word in message for word in INTERNAL_WORDS), f"{method}: {message}"
