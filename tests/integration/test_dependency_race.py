"""Dependent-table policies across server processes (docs/dependent-tables.md): two server processes
on one HBase store (the HBase test double, or the real HBase of ``METASTORE_TEST_STORAGE=hbase``),
one dropping base partitions while the other adds dependent partitions on them, round after round.

The base's drop policy is ``refuse``. In each round either the drop is refused (the dependent
partition came first) or both succeed, and then the drop must have come first: its
notification event precedes the dependent partition's. A drop that succeeded after the dependent
partition was written, the race the guard prevents, shows as the add's event first."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import test_storage
from support.our_server import OurServer

from metastore_server.catalog.dependencies.model import BASE_KEY, ON_BASE_DROP_KEY
from metastore_server.thrift_api import hms, make_client

from .conftest import create_db, make_partition, make_table

ROUNDS = 40
DB = "race"


@contextlib.contextmanager
def two_processes_on_hbase(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, first_env: dict[str, str] | None = None
) -> Iterator[tuple[tuple[str, int], tuple[str, int]]]:
    """Two server processes on one HBase store (``first_env``: the first one's environment)."""
    with test_storage.shared_hbase_url() as url:
        monkeypatch.setenv("METASTORE_TEST_STORAGE", "embedded")  # no store of their own
        first = OurServer(tmp_path / "a", env=first_env)
        second = OurServer(tmp_path / "b")
        first.storage = second.storage = url
        with first as a, second as b:
            yield (a.host, a.port), (b.host, b.port)


def race_round(adder: object, dropper: object, day: str) -> dict[str, str]:
    """Add Tdep@ds=day through one process while the other drops T@ds=day/hr=0, started
    together: {"add": "ok", "drop": "ok" | "refused"}."""
    outcome: dict[str, str] = {}
    start = threading.Barrier(2)

    def add() -> None:
        start.wait()
        adder.add_partition(make_partition(DB, "tdep", [day]))  # type: ignore[attr-defined]
        outcome["add"] = "ok"

    def drop() -> None:
        start.wait()
        try:
            dropper.drop_partition(DB, "t", [day, "0"], False)  # type: ignore[attr-defined]
            outcome["drop"] = "ok"
        except hms.MetaException as exc:
            assert "refuse" in exc.message
            outcome["drop"] = "refused"

    threads = [threading.Thread(target=add), threading.Thread(target=drop)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert outcome.get("add") == "ok", outcome
    assert outcome.get("drop") in ("ok", "refused"), outcome
    return outcome


def test_a_base_partition_drop_never_overtakes_a_dependent_add(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with two_processes_on_hbase(tmp_path, monkeypatch) as (a, b):
        adder, dropper = make_client(*a), make_client(*b)
        create_db(adder, DB)
        keys = [("ds", "string"), ("hr", "string")]
        adder.create_table(make_table(DB, "t", keys=keys))
        dependent = make_table(
            DB, "tdep", keys=[("ds", "string")],
            parameters={BASE_KEY: f"{DB}.t", ON_BASE_DROP_KEY: "refuse"},
        )  # fmt: skip
        dependent.sd.cols = []
        adder.create_table(dependent)
        first_event = adder.get_current_notificationEventId().eventId
        outcomes: dict[str, dict[str, str]] = {}
        for day in (str(n) for n in range(ROUNDS)):
            adder.add_partition(make_partition(DB, "t", [day, "0"]))
            outcomes[day] = race_round(adder, dropper, day)

        events = adder.get_next_notification(
            hms.NotificationEventRequest(lastEvent=first_event, maxEvents=10 * ROUNDS)
        ).events
        order: dict[tuple[str, str], int] = {}
        for event in events:
            message = json.loads(event.message)
            if event.eventType == "ADD_PARTITION" and event.tableName == "tdep":
                for partition in message["partitionListJson"]:  # Thrift JSON: field 1, values
                    order[("add", json.loads(partition)["1"]["lst"][2])] = event.eventId
            elif event.eventType == "DROP_PARTITION" and event.tableName == "t":
                for spec in message["partitions"]:
                    order[("drop", spec["ds"])] = event.eventId
        both = [day for day, outcome in outcomes.items() if outcome["drop"] == "ok"]
        overtaken = [day for day in both if order[("drop", day)] > order[("add", day)]]
        assert overtaken == [], f"drops that succeeded after the dependent partition: {overtaken}"
        refused = len(outcomes) - len(both)
        print(f"{len(both)} rounds with the drop first, {refused} with the drop refused")
        adder.close()
        dropper.close()
