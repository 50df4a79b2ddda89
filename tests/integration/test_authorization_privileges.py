"""``--authorization privileges`` over real Thrift: users authenticated with SASL PLAIN (and,
in one test, claimed with ``set_ugi`` under ``--auth none``) are allowed and refused as HMS's
SQL-standard model decides, with HMS's MetaException and message, and a refused call changes
nothing."""

from __future__ import annotations

import grp
import os
import pwd
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from thriftpy2.thrift import TApplicationException

from metastore_server.thrift_api import hms

from .conftest import RunningServer, make_partition, make_table
from .privileged import connections, privileged_server

USER, GROUP, ROLE = hms.PrincipalType.USER, hms.PrincipalType.GROUP, hms.PrincipalType.ROLE
TABLE, DATABASE = hms.HiveObjectType.TABLE, hms.HiveObjectType.DATABASE
USERS = ("hive", "alice", "bob", "carol", "dave", "erin", "root")


def denied(user: str, operation: str, *objects: tuple[str, str, str]) -> str:
    """HMS's SQL-standard refusal of ``operation``: (privileges, type, name) per object."""
    listed = ", ".join(f"[{p}] on Object [type={t}, name={n}]" for p, t, n in objects)
    return (f"Permission denied: Principal [name={user}, type=USER] does not have following "
            f"privileges for operation {operation} [{listed}]")  # fmt: skip


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """--auth password, --authorization privileges, hive an administrator."""
    running = privileged_server(tmp_path_factory.mktemp("authz"), USERS)
    yield running
    running.stop()


@pytest.fixture()
def connect(server: RunningServer) -> Iterator[Callable[[str], Any]]:
    """Opens clients authenticated as a user; closes them after the test."""
    yield from connections(server)


def _table_ref(db: str, table: str) -> hms.HiveObjectRef:
    return hms.HiveObjectRef(objectType=TABLE, dbName=db, objectName=table)


def _bag(ref: hms.HiveObjectRef, privilege: str, name: str, kind: int = USER,
         option: bool = False) -> hms.PrivilegeBag:  # fmt: skip
    info = hms.PrivilegeGrantInfo(privilege=privilege, createTime=0, grantor="ignored",
                                  grantorType=USER, grantOption=option)  # fmt: skip
    return hms.PrivilegeBag(privileges=[hms.HiveObjectPrivilege(
        hiveObject=ref, principalName=name, principalType=kind, grantInfo=info)])  # fmt: skip


def _owned_table(owner: Any, db: str, table: str, keys: bool = False) -> None:
    """``owner`` creates database ``db`` (if needed) and table ``db.table`` in it."""
    if db not in owner.get_all_databases():
        owner.create_database(hms.Database(name=db, description="", parameters={}))
    owner.create_table(make_table(db, table, keys=[("ds", "string")] if keys else None))


def test_select_reads_but_cannot_drop_or_alter_and_the_owner_can(connect: Callable) -> None:
    alice, bob = connect("alice"), connect("bob")
    _owned_table(alice, "sales", "orders", keys=True)
    alice.add_partition(make_partition("sales", "orders", ["2024-01-01"]))
    assert alice.get_table("sales", "orders").owner == "alice"

    with pytest.raises(hms.MetaException) as refused:
        bob.get_table("sales", "orders")
    assert refused.value.message == denied(
        "bob", "QUERY", ("SELECT", "TABLE_OR_VIEW", "sales.orders")
    )
    assert alice.grant_privileges(_bag(_table_ref("sales", "orders"), "SELECT", "bob"))
    assert bob.get_table("sales", "orders").tableName == "orders"
    assert [p.values for p in bob.get_partitions("sales", "orders", -1)] == [["2024-01-01"]]

    with pytest.raises(hms.MetaException) as refused:
        bob.drop_table("sales", "orders", True)
    assert refused.value.message == denied(
        "bob", "DROPTABLE", ("OBJECT OWNERSHIP", "TABLE_OR_VIEW", "sales.orders")
    )
    changed = bob.get_table("sales", "orders")
    changed.parameters = {**(changed.parameters or {}), "touched": "bob"}
    with pytest.raises(hms.MetaException) as refused:
        bob.alter_table("sales", "orders", changed)
    assert refused.value.message == denied(
        "bob", "ALTERTABLE_ADDCOLS", ("OBJECT OWNERSHIP", "TABLE_OR_VIEW", "sales.orders")
    )
    with pytest.raises(hms.MetaException, match="ALTERTABLE_DROPPARTS"):
        bob.drop_partition("sales", "orders", ["2024-01-01"], True)
    # the refused calls changed nothing
    kept = alice.get_table("sales", "orders")
    assert "touched" not in (kept.parameters or {})
    assert len(alice.get_partitions("sales", "orders", -1)) == 1

    changed.parameters = {**(kept.parameters or {}), "touched": "alice"}
    alice.alter_table("sales", "orders", changed)
    assert alice.get_table("sales", "orders").parameters["touched"] == "alice"
    alice.drop_table("sales", "orders", True)
    assert "orders" not in alice.get_all_tables("sales")


