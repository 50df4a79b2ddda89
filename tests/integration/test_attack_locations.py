"""Locations are owned under ``--authorization privileges`` (issue 48): bob, authenticated with
SASL PLAIN (or claiming his name with ``set_ugi`` under ``--auth none``), tries to give his
tables, partitions and databases the directories of alice's, in every spelling (``file:`` or a
bare path, ``..``, percent-encoding, a symbolic link, a parent, a directory inside); each is
refused with HMS's words and nothing done, and alice's files are all there after bob drops what
he could make with ``deleteData``. Administrators may name any location; owners keep naming
locations inside their own objects and the defaults Spark and Hive send; drops leave other
tables' directories standing even where an administrator laid them out inside bob's."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from metastore_server.thrift_api import hms

from .conftest import RunningServer, make_partition, make_table
from .privileged import connections, privileged_server

USER = hms.PrincipalType.USER
USERS = ("hive", "alice", "bob", "carol")


def refused_text(user: str, operation: str, *locations: str) -> str:
    """HMS's SQL-standard refusal of a location (local paths: ``LOCAL_URI``)."""
    listed = ", ".join(
        f"[SELECT, INSERT, DELETE, OBJECT OWNERSHIP] on Object [type=LOCAL_URI, name={loc}]"
        for loc in locations
    )
    return (f"Permission denied: Principal [name={user}, type=USER] does not have following "
            f"privileges for operation {operation} [{listed}]")  # fmt: skip


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """--auth password, --authorization privileges, hive an administrator."""
    running = privileged_server(tmp_path_factory.mktemp("attack"), USERS)
    yield running
    running.stop()


@pytest.fixture()
def connect(server: RunningServer) -> Iterator[Callable[[str], Any]]:
    """Opens clients authenticated as a user; closes them after the test."""
    yield from connections(server)


def _table(db: str, name: str, location: str | None = None, keys: bool = False,
           **extra: Any) -> hms.Table:  # fmt: skip
    table = make_table(db, name, keys=[("ds", "string")] if keys else None, **extra)
    table.sd.location = location
    return table


@dataclass
class Victim:
    """Alice's database ``db`` with partitioned table ``a`` and partition ``ds=1``, each
    directory holding a file of hers."""

    db: str
    db_dir: Path
    table_dir: Path
    part_dir: Path

    @property
    def files(self) -> list[Path]:
        return [d / "alice.txt" for d in (self.db_dir, self.table_dir, self.part_dir)]

    def intact(self) -> bool:
        return all(f.read_text() == "alice's" for f in self.files)


def _victim(alice: Any, wh: Path, db: str) -> Victim:
    alice.create_database(hms.Database(name=db, description="", parameters={}))
    alice.create_table(_table(db, "a", keys=True))
    alice.add_partition(make_partition(db, "a", ["1"]))
    victim = Victim(db, wh / f"{db}.db", wh / f"{db}.db" / "a", wh / f"{db}.db" / "a" / "ds=1")
    for file in victim.files:
        file.write_text("alice's")
    return victim


def _attacker_db(bob: Any, wh: Path, db: str, victim: Victim) -> Path:
    """Bob's database, with a link in its directory to alice's."""
    bob.create_database(hms.Database(name=db, description="", parameters={}))
    (wh / f"{db}.db" / "link").symlink_to(victim.db_dir)
    return wh / f"{db}.db"


def _attacks(wh: Path, victim: Victim, bob_dir: Path) -> list[str]:
    """Alice's directories as bob may spell them."""
    t = victim.table_dir
    return [
        str(t),  # her table's directory
        f"file:{t}",  # as a file: URI
        f"file://{t}/",  # with an empty authority and a trailing slash
        str(victim.db_dir),  # her database's directory
        str(wh),  # a parent of hers (the warehouse root)
        f"{bob_dir}/../{victim.db_dir.name}/{t.name}",  # through ..
        f"{wh}/{victim.db_dir.name.replace('.', '%2E')}/{t.name}",  # percent-encoded
        f"file:{t}/sub",  # inside her table
        str(victim.part_dir),  # her partition's directory
        f"{bob_dir}/link/{t.name}",  # through a link in bob's directory
        f"{bob_dir}/link",  # the link itself (to her database)
    ]


def _refused(call: Callable[[], Any], user: str, operation: str, location: str) -> None:
    with pytest.raises(hms.MetaException) as refused:
        call()
    assert refused.value.message == refused_text(user, operation, location)


