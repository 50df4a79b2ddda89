"""Every method of our IDL is declared once, on the method of one area of
``metastore_server/api/`` (one module per area, listed in ``api/areas.py``), and nothing else is
served; the handler's dispatch table calls each declared method of its own area objects."""

from __future__ import annotations

from pathlib import Path

import pytest
from thriftpy2.thrift import TType

from metastore_server.api.area import Area
from metastore_server.api.areas import AREA_OF, AREAS, DECLARED, dispatch_table
from metastore_server.api.declaration import declaration_of, declared_in, thrift
from metastore_server.api.handler import MetastoreHandler
from metastore_server.thrift_api import hms

_LIST = Path(__file__).parents[1] / "integration" / "unserved_methods_4x.txt"
#: In our IDL but not served yet (the HMS 4.x methods listed in unserved_methods_4x.txt).
UNSERVED = {
    line.strip()
    for line in _LIST.read_text().splitlines()
    if line.strip() and not line.startswith("#")
}


def test_each_idl_method_is_declared_by_one_area() -> None:
    served = [name for area in AREAS for name in declared_in(area)]
    assert sorted(name for name in set(served) if served.count(name) > 1) == []
    assert set(served) == set(hms.ThriftHiveMetastore.thrift_services) - UNSERVED
    assert set(DECLARED) == set(served) == set(AREA_OF)


def test_each_public_area_method_carries_its_own_declaration() -> None:
    for area in AREAS:
        for name, value in vars(area).items():
            if not name.startswith("_") and callable(value):
                declared = declaration_of(value)
                assert declared is not None and declared.name == name, f"{area.__name__}.{name}"
                assert DECLARED[name] is declared and AREA_OF[name] is area


def test_a_public_method_without_a_declaration_is_refused() -> None:
    class Careless(Area):
        @thrift()
        def get_table(self) -> None:
            """Declared."""

        def get_database(self) -> None:
            """Public, but not declared."""

    with pytest.raises(TypeError, match="declares no Thrift method"):
        declared_in(Careless)


def test_the_dispatch_table_binds_each_method_to_its_area_object(tmp_path: Path) -> None:
    from metastore_server.storage.embedded import SqliteStore

    from metastore_server.catalog.data.warehouse import Warehouse
    from metastore_server.catalog.facade import Catalog

    catalog = Catalog(SqliteStore(str(tmp_path / "m.db")), Warehouse(tmp_path / "wh"))
    handler = MetastoreHandler(catalog)
    assert set(handler.calls) == set(DECLARED)
    for name, method in handler.calls.items():
        area = AREA_OF[name]
        assert method.__self__ is handler.areas[area], name  # type: ignore[attr-defined]
        assert method.__func__ is vars(area)[name], name  # type: ignore[attr-defined]
        assert getattr(handler, name) is method
    assert dispatch_table(handler.areas).keys() == handler.calls.keys()
    with pytest.raises(AttributeError):
        handler.no_such_method  # noqa: B018


def test_each_area_says_what_it_raises() -> None:
    for area in AREAS:
        assert area.__doc__ is not None and "Raises" in area.__doc__, area.__name__


def test_the_facts_declared_are_the_ones_served() -> None:
    """What the mechanisms treat apart, as declared (a method added must say it)."""
    from metastore_server.server.generations import NEWER_METHODS
    from metastore_server.server.kept_wire import KEPT_CALLS, WIRE_KEPT_CALLS

    listings = {"get_all_databases", "get_databases", "get_all_tables", "get_tables",
                "get_tables_by_type", "get_table_meta", "get_partition_names"}  # fmt: skip
    assert listings == KEPT_CALLS
    assert {
        "get_database", "get_table", "get_partition", "get_partition_by_name",
        "get_partition_names_ps", "get_current_notificationEventId",
    } == WIRE_KEPT_CALLS - KEPT_CALLS  # fmt: skip
    assert {name for name, d in DECLARED.items() if d.stamp is not None} == {
        "create_database", "create_table", "create_table_with_environment_context",
        "create_table_with_constraints", "create_table_req", "create_function", "lock",
        "open_txns", "create_role", "grant_role", "grant_revoke_role", "grant_privileges",
        "revoke_privileges", "grant_revoke_privileges", "scheduled_query_maintenance",
        "add_package", "create_stored_procedure",
    }  # fmt: skip
    assert {name for name, d in DECLARED.items() if d.since == "3"} == NEWER_METHODS
    decoded = {name: d.decode for name, d in DECLARED.items() if d.decode}
    assert decoded == {
        "add_partitions": "wire_partitions", "add_partitions_req": "wire_partitions",
        "add_dynamic_partitions": "either_layout", "fire_listener_event": "either_layout",
    }  # fmt: skip