def test_administrators_by_setting_and_by_the_admin_role(connect: Callable) -> None:
    alice, hive, carol = connect("alice"), connect("hive"), connect("carol")
    _owned_table(alice, "crm", "accounts")
    _owned_table(alice, "crm", "contacts")
    hive.drop_table("crm", "accounts", True)  # --admin-users hive
    with pytest.raises(hms.MetaException) as refused:
        carol.create_role(hms.Role(roleName="auditors"))
    assert refused.value.message == (
        "Current user : carol is not allowed to add roles. User has to belong to ADMIN role and "
        "have it as current role, for this action."
    )
    with pytest.raises(hms.MetaException, match="DROPTABLE"):
        carol.drop_table("crm", "contacts", True)
    assert hive.grant_role("admin", "carol", USER, "hive", USER, False)
    carol.drop_table("crm", "contacts", True)  # a member of the admin role
    assert carol.create_role(hms.Role(roleName="auditors"))
    assert alice.get_all_tables("crm") == []


def test_a_grant_to_a_group_counts(connect: Callable) -> None:
    if "root" not in _groups_of("root"):
        pytest.skip("this host has no root user in a root group")
    alice, root, dave = connect("alice"), connect("root"), connect("dave")
    _owned_table(alice, "ops", "jobs")
    with pytest.raises(hms.MetaException):
        root.get_table("ops", "jobs")
    alice.grant_privileges(_bag(_table_ref("ops", "jobs"), "SELECT", "root", GROUP))
    assert root.get_table("ops", "jobs").tableName == "jobs"  # root is in this host's group root
    dave.set_ugi("dave", ["root"])  # a claim: an authenticated connection's groups are the host's
    with pytest.raises(hms.MetaException, match="QUERY"):
        dave.get_table("ops", "jobs")


def _groups_of(user: str) -> list[str]:
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        return []
    return [grp.getgrgid(g).gr_name for g in os.getgrouplist(user, entry.pw_gid)]


def test_a_grant_to_a_nested_role_counts_and_revoking_removes_access(connect: Callable) -> None:
    alice, hive, erin = connect("alice"), connect("hive"), connect("erin")
    _owned_table(alice, "hr", "staff")
    hive.create_role(hms.Role(roleName="readers"))
    hive.create_role(hms.Role(roleName="analysts"))
    alice.grant_privileges(_bag(_table_ref("hr", "staff"), "SELECT", "readers", ROLE))
    hive.grant_role("readers", "analysts", ROLE, "hive", USER, False)
    with pytest.raises(hms.MetaException):
        erin.get_table("hr", "staff")
    hive.grant_role("analysts", "erin", USER, "hive", USER, False)
    assert erin.get_table("hr", "staff").tableName == "staff"  # erin -> analysts -> readers
    hive.revoke_role("analysts", "erin", USER)
    with pytest.raises(hms.MetaException, match="QUERY"):
        erin.get_table("hr", "staff")

    alice.grant_privileges(_bag(_table_ref("hr", "staff"), "SELECT", "erin"))
    assert erin.get_fields("hr", "staff")[0].name == "v"
    with pytest.raises(hms.MetaException, match="Cannot find privilege SELECT .* granted by erin"):
        erin.revoke_privileges(_bag(_table_ref("hr", "staff"), "SELECT", "erin"))
    alice.revoke_privileges(_bag(_table_ref("hr", "staff"), "SELECT", "erin"))
    with pytest.raises(hms.MetaException, match="QUERY"):
        erin.get_fields("hr", "staff")


def test_creating_a_table_needs_the_database_ownership(connect: Callable) -> None:
    alice, bob = connect("alice"), connect("bob")
    alice.create_database(hms.Database(name="finance", description="", parameters={}))
    with pytest.raises(hms.MetaException) as refused:
        bob.create_table(make_table("finance", "ledger"))
    assert refused.value.message == denied(
        "bob", "CREATETABLE", ("OBJECT OWNERSHIP", "DATABASE", "finance")
    )
    assert "ledger" not in alice.get_all_tables("finance")
    alice.create_table(make_table("finance", "ledger"))
    bob.create_table(make_table("default", "scratch_bob"))  # everyone owns default
    assert bob.get_table("default", "scratch_bob").owner == "bob"
    with pytest.raises(hms.MetaException, match="DROPDATABASE"):
        bob.drop_database("finance", True, True)
    assert alice.get_table("finance", "ledger").tableName == "ledger"


