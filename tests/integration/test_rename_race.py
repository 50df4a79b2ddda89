"""A partition rename creates a row: on HBase it takes the table's adding claim as an add does,
so a rename and an add of the same new partition in two server processes never both succeed
(the later one would overwrite what the other acknowledged)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from metastore_server.thrift_api import hms, make_client

from .conftest import create_db, make_partition, make_table
from .test_dependency_race import two_processes_on_hbase

ROUNDS = 5
DB = "renrace"
SLOW_RENAME_SITE = Path(__file__).resolve().parents[1] / "support" / "slow_rename_site"


def race_round(
    renamer: object, adder: object, day: str, checked: Path, elsewhere: Path
) -> list[str]:
    """Rename ds=old-<day> to ds=<day> through one process and, once the rename has checked
    that ds=<day> is absent (``checked`` appears), add ds=<day> through the other: the calls
    that succeeded."""
    won: list[str] = []
    checked.unlink(missing_ok=True)

    def rename() -> None:
        try:
            renamer.rename_partition(  # type: ignore[attr-defined]
                DB, "t", [f"old-{day}"], make_partition(DB, "t", [day])
            )
            won.append("rename")
        except hms.InvalidOperationException as exc:
            assert "already exists" in exc.message

    def add() -> None:
        deadline = time.monotonic() + 30
        while not checked.exists():  # the rename has looked, and pauses (SLOW_RENAME_SITE)
            assert time.monotonic() < deadline, "the rename never got to its check"
            time.sleep(0.005)
        try:
            # Its directory elsewhere: the rename's directory move must not be what stops it.
            added = make_partition(DB, "t", [day], f"file:{elsewhere / day}")
            adder.add_partition(added)  # type: ignore[attr-defined]
            won.append("add")
        except hms.AlreadyExistsException:
            pass

    threads = [threading.Thread(target=rename), threading.Thread(target=add)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return won


def test_a_rename_and_an_add_of_one_partition_never_both_succeed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The renaming process pauses between its check and its write: the add always overlaps.
    checked = tmp_path / "rename-checked"
    slow = {"PYTHONPATH": str(SLOW_RENAME_SITE), "METASTORE_TEST_RENAME_CHECKED": str(checked)}
    with two_processes_on_hbase(tmp_path, monkeypatch, slow) as (a, b):
        renamer, adder = make_client(*a), make_client(*b)
        create_db(renamer, DB)
        renamer.create_table(make_table(DB, "t", keys=[("ds", "string")]))
        winners: dict[str, list[str]] = {}
        for day in (str(n) for n in range(ROUNDS)):
            renamer.add_partition(make_partition(DB, "t", [f"old-{day}"]))
            winners[day] = race_round(renamer, adder, day, checked, tmp_path / "elsewhere")
        both = [day for day, won in winners.items() if len(won) != 1]
        assert both == [], f"rounds where not exactly one of the two succeeded: {both}"
        # What each winner acknowledged is there: the old partition only where the add won.
        expected = {f"ds={day}" for day in winners} | {
            f"ds=old-{day}" for day, won in winners.items() if won == ["add"]
        }
        assert sorted(renamer.get_partition_names(DB, "t", -1)) == sorted(expected)
        renamer.close()
        adder.close()
