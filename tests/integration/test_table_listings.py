"""The table listings read from the rows' keys and index column (type, comment) and the answers
passed through as stored bytes (``catalog/objects/table_index.py``) answer exactly what the
tables' definitions say: after creates, alters of type and comment, renames and drops, for rows
written before the index column existed, for patterns with ``|`` and ``*`` in any case, on
every transport and protocol, for HMS 2.3 clients (no catalog names) and HMS 3+ ones."""

from __future__ import annotations

from pathlib import Path

import pytest
from metastore_server.storage import layout
from metastore_server.storage.open import open_store
from metastore_server.storage.port import Delete

from metastore_server.catalog.basics import names
from metastore_server.thrift_api import hms, make_client

from .conftest import RunningServer, create_db, make_table

DB = "lst"
TYPES = ("MANAGED_TABLE", "EXTERNAL_TABLE", "VIRTUAL_VIEW", "MATERIALIZED_VIEW")
PATTERNS = ["*", "t_*", "T_*|V*", "*_a*", "sales|Tmp_s*", "x*", "", "t_a", "T_A|t_z", "*s*"]


def _make(client: object, name: str, table_type: str, comment: str | None) -> None:
    params = {"comment": comment} if comment is not None else {}
    if table_type == "EXTERNAL_TABLE":
        params["EXTERNAL"] = "TRUE"
    table = make_table(DB, name, tableType=table_type, parameters=params)
    if table_type in ("VIRTUAL_VIEW", "MATERIALIZED_VIEW"):
        table.viewOriginalText = table.viewExpandedText = "select 1"
    client.create_table(table)  # type: ignore[attr-defined]


def _definitions(client: object) -> dict[str, hms.Table]:
    """Every table of the database by name, read one by one (what listings must agree with)."""
    listed = client.get_all_tables(DB)  # type: ignore[attr-defined]
    assert listed == sorted(listed)
    return {name: client.get_table(DB, name) for name in listed}  # type: ignore[attr-defined]


def _check_listings(client: object, tables: dict[str, hms.Table], catalog: str | None) -> None:
    """Every listing of the database against the definitions in ``tables``."""
    ordered = sorted(tables)
    assert client.get_all_tables(DB) == ordered  # type: ignore[attr-defined]
    for pattern in PATTERNS:
        regex = names.pattern_to_regex(pattern)
        wanted = [name for name in ordered if regex.fullmatch(name)]
        assert client.get_tables(DB, pattern) == wanted, pattern  # type: ignore[attr-defined]
        metas = client.get_table_meta(DB, pattern, [])  # type: ignore[attr-defined]
        if not pattern:  # no table pattern: every table, as in HMS
            wanted = ordered
        assert metas == [_meta(tables[name], catalog) for name in wanted], pattern
    for table_type in TYPES:
        of_type = [name for name in ordered if tables[name].tableType == table_type]
        assert client.get_tables_by_type(DB, "*", table_type) == of_type  # type: ignore[attr-defined]
        metas = client.get_table_meta(DB, "*", [table_type.lower()])  # type: ignore[attr-defined]
        assert metas == [_meta(tables[name], catalog) for name in of_type]
    asked = [*reversed(ordered), "missing", *(name.upper() for name in ordered)]
    got = client.get_table_objects_by_name(DB, asked)  # type: ignore[attr-defined]
    assert got == [_cataloged(tables[name], catalog) for name in reversed(ordered)]
    result = client.get_table_objects_by_name_req(hms.GetTablesRequest(dbName=DB))  # type: ignore[attr-defined]
    assert result.tables == [_cataloged(tables[name], catalog) for name in ordered]


def _meta(table: hms.Table, catalog: str | None) -> hms.TableMeta:
    return hms.TableMeta(dbName=table.dbName, tableName=table.tableName,
                         tableType=table.tableType or "",
                         comments=(table.parameters or {}).get("comment"),
                         catName=catalog)  # fmt: skip


