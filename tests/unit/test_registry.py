"""The stored-only objects' helpers: the Quartz cron subset (``registry.cron``) and the one
row helper every kind uses (``core.named_rows``)."""

from __future__ import annotations

import calendar
from pathlib import Path

import pytest
from metastore_server.storage import layout
from metastore_server.storage.embedded import SqliteStore

from metastore_server.catalog.core.named_rows import NamedRows
from metastore_server.catalog.registry import cron
from metastore_server.thrift_api import hms

#: Tuesday 2023-11-14 22:13:20 UTC.
NOW = 1_700_000_000


def at(text: str) -> int:
    """Epoch seconds of a UTC time written ``YYYY-MM-DD HH:MM:SS``."""
    return calendar.timegm(tuple(int(x) for x in text.replace("-", " ").replace(":", " ").split()))


@pytest.mark.parametrize(
    ("schedule", "expected"),
    [
        ("* * * * * ?", "2023-11-14 22:13:21"),
        ("0 */10 * * * ? *", "2023-11-14 22:20:00"),
        ("0 0 0 * * ?", "2023-11-15 00:00:00"),
        ("15,45 5-7 9 ? * MON-FRI", "2023-11-15 09:05:15"),
        ("0 0 12 ? * 1", "2023-11-19 12:00:00"),  # 1 is Sunday
        ("0 0 12 ? * SUN", "2023-11-19 12:00:00"),
        ("0 0 0 29 FEB ?", "2024-02-29 00:00:00"),
        ("0 0 0 1 1/3 ? 2025", "2025-01-01 00:00:00"),
        ("30 20/20 22 14 NOV ?", "2023-11-14 22:20:30"),
    ],
)
def test_next_fire_time(schedule: str, expected: str) -> None:
    assert cron.parse(schedule).next_after(NOW) == at(expected)


def test_next_fire_time_is_strictly_after() -> None:
    assert cron.parse("0 0 0 * * ?").next_after(at("2024-01-01 00:00:00")) == at(
        "2024-01-02 00:00:00"
    )


def test_no_fire_time_left() -> None:
    assert cron.parse("0 0 0 1 1 ? 1999").next_after(NOW) is None


@pytest.mark.parametrize(
    "schedule",
    [
        None,
        "* * * * *",  # five fields
        "* * * * * ? * *",  # eight
        "* * * * * *",  # no '?'
        "* * * ? * ?",  # two
        "0 0 0 L * ?",
        "0 0 0 15W * ?",
        "0 0 0 ? * 6#3",
        "0 0 0 ? * FRI-MON",
        "60 * * * * ?",
        "0 0 0 32 * ?",
        "0 0 0 * 0 ?",
        "*/0 * * * * ?",
        "x * * * * ?",
    ],
)
def test_refused_syntax(schedule: str | None) -> None:
    with pytest.raises(cron.CronError):
        cron.parse(schedule)


def test_named_rows_create_replace_delete_and_scan(tmp_path: Path) -> None:
    store = SqliteStore(str(tmp_path / "s.db"))
    store.ensure_tables(layout.TABLE_SPECS)
    rows = NamedRows(store, "kind", hms.Package)
    other = NamedRows(store, "kind2", hms.Package)
    package = hms.Package(catName="hive", dbName="db", packageName="p", body="x")
    assert rows.create(("db", "p"), package)
    assert not rows.create(("db", "p"), package)  # the name is taken
    assert other.create(("db", "p"), package)  # another kind: another name space
    assert rows.create(("db2", "q"), package, extra={b"c:x": b"1"})
    assert rows.create(("db", "p2"), package)
    assert [s.parts for s in rows.scan()] == [("db", "p"), ("db", "p2"), ("db2", "q")]
    assert [s.parts for s in rows.scan(("db",))] == [("db", "p"), ("db", "p2")]
    assert rows.read(("db2", "q")).row[b"c:x"] == b"1"
    was = rows.read(("db", "p"))
    changed = hms.Package(catName="hive", dbName="db", packageName="p", body="y")
    assert rows.replace(was, changed)
    assert not rows.replace(was, package)  # stale: it changed meanwhile
    assert rows.find(("db", "p")).body == "y"
    assert not rows.delete(was)
    assert rows.delete(rows.read(("db", "p")))
    assert rows.find(("db", "p")) is None
    assert other.find(("db", "p")) == package
    store.close()
