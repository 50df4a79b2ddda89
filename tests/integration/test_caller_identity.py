"""Who a call is made as: on a connection that authenticated (SASL PLAIN here), the
authenticated user is what the server records as owner, grantor, lock and transaction user,
whatever the request or ``set_ugi`` claims; without authentication requests are recorded as
sent (as HMS without SASL)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.sasl_client import sasl_client

from metastore_server.server.passwords import hash_password
from metastore_server.thrift_api import hms

from .conftest import RunningServer, make_table

USER, GROUP, ROLE = hms.PrincipalType.USER, hms.PrincipalType.GROUP, hms.PrincipalType.ROLE


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """A server with ``--auth password`` knowing alice."""
    work = tmp_path_factory.mktemp("identity")
    passwords = work / "passwords"
    passwords.write_text(f"alice:{hash_password('wonderland')}\n")
    running = RunningServer(work / "server", auth="password", password_file=str(passwords))
    yield running
    running.stop()


@pytest.fixture()
def alice(server: RunningServer) -> Iterator[Any]:
    client = sasl_client(server.host, server.port, "alice", "wonderland")
    yield client
    client.close()


def _lock_request(db: str, user: str) -> hms.LockRequest:
    component = hms.LockComponent(type=hms.LockType.SHARED_READ, level=hms.LockLevel.DB,
                                  dbname=db)  # fmt: skip
    return hms.LockRequest(component=[component], user=user, hostname="h")


def test_the_authenticated_user_owns_what_it_creates(alice: Any) -> None:
    alice.set_ugi("mallory", ["admin"])  # a claim: not believed on an authenticated connection
    alice.create_database(hms.Database(name="owned", description="", parameters={},
                                       ownerName="mallory", ownerType=ROLE))  # fmt: skip
    database = alice.get_database("owned")
    assert (database.ownerName, database.ownerType) == ("alice", USER)
    table = make_table("owned", "t")
    table.owner = "mallory"
    alice.create_table(table)
    assert alice.get_table("owned", "t").owner == "alice"
    function = hms.Function(functionName="f", dbName="owned", className="a.B",
                            ownerName="mallory", ownerType=GROUP, createTime=0,
                            functionType=hms.FunctionType.JAVA, resourceUris=[])  # fmt: skip
    alice.create_function(function)
    stored = alice.get_function("owned", "f")
    assert (stored.ownerName, stored.ownerType) == ("alice", USER)


def test_grants_roles_locks_and_transactions_name_the_authenticated_user(alice: Any) -> None:
    alice.create_role(hms.Role(roleName="analysts", ownerName="mallory"))
    assert alice.grant_role("analysts", "carol", USER, "mallory", ROLE, False)
    assert "analysts" in {role.roleName for role in alice.list_roles("carol", USER)}
    grants = alice.get_principals_in_role(hms.GetPrincipalsInRoleRequest(roleName="analysts"))
    [grant] = [g for g in grants.principalGrants if g.principalName == "carol"]
    assert (grant.grantorName, grant.grantorPrincipalType) == ("alice", USER)

    alice.create_database(hms.Database(name="granted", description="", parameters={}))
    target = hms.HiveObjectRef(objectType=hms.HiveObjectType.DATABASE, dbName="granted")
    info = hms.PrivilegeGrantInfo(privilege="SELECT", createTime=0, grantor="mallory",
                                  grantorType=ROLE, grantOption=False)  # fmt: skip
    bag = hms.PrivilegeBag(
        privileges=[
            hms.HiveObjectPrivilege(
                hiveObject=target, principalName="carol", principalType=USER, grantInfo=info
            )
        ]
    )
    assert alice.grant_privileges(bag)
    [listed] = alice.list_privileges("carol", USER, target)
    assert (listed.grantInfo.grantor, listed.grantInfo.grantorType) == ("alice", USER)

    locked = alice.lock(_lock_request("granted", "mallory"))
    shown = alice.show_locks(hms.ShowLocksRequest(dbname="granted")).locks
    assert [lock.user for lock in shown if lock.lockid == locked.lockid] == ["alice"]
    alice.unlock(hms.UnlockRequest(lockid=locked.lockid))

    [txn] = alice.open_txns(hms.OpenTxnRequest(num_txns=1, user="mallory", hostname="h")).txn_ids
    info_list = alice.get_open_txns_info().open_txns
    assert [t.user for t in info_list if t.id == txn] == ["alice"]
    alice.abort_txn(hms.AbortTxnRequest(txnid=txn))


def test_without_authentication_requests_are_recorded_as_sent(tmp_path: Path) -> None:
    running = RunningServer(tmp_path / "open")
    try:
        client = running.client()
        client.set_ugi("bob", ["staff"])
        client.create_database(hms.Database(name="claimed", description="", parameters={},
                                            ownerName="bob", ownerType=USER))  # fmt: skip
        assert client.get_database("claimed").ownerName == "bob"
        table = make_table("claimed", "t")
        table.owner = "someone"
        client.create_table(table)
        assert client.get_table("claimed", "t").owner == "someone"
        client.close()
    finally:
        running.stop()


class _RefusingDrops:
    """An authorizer that refuses drop_table to everyone but alice, naming the caller."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None]] = []

    def check(self, api: str, values: dict[str, Any], session: Any) -> None:
        self.seen.append((api, session.user))
        if api == "drop_table" and session.user != "alice":
            raise hms.MetaException(message=f"{session.user} may not drop {values['name']}")