def _cataloged(table: hms.Table, catalog: str | None) -> hms.Table:
    table.catName = catalog
    return table


@pytest.fixture()
def server(tmp_path: Path) -> RunningServer:
    running = RunningServer(tmp_path)
    yield running
    running.stop()


def _fill(client: object) -> None:
    create_db(client, DB)
    _make(client, "t_a", "EXTERNAL_TABLE", "first")
    _make(client, "T_B", "MANAGED_TABLE", None)
    _make(client, "v_c", "VIRTUAL_VIEW", "a view")
    _make(client, "mv_d", "MATERIALIZED_VIEW", "")
    _make(client, "sales", "MANAGED_TABLE", "ünïcode comment")
    _make(client, "tmp_s1", "EXTERNAL_TABLE", None)
    # a comment longer than the head the embedded store keeps of a row (read from the row)
    _make(client, "t_long", "VIRTUAL_VIEW", "a long comment " * 40)


def test_listings_follow_creates_alters_renames_and_drops(server: RunningServer) -> None:
    client = server.client()
    _fill(client)
    tables = _definitions(client)
    assert set(tables) == {"t_a", "t_b", "v_c", "mv_d", "sales", "tmp_s1", "t_long"}
    _check_listings(client, tables, None)

    changed = tables["t_a"]
    changed.parameters = {**changed.parameters, "comment": "changed"}
    changed.parameters.pop("EXTERNAL")
    changed.tableType = "MANAGED_TABLE"
    client.alter_table(DB, "t_a", changed)
    dropped_comment = tables["sales"]
    dropped_comment.parameters.pop("comment")
    client.alter_table(DB, "sales", dropped_comment)
    renamed = tables["t_b"]
    renamed.tableName = "t_z"
    client.alter_table(DB, "t_b", renamed)
    client.drop_table(DB, "v_c", True)
    after = _definitions(client)
    assert after["t_a"].tableType == "MANAGED_TABLE"
    assert after["t_a"].parameters["comment"] == "changed"
    assert "comment" not in after["sales"].parameters
    assert set(after) == {"t_a", "t_z", "mv_d", "sales", "tmp_s1", "t_long"}
    _check_listings(client, after, None)
    client.close()


def test_rows_written_before_the_index_column_are_listed_from_their_definitions(
    server: RunningServer,
) -> None:
    client = server.client()
    _fill(client)
    tables = _definitions(client)
    store = open_store(server.config.storage)
    try:
        keys = [layout.table_key(DB, name) for name in ("t_a", "v_c", "sales")]
        store.mutate([Delete(layout.TABLES, key, [layout.TABLE_META]) for key in keys])
        assert all(layout.TABLE_META not in store.get(layout.TABLES, key) for key in keys)
        _check_listings(client, tables, None)
        # the next alter writes the index column again
        client.alter_table(DB, "sales", tables["sales"])
        assert layout.TABLE_META in store.get(layout.TABLES, keys[2])
        _check_listings(client, _definitions(client), None)
    finally:
        store.close()
    client.close()


