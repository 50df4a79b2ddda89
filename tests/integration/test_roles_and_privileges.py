"""Roles and privileges over Thrift, with HMS 2.3's rules and messages (observed on the reference
HMS 2.3.10; where it fails with an internal error, the message below is the one its log gives,
answered here as the MetaException the call declares). Stored, so they survive restarts and hold
across servers sharing a store."""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Iterator

import pytest

from metastore_server.thrift_api import hms

from .conftest import create_db, make_partition, make_table

USER, ROLE, GROUP = hms.PrincipalType.USER, hms.PrincipalType.ROLE, hms.PrincipalType.GROUP
GLOBAL, DATABASE = hms.HiveObjectType.GLOBAL, hms.HiveObjectType.DATABASE
TABLE, PARTITION, COLUMN = (
    hms.HiveObjectType.TABLE,
    hms.HiveObjectType.PARTITION,
    hms.HiveObjectType.COLUMN,
)
GRANT, REVOKE = hms.GrantRevokeType.GRANT, hms.GrantRevokeType.REVOKE
_names = itertools.count()


@pytest.fixture()
def n() -> str:
    """A fresh suffix: roles and grants outlive a test on the module's server."""
    return str(next(_names))


def obj(
    kind: int,
    db: str | None = None,
    table: str | None = None,
    values: list[str] | None = None,
    column: str | None = None,
) -> hms.HiveObjectRef:
    return hms.HiveObjectRef(
        objectType=kind, dbName=db, objectName=table, partValues=values, columnName=column
    )


def priv(
    on: hms.HiveObjectRef,
    who: str,
    kind: int,
    privilege: str,
    grantor: str = "bob",
    option: bool = False,
) -> hms.HiveObjectPrivilege:
    info = hms.PrivilegeGrantInfo(
        privilege=privilege, createTime=0, grantor=grantor, grantorType=USER, grantOption=option
    )
    return hms.HiveObjectPrivilege(
        hiveObject=on, principalName=who, principalType=kind, grantInfo=info
    )


def bag(*items: hms.HiveObjectPrivilege) -> hms.PrivilegeBag:
    return hms.PrivilegeBag(privileges=list(items))


def shown(found: list[hms.HiveObjectPrivilege]) -> list[tuple]:
    """Grants as (object type, db, table, values, column, principal, privilege, option)."""
    return [
        (
            p.hiveObject.objectType,
            p.hiveObject.dbName,
            p.hiveObject.objectName,
            p.hiveObject.partValues,
            p.hiveObject.columnName,
            p.principalName,
            p.grantInfo.privilege,
            p.grantInfo.grantOption,
        )
        for p in found
    ]


def privileges(infos: list[hms.PrivilegeGrantInfo] | None) -> list[str]:
    return sorted(i.privilege for i in infos or [])


@contextlib.contextmanager
def refused(message: str) -> Iterator[None]:
    """Expects HMS's MetaException with exactly ``message``."""
    with pytest.raises(hms.MetaException) as caught:
        yield
    assert caught.value.message == message


def test_built_in_roles(client) -> None:
    assert {"admin", "public"} <= set(client.get_role_names())
    with refused("public role implictly exists. It can't be created."):
        client.create_role(hms.Role(roleName="public", ownerName="x"))
    with refused("Role admin already exists."):
        client.create_role(hms.Role(roleName="admin", ownerName="x"))
    for name in ("admin", "public"):
        with refused("public,admin roles can't be dropped."):
            client.drop_role(name)
    # Every user is in public, implicitly; no one can be added to it or taken out of it.
    assert client.list_roles("somebody", USER) == [
        hms.Role(roleName="public", createTime=0, ownerName="public")
    ]
    [grant] = client.get_role_grants_for_principal(
        hms.GetRoleGrantsForPrincipalRequest(principal_name="somebody", principal_type=USER)
    ).principalGrants
    assert (grant.roleName, grant.principalName, grant.grantTime, grant.grantorName) == (
        "public",
        "somebody",
        0,
        None,
    )
    assert client.list_roles("somegroup", GROUP) == []
    with refused(
        "No user can be added to public. Since all users implictly belong to public role."
    ):
        client.grant_role("public", "somebody", USER, "bob", USER, False)
    with refused("public role can't be revoked."):
        client.revoke_role("public", "somebody", USER)
    assert (
        client.get_principals_in_role(
            hms.GetPrincipalsInRoleRequest(roleName="public")
        ).principalGrants
        == []
    )
    # admin holds everything on the metastore, with the grant option.
    assert shown(client.list_privileges("admin", ROLE, obj(GLOBAL))) == [
        (GLOBAL, None, None, None, None, "admin", "All", True)
    ]