def test_bob_cannot_create_tables_at_alices_directories(
    connect: Callable, server: RunningServer
) -> None:
    alice, bob = connect("alice"), connect("bob")
    wh = server.warehouse
    victim = _victim(alice, wh, "alice_t")
    bob_dir = _attacker_db(bob, wh, "bob_t", victim)
    for i, location in enumerate(_attacks(wh, victim, bob_dir)):
        for db in ("bob_t", "default"):  # his own database, and everyone's
            table = _table(db, f"grab{i}", location)
            _refused(lambda t=table: bob.create_table(t), "bob", "CREATETABLE", location)
            external = _table(db, f"ext{i}", location, tableType="EXTERNAL_TABLE",
                              parameters={"EXTERNAL": "TRUE", "external.table.purge": "true"})
            _refused(lambda t=external: bob.create_table(t), "bob", "CREATETABLE", location)
    request = hms.CreateTableRequest(table=_table("bob_t", "req", str(victim.table_dir)))
    _refused(lambda: bob.create_table_req(request), "bob", "CREATETABLE",
             str(victim.table_dir))  # fmt: skip
    assert bob.get_all_tables("bob_t") == []
    assert not (victim.table_dir / "sub").exists()  # no directory made
    bob.drop_database("bob_t", True, True)
    assert victim.intact()


def test_bob_cannot_add_or_move_partitions_to_alices_directories(
    connect: Callable, server: RunningServer
) -> None:
    alice, bob = connect("alice"), connect("bob")
    wh = server.warehouse
    victim = _victim(alice, wh, "alice_p")
    bob_dir = _attacker_db(bob, wh, "bob_p", victim)
    bob.create_table(_table("bob_p", "t", keys=True))
    bob.add_partition(make_partition("bob_p", "t", ["mine"]))
    for i, location in enumerate(_attacks(wh, victim, bob_dir)):
        part = make_partition("bob_p", "t", [f"v{i}"], location)
        _refused(lambda p=part: bob.add_partition(p), "bob", "ALTERTABLE_ADDPARTS", location)
        _refused(lambda p=part: bob.add_partitions([make_partition("bob_p", "t", ["ok"]), p]),
                 "bob", "ALTERTABLE_ADDPARTS", location)  # fmt: skip
        request = hms.AddPartitionsRequest(dbName="bob_p", tblName="t", parts=[part],
                                           ifNotExists=False, needResult=True)  # fmt: skip
        _refused(lambda r=request: bob.add_partitions_req(r), "bob", "ALTERTABLE_ADDPARTS",
                 location)  # fmt: skip
        moved = bob.get_partition("bob_p", "t", ["mine"])
        moved.sd.location = location
        _refused(lambda p=moved: bob.alter_partition("bob_p", "t", p), "bob",
                 "ALTERPARTITION_LOCATION", location)  # fmt: skip
        _refused(lambda p=moved: bob.alter_partitions("bob_p", "t", [p]), "bob",
                 "ALTERPARTITION_LOCATION", location)  # fmt: skip
        renamed = make_partition("bob_p", "t", [f"r{i}"], location)
        _refused(lambda p=renamed: bob.rename_partition("bob_p", "t", ["mine"], p), "bob",
                 "ALTERPARTITION_LOCATION", location)  # fmt: skip
    assert [p.values for p in bob.get_partitions("bob_p", "t", -1)] == [["mine"]]
    mine = bob.get_partition("bob_p", "t", ["mine"])
    assert mine.sd.location == f"file:{bob_dir}/t/ds=mine"
    bob.drop_partition("bob_p", "t", ["mine"], True)
    bob.drop_table("bob_p", "t", True)
    bob.drop_database("bob_p", True, True)
    assert victim.intact()


def test_bob_cannot_move_his_table_to_alices_directories(
    connect: Callable, server: RunningServer
) -> None:
    alice, bob = connect("alice"), connect("bob")
    wh = server.warehouse
    victim = _victim(alice, wh, "alice_a")
    bob_dir = _attacker_db(bob, wh, "bob_a", victim)
    bob.create_table(_table("bob_a", "t"))
    for location in _attacks(wh, victim, bob_dir):
        moved = bob.get_table("bob_a", "t")
        moved.sd.location = location
        _refused(lambda t=moved: bob.alter_table("bob_a", "t", t), "bob",
                 "ALTERTABLE_LOCATION", location)  # fmt: skip
        request = hms.AlterTableRequest(dbName="bob_a", tableName="t", table=moved)
        _refused(lambda r=request: bob.alter_table_req(r), "bob", "ALTERTABLE_LOCATION",
                 location)  # fmt: skip
        moved.tableName = "renamed"  # a rename naming the location too
        _refused(lambda t=moved: bob.alter_table_with_cascade("bob_a", "t", t, False), "bob",
                 "ALTERTABLE_LOCATION", location)  # fmt: skip
    assert bob.get_table("bob_a", "t").sd.location == f"file:{bob_dir}/t"
    bob.drop_table("bob_a", "t", True)
    bob.drop_database("bob_a", True, True)
    assert victim.intact()