def test_the_replies_declared_catalog_named_can_hold_a_catalog_name() -> None:
    """Each reply declared ``catalog_named`` can hold a catalog name (unset for a 2.3 client),
    and is of a method HMS 2.3 has."""
    from metastore_server.server.generations import CATALOG_NAMED_REPLIES
    from metastore_server.wire.layouts import _catalog_plan

    assert {name for name, d in DECLARED.items() if d.catalog_named} == CATALOG_NAMED_REPLIES
    assert len(CATALOG_NAMED_REPLIES) == 13
    for name in CATALOG_NAMED_REPLIES:
        assert DECLARED[name].since == "2.3", name
        result = getattr(hms.ThriftHiveMetastore, name + "_result")
        success = result.thrift_spec[0]
        kind = success[2] if success[0] == TType.STRUCT else success[2][1]
        assert _catalog_plan(kind), name  # a field that is, or can hold, a catalog name


def _declared_storage(kind: str) -> set[str]:
    return {n for n, d in DECLARED.items() if d.storage is not None and d.storage.kind == kind}


def test_the_storage_checks_declared_are_the_ones_served() -> None:
    """Each method's class under ``--authorization storage``, as declared (``storage=``), and
    the authorizer's tables derived from them."""
    from metastore_server.api.authorization.storage import CHANGES, NOT_CHECKED, READS

    assert _declared_storage("changes") == set(CHANGES) == {
        "add_index", "add_partition", "add_partition_with_environment_context",
        "add_partitions", "add_partitions_pspec", "add_partitions_req", "alter_database",
        "alter_database_req", "alter_dependency", "alter_partition",
        "alter_partition_with_environment_context", "alter_partitions",
        "alter_partitions_req", "alter_partitions_with_environment_context", "alter_table",
        "alter_table_req", "alter_table_with_cascade",
        "alter_table_with_environment_context", "append_partition",
        "append_partition_by_name", "append_partition_by_name_with_environment_context",
        "append_partition_req", "append_partition_with_environment_context",
        "create_database", "create_database_req", "create_dependent_table", "create_table",
        "create_table_req", "create_table_with_constraints",
        "create_table_with_environment_context", "drop_database", "drop_database_req",
        "drop_index_by_name", "drop_partition", "drop_partition_by_name",
        "drop_partition_by_name_with_environment_context", "drop_partition_req",
        "drop_partition_with_environment_context", "drop_partitions_req", "drop_table",
        "drop_table_req", "drop_table_with_environment_context", "exchange_partition",
        "exchange_partitions", "rename_partition", "rename_partition_req", "truncate_table",
        "truncate_table_req",
    }  # fmt: skip
    assert _declared_storage("reads") == set(READS) == {
        "get_database", "get_database_req", "get_table", "get_table_req",
    }  # fmt: skip
    assert _declared_storage("not_checked") == set(NOT_CHECKED) == {
        "alter_index", "add_dynamic_partitions",
    }  # fmt: skip
    assert all(NOT_CHECKED.values())
    for name in CHANGES:
        assert CHANGES[name] is DECLARED[name].storage.rule  # type: ignore[union-attr]


def test_a_storage_check_is_whole() -> None:
    from metastore_server.api.authorization import storage_rules as st

    with pytest.raises(ValueError):
        st.StorageCheck("changes")
    with pytest.raises(ValueError):
        st.StorageCheck("not_checked", rule=st.CREATE_TABLE.rule)
    with pytest.raises(ValueError):
        st.StorageCheck("sometimes", rule=st.CREATE_TABLE.rule)