def test_role_cycle(client, n: str) -> None:
    analysts, readers = f"analysts{n}", f"readers{n}"
    assert client.create_role(hms.Role(roleName=analysts, ownerName="bob", createTime=5))
    with refused(f"Role {analysts} already exists."):
        client.create_role(hms.Role(roleName=analysts, ownerName="bob"))
    assert [r.roleName for r in client.list_roles("alice" + n, USER)] == ["public"]
    assert client.grant_role(analysts, "alice" + n, USER, "bob", USER, False)
    with refused(f"Principal alice{n} already has the role {analysts}"):
        client.grant_role(analysts, "alice" + n, USER, "carl", USER, True)
    with refused(f"nope{n} role can not be found."):
        client.grant_role("nope" + n, "alice" + n, USER, "bob", USER, False)
    with refused(f"Role nope{n} does not exist"):
        client.grant_role(analysts, "nope" + n, ROLE, "bob", USER, False)
    roles = client.list_roles("alice" + n, USER)
    assert [r.roleName for r in roles] == [analysts, "public"]
    assert roles[0].ownerName == "bob" and roles[0].createTime > 5  # the server's clock
    # Roles granted to roles; no cycles.
    client.create_role(hms.Role(roleName=readers, ownerName="bob"))
    client.grant_role(readers, analysts, ROLE, "bob", USER, False)
    assert [r.roleName for r in client.list_roles(analysts, ROLE)] == [readers]
    with refused(
        f"Cannot grant role {readers} to {analysts} as {analysts} already belongs to "
        f"the role {readers}. (no cycles allowed)"
    ):
        client.grant_role(analysts, readers, ROLE, "bob", USER, False)
    with refused(
        f"Cannot grant role {readers} to {readers} as {readers} already belongs to "
        f"the role {readers}. (no cycles allowed)"
    ):
        client.grant_role(readers, readers, ROLE, "bob", USER, False)
    members = client.get_principals_in_role(
        hms.GetPrincipalsInRoleRequest(roleName=analysts)
    ).principalGrants
    assert [(m.principalName, m.principalType, m.grantorName, m.grantOption) for m in members] == [
        ("alice" + n, USER, "bob", False)
    ]
    # The grant option alone is revoked; a missing one is HMS's MetaException.
    request = hms.GrantRevokeRoleRequest(
        requestType=REVOKE,
        roleName=analysts,
        principalName="alice" + n,
        principalType=USER,
        grantOption=True,
    )
    with refused(f"User alice{n} does not have grant option with role {analysts}"):
        client.grant_revoke_role(request)
    client.grant_revoke_role(
        hms.GrantRevokeRoleRequest(
            requestType=GRANT,
            roleName=analysts,
            principalName="dave" + n,
            principalType=USER,
            grantor="carl",
            grantorType=GROUP,
            grantOption=True,
        )
    )
    request.principalName = "dave" + n
    assert client.grant_revoke_role(request).success
    [dave] = [
        m
        for m in client.get_principals_in_role(
            hms.GetPrincipalsInRoleRequest(roleName=analysts)
        ).principalGrants
        if m.principalName == "dave" + n
    ]
    assert (dave.grantOption, dave.grantorName, dave.grantorPrincipalType) == (False, "carl", GROUP)
    # Revoking a role someone does not have does nothing; an unknown role is refused.
    assert client.revoke_role(analysts, "nobody" + n, USER)
    with refused(f"nope{n} role can not be found."):
        client.revoke_role("nope" + n, "alice" + n, USER)
    assert client.revoke_role(analysts, "dave" + n, USER)
    with refused("Unknown request type None"):
        client.grant_revoke_role(
            hms.GrantRevokeRoleRequest(roleName=analysts, principalName="x", principalType=USER)
        )
    # Dropping a role removes its memberships both ways; a missing role drops fine.
    assert client.drop_role(readers)
    assert client.list_roles(analysts, ROLE) == []
    assert client.drop_role("never" + n)
    assert readers not in client.get_role_names()
    client.create_role(hms.Role(roleName=readers, ownerName="eve"))
    assert (
        client.get_principals_in_role(
            hms.GetPrincipalsInRoleRequest(roleName=readers)
        ).principalGrants
        == []
    )
    assert client.list_roles(analysts, ROLE) == []


