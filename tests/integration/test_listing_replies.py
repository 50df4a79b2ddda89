"""Names listings answered again from kept replies (``api/listing_replies.py``) are exactly what
a fresh read answers: a kept answer is used only while nothing was committed to the store,
by this server or by another one on the same store, and never on a store without a change
token (HBase)."""

from __future__ import annotations

import pytest
import structlog
from structlog.testing import capture_logs

from metastore_server import audit
from metastore_server.thrift_api import hms

from .conftest import ON_HBASE, audit_lines, create_db, make_partition, make_table


@pytest.fixture(autouse=True)
def fresh_audit_logger(monkeypatch) -> None:
    """A logger that follows the configuration of the moment (see test_audit.py)."""
    monkeypatch.setattr(audit, "_audit", structlog.get_logger("metastore.audit"))


def _listings(client: object) -> tuple[object, ...]:
    """Every kept listing of database ``lr`` and its table ``p``."""
    c: object = client
    return (
        c.get_all_databases(),  # type: ignore[attr-defined]
        c.get_databases("l*"),  # type: ignore[attr-defined]
        c.get_all_tables("lr"),  # type: ignore[attr-defined]
        c.get_tables("lr", "t*"),  # type: ignore[attr-defined]
        c.get_tables_by_type("lr", "*", "EXTERNAL_TABLE"),  # type: ignore[attr-defined]
        c.get_table_meta("lr", "*", []),  # type: ignore[attr-defined]
        c.get_partition_names("lr", "p", -1),  # type: ignore[attr-defined]
    )


def _comment(client: object, db: str, name: str, comment: str) -> None:
    table = client.get_table(db, name)  # type: ignore[attr-defined]
    table.parameters["comment"] = comment
    client.alter_table(db, name, table)  # type: ignore[attr-defined]


def test_a_listing_follows_every_change_made_through_another_server(start_server) -> None:
    first = start_server()
    second = start_server(storage=first.config.storage)  # the same store, its own process state
    reader, writer = first.client(), second.client()
    create_db(writer, "lr")
    writer.create_table(make_table("lr", "p", keys=[("ds", "string")]))
    changes = [
        lambda: writer.create_table(make_table("lr", "t1")),
        lambda: writer.create_table(
            make_table("lr", "t2", tableType="EXTERNAL_TABLE", parameters={"EXTERNAL": "TRUE"})
        ),
        lambda: _comment(writer, "lr", "t1", "c"),
        lambda: writer.add_partitions([make_partition("lr", "p", [f"d{i}"]) for i in range(3)]),
        lambda: create_db(writer, "lz"),
        lambda: writer.drop_partition("lr", "p", ["d1"], True),
        lambda: writer.drop_table("lr", "t2", True),
        lambda: writer.drop_database("lz", True, True),
    ]
    for change in changes:
        before = _listings(reader)
        assert _listings(reader) == before  # asked again: the same answers
        change()
        assert _listings(reader) == _listings(writer)  # the reader sees the change at once
    assert reader.get_all_tables("lr") == ["p", "t1"]
    assert reader.get_partition_names("lr", "p", -1) == ["ds=d0", "ds=d2"]
    assert [m.comments for m in reader.get_table_meta("lr", "t1", [])] == ["c"]
    reader.close()
    writer.close()


def test_a_second_call_on_an_unchanged_store_is_answered_from_the_kept_reply(start_server) -> None:
    server = start_server()
    client = server.client()
    create_db(client, "lk")
    client.create_table(make_table("lk", "a"))
    with capture_logs() as logs:
        first = client.get_all_tables("lk")
        again = client.get_all_tables("lk")
        client.create_table(make_table("lk", "b"))
        after = client.get_all_tables("lk")
        lines = audit_lines(logs, "get_all_tables", 3)
    assert (first, again, after) == (["a"], ["a"], ["a", "b"])
    kept = [line.get("reply_cache") for line in lines]
    assert kept == ([None, None, None] if ON_HBASE else [None, "hit", None])
    assert all(
        line["rows"] == len(answer)
        for line, answer in zip(lines, (first, again, after), strict=True)
    )
    client.close()


def test_errors_are_not_kept(start_server) -> None:
    server = start_server()
    client = server.client()
    with pytest.raises(hms.NoSuchObjectException):
        client.get_partition_names("nowhere", "t", -1)
    create_db(client, "nowhere")
    client.create_table(make_table("nowhere", "t", keys=[("ds", "string")]))
    assert client.get_partition_names("nowhere", "t", -1) == []
    client.close()
