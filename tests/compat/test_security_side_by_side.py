"""Roles and privileges: the same calls sent to the reference Hive Metastore 2.3.10 and to our
server, one after the other, compared step by step (times of the servers and the order of lists,
which HMS does not define, left out).

Where HMS 2.3 fails with an internal error (``TApplicationException`` "Internal error
processing ...": a role created twice, a privilege granted twice, a revoke of nothing) we answer
the MetaException these calls declare with the message HMS's log gives; those steps (``INTERNAL``)
check only that. The messages themselves are checked in
``tests/integration/test_roles_and_privileges.py``.

The reference metastore listens on every interface, so it only starts inside a private network
namespace (``sh tests/run-isolated.sh .venv/bin/python -m pytest tests/compat/...``); without
one, or without java or the pyspark jars, these tests skip (``reference_hms`` fixture).
"""

from __future__ import annotations

from typing import Any

import pytest
from support.hms_scenario import Step, make_database, make_partition, make_table, run_scenario
from support.net import MetastoreEndpoint

thrift_api = pytest.importorskip(
    "metastore_server.thrift_api", reason="metastore_server.thrift_api is not importable"
)
hms = thrift_api.hms

pytestmark = pytest.mark.compat

DB = "compat_security"
USER, ROLE, GROUP = hms.PrincipalType.USER, hms.PrincipalType.ROLE, hms.PrincipalType.GROUP
T = hms.HiveObjectType
INTERNAL_ERROR = 6  # TApplicationException.INTERNAL_ERROR


def _obj(kind: int, table: str | None = None, values: list[str] | None = None,
         column: str | None = None, db: str | None = DB) -> Any:  # fmt: skip
    return hms.HiveObjectRef(objectType=kind, dbName=db if kind != T.GLOBAL else None,
                             objectName=table, partValues=values, columnName=column)  # fmt: skip


def _bag(on: Any, who: str, kind: int, privilege: str, option: bool = False) -> Any:
    info = hms.PrivilegeGrantInfo(privilege=privilege, createTime=0, grantor="bob",
                                  grantorType=USER, grantOption=option)  # fmt: skip
    return hms.PrivilegeBag(privileges=[hms.HiveObjectPrivilege(
        hiveObject=on, principalName=who, principalType=kind, grantInfo=info)])  # fmt: skip


def _revoke_option(on: Any, who: str, privilege: str) -> Any:
    return hms.GrantRevokePrivilegeRequest(requestType=hms.GrantRevokeType.REVOKE,
                                           privileges=_bag(on, who, USER, privilege),
                                           revokeGrantOption=True)  # fmt: skip


def _role(name: str) -> Any:
    return hms.Role(roleName=name, ownerName="bob")


_TABLE, _PART = _obj(T.TABLE, "t"), _obj(T.PARTITION, "t", ["1"])
_COL, _PART_COL = _obj(T.COLUMN, "t", None, "v"), _obj(T.COLUMN, "t", ["1"], "v")
_OBJECTS = {"global": _obj(T.GLOBAL), "db": _obj(T.DATABASE), "table": _TABLE, "part": _PART,
            "col": _COL, "partcol": _PART_COL}  # fmt: skip