def test_privileges_on_every_kind_of_object(client, n: str) -> None:
    db, alice, grp = f"pv{n}", f"alice{n}", f"grp{n}"
    create_db(client, db)
    client.create_table(make_table(db, "t", keys=[("ds", "string")], columns=[("a", "int")]))
    client.add_partition(make_partition(db, "t", ["1"]))
    objects = [
        obj(GLOBAL),
        obj(DATABASE, db.upper()),
        obj(TABLE, db, "T"),
        obj(PARTITION, db, "t", ["1"]),
        obj(COLUMN, db, "t", None, "A"),
        obj(COLUMN, db, "t", ["1"], "a"),
    ]
    assert client.grant_privileges(bag(*(priv(o, alice, USER, "SELECT") for o in objects)))
    # Grantors are told apart without case; the message names the one sent.
    messages = [
        "SELECT is already granted by BOB",
        f"SELECT is already granted on database {db} by BOB",
        f"SELECT is already granted on table [{db},t] by BOB",
        f"SELECT is already granted on partition [{db},t,ds=1] by BOB",
        f"SELECT is already granted on column a [{db},t] by BOB",
        f"SELECT is already granted on column a [{db},t,ds=1] by BOB",
    ]
    for on, message in zip(objects, messages, strict=True):
        with refused(message):
            client.grant_privileges(bag(priv(on, alice, USER, "SELECT", grantor="BOB")))
    # The same privilege from another grantor is another grant; a group's is its own.
    client.grant_privileges(
        bag(
            priv(obj(TABLE, db, "t"), alice, USER, "SELECT", grantor="carl"),
            priv(obj(TABLE, db, "t"), grp, GROUP, "INSERT,UPDATE"),
        )
    )
    table = obj(TABLE, db, "t")
    assert sorted(shown(client.list_privileges(None, None, table))) == sorted(
        [
            (TABLE, db, "t", None, None, alice, "SELECT", False),
            (TABLE, db, "t", None, None, alice, "SELECT", False),
            (TABLE, db, "t", None, None, grp, "INSERT", False),
            (TABLE, db, "t", None, None, grp, "UPDATE", False),
        ]
    )
    assert {p.grantInfo.grantor for p in client.list_privileges(alice, USER, table)} == {
        "bob",
        "carl",
    }
    assert shown(client.list_privileges(alice, USER, obj(PARTITION, db, "t", ["1"]))) == [
        (PARTITION, db, "t", ["1"], None, alice, "SELECT", False)
    ]
    assert shown(client.list_privileges(None, None, obj(COLUMN, db, "t", None, "a"))) == [
        (COLUMN, db, "t", None, "a", alice, "SELECT", False)
    ]
    # Everything a principal holds: no object type, or no database for one kind.
    every = shown(client.list_privileges(alice, USER, obj(None)))
    assert [(g[0], g[3]) for g in every] == [
        (GLOBAL, None),
        (DATABASE, None),
        (TABLE, None),
        (TABLE, None),
        (PARTITION, ["1"]),
        (COLUMN, None),
        (COLUMN, ["1"]),
    ]
    assert [
        g[3] for g in shown(client.list_privileges(alice, USER, obj(COLUMN, None, None, ["1"])))
    ] == [["1"]]
    # What is not there: HMS's answers.
    with refused(f"There is no database named nodb{n}"):
        client.grant_privileges(bag(priv(obj(DATABASE, f"nodb{n}"), alice, USER, "SELECT")))
    assert client.grant_privileges(bag(priv(obj(TABLE, db, "nope"), alice, USER, "SELECT")))
    assert client.grant_privileges(bag(priv(obj(PARTITION, db, "t", ["9"]), alice, USER, "X")))
    assert client.list_privileges(None, None, obj(TABLE, db, "nope")) == []
    assert client.list_privileges(None, None, obj(PARTITION, db, "t", ["9"])) == []
    with refused("Invalid partition key & values; keys [ds, ], values [1, 2, ]"):
        client.list_privileges(None, None, obj(PARTITION, db, "t", ["1", "2"]))
    with refused(f"{db}.nope table not found"):
        client.list_privileges(None, None, obj(PARTITION, db, "nope", ["1"]))
    with refused(f"Role nope{n} does not exist"):
        client.grant_privileges(bag(priv(obj(GLOBAL), f"nope{n}", ROLE, "ALL")))