def test_database_rows_written_before_the_catalog_column_are_listed_from_the_database(
    server: RunningServer,
) -> None:
    client = server.client()
    client.create_catalog(
        hms.CreateCatalogRequest(catalog=hms.Catalog(name="spark", locationUri="file:/tmp/spark"))
    )
    for name in ("sales_eu", "sales_us", "tmp"):
        create_db(client, name)
    client.create_database(hms.Database(name="sales_x", catalogName="spark", parameters={}))
    asked = ["*", "sales*", "SALES_E*|tmp", "@spark#", "@spark#s*", "@hive#", "@hive#*_us"]
    asked.append("@none#")
    expected = {pattern: client.get_databases(pattern) for pattern in asked}
    assert expected["sales*"] == ["sales_eu", "sales_us"]
    assert expected["@spark#"] == ["sales_x"]
    every = client.get_all_databases()
    assert every == ["default", "sales_eu", "sales_us", "tmp"]
    store = open_store(server.config.storage)
    try:
        old = [layout.database_key(name) for name in ("sales_us", "sales_x", "default")]
        store.mutate([Delete(layout.DATABASES, key, [layout.DATABASE_CATALOG]) for key in old])
        assert all(layout.DATABASE_CATALOG not in store.get(layout.DATABASES, k) for k in old)
        assert layout.DATABASE_CATALOG in store.get(layout.DATABASES, b"tmp")
        assert {pattern: client.get_databases(pattern) for pattern in asked} == expected
        assert client.get_all_databases() == every
        assert client.get_table_meta("@spark#*", "*", []) == []
        client.alter_database("sales_us", client.get_database("sales_us"))  # writes it again
        assert store.get(layout.DATABASES, old[0])[layout.DATABASE_CATALOG] == b"hive"
        assert {pattern: client.get_databases(pattern) for pattern in asked} == expected
    finally:
        store.close()
    client.close()


def test_a_newer_client_gets_the_catalog_names(server: RunningServer) -> None:
    client = server.client()
    _fill(client)
    tables = _definitions(client)
    client.get_catalogs()  # a call only HMS 3+ clients make: catalog names from now on
    _check_listings(client, _definitions(client), "hive")
    assert client.get_table_meta("@hive#lst", "t_a", []) == [_meta(tables["t_a"], "hive")]
    assert client.get_table_meta("@other#lst", "*", []) == []
    client.close()


@pytest.mark.parametrize(("framed", "compact"), [(True, False), (False, True), (True, True)])
def test_every_transport_and_protocol(tmp_path: Path, framed: bool, compact: bool) -> None:
    server = RunningServer(
        tmp_path,
        transport="framed" if framed else "buffered",
        protocol="compact" if compact else "binary",
    )
    try:
        client = make_client(server.host, server.port, framed=framed, compact=compact)
        _fill(client)
        _check_listings(client, _definitions(client), None)
        events = client.get_next_notification(
            hms.NotificationEventRequest(lastEvent=0, maxEvents=3)
        ).events
        assert [e.eventId for e in events] == [1, 2, 3]
        assert [e.eventType for e in events] == ["CREATE_DATABASE", "CREATE_TABLE", "CREATE_TABLE"]
        client.close()
    finally:
        server.stop()


def test_notification_filters_pick_from_the_whole_log(server: RunningServer) -> None:
    client = server.client()
    _fill(client)
    create_db(client, "other")
    client.create_table(make_table("other", "t_a", keys=[("ds", "string")]))
    client.add_partitions([
        hms.Partition(values=[day], dbName="other", tableName="t_a", parameters={})
        for day in ("1", "2")
    ])  # fmt: skip
    client.drop_table(DB, "t_a", True)
    every = client.get_next_notification(hms.NotificationEventRequest(lastEvent=0)).events
    assert [e.eventId for e in every] == list(range(1, len(every) + 1))
    added = [e for e in every if e.eventType == "ADD_PARTITION"]
    assert len(added) == 1 and '"partitions"' in added[0].message  # rendered when read
    cases = [
        (hms.NotificationEventRequest(lastEvent=0, dbName="OTHER"), lambda e: e.dbName == "other"),
        (hms.NotificationEventRequest(lastEvent=0, dbName=DB, tableNames=["T_A"]),
         lambda e: e.dbName == DB and e.tableName == "t_a"),
        (hms.NotificationEventRequest(lastEvent=2, eventTypeSkipList=["CREATE_TABLE"]),
         lambda e: e.eventId > 2 and e.eventType != "CREATE_TABLE"),
        (hms.NotificationEventRequest(lastEvent=0, maxEvents=2, dbName="other"),
         lambda e: e.dbName == "other"),
    ]  # fmt: skip
    for request, wanted in cases:
        expected = [e for e in every if wanted(e)][: request.maxEvents or None]
        assert expected
        assert client.get_next_notification(request).events == expected
    client.close()