def test_the_locations_declared_are_the_ones_checked() -> None:
    """What each method names under ``--authorization privileges``, as declared
    (``locations=``), and the tables derived from them."""
    from metastore_server.api.authorization import location_finders as loc
    from metastore_server.api.authorization.location_rules import LOCATION_RULES, NAMES_NONE

    gives = {n: d.locations.operation for n, d in DECLARED.items()
             if d.locations is not None and d.locations.find is not None}  # fmt: skip
    assert gives == {name: operation for name, (operation, _) in LOCATION_RULES.items()} == {
        "create_database": "CREATEDATABASE", "create_database_req": "CREATEDATABASE",
        "alter_database": "ALTERDATABASE_LOCATION",
        "alter_database_req": "ALTERDATABASE_LOCATION", "create_table": "CREATETABLE",
        "create_table_with_environment_context": "CREATETABLE",
        "create_table_with_constraints": "CREATETABLE", "create_table_req": "CREATETABLE",
        "create_dependent_table": "CREATETABLE", "add_index": "CREATEINDEX",
        "alter_table": "ALTERTABLE_LOCATION",
        "alter_table_with_environment_context": "ALTERTABLE_LOCATION",
        "alter_table_with_cascade": "ALTERTABLE_LOCATION", "alter_table_req": "ALTERTABLE_LOCATION",
        "add_partition": "ALTERTABLE_ADDPARTS",
        "add_partition_with_environment_context": "ALTERTABLE_ADDPARTS",
        "add_partitions": "ALTERTABLE_ADDPARTS", "add_partitions_req": "ALTERTABLE_ADDPARTS",
        "add_partitions_pspec": "ALTERTABLE_ADDPARTS",
        "alter_partition": "ALTERPARTITION_LOCATION",
        "alter_partition_with_environment_context": "ALTERPARTITION_LOCATION",
        "alter_partitions": "ALTERPARTITION_LOCATION",
        "alter_partitions_with_environment_context": "ALTERPARTITION_LOCATION",
        "alter_partitions_req": "ALTERPARTITION_LOCATION",
        "rename_partition": "ALTERPARTITION_LOCATION",
        "rename_partition_req": "ALTERPARTITION_LOCATION",
    }  # fmt: skip
    server_places = "the server places the partition"
    assert {n: d.locations.why for n, d in DECLARED.items()
            if d.locations is not None and d.locations.find is None} == NAMES_NONE == {
        "append_partition": "the server places the partition (its default location)",
        "append_partition_with_environment_context": server_places,
        "append_partition_by_name": server_places,
        "append_partition_by_name_with_environment_context": server_places,
        "append_partition_req": server_places,
        "exchange_partition": loc.EXCHANGED.why, "exchange_partitions": loc.EXCHANGED.why,
        "alter_dependency": "a dependent partition points at its base's data, which it never owns",
        "truncate_table": "empties the table where it is",
        "truncate_table_req": "empties the table where it is",
        **dict.fromkeys(("drop_database", "drop_database_req", "drop_table",
                         "drop_table_with_environment_context", "drop_table_req",
                         "drop_index_by_name", "drop_partition",
                         "drop_partition_with_environment_context", "drop_partition_by_name",
                         "drop_partition_by_name_with_environment_context",
                         "drop_partition_req", "drop_partitions_req"), "names no location"),
    }  # fmt: skip
    assert loc.EXCHANGED.why == "partitions move to their default locations in the target table"
    for name, (_, find) in LOCATION_RULES.items():
        assert find is DECLARED[name].locations.find  # type: ignore[union-attr]


def test_a_location_rule_is_whole() -> None:
    from metastore_server.api.authorization import location_finders as loc

    with pytest.raises(ValueError):
        loc.LocationRule("CREATETABLE")
    with pytest.raises(ValueError):
        loc.LocationRule(find=loc.CREATE_TABLE.find)
    with pytest.raises(ValueError):
        loc.LocationRule("CREATETABLE", loc.CREATE_TABLE.find, why="both")
    with pytest.raises(ValueError):
        loc.LocationRule()
