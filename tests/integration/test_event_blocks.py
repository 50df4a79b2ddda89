"""A change's events take consecutive ids at once (``events.log``): with ``blocks`` on HBase
one compare-and-set takes a block, each row's mark saying how many ids of the block remain.
Writers racing from threads and from two logs (two server processes' views of one store) get
every id once, each change's ids consecutive, with no gap."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from metastore_server.storage import layout
from metastore_server.storage.open import open_store
from metastore_server.storage.port import Delete, StoragePort
from support.hbase_double import HBaseDouble, storage_url

from metastore_server.catalog.events.log import NotificationLog
from metastore_server.catalog.events.messages import Event
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import from_bytes


@pytest.fixture(params=["embedded", "hbase-double"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoragePort]:
    if request.param == "embedded":
        opened = open_store(f"sqlite:///{tmp_path / 'm.db'}")
        opened.ensure_tables(layout.TABLE_SPECS)
        yield opened
        opened.close()
        return
    with HBaseDouble() as double:
        opened = open_store(storage_url(*double.address, prefix="ev_"))
        opened.ensure_tables(layout.TABLE_SPECS)
        yield opened
        opened.close()


def _events(writer: int, change: int, count: int) -> list[Event]:
    return [Event("ALTER_PARTITION", "db", f"t{writer}", f"{writer}/{change}/{i}")
            for i in range(count)]  # fmt: skip


@pytest.mark.parametrize("blocks", [True, False])
def test_racing_blocks_get_every_id_once_each_change_consecutive(
    store: StoragePort, blocks: bool
) -> None:
    """(Without blocks, on HBase, a change's events take their ids one at a time: others may
    come between, so only each id's uniqueness and the order within a change hold.)"""
    logs = [NotificationLog(store, lambda: 1_700_000_000, blocks=blocks) for _ in range(2)]
    taken: list[list[int]] = []
    lock = threading.Lock()

    def write(writer: int) -> None:
        log = logs[writer % 2]
        for change in range(12):
            ids = log.record(_events(writer, change, 1 + (writer + change) % 7))
            with lock:
                taken.append(ids)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = sorted(i for ids in taken for i in ids)
    assert every == list(range(1, len(every) + 1))  # each id once, no gap
    for ids in taken:
        if blocks or store.atomic_batches:
            assert ids == list(range(ids[0], ids[0] + len(ids)))
        assert ids == sorted(ids)
    assert logs[0].current_id() == logs[1].current_id() == len(every)
    stored = logs[0].next_stored(0, None)  # as a follower reads them
    messages = [from_bytes(hms.NotificationEvent, data).message for data in stored]
    assert len(messages) == len(every)  # every event row there, in id order
    for ids in taken:  # each change's events in its own order at its ids
        got = [messages[i - 1] for i in ids]
        assert [m.rsplit("/", 1)[1] for m in got] == [str(n) for n in range(len(ids))]


def test_the_newest_row_of_a_block_in_flight_names_the_block_end(store: StoragePort) -> None:
    """Whichever rows of a block have landed, the next id is past the whole block."""
    log = NotificationLog(store, lambda: 1_700_000_000, blocks=True)
    log.record(_events(0, 0, 5))
    if store.atomic_batches:
        assert log.current_id() == 5
        return
    marks = [row[layout.EVENT_MARK] for _, row in store.scan(layout.META, *layout.event_range())]
    assert marks == [b"5", b"4", b"3", b"2", b"1"]
    store.mutate([Delete(layout.META, layout.event_key(n)) for n in (4, 5)])
    fresh = NotificationLog(store, lambda: 1_700_000_000, blocks=True)
    assert fresh.current_id() == 5  # row 3 (mark 3) says the block runs to 5
    assert fresh.record(_events(1, 0, 1)) == [6]