def test_bob_cannot_place_a_database_on_alices_directories(
    connect: Callable, server: RunningServer
) -> None:
    alice, bob = connect("alice"), connect("bob")
    wh = server.warehouse
    victim = _victim(alice, wh, "alice_d")
    bob_dir = _attacker_db(bob, wh, "bob_d", victim)
    for i, location in enumerate(_attacks(wh, victim, bob_dir)):
        database = hms.Database(name=f"grab{i}", description="", parameters={},
                                locationUri=location)  # fmt: skip
        _refused(lambda d=database: bob.create_database(d), "bob", "CREATEDATABASE", location)
        managed = hms.Database(name=f"managed{i}", description="", parameters={},
                               managedLocationUri=location)  # fmt: skip
        _refused(lambda d=managed: bob.create_database(d), "bob", "CREATEDATABASE", location)
    assert [db for db in bob.get_all_databases() if db.startswith(("grab", "managed"))] == []
    bob.drop_database("bob_d", True, True)
    assert victim.intact()


def test_a_default_location_holding_anothers_table_is_refused(
    connect: Callable, server: RunningServer
) -> None:
    alice, bob = connect("alice"), connect("bob")
    wh = server.warehouse
    # alice's table in default, at a directory of its own in the warehouse (hers to name)
    alice.create_table(_table("default", "inner_t", str(wh / "bobs" / "inner")))
    (wh / "bobs" / "inner" / "alice.txt").write_text("alice's")
    _refused(lambda: bob.create_table(_table("default", "bobs")), "bob", "CREATETABLE",
             f"file:{wh}/bobs")  # the server's default for it holds hers  # fmt: skip
    _refused(lambda: bob.create_table(_table("default", "bobs", f"file:{wh}/bobs")), "bob",
             "CREATETABLE", f"file:{wh}/bobs")  # as Spark sends it  # fmt: skip
    alice.create_table(_table("default", "in_db", str(wh / "bobdb.db" / "x")))
    _refused(lambda: bob.create_database(hms.Database(name="bobdb", description="",
                                                      parameters={})),
             "bob", "CREATEDATABASE", f"file:{wh}/bobdb.db")  # fmt: skip
    # a default location with nothing there (the usual case) is the owner's
    bob.create_table(_table("default", "bobs_own"))
    bob.drop_table("default", "bobs_own", True)
    assert (wh / "bobs" / "inner" / "alice.txt").read_text() == "alice's"


