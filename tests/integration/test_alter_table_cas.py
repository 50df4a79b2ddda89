"""An alter as a compare-and-set on one table parameter (HMS 4, the lock-free commit of
Iceberg tables through Trino and others): ``expected_parameter_key``/``_value`` in the
environment context. Two committers that read one ``metadata_location`` race to replace it:
exactly one wins, through two connections of one server and through two server processes
on one store (HBase double in the HBase pass)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from metastore_server.thrift_api import hms, make_client

from .conftest import create_db, make_table
from .test_concurrency import two_servers_on_one_store

DB = "ice"
KEY = "metadata_location"
ROUNDS = 8


def _commit_context(expected: str) -> hms.EnvironmentContext:
    return hms.EnvironmentContext(
        properties={"expected_parameter_key": KEY, "expected_parameter_value": expected}
    )


def _commit(client: object, table: str, expected: str, new: str) -> str:
    """Alter ``table``'s metadata location from ``expected`` to ``new``: "won" or "lost"."""
    current = client.get_table(DB, table)  # type: ignore[attr-defined]
    current.parameters = {**current.parameters, KEY: new, "previous_" + KEY: expected}
    try:
        client.alter_table_with_environment_context(  # type: ignore[attr-defined]
            DB, table, current, _commit_context(expected)
        )
    except hms.MetaException as exc:
        assert "The table has been modified" in exc.message
        assert f"'{KEY}'" in exc.message
        return "lost"
    return "won"


def _race(first: object, second: object, table: str, expected: str, round_: int) -> str:
    """Both committers replace ``expected`` at once; the winner's new location."""
    outcome: dict[str, str] = {}
    gate = threading.Barrier(2)

    def run(name: str, client: object) -> None:
        gate.wait()
        outcome[name] = _commit(client, table, expected, f"s3://w/{name}-{round_}.json")

    threads = [
        threading.Thread(target=run, args=(name, c)) for name, c in (("a", first), ("b", second))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(outcome.values()) == ["lost", "won"], outcome
    winner = next(name for name, result in outcome.items() if result == "won")
    return f"s3://w/{winner}-{round_}.json"


def _race_rounds(first: object, second: object, table: str) -> None:
    first.create_table(  # type: ignore[attr-defined]
        make_table(DB, table, tableType="EXTERNAL_TABLE",
                   parameters={"EXTERNAL": "TRUE", KEY: "s3://w/0.json"})
    )  # fmt: skip
    location = "s3://w/0.json"
    for round_ in range(ROUNDS):
        location = _race(first, second, table, location, round_)
        stored = second.get_table(DB, table)  # type: ignore[attr-defined]
        assert stored.parameters[KEY] == location  # the winner's value, nothing lost


def test_one_of_two_committers_wins_over_two_connections(start_server) -> None:
    server = start_server()
    first, second = server.client(), server.client()
    create_db(first, DB)
    _race_rounds(first, second, "t")


def test_one_of_two_committers_wins_across_two_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with two_servers_on_one_store(tmp_path, monkeypatch) as (a, b):
        first, second = make_client(a.host, a.port), make_client(b.host, b.port)
        create_db(first, DB)
        _race_rounds(first, second, "t")


def test_a_stale_expected_value_is_refused_and_changes_nothing(start_server) -> None:
    client = start_server().client()
    create_db(client, DB)
    client.create_table(make_table(DB, "t", parameters={KEY: "A"}))
    stale = client.get_table(DB, "t")
    stale.parameters = {**stale.parameters, KEY: "C", "comment": "x"}
    with pytest.raises(hms.MetaException) as refused:
        client.alter_table_with_environment_context(DB, "t", stale, _commit_context("B"))
    assert "is 'A'. The expected was value was 'B'" in refused.value.message
    assert client.get_table(DB, "t").parameters[KEY] == "A"
    client.alter_table_with_environment_context(DB, "t", stale, _commit_context("A"))
    assert client.get_table(DB, "t").parameters[KEY] == "C"
    request = hms.AlterTableRequest(
        dbName=DB, tableName="t", table=stale, environmentContext=_commit_context("A")
    )
    with pytest.raises(hms.MetaException):
        client.alter_table_req(request)
    request.expectedParameterKey, request.expectedParameterValue = KEY, "C"
    request.table.parameters[KEY] = "D"
    request.environmentContext = None
    assert client.alter_table_req(request) == hms.AlterTableResponse()
    assert client.get_table(DB, "t").parameters[KEY] == "D"