STEPS: list[Step] = [
    Step("setup_db", "create_database", (make_database(hms, DB),)),
    Step("setup_table", "create_table", (make_table(hms, DB, "t", part_keys=(("ds", "string"),)),)),
    Step("setup_part", "add_partition", (make_partition(hms, DB, "t", ["1"]),), compare="none"),
    Step("create_public", "create_role", (_role("public"),)),
    Step("create_admin", "create_role", (_role("admin"),)),
    Step("create_r1", "create_role", (_role("sx_r1"),)),
    Step("create_r1_again", "create_role", (_role("sx_r1"),)),
    Step("create_r2", "create_role", (_role("sx_r2"),)),
    Step("role_names", "get_role_names", (), unordered=True),
    Step("drop_admin", "drop_role", ("admin",)),
    Step("drop_missing", "drop_role", ("sx_missing",)),
    Step("grant_r1_alice", "grant_role", ("sx_r1", "sx_alice", USER, "bob", USER, True)),
    Step("grant_r1_alice_again", "grant_role", ("sx_r1", "sx_alice", USER, "bob", USER, False)),
    Step("grant_missing_role", "grant_role", ("sx_nope", "sx_alice", USER, "bob", USER, False)),
    Step("grant_public", "grant_role", ("public", "sx_alice", USER, "bob", USER, False)),
    Step("grant_r2_to_r1", "grant_role", ("sx_r2", "sx_r1", ROLE, "bob", USER, False)),
    Step("grant_cycle", "grant_role", ("sx_r1", "sx_r2", ROLE, "bob", USER, False)),
    Step("grant_r1_group", "grant_role", ("sx_r1", "sx_grp", GROUP, "bob", USER, False)),
    Step("list_roles_alice", "list_roles", ("sx_alice", USER), unordered=True),
    Step("list_roles_group", "list_roles", ("sx_grp", GROUP), unordered=True),
    Step("list_roles_r1", "list_roles", ("sx_r1", ROLE), unordered=True),
    Step("role_grants_alice", "get_role_grants_for_principal",
         (hms.GetRoleGrantsForPrincipalRequest(principal_name="sx_alice", principal_type=USER),)),
    Step("principals_in_r1", "get_principals_in_role",
         (hms.GetPrincipalsInRoleRequest(roleName="sx_r1"),)),
    Step("principals_in_missing", "get_principals_in_role",
         (hms.GetPrincipalsInRoleRequest(roleName="sx_missing"),)),
    Step("revoke_role_nonmember", "revoke_role", ("sx_r1", "sx_nobody", USER)),
    Step("revoke_public", "revoke_role", ("public", "sx_alice", USER)),
    Step("revoke_role_missing", "revoke_role", ("sx_nope", "sx_alice", USER)),
    Step("revoke_role_option", "grant_revoke_role", (hms.GrantRevokeRoleRequest(
        requestType=hms.GrantRevokeType.REVOKE, roleName="sx_r1", principalName="sx_alice",
        principalType=USER, grantOption=True),)),
    Step("revoke_role_option_again", "grant_revoke_role", (hms.GrantRevokeRoleRequest(
        requestType=hms.GrantRevokeType.REVOKE, roleName="sx_r1", principalName="sx_alice",
        principalType=USER, grantOption=True),)),
    *(Step(f"grant_{name}", "grant_privileges", (_bag(on, "sx_alice", USER, "SELECT", True),))
      for name, on in _OBJECTS.items()),
    *(Step(f"grant_{name}_again", "grant_privileges", (_bag(on, "sx_alice", USER, "SELECT"),))
      for name, on in _OBJECTS.items()),
    Step("grant_table_group", "grant_privileges", (_bag(_TABLE, "sx_grp", GROUP, "UPDATE"),)),
    Step("grant_table_r2", "grant_privileges", (_bag(_TABLE, "sx_r2", ROLE, "INSERT"),)),
    Step("grant_table_public", "grant_privileges", (_bag(_TABLE, "public", ROLE, "DELETE"),)),
    Step("grant_missing_db", "grant_privileges", (_bag(_obj(T.DATABASE, db="sx_nodb"),
                                                       "sx_alice", USER, "SELECT"),)),
    Step("grant_missing_table", "grant_privileges",
         (_bag(_obj(T.TABLE, "nope"), "sx_alice", USER, "SELECT"),)),
    Step("grant_missing_part", "grant_privileges",
         (_bag(_obj(T.PARTITION, "t", ["9"]), "sx_alice", USER, "SELECT"),)),
    Step("grant_bad_values", "grant_privileges",
         (_bag(_obj(T.PARTITION, "t", ["1", "2"]), "sx_alice", USER, "SELECT"),)),
    Step("grant_missing_role_principal", "grant_privileges",
         (_bag(_TABLE, "sx_nope", ROLE, "SELECT"),)),
    *(Step(f"list_{name}", "list_privileges", ("sx_alice", USER, on), unordered=True)
      for name, on in _OBJECTS.items()),
    Step("list_table_anyone", "list_privileges", (None, None, _TABLE), unordered=True),
    Step("list_part_anyone", "list_privileges", (None, None, _PART), unordered=True),
    Step("list_all_alice", "list_privileges", ("sx_alice", USER, _obj(None)), unordered=True),
    Step("list_tables_alice", "list_privileges", ("sx_alice", USER, _obj(T.TABLE, db=None)),
         unordered=True),
    Step("list_missing_part", "list_privileges", (None, None, _obj(T.PARTITION, "t", ["9"]))),
    Step("list_bad_values", "list_privileges", (None, None, _obj(T.PARTITION, "t", []))),
    Step("set_table", "get_privilege_set", (_TABLE, "sx_alice", ["sx_grp", "sx_other"])),
    Step("set_table_nobody", "get_privilege_set", (_TABLE, "sx_nobody", [])),
    Step("set_part", "get_privilege_set", (_PART, "sx_alice", [])),
    Step("set_global", "get_privilege_set", (_obj(T.GLOBAL), "sx_alice", ["sx_grp"])),
    Step("set_global_nobody", "get_privilege_set", (_obj(T.GLOBAL), "sx_nobody", [])),
    *(Step(f"revoke_missing_{name}", "revoke_privileges", (_bag(on, "sx_alice", USER, "DROP"),))
      for name, on in _OBJECTS.items()),
    *(Step(f"revoke_option_{name}", "grant_revoke_privileges",
           (_revoke_option(on, "sx_alice", "SELECT"),)) for name, on in _OBJECTS.items()),
    *(Step(f"revoke_option_{name}_again", "grant_revoke_privileges",
           (_revoke_option(on, "sx_alice", "SELECT"),)) for name, on in _OBJECTS.items()),
    Step("list_all_alice_after", "list_privileges", ("sx_alice", USER, _obj(None)),
         unordered=True),
    Step("revoke_table", "revoke_privileges", (_bag(_TABLE, "sx_alice", USER, "SELECT"),)),
    Step("list_table_after_revoke", "list_privileges", ("sx_alice", USER, _TABLE)),
    Step("drop_r2", "drop_role", ("sx_r2",)),
    Step("list_roles_r1_after", "list_roles", ("sx_r1", ROLE)),
    Step("list_table_after_drop_r2", "list_privileges", (None, None, _TABLE), unordered=True),
    Step("drop_table", "drop_table", (DB, "t", True)),
    Step("recreate_table", "create_table", (make_table(hms, DB, "t",
                                                       part_keys=(("ds", "string"),)),)),
    Step("list_table_recreated", "list_privileges", (None, None, _TABLE)),
    Step("drop_db", "drop_database", (DB, True, True)),
    Step("recreate_db", "create_database", (make_database(hms, DB),)),
    Step("list_db_recreated", "list_privileges", (None, None, _obj(T.DATABASE))),
    Step("cleanup_db", "drop_database", (DB, True, True)),
    Step("cleanup_r1", "drop_role", ("sx_r1",)),
]  # fmt: skip