def test_revoke(client, n: str) -> None:
    db, alice = f"rv{n}", f"alice{n}"
    create_db(client, db)
    client.create_table(make_table(db, "t", keys=[("ds", "string")]))
    client.add_partition(make_partition(db, "t", ["1"]))
    table = obj(TABLE, db, "t")
    client.grant_privileges(
        bag(
            priv(table, alice, USER, "SELECT,INSERT", option=True),
            priv(obj(GLOBAL), alice, USER, "ALL"),
        )
    )
    missing = [
        (obj(GLOBAL), "No user grant found for privileges DROP"),
        (obj(DATABASE, db), f"No database grant found for privileges DROP on database {db}"),
        (table, f"No grant (DROP) found  on table t, database is {db}"),
        (
            obj(PARTITION, db, "t", ["1"]),
            f"No grant (DROP) found  on table t, partition is ds=1, database is {db}",
        ),
        (
            obj(COLUMN, db, "t", None, "v"),
            f"No grant (DROP) found  on table t, column name = v, database is {db}",
        ),
        (
            obj(COLUMN, db, "t", ["1"], "v"),
            f"No grant (DROP) found  on table t, partition is ds=1, column name = v, "
            f"database is {db}",
        ),
    ]
    for on, message in missing:
        with refused(message):
            client.revoke_privileges(bag(priv(on, alice, USER, "DROP")))
    # All or nothing: one missing privilege leaves the others granted.
    with refused(f"No grant (DROP) found  on table t, database is {db}"):
        client.revoke_privileges(
            bag(priv(table, alice, USER, "SELECT"), priv(table, alice, USER, "DROP"))
        )
    assert len(client.list_privileges(alice, USER, table)) == 2
    # revokeGrantOption takes only the grant option; without one it is refused.
    revoke_option = hms.GrantRevokePrivilegeRequest(
        requestType=REVOKE,
        privileges=bag(priv(table, alice, USER, "SELECT")),
        revokeGrantOption=True,
    )
    assert client.grant_revoke_privileges(revoke_option).success
    assert {
        (p.grantInfo.privilege, p.grantInfo.grantOption)
        for p in client.list_privileges(alice, USER, table)
    } == {("SELECT", False), ("INSERT", True)}
    with refused(f"User {alice} does not have grant option with privilege SELECT"):
        client.grant_revoke_privileges(revoke_option)
    # Revoked whoever granted it; "a,b" is two privileges.
    assert client.revoke_privileges(bag(priv(table, alice, USER, "INSERT,SELECT", grantor="x")))
    assert client.list_privileges(alice, USER, table) == []
    assert client.grant_revoke_privileges(
        hms.GrantRevokePrivilegeRequest(
            requestType=REVOKE, privileges=bag(priv(obj(GLOBAL), alice, USER, "ALL"))
        )
    ).success
    assert client.list_privileges(alice, USER, obj(GLOBAL)) == []
    with refused("Unknown request type None"):
        client.grant_revoke_privileges(hms.GrantRevokePrivilegeRequest(privileges=bag()))


