"""Changes are announced once to the listeners registered at start (``basics.changes``): a
listener added to a catalog hears every database, table, function and partition change in the
order they were made, with the objects before and after; a write that fails announces nothing,
and a listener that wraps partition writes sees the write's failure."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from metastore_server.storage.embedded import SqliteStore

from metastore_server.catalog.basics import changes
from metastore_server.catalog.basics.changes import Change, PartitionChange
from metastore_server.catalog.data.warehouse import Warehouse
from metastore_server.catalog.facade import Catalog
from metastore_server.thrift_api import hms


class Recorder:
    """Hears every change; wraps every partition write."""

    def __init__(self) -> None:
        self.heard: list[Change] = []
        self.wrapped: list[tuple[str, str]] = []

    def changed(self, change: Change) -> None:
        self.heard.append(change)

    @contextmanager
    def around(self, change: PartitionChange) -> Iterator[None]:
        try:
            yield
        except BaseException as exc:
            self.wrapped.append((change.action, f"failed: {type(exc).__name__}"))
            raise
        self.wrapped.append((change.action, "written"))

    def kinds(self) -> list[tuple[str, str]]:
        return [(c.kind, c.action) for c in self.heard]


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[Catalog]:
    catalog = Catalog(SqliteStore(str(tmp_path / "m.db")), Warehouse(tmp_path / "wh"))
    yield catalog
    catalog.close()


def _table(db: str, name: str) -> hms.Table:
    key = hms.FieldSchema(name="ds", type="string")
    sd = hms.StorageDescriptor(cols=[hms.FieldSchema(name="v", type="int")], parameters={})
    return hms.Table(dbName=db, tableName=name, sd=sd, partitionKeys=[key], parameters={})


def test_a_listener_hears_every_change_in_order(catalog: Catalog) -> None:
    recorder = Recorder()
    catalog.ctx.changes.register(recorder)
    catalog.ctx.changes.register_around(recorder)

    catalog.databases.create(hms.Database(name="c", parameters={}))
    catalog.tables.create(_table("c", "t"))
    catalog.partitions.add("c", "t", [hms.Partition(values=["a"], parameters={}),
                                      hms.Partition(values=["b"], parameters={})])  # fmt: skip
    catalog.partitions.alter("c", "t", [hms.Partition(values=["a"], parameters={"k": "v"})])
    catalog.partitions.rename("c", "t", ["b"], hms.Partition(values=["c"], parameters={}))
    catalog.partitions.drop("c", "t", ["a"], False)
    function = hms.Function(functionName="f", dbName="c", className="x.F", ownerName="me",
                            ownerType=hms.PrincipalType.USER, functionType=1, resourceUris=[])
    catalog.functions.create(function)
    catalog.functions.drop("c", "f")
    catalog.drop_table("c", "t", False)
    catalog.drop_database("c", False, False)

    assert recorder.kinds() == [
        (changes.DATABASE, changes.CREATE),
        (changes.TABLE, changes.CREATE),
        (changes.PARTITION, changes.ADD),
        (changes.PARTITION, changes.ALTER),
        (changes.PARTITION, changes.RENAME),
        (changes.PARTITION, changes.DROP),
        (changes.FUNCTION, changes.CREATE),
        (changes.FUNCTION, changes.DROP),
        (changes.TABLE, changes.DROP),
        (changes.DATABASE, changes.DROP),
    ]
    assert recorder.wrapped == [(a, "written") for a in ("add", "alter", "rename", "drop")]
    added, altered, renamed, dropped = recorder.heard[2:6]
    assert isinstance(added, PartitionChange)
    assert [list(values) for values, _ in added.added] == [["a"], ["b"]]
    assert len(added.stored) == 2
    assert [p.parameters.get("k") for p in altered.after] == ["v"]
    assert altered.names(altered.removed) == ["ds=a"]
    assert (renamed.names(renamed.removed), renamed.names(renamed.added)) == (["ds=b"], ["ds=c"])
    assert [p.values for p in dropped.before] == [["a"]]
    table_drop = recorder.heard[8]
    assert table_drop.before.tableName == "t" and table_drop.table_id is not None


def test_a_failed_write_announces_nothing(catalog: Catalog) -> None:
    catalog.databases.create(hms.Database(name="c", parameters={}))
    catalog.tables.create(_table("c", "t"))
    catalog.partitions.add("c", "t", [hms.Partition(values=["a"], parameters={})])
    recorder = Recorder()
    catalog.ctx.changes.register(recorder)
    catalog.ctx.changes.register_around(recorder)

    with pytest.raises(hms.AlreadyExistsException):
        catalog.partitions.add("c", "t", [hms.Partition(values=["a"], parameters={})])
    with pytest.raises(hms.AlreadyExistsException):
        catalog.tables.create(_table("c", "t"))
    with pytest.raises(hms.NoSuchObjectException):
        catalog.partitions.drop("c", "t", ["zz"], False)

    assert recorder.heard == []


def test_a_wrapping_listener_sees_the_write_fail() -> None:
    announcer = changes.Announcer()
    recorder = Recorder()
    announcer.register_around(recorder)
    announcer.register(recorder)
    change = PartitionChange(changes.PARTITION, changes.DROP)

    with pytest.raises(RuntimeError), announcer.writing(change):
        raise RuntimeError("the store failed")
    assert recorder.wrapped == [("drop", "failed: RuntimeError")]
    assert recorder.heard == []

    with announcer.writing(change):
        pass
    assert recorder.wrapped[-1] == ("drop", "written")
    assert recorder.heard == [change]


def test_when_dropped_forgets_only_drops_of_its_kind() -> None:
    forgotten: list[object] = []
    listener = changes.WhenDropped(changes.TABLE, forgotten.append)
    listener.changed(Change(changes.TABLE, changes.CREATE, after=object(), table_id=1))
    listener.changed(Change(changes.DATABASE, changes.DROP, before=hms.Database(name="d")))
    listener.changed(Change(changes.TABLE, changes.DROP, before=object(), table_id=7))
    assert forgotten == [7]
    by_name = changes.WhenDropped(changes.DATABASE, forgotten.append)
    by_name.changed(Change(changes.DATABASE, changes.DROP, before=hms.Database(name="d")))
    assert forgotten == [7, "d"]