def test_administrators_name_any_location_and_drops_leave_other_tables(
    connect: Callable, server: RunningServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    alice, hive = connect("alice"), connect("hive")
    wh = server.warehouse
    victim = _victim(alice, wh, "alice_h")
    hive.create_database(hms.Database(name="hive_h", description="", parameters={}))
    hive.create_table(_table("hive_h", "over", str(victim.table_dir)))
    outside = tmp_path / "outside"
    hive.create_table(_table("hive_h", "elsewhere", str(outside)))
    assert outside.is_dir()
    hive.drop_table("hive_h", "over", True)  # alice's table is there: it stays
    assert victim.intact()
    assert "data_kept" in capsys.readouterr().out
    hive.drop_table("hive_h", "elsewhere", True)
    assert not outside.exists()
    hive.drop_database("hive_h", True, True)


def test_owners_name_locations_inside_their_own_objects(
    connect: Callable, server: RunningServer
) -> None:
    alice, bob = connect("alice"), connect("bob")
    wh = server.warehouse
    victim = _victim(alice, wh, "alice_o")
    db, t = victim.db, victim.table_dir
    alice.create_table(_table(db, "custom", str(victim.db_dir / "custom" / "t"), keys=True))
    alice.add_partition(make_partition(db, "custom", ["1"], f"file:{t}/elsewhere"))
    moved = alice.get_table(db, "custom")
    moved.sd.location = str(victim.db_dir / "moved")
    alice.alter_table(db, "custom", moved)
    part = alice.get_partition(db, "a", ["1"])
    part.sd.location = str(t / "ds=1" / "deeper")
    alice.alter_partition(db, "a", part)
    alice.create_table(_table("default", "hers", str(wh / "alice_place" / "hers")))
    alice.create_database(hms.Database(name="alice_o2", description="", parameters={},
                                       locationUri=f"file:{wh}/alice_place2"))  # fmt: skip
    # bob may not name hers, even inside the default database's directory
    _refused(lambda: bob.create_table(_table("default", "his", str(wh / "alice_place"))),
             "bob", "CREATETABLE", str(wh / "alice_place"))  # fmt: skip
    alice.drop_table("default", "hers", True)
    assert not (wh / "alice_place" / "hers").exists()
    alice.drop_database("alice_o2", True, True)
    alice.drop_table(db, "custom", True)
    assert not (victim.db_dir / "moved").exists()


def test_spark_and_hive_default_locations_keep_working(
    connect: Callable, server: RunningServer
) -> None:
    alice, bob, carol = connect("alice"), connect("bob"), connect("carol")
    wh = server.warehouse
    alice.create_database(hms.Database(name="alice_s", description="", parameters={}))
    table_dir = f"file:{wh}/alice_s.db/events"
    events = _table("alice_s", "events", table_dir, keys=True)
    events.partitionKeys.append(hms.FieldSchema(name="hr", type="string"))
    alice.create_table(events)  # CREATE TABLE as Spark sends it
    spark_parts = [make_partition("alice_s", "events", ["2024-01-01", hr],
                                  f"{table_dir}/ds=2024-01-01/hr={spelt}")
                   for hr, spelt in (("1", "1"), ("10:00", "10%3A00"))]  # fmt: skip
    alice.add_partitions(spark_parts)  # INSERT INTO ... PARTITION
    alice.alter_partitions("alice_s", "events", alice.get_partitions("alice_s", "events", -1))
    alice.alter_table("alice_s", "events", alice.get_table("alice_s", "events"))  # statistics
    assert (wh / "alice_s.db" / "events" / "ds=2024-01-01" / "hr=10%3A00").is_dir()
    bob.create_table(_table("default", "bob_s", f"file:{wh}/bob_s", keys=True))
    bob.add_partition(make_partition("default", "bob_s", ["1"], f"file:{wh}/bob_s/ds=1"))

    # a grantee adds partitions at their default locations, never elsewhere in the table
    info = hms.PrivilegeGrantInfo(privilege="INSERT", createTime=0, grantor="alice",
                                  grantorType=USER, grantOption=False)  # fmt: skip
    ref = hms.HiveObjectRef(objectType=hms.HiveObjectType.TABLE, dbName="alice_s",
                            objectName="events")  # fmt: skip
    alice.grant_privileges(hms.PrivilegeBag(privileges=[hms.HiveObjectPrivilege(
        hiveObject=ref, principalName="carol", principalType=USER, grantInfo=info)]))  # fmt: skip
    carol.add_partition(make_partition("alice_s", "events", ["2024-01-02", "1"],
                                       f"{table_dir}/ds=2024-01-02/hr=1"))  # fmt: skip
    custom = f"{table_dir}/carols"
    _refused(lambda: carol.add_partition(make_partition("alice_s", "events", ["x", "1"],
                                                        custom)),
             "carol", "ALTERTABLE_ADDPARTS", custom)  # fmt: skip
    assert len(alice.get_partitions("alice_s", "events", -1)) == 3
    bob.drop_table("default", "bob_s", True)
    alice.drop_database("alice_s", True, True)


def _give_to(hive: Any, db: str, table: str, owner: str) -> None:
    changed = hive.get_table(db, table)
    changed.owner, changed.ownerType = owner, USER
    hive.alter_table(db, table, changed)


def test_drops_never_delete_another_tables_directory(
    connect: Callable, server: RunningServer
) -> None:
    """Layouts only an administrator can make now (or made before): bob's objects at or
    around alice's directories. Bob's drops and truncations delete his data, never hers."""
    alice, bob, hive = connect("alice"), connect("bob"), connect("hive")
    wh = server.warehouse
    victim = _victim(alice, wh, "alice_x")
    bob.create_database(hms.Database(name="bob_x", description="", parameters={}))
    # bob's table at alice's table's directory, one around hers, one partition at hers
    hive.create_table(_table("bob_x", "same", str(victim.table_dir)))
    alice.create_table(_table("default", "alice_in", str(wh / "shared" / "hers")))
    (wh / "shared" / "hers" / "alice.txt").write_text("alice's")
    hive.create_table(_table("bob_x", "around", str(wh / "shared"), keys=True))
    (wh / "shared" / "bobs.txt").write_text("bob's")
    hive.add_partition(make_partition("bob_x", "around", ["1"], str(victim.part_dir)))
    hive.create_table(_table("bob_x", "emptied", str(victim.table_dir)))
    for table in ("same", "around", "emptied"):
        _give_to(hive, "bob_x", table, "bob")

    bob.truncate_table("bob_x", "emptied", None)
    assert victim.intact()
    bob.drop_partition("bob_x", "around", ["1"], True)
    assert victim.intact()
    bob.drop_table("bob_x", "same", True)
    assert victim.intact()
    bob.drop_table("bob_x", "around", True)
    assert not (wh / "shared" / "bobs.txt").exists()  # his, deleted
    assert (wh / "shared" / "hers" / "alice.txt").read_text() == "alice's"
    bob.drop_database("bob_x", True, True)  # with "emptied" in it
    assert victim.intact()


def test_claimed_users_under_auth_none(start_server: Callable[..., RunningServer]) -> None:
    running = start_server(authorization="privileges", admin_users="hive")
    wh = running.warehouse
    alice, bob, nobody = running.client(), running.client(), running.client()
    try:
        alice.set_ugi("alice", [])
        alice.create_database(hms.Database(name="claimed", description="", parameters={},
                                           ownerName="alice", ownerType=USER))  # fmt: skip
        table = _table("claimed", "t")
        table.owner = "alice"
        alice.create_table(table)
        target = f"file:{wh}/claimed.db/t"
        bob.set_ugi("bob", ["staff"])
        _refused(lambda: bob.create_table(_table("default", "grab", target)), "bob",
                 "CREATETABLE", target)  # fmt: skip
        _refused(lambda: nobody.create_table(_table("default", "grab", target)), "null",
                 "CREATETABLE", target)  # fmt: skip
        mine = _table("default", "bobs", f"file:{wh}/bobs")  # his default location
        mine.owner = "bob"
        bob.create_table(mine)
        moved = bob.get_table("default", "bobs")
        moved.sd.location = target
        _refused(lambda: bob.alter_table("default", "bobs", moved), "bob",
                 "ALTERTABLE_LOCATION", target)  # fmt: skip
        bob.drop_table("default", "bobs", True)
        assert "t" in alice.get_all_tables("claimed")
    finally:
        for client in (alice, bob, nobody):
            client.close()


def test_a_link_planted_at_a_default_location_is_refused(
    connect: Callable, server: RunningServer
) -> None:
    alice, bob = connect("alice"), connect("bob")
    wh = server.warehouse
    victim = _victim(alice, wh, "alice_l")
    bob.create_database(hms.Database(name="bob_l", description="", parameters={}))
    os.symlink(victim.table_dir, wh / "bob_l.db" / "t")  # where his table would go
    _refused(lambda: bob.create_table(_table("bob_l", "t")), "bob", "CREATETABLE",
             f"file:{wh}/bob_l.db/t")  # fmt: skip
    assert bob.get_all_tables("bob_l") == []
    bob.drop_database("bob_l", True, True)
    assert victim.intact()


def test_sparks_data_source_path_is_a_location_too(
    connect: Callable, server: RunningServer
) -> None:
    """Spark keeps a data source table's location it cannot store as Hive's in the serde
    parameter ``path`` (``sd.location`` then a placeholder): it is judged as a location."""
    alice, bob = connect("alice"), connect("bob")
    wh = server.warehouse
    victim = _victim(alice, wh, "alice_sp")
    target = f"file:{victim.table_dir}"
    table = _table("default", "grab", f"file:{wh}/grab-__PLACEHOLDER__",
                   tableType="EXTERNAL_TABLE", parameters={"EXTERNAL": "TRUE"})  # fmt: skip
    table.sd.serdeInfo.parameters = {"path": target, "serialization.format": "1"}
    _refused(lambda: bob.create_table(table), "bob", "CREATETABLE", target)
    table.sd.serdeInfo.parameters = {"path": f"file:{wh}/grab", "serialization.format": "1"}
    bob.create_table(table)  # its own default location
    moved = bob.get_table("default", "grab")
    moved.sd.serdeInfo.parameters["path"] = target
    _refused(lambda: bob.alter_table("default", "grab", moved), "bob", "ALTERTABLE_LOCATION",
             target)  # fmt: skip
    bob.drop_table("default", "grab", True)
    assert victim.intact()