def test_privilege_set_through_roles(client, n: str) -> None:
    db, alice, grp = f"ps{n}", f"alice{n}", f"grp{n}"
    direct, nested, of_group = f"direct{n}", f"nested{n}", f"ofgroup{n}"
    create_db(client, db)
    client.create_table(make_table(db, "t"))
    for role in (direct, nested, of_group):
        client.create_role(hms.Role(roleName=role, ownerName="bob"))
    client.grant_role(direct, alice, USER, "bob", USER, False)
    client.grant_role(nested, direct, ROLE, "bob", USER, False)
    client.grant_role(of_group, grp, GROUP, "bob", USER, False)
    table = obj(TABLE, db, "T")
    client.grant_privileges(
        bag(
            priv(table, alice, USER, "SELECT"),
            priv(table, grp, GROUP, "UPDATE"),
            priv(table, nested, ROLE, "INSERT"),
            priv(table, of_group, ROLE, "DELETE"),
            priv(obj(GLOBAL), nested, ROLE, "CREATE"),
            priv(obj(GLOBAL), alice, USER, "LOCK"),
        )
    )
    found = client.get_privilege_set(table, alice, [grp, "other" + n])
    assert {u: privileges(i) for u, i in found.userPrivileges.items()} == {alice: ["SELECT"]}
    assert {g: privileges(i) for g, i in found.groupPrivileges.items()} == {
        grp: ["UPDATE"],
        "other" + n: [],
    }
    roles = {r: privileges(i) for r, i in found.rolePrivileges.items()}
    assert roles == {direct: [], nested: ["INSERT"], of_group: ["DELETE"], "public": []}
    # Without groups: no group entries and not the group's roles; nobody: public only.
    found = client.get_privilege_set(table, alice, [])
    assert found.groupPrivileges is None and of_group not in found.rolePrivileges
    found = client.get_privilege_set(table, "nobody" + n, [])
    assert found.userPrivileges == {"nobody" + n: []} and found.rolePrivileges == {"public": []}
    # On the metastore itself HMS answers a user's and groups' grants, not roles'.
    found = client.get_privilege_set(obj(GLOBAL), alice, [grp])
    assert {u: privileges(i) for u, i in found.userPrivileges.items()} == {alice: ["LOCK"]}
    assert found.groupPrivileges == {} and found.rolePrivileges is None
    # Dropping a role takes its grants with it (and a new role of its name has none).
    client.drop_role(nested)
    client.create_role(hms.Role(roleName=nested, ownerName="bob"))
    assert client.list_privileges(nested, ROLE, obj(None)) == []
    assert client.get_privilege_set(table, alice, []).rolePrivileges == {direct: [], "public": []}


def test_privileges_follow_their_objects(client, n: str) -> None:
    db, other, alice = f"fo{n}", f"fo{n}b", f"alice{n}"
    create_db(client, db)
    create_db(client, other)
    client.create_table(make_table(db, "t", keys=[("ds", "string")]))
    client.add_partition(make_partition(db, "t", ["1"]))
    client.grant_privileges(
        bag(
            priv(obj(DATABASE, db), alice, USER, "ALL"),
            priv(obj(TABLE, db, "t"), alice, USER, "SELECT"),
            priv(obj(COLUMN, db, "t", None, "v"), alice, USER, "SELECT"),
            priv(obj(PARTITION, db, "t", ["1"]), alice, USER, "SELECT"),
        )
    )
    # A rename (even to another database) carries them.
    renamed = client.get_table(db, "t")
    renamed.dbName, renamed.tableName = other, "u"
    client.alter_table(db, "t", renamed)
    assert client.list_privileges(None, None, obj(TABLE, db, "t")) == []
    assert shown(client.list_privileges(None, None, obj(TABLE, other, "u"))) == [
        (TABLE, other, "u", None, None, alice, "SELECT", False)
    ]
    assert len(client.list_privileges(None, None, obj(COLUMN, other, "u", None, "v"))) == 1
    # A dropped partition's grants are gone, also once it is added again.
    client.drop_partition(other, "u", ["1"], True)
    assert client.list_privileges(None, None, obj(PARTITION, other, "u", ["1"])) == []
    time.sleep(1.1)  # (a partition added again in the same second is not told apart)
    client.add_partition(make_partition(other, "u", ["1"]))
    assert client.list_privileges(None, None, obj(PARTITION, other, "u", ["1"])) == []
    # A dropped table's are gone, also for a new table of its name.
    client.drop_table(other, "u", True)
    client.create_table(make_table(other, "u"))
    assert client.list_privileges(None, None, obj(TABLE, other, "u")) == []
    assert client.list_privileges(None, None, obj(COLUMN, other, "u", None, "v")) == []
    assert [g[0] for g in shown(client.list_privileges(alice, USER, obj(None)))] == [DATABASE]
    # A dropped database's too (and its tables').
    client.create_table(make_table(db, "w"))
    client.grant_privileges(bag(priv(obj(TABLE, db, "w"), alice, USER, "SELECT")))
    client.drop_database(db, True, True)
    create_db(client, db)
    assert client.list_privileges(None, None, obj(DATABASE, db)) == []
    assert client.list_privileges(alice, USER, obj(None)) == []


