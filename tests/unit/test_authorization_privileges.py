"""The decision of ``--authorization privileges``: every served method has a rule, and the
rules decide by grants, ownership, groups, roles and administrators as HMS's SQL-standard model
does, over a real catalog (embedded SQLite)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from metastore_server.storage.embedded import SqliteStore

from metastore_server.api.areas import DECLARED
from metastore_server.api.authorization import AUTHORIZATION_CHOICES, build_authorizer
from metastore_server.api.authorization.callers import GroupLookup, os_groups
from metastore_server.api.authorization.privileges import (
    RULES,
    PrivilegeAuthorizer,
    expand,
    parse_admin_users,
)
from metastore_server.api.authorization.rules import API
from metastore_server.api.handler import MetastoreHandler
from metastore_server.caller import Session
from metastore_server.catalog.data.warehouse import Warehouse
from metastore_server.catalog.facade import Catalog
from metastore_server.thrift_api import hms

USER, GROUP, ROLE = hms.PrincipalType.USER, hms.PrincipalType.GROUP, hms.PrincipalType.ROLE
GROUPS = {"dave": frozenset({"analysts"}), "alice": frozenset()}


def test_every_served_method_declares_a_rule() -> None:
    undeclared = {name for name, declared in DECLARED.items() if declared.rule is None}
    assert undeclared == set(), "a served method without an authorization rule"
    assert set(RULES) == set(DECLARED), "the authorizer's rules are the declared ones"
    assert all(RULES[name] is declared.rule for name, declared in DECLARED.items())


def test_a_method_without_a_rule_needs_an_administrator(tmp_path: Path) -> None:
    catalog = Catalog(SqliteStore(str(tmp_path / "m.db")), Warehouse(tmp_path / "wh"))
    try:
        authorizer = PrivilegeAuthorizer(catalog, frozenset({"root"}), lambda _: frozenset())
        with pytest.raises(hms.MetaException, match=r"User bob is not allowed to perform"):
            authorizer.check("a_method_of_a_later_idl", {}, Session(claimed_user="bob"))
        authorizer.check("a_method_of_a_later_idl", {}, Session(claimed_user="root"))
    finally:
        catalog.close()


def test_the_mode_is_registered() -> None:
    assert "privileges" in AUTHORIZATION_CHOICES


@pytest.fixture()
def world(tmp_path: Path) -> Iterator[tuple[PrivilegeAuthorizer, MetastoreHandler]]:
    """A catalog where alice owns database ``sales`` and its table ``orders``."""
    catalog = Catalog(SqliteStore(str(tmp_path / "m.db")), Warehouse(tmp_path / "wh"))
    handler = MetastoreHandler(catalog)
    handler.create_database(hms.Database(name="sales", description="", parameters={},
                                         ownerName="alice", ownerType=USER))  # fmt: skip
    sd = hms.StorageDescriptor(cols=[hms.FieldSchema(name="id", type="int")],
                               serdeInfo=hms.SerDeInfo(parameters={}), parameters={})  # fmt: skip
    handler.create_table(hms.Table(tableName="orders", dbName="sales", owner="alice", sd=sd,
                                   partitionKeys=[], parameters={},
                                   tableType="MANAGED_TABLE"))  # fmt: skip
    authorizer = PrivilegeAuthorizer(
        catalog, frozenset({"root"}), lambda u: GROUPS.get(u, frozenset())
    )
    yield authorizer, handler
    catalog.close()


def _grant(handler: MetastoreHandler, privilege: str, name: str, kind: int,
           option: bool = False, obj: hms.HiveObjectRef | None = None) -> None:  # fmt: skip
    ref = obj or hms.HiveObjectRef(objectType=hms.HiveObjectType.TABLE, dbName="sales",
                                   objectName="orders")  # fmt: skip
    info = hms.PrivilegeGrantInfo(privilege=privilege, createTime=0, grantor="alice",
                                  grantorType=USER, grantOption=option)  # fmt: skip
    bag = hms.PrivilegeBag(privileges=[hms.HiveObjectPrivilege(
        hiveObject=ref, principalName=name, principalType=kind, grantInfo=info)])  # fmt: skip
    handler.grant_privileges(bag)


def _allowed(authorizer: PrivilegeAuthorizer, api: str, values: dict[str, Any], user: str | None,
             groups: tuple[str, ...] = ()) -> bool:  # fmt: skip
    try:
        authorizer.check(api, values, Session(claimed_user=user, claimed_groups=groups))
    except hms.MetaException:
        return False
    return True


READ = {"dbname": "sales", "tbl_name": "orders"}
DROP = {"dbname": "sales", "name": "orders", "deleteData": True}


def test_select_reads_but_does_not_drop_and_the_owner_does_both(world: Any) -> None:
    authorizer, handler = world
    assert not _allowed(authorizer, "get_table", READ, "bob")
    _grant(handler, "SELECT", "bob", USER)
    assert _allowed(authorizer, "get_table", READ, "bob")
    with pytest.raises(hms.MetaException) as refused:
        authorizer.check("drop_table", DROP, Session(claimed_user="bob"))
    assert refused.value.message == (
        "Permission denied: Principal [name=bob, type=USER] does not have following privileges "
        "for operation DROPTABLE [[OBJECT OWNERSHIP] on Object [type=TABLE_OR_VIEW, "
        "name=sales.orders]]"
    )
    assert _allowed(authorizer, "drop_table", DROP, "alice")
    assert _allowed(authorizer, "get_table", READ, "alice")
    assert _allowed(authorizer, "drop_table", DROP, "root")  # --admin-users


def test_all_counts_as_every_privilege_and_database_grants_do_not_reach_tables(world: Any) -> None:
    authorizer, handler = world
    db = hms.HiveObjectRef(objectType=hms.HiveObjectType.DATABASE, dbName="sales")
    _grant(handler, "SELECT", "bob", USER, obj=db)
    assert not _allowed(authorizer, "get_table", READ, "bob")
    _grant(handler, "ALL", "bob", USER)
    assert _allowed(authorizer, "get_table", READ, "bob")
    assert _allowed(authorizer, "drop_partition", {"db_name": "sales", "tbl_name": "orders"}, "bob")
    assert expand("all") == ["SELECT", "INSERT", "UPDATE", "DELETE"]
    assert expand("Select, insert") == ["SELECT", "INSERT"]


def test_groups_roles_nested_roles_and_public_count(world: Any) -> None:
    authorizer, handler = world
    _grant(handler, "SELECT", "analysts", GROUP)
    assert _allowed(authorizer, "get_table", READ, "dave")  # an OS group of dave's
    assert not _allowed(authorizer, "get_table", READ, "erin")
    assert _allowed(authorizer, "get_table", READ, "erin", ("analysts",))  # set_ugi's claim
    handler.create_role(hms.Role(roleName="readers"))
    handler.create_role(hms.Role(roleName="team"))
    _grant(handler, "INSERT", "readers", ROLE)
    handler.grant_role("readers", "team", ROLE, "root", USER, False)
    handler.grant_role("team", "frank", USER, "root", USER, False)
    add = {"db_name": "sales", "tbl_name": "orders", "part_vals": ["1"]}
    assert _allowed(authorizer, "append_partition", add, "frank")
    assert not _allowed(authorizer, "append_partition", add, "gina")
    _grant(handler, "INSERT", "public", ROLE)
    assert _allowed(authorizer, "append_partition", add, "gina")
    assert _allowed(authorizer, "append_partition", add, None)  # nobody: public's privileges


def test_an_authenticated_connection_does_not_believe_claimed_groups(world: Any) -> None:
    authorizer, handler = world
    _grant(handler, "SELECT", "analysts", GROUP)
    session = Session(authenticated_user="erin", mechanism="PLAIN")
    session.claim("erin", ["analysts"])
    with pytest.raises(hms.MetaException):
        authorizer.check("get_table", READ, session)


def test_admin_role_members_and_role_owners_of_databases(world: Any) -> None:
    authorizer, handler = world
    assert not _allowed(authorizer, "drop_table", DROP, "hank")
    handler.grant_role("admin", "hank", USER, "root", USER, False)
    assert _allowed(authorizer, "drop_table", DROP, "hank")
    handler.create_role(hms.Role(roleName="owners"))
    handler.grant_role("owners", "ivy", USER, "root", USER, False)
    handler.create_database(hms.Database(name="shared", description="", parameters={},
                                         ownerName="owners", ownerType=ROLE))  # fmt: skip
    drop_db = {"name": "shared", "deleteData": True, "cascade": False}
    assert _allowed(authorizer, "drop_database", drop_db, "ivy")
    assert not _allowed(authorizer, "drop_database", drop_db, "bob")


def test_creating_a_table_needs_the_database_and_everyone_owns_default(world: Any) -> None:
    authorizer, _ = world
    table = hms.Table(tableName="t", dbName="sales")
    assert not _allowed(authorizer, "create_table", {"tbl": table}, "bob")
    assert _allowed(authorizer, "create_table", {"tbl": table}, "alice")
    table.dbName = "@hive#DEFAULT"
    assert _allowed(authorizer, "create_table", {"tbl": table}, "bob")
    assert not _allowed(authorizer, "create_database", {"database": hms.Database(name="x")}, None)
    assert _allowed(authorizer, "create_database", {"database": hms.Database(name="x")}, "bob")


def test_calls_on_objects_that_are_not_there_are_left_to_answer(world: Any) -> None:
    authorizer, _ = world
    assert _allowed(authorizer, "get_table", {"dbname": "sales", "tbl_name": "nope"}, "bob")
    assert _allowed(authorizer, "drop_database", {"name": "nope"}, "bob")


def test_grant_needs_the_grant_option_and_revoke_the_grantor(world: Any) -> None:
    authorizer, handler = world
    _grant(handler, "SELECT", "bob", USER)
    ref = hms.HiveObjectRef(
        objectType=hms.HiveObjectType.TABLE, dbName="sales", objectName="orders"
    )
    info = hms.PrivilegeGrantInfo(privilege="SELECT", grantor="bob", grantorType=USER)
    bag = hms.PrivilegeBag(privileges=[hms.HiveObjectPrivilege(
        hiveObject=ref, principalName="carl", principalType=USER, grantInfo=info)])  # fmt: skip
    with pytest.raises(hms.MetaException, match=r"GRANT_PRIVILEGE \[\[SELECT with grant\] on"):
        authorizer.check("grant_privileges", {"privileges": bag}, Session(claimed_user="bob"))
    assert _allowed(authorizer, "grant_privileges", {"privileges": bag}, "alice")  # the owner
    revoke = hms.PrivilegeBag(privileges=[hms.HiveObjectPrivilege(
        hiveObject=ref, principalName="bob", principalType=USER, grantInfo=info)])  # fmt: skip
    with pytest.raises(hms.MetaException, match=r"Cannot find privilege SELECT for Principal "
                       r"\[name=bob, type=USER\] on Object \[type=TABLE_OR_VIEW, "
                       r"name=sales.orders\] granted by carl"):  # fmt: skip
        authorizer.check("revoke_privileges", {"privileges": revoke}, Session(claimed_user="carl"))
    assert _allowed(authorizer, "revoke_privileges", {"privileges": revoke}, "alice")


def test_role_calls(world: Any) -> None:
    authorizer, handler = world
    with pytest.raises(hms.MetaException, match=r"Current user : bob is not allowed to add roles"):
        authorizer.check(
            "create_role", {"role": hms.Role(roleName="x")}, Session(claimed_user="bob")
        )
    handler.create_role(hms.Role(roleName="team"))
    grant = {"role_name": "team", "principal_name": "carl", "principal_type": USER}
    assert not _allowed(authorizer, "grant_role", grant, "bob")
    handler.grant_role("team", "bob", USER, "root", USER, True)  # with the admin option
    assert _allowed(authorizer, "grant_role", grant, "bob")
    mine = {"principal_name": "bob", "principal_type": USER}
    assert _allowed(authorizer, "list_roles", mine, "bob")
    assert not _allowed(authorizer, "list_roles", mine, "carl")
    assert _allowed(authorizer, "list_roles", {"principal_name": "team", "principal_type": ROLE},
                    "bob")  # fmt: skip
    assert not _allowed(authorizer, "list_privileges", {"principal_name": None}, "bob")


def test_admin_only_refusals_use_hms_words(world: Any) -> None:
    authorizer, _ = world
    bob = Session(claimed_user="bob")
    with pytest.raises(
        hms.MetaException, match=r"Operation type CREATE_CATALOG not allowed for user:bob'"
    ):
        authorizer.check("create_catalog", {}, bob)
    with pytest.raises(
        hms.MetaException, match=r"User bob is not allowed to perform this API call'"
    ):
        authorizer.check("get_next_notification", {}, bob)
    function = hms.Function(functionName="F", dbName="sales")
    with pytest.raises(hms.MetaException) as refused:
        authorizer.check("create_function", {"func": function}, bob)
    assert refused.value.message.endswith(
        "operation CREATEFUNCTION [[ADMIN PRIVILEGE] on Object [type=DATABASE, name=sales], "
        "[ADMIN PRIVILEGE] on Object [type=FUNCTION, name=sales.f]]"
    )
    assert _allowed(authorizer, "create_function", {"func": function}, "root")
    assert _allowed(authorizer, "get_all_databases", {}, None)
    assert RULES["get_current_notificationEventId"] is API


def test_admin_users_setting_and_the_os_group_lookup(tmp_path: Path) -> None:
    assert parse_admin_users(" hive, ,spark ") == frozenset({"hive", "spark"})
    assert parse_admin_users(["a", "b"]) == frozenset({"a", "b"})
    assert parse_admin_users(None) == frozenset()
    catalog = Catalog(SqliteStore(str(tmp_path / "m.db")), Warehouse(tmp_path / "wh"))
    try:
        authorizer = build_authorizer("privileges", catalog, auth="none", admin_users="hive")
        assert isinstance(authorizer, PrivilegeAuthorizer)
        assert authorizer.admin_users == frozenset({"hive"})
    finally:
        catalog.close()
    assert "root" in os_groups("root")  # a user of this host: its groups are found
    assert os_groups("no-such-user-of-this-host") == []
    calls: list[str] = []
    now = [0.0]
    lookup = GroupLookup(lambda u: calls.append(u) or ["g"], ttl_s=10, clock=lambda: now[0])
    assert lookup("u") == frozenset({"g"}) and lookup("u") == frozenset({"g"})
    assert calls == ["u"]
    now[0] = 11.0
    lookup("u")
    assert calls == ["u", "u"]  # kept no longer than its time


def test_moving_a_table_into_another_database_needs_that_database(world: Any) -> None:
    authorizer, handler = world
    handler.create_database(hms.Database(name="other", description="", parameters={},
                                         ownerName="bob", ownerType=USER))  # fmt: skip
    moved = hms.Table(tableName="orders", dbName="other")
    values = {"dbname": "sales", "tbl_name": "orders", "new_tbl": moved}
    with pytest.raises(hms.MetaException) as refused:
        authorizer.check("alter_table", values, Session(claimed_user="alice"))
    assert refused.value.message.endswith(
        "[[OBJECT OWNERSHIP] on Object [type=DATABASE, name=other]]"
    )
    moved.dbName = "default"  # everyone's
    assert _allowed(authorizer, "alter_table", values, "alice")
    request = hms.AlterTableRequest(dbName="sales", tableName="orders", table=moved)
    assert _allowed(authorizer, "alter_table_req", {"req": request}, "alice")
    moved.dbName = "other"
    assert not _allowed(authorizer, "alter_table_req", {"req": request}, "alice")
    moved.dbName = "sales"  # staying put: the table's ownership is enough
    assert _allowed(authorizer, "alter_table_req", {"req": request}, "alice")
    assert not _allowed(authorizer, "alter_table_req", {"req": request}, "bob")


def test_a_call_naming_no_table_is_left_to_administrators(world: Any) -> None:
    authorizer, handler = world
    event = hms.FireEventRequest(successful=True, dbName="sales", data=hms.FireEventRequestData())
    with pytest.raises(hms.MetaException) as refused:
        authorizer.check("fire_listener_event", {"rqst": event}, Session(claimed_user="alice"))
    assert refused.value.message.endswith(
        "[[INSERT] on Object [type=TABLE_OR_VIEW, name=sales.null]]"
    )
    assert _allowed(authorizer, "fire_listener_event", {"rqst": event}, "root")
    assert not _allowed(authorizer, "add_partitions", {"new_parts": []}, "alice")
    event.tableName = "orders"
    assert _allowed(authorizer, "fire_listener_event", {"rqst": event}, "alice")
    parent_only = hms.ForeignKeysRequest(parent_db_name="sales", parent_tbl_name="orders")
    assert _allowed(authorizer, "get_foreign_keys", {"request": parent_only}, "alice")
    assert not _allowed(authorizer, "get_foreign_keys", {"request": parent_only}, "bob")
    _grant(handler, "SELECT", "bob", USER)
    assert _allowed(authorizer, "get_foreign_keys", {"request": parent_only}, "bob")


def test_every_call_that_places_data_has_a_location_rule() -> None:
    from metastore_server.api.authorization.location_rules import LOCATION_RULES, NAMES_NONE
    from metastore_server.api.authorization.storage import CHANGES

    declared = {name for name, d in DECLARED.items() if d.locations is not None}
    assert set(CHANGES) <= declared, set(CHANGES) - declared
    assert set(LOCATION_RULES) | set(NAMES_NONE) == declared
    assert not set(LOCATION_RULES) & set(NAMES_NONE)
    for name, (operation, find) in LOCATION_RULES.items():
        rule = DECLARED[name].locations
        assert rule is not None and (rule.operation, rule.find) == (operation, find), name
    for name, why in NAMES_NONE.items():
        rule = DECLARED[name].locations
        assert rule is not None and rule.find is None and rule.why == why and why, name


def test_location_rules_take_calls_with_arguments_missing(world: Any) -> None:
    authorizer, _ = world
    from metastore_server.api.authorization.location_rules import LOCATION_RULES

    for api in LOCATION_RULES:
        for values in ({}, {name: None for name in ("tbl", "req", "request", "new_part")}):
            assert authorizer.locations.refused(api, values, authorizer.caller(
                Session(claimed_user="bob"))) is None  # fmt: skip


def test_locations_are_compared_normalised_on_every_scheme() -> None:
    from metastore_server.api.authorization.locations import normalised, uri_type

    assert normalised("s3a://bucket/wh/bob/../alice.db/t") == "s3a://bucket/wh/alice.db/t"
    assert normalised("hdfs://nn:8020/a//b/./c/") == "hdfs://nn:8020/a/b/c"
    assert normalised("s3://bucket/../../x") == "s3://bucket/x"  # never out of the bucket
    assert normalised("file:/a/../b") == "file:/a/../b"  # local paths: the file systems'
    assert uri_type("file:/x") == uri_type("/x") == "LOCAL_URI"
    assert uri_type("s3a://b/x") == uri_type("hdfs://nn/x") == "DFS_URI"


def test_a_table_at_anothers_directory_is_refused_an_owner_inside_its_own_is_not(
    world: Any,
) -> None:
    authorizer, handler = world
    orders = handler.get_table("sales", "orders").sd.location
    session = Session(claimed_user="bob")
    table = hms.Table(tableName="t", dbName="default", sd=hms.StorageDescriptor(location=orders))
    with pytest.raises(hms.MetaException) as refused:
        authorizer.check("create_table", {"tbl": table}, session)
    assert refused.value.message.endswith(
        "for operation CREATETABLE [[SELECT, INSERT, DELETE, OBJECT OWNERSHIP] on Object "
        f"[type=LOCAL_URI, name={orders}]]"
    )
    spark = hms.SerDeInfo(parameters={"path": orders})  # Spark's data source table
    table.sd = hms.StorageDescriptor(location=f"{orders}-__PLACEHOLDER__", serdeInfo=spark)
    assert not _allowed(authorizer, "create_table", {"tbl": table}, "bob")
    table.sd = hms.StorageDescriptor(location=f"{orders}/sub")
    assert not _allowed(authorizer, "create_table", {"tbl": table}, "bob")
    table.dbName = "sales"
    assert _allowed(authorizer, "create_table", {"tbl": table}, "alice")  # inside her own
    assert _allowed(authorizer, "create_table", {"tbl": table}, "root")  # an administrator