def test_granting_needs_the_grant_option(connect: Callable) -> None:
    alice, bob = connect("alice"), connect("bob")
    _owned_table(alice, "mkt", "leads")
    ref = _table_ref("mkt", "leads")
    alice.grant_privileges(_bag(ref, "SELECT", "bob"))
    with pytest.raises(hms.MetaException) as refused:
        bob.grant_privileges(_bag(ref, "SELECT", "dave"))
    assert refused.value.message == denied(
        "bob", "GRANT_PRIVILEGE", ("SELECT with grant", "TABLE_OR_VIEW", "mkt.leads")
    )
    alice.grant_privileges(_bag(ref, "INSERT", "bob", option=True))
    assert bob.grant_privileges(_bag(ref, "INSERT", "dave"))
    assert {p.grantInfo.privilege for p in bob.list_privileges("bob", USER, ref)} == {
        "SELECT",
        "INSERT",
    }
    with pytest.raises(hms.MetaException, match="not allowed check privileges of another user"):
        bob.list_privileges("dave", USER, ref)


def test_admin_only_calls_are_refused_with_hms_words(connect: Callable) -> None:
    bob = connect("bob")
    with pytest.raises(hms.MetaException) as refused:
        bob.create_catalog(hms.CreateCatalogRequest(
            catalog=hms.Catalog(name="c2", locationUri="file:///tmp/c2")))  # fmt: skip
    assert refused.value.message == "Operation type CREATE_CATALOG not allowed for user:bob"
    function = hms.Function(functionName="f", dbName="default", className="a.B", ownerName="bob",
                            ownerType=USER, createTime=0, functionType=hms.FunctionType.JAVA,
                            resourceUris=[])  # fmt: skip
    with pytest.raises(hms.MetaException, match=r"CREATEFUNCTION \[\[ADMIN PRIVILEGE\]"):
        bob.create_function(function)
    # declares no exception: the refusal is an application error carrying the message
    with pytest.raises(TApplicationException, match="not allowed to perform this API call"):
        bob.get_next_notification(hms.NotificationEventRequest(lastEvent=0))
    assert "default" in bob.get_all_databases()  # listings are open


def test_set_ugi_claims_under_auth_none(start_server: Callable[..., RunningServer]) -> None:
    running = start_server(authorization="privileges", admin_users="hive")
    alice, bob, nobody = running.client(), running.client(), running.client()
    try:
        alice.set_ugi("alice", [])
        alice.create_database(hms.Database(name="claimed", description="", parameters={},
                                           ownerName="alice", ownerType=USER))  # fmt: skip
        table = make_table("claimed", "t")
        table.owner = "alice"
        alice.create_table(table)
        bob.set_ugi("bob", ["staff"])
        with pytest.raises(hms.MetaException, match=r"\[name=bob, type=USER\].*DROPTABLE"):
            bob.drop_table("claimed", "t", True)
        with pytest.raises(hms.MetaException, match="QUERY"):
            bob.get_table("claimed", "t")
        alice.grant_privileges(_bag(_table_ref("claimed", "t"), "SELECT", "staff", GROUP))
        assert bob.get_table("claimed", "t").tableName == "t"  # through the claimed group

        with pytest.raises(hms.MetaException, match=r"\[name=null, type=USER\].*QUERY"):
            nobody.get_table("claimed", "t")  # no set_ugi: only public's privileges
        alice.grant_privileges(_bag(_table_ref("claimed", "t"), "SELECT", "public", ROLE))
        assert nobody.get_table("claimed", "t").tableName == "t"
        with pytest.raises(hms.MetaException, match="DROPTABLE"):
            nobody.drop_table("claimed", "t", True)
        alice.drop_table("claimed", "t", True)
        assert alice.get_all_tables("claimed") == []
    finally:
        for client in (alice, bob, nobody):
            client.close()


def test_the_server_warns_when_authorization_runs_without_authentication(
    start_server: Callable[..., RunningServer], capsys: pytest.CaptureFixture[str]
) -> None:
    start_server(authorization="privileges")
    assert "authorization_without_authentication" in capsys.readouterr().out