def test_a_table_created_with_privileges_has_them_granted(client, n: str) -> None:
    """HMS 2.3 grants a new table's ``privileges`` (at its own time; to roles that do not exist
    too, which we leave out); a database's or a partition's it ignores."""
    db = f"cp{n}"
    create_db(client, db)
    info = hms.PrivilegeGrantInfo(privilege="SELECT", createTime=3, grantor="gg",
                                  grantorType=USER, grantOption=True)  # fmt: skip
    given = hms.PrincipalPrivilegeSet(userPrivileges={f"u{n}": [info]},
                                      rolePrivileges={f"nosuch{n}": [info]})  # fmt: skip
    client.create_table(make_table(db, "t", privileges=given))
    assert shown(client.list_privileges(None, None, obj(TABLE, db, "t"))) == [
        (TABLE, db, "t", None, None, f"u{n}", "SELECT", True)
    ]


def test_grants_survive_restarts_and_are_shared_by_servers(start_server, n: str) -> None:
    first = start_server()
    conn = first.client()
    create_db(conn, "shared")
    conn.create_role(hms.Role(roleName="auditors", ownerName="bob"))
    conn.grant_role("auditors", "alice", USER, "bob", USER, True)
    conn.grant_privileges(bag(priv(obj(DATABASE, "shared"), "auditors", ROLE, "SELECT")))
    conn.close()
    second = start_server(storage=first.config.storage)
    other = second.client()
    assert "auditors" in other.get_role_names()
    found = other.get_privilege_set(obj(DATABASE, "shared"), "alice", [])
    assert privileges(found.rolePrivileges["auditors"]) == ["SELECT"]
    # What one server grants the other sees at once.
    other.grant_privileges(bag(priv(obj(DATABASE, "shared"), "alice", USER, "ALL")))
    conn = first.client()
    assert [
        p.grantInfo.privilege for p in conn.list_privileges("alice", USER, obj(DATABASE, "shared"))
    ] == ["ALL"]
    conn.close()
    other.close()
    first.stop()
    third = start_server(storage=first.config.storage)
    again = third.client()
    members = again.get_principals_in_role(
        hms.GetPrincipalsInRoleRequest(roleName="auditors")
    ).principalGrants
    assert [(m.principalName, m.grantOption) for m in members] == [("alice", True)]
    again.close()


def test_concurrent_grants_on_two_servers_are_neither_lost_nor_doubled(start_server) -> None:
    first = start_server()
    second = start_server(storage=first.config.storage)
    setup = first.client()
    create_db(setup, "race")
    setup.close()
    privileges_wanted = [f"P{i}" for i in range(8)]
    outcomes: list[str] = []
    lock = threading.Lock()

    def worker(server) -> None:  # noqa: ANN001
        conn = server.client()
        try:
            try:
                conn.create_role(hms.Role(roleName="racers", ownerName="x"))
                result = "created"
            except hms.MetaException as exc:
                result = exc.message
            with lock:
                outcomes.append(result)
            for name in privileges_wanted:
                try:
                    conn.grant_privileges(bag(priv(obj(DATABASE, "race"), "alice", USER, name)))
                    result = "granted"
                except hms.MetaException as exc:
                    result = exc.message
                with lock:
                    outcomes.append(result)
        finally:
            conn.close()

    threads = [threading.Thread(target=worker, args=(server,)) for server in [first, second] * 3]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert outcomes.count("created") == 1
    assert outcomes.count("Role racers already exists.") == 5
    assert outcomes.count("granted") == len(privileges_wanted)
    assert len(outcomes) == 6 + 6 * len(privileges_wanted)
    check = second.client()
    found = check.list_privileges(None, None, obj(DATABASE, "race"))
    assert sorted(p.grantInfo.privilege for p in found) == privileges_wanted
    assert check.get_role_names().count("racers") == 1
    check.close()


def test_unknown_principal_types_are_refused(client) -> None:
    with pytest.raises(hms.MetaException, match="Unknown principal type 7"):
        client.grant_role("admin", "someone", 7, "admin", hms.PrincipalType.USER, False)
    with pytest.raises(hms.MetaException, match="Database name cannot be null or empty"):
        client.grant_privileges(hms.PrivilegeBag(privileges=[hms.HiveObjectPrivilege(
            hiveObject=hms.HiveObjectRef(objectType=hms.HiveObjectType.DATABASE, dbName=""),
            principalName="u", principalType=hms.PrincipalType.USER,
            grantInfo=hms.PrivilegeGrantInfo(privilege="SELECT", createTime=0, grantor="admin",
                                             grantorType=hms.PrincipalType.USER,
                                             grantOption=False))]))  # fmt: skip