#: Steps where HMS 2.3 answers an internal error and we the MetaException.
INTERNAL = frozenset({
    "create_admin", "create_r1_again", "grant_r1_alice_again", "grant_missing_role",
    "revoke_role_missing", "grant_missing_db", "grant_missing_role_principal",
    *(f"grant_{name}_again" for name in _OBJECTS), *(f"revoke_missing_{name}" for name in _OBJECTS),
})  # fmt: skip


def _canon(value: Any) -> Any:
    """An outcome with the servers' clocks and the order of lists left out."""
    if isinstance(value, dict):
        return {k: "<time>" if k in ("createTime", "grantTime") and isinstance(v, int) and v > 0
                else _canon(v) for k, v in value.items()}  # fmt: skip
    if isinstance(value, list):
        return sorted((_canon(v) for v in value), key=repr)
    return value


@pytest.fixture(scope="module")
def outcomes(
    reference_hms: MetastoreEndpoint, our_metastore: MetastoreEndpoint
) -> dict[str, dict[str, dict[str, Any]]]:
    """Every step's outcome on each server."""
    return {
        name: run_scenario(hms, lambda e=endpoint: thrift_api.make_client(e.host, e.port),
                           endpoint.warehouse_dir, STEPS)
        for name, endpoint in (("reference", reference_hms), ("ours", our_metastore))
    }  # fmt: skip


@pytest.mark.parametrize("step", STEPS, ids=[s.name for s in STEPS])
def test_same_answer(outcomes: dict[str, dict[str, dict[str, Any]]], step: Step) -> None:
    theirs, ours = outcomes["reference"][step.name], outcomes["ours"][step.name]
    if step.compare == "none":
        return
    if step.name in INTERNAL:
        assert (theirs.get("error"), theirs.get("type")) == ("TApplicationException",
                                                             INTERNAL_ERROR), theirs  # fmt: skip
        assert ours.get("error") == "MetaException", ours
        return
    assert _canon(ours) == _canon(theirs)