def test_an_authorizer_sees_each_call_with_its_caller_and_its_refusal_is_the_answer(
    tmp_path: Path,
) -> None:
    running = RunningServer(tmp_path / "open")
    authorizer = _RefusingDrops()
    running.server.processor._handler.authorizer = authorizer  # type: ignore[attr-defined]
    try:
        client = running.client()
        client.set_ugi("bob", [])
        client.create_database(hms.Database(name="kept", description="", parameters={}))
        client.create_table(make_table("kept", "t"))
        with pytest.raises(hms.MetaException, match="bob may not drop t"):
            client.drop_table("kept", "t", True)
        assert client.get_table("kept", "t").tableName == "t"  # nothing was done
        client.set_ugi("alice", [])
        client.drop_table("kept", "t", True)
        assert client.get_all_tables("kept") == []
        assert ("create_table", "bob") in authorizer.seen
        assert ("drop_table", "alice") in authorizer.seen
        client.close()
    finally:
        running.stop()


def test_procedures_packages_and_scheduled_queries_name_the_authenticated_user(
    alice: Any,
) -> None:
    alice.create_database(hms.Database(name="procs", description="", parameters={}))
    procedure = hms.StoredProcedure(name="p", dbName="procs", catName="hive",
                                    ownerName="mallory", source="begin end")  # fmt: skip
    alice.create_stored_procedure(procedure)
    request = hms.StoredProcedureRequest(catName="hive", dbName="procs", procName="p")
    assert alice.get_stored_procedure(request).ownerName == "alice"
    alice.add_package(hms.AddPackageRequest(catName="hive", dbName="procs", packageName="k",
                                            ownerName="mallory", header="h", body="b"))  # fmt: skip
    package = alice.find_package(hms.GetPackageRequest(catName="hive", dbName="procs",
                                                       packageName="k"))  # fmt: skip
    assert package.ownerName == "alice"
    key = hms.ScheduledQueryKey(scheduleName="nightly", clusterNamespace="ns")
    scheduled = hms.ScheduledQuery(scheduleKey=key, enabled=True, schedule="0 0 0 * * ? *",
                                   user="mallory", query="select 1")  # fmt: skip
    alice.scheduled_query_maintenance(
        hms.ScheduledQueryMaintenanceRequest(
            type=hms.ScheduledQueryMaintenanceRequestType.CREATE, scheduledQuery=scheduled
        )
    )
    assert alice.get_scheduled_query(key).user == "alice"
