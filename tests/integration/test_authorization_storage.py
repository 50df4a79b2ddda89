"""``--authorization storage`` over real Thrift, on real directories whose owners and modes
the test sets: creating, altering and dropping databases, tables and partitions needs the
caller's permission on the directories, checked as the OS would for that user.

The callers are OS users of this machine (``daemon``, ``nobody``) signing in with ``--auth
password`` (or claiming with ``set_ugi`` under ``--auth none``); ``root`` is the superuser.
Needs root (to give directories to other users)."""

from __future__ import annotations

import os
import pwd
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.sasl_client import sasl_client

from metastore_server.api.authorization.storage import AUTH_READS
from metastore_server.server.passwords import hash_password
from metastore_server.thrift_api import hms

from .conftest import RunningServer, make_partition, make_table


def _missing_users() -> list[str]:
    missing = []
    for name in ("daemon", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            missing.append(name)
    return missing


pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give directories to other users"),
    pytest.mark.skipif(bool(_missing_users()), reason=f"OS users missing: {_missing_users()}"),
]

DENIED = "AccessControlException: Permission denied: user={user}, access=WRITE"


def _give(path: Path, user: str, mode: int = 0o755) -> None:
    entry = pwd.getpwnam(user)
    os.chown(path, entry.pw_uid, entry.pw_gid)
    os.chmod(path, mode)


@pytest.fixture(scope="module")
def base() -> Iterator[Path]:
    """A directory every user may reach (pytest's own are closed to other users)."""
    made = Path(tempfile.mkdtemp(prefix="storage-authz-"))
    os.chmod(made, 0o755)
    yield made
    shutil.rmtree(made, ignore_errors=True)


@pytest.fixture(scope="module")
def server(base: Path) -> Iterator[RunningServer]:
    passwords = base / "passwords"
    passwords.write_text(
        "".join(f"{user}:{hash_password(user + '-pw')}\n" for user in ("root", "daemon", "nobody"))
    )
    running = RunningServer(base / "server", auth="password", password_file=str(passwords),
                            authorization="storage")  # fmt: skip
    os.chmod(base / "server", 0o755)
    yield running
    running.stop()


def _login(server: RunningServer, user: str) -> Any:
    return sasl_client(server.host, server.port, user, user + "-pw")


@pytest.fixture()
def root(server: RunningServer) -> Iterator[Any]:
    client = _login(server, "root")
    yield client
    client.close()


@pytest.fixture()
def daemon(server: RunningServer) -> Iterator[Any]:
    client = _login(server, "daemon")
    yield client
    client.close()


@pytest.fixture()
def nobody(server: RunningServer) -> Iterator[Any]:
    client = _login(server, "nobody")
    yield client
    client.close()


def _database(client: Any, name: str, location: Path | None = None) -> Path:
    where = f"file:{location}" if location else None
    client.create_database(hms.Database(name=name, description="", parameters={},
                                        locationUri=where))  # fmt: skip
    return Path(client.get_database(name).locationUri.removeprefix("file:"))


def test_a_drop_where_the_user_cannot_write_the_parent_is_refused_with_nothing_changed(
    root: Any, daemon: Any, nobody: Any
) -> None:
    db_dir = _database(root, "sales")
    _give(db_dir, "daemon")
    daemon.create_table(make_table("sales", "t"))
    table_dir = Path(daemon.get_table("sales", "t").sd.location.removeprefix("file:"))
    assert table_dir.parent == db_dir
    assert table_dir.stat().st_uid == pwd.getpwnam("daemon").pw_uid  # made as daemon's
    (table_dir / "part-0.parquet").write_bytes(b"data")

    with pytest.raises(hms.MetaException) as refused:
        nobody.drop_table("sales", "t", True)
    assert DENIED.format(user="nobody") in refused.value.message
    assert f'inode="{db_dir}"' in refused.value.message
    assert root.get_table("sales", "t").tableName == "t"  # metadata kept
    assert (table_dir / "part-0.parquet").read_bytes() == b"data"  # data kept

    daemon.drop_table("sales", "t", True)  # the directory's owner can
    assert root.get_all_tables("sales") == []
    assert not table_dir.exists()


def test_creating_a_table_in_a_database_directory_the_user_cannot_write_is_refused(
    root: Any, daemon: Any
) -> None:
    db_dir = _database(root, "closed")  # root's, 0755
    with pytest.raises(hms.MetaException) as refused:
        daemon.create_table(make_table("closed", "t"))
    assert DENIED.format(user="daemon") in refused.value.message
    assert root.get_all_tables("closed") == []
    assert not (db_dir / "t").exists()
    root.create_table(make_table("closed", "t"))  # the superuser may
    assert root.get_all_tables("closed") == ["t"]


def test_a_database_drop_and_create_need_the_parent(
    server: RunningServer, root: Any, nobody: Any, base: Path
) -> None:
    db_dir = _database(root, "kept_db")
    with pytest.raises(hms.MetaException, match=DENIED.format(user="nobody")):
        nobody.drop_database("kept_db", True, True)
    assert root.get_database("kept_db").name == "kept_db" and db_dir.is_dir()
    with pytest.raises(hms.MetaException, match=DENIED.format(user="nobody")):
        nobody.create_database(hms.Database(name="mine", description="", parameters={}))
    own = base / "nobody-area"
    own.mkdir()
    _give(own, "nobody")
    created = _database(nobody, "mine", own / "mine.db")
    assert created.stat().st_uid == pwd.getpwnam("nobody").pw_uid
    nobody.drop_database("mine", True, True)
    assert not created.exists()


def test_an_alter_that_moves_a_location_checks_the_old_and_new_parent(
    root: Any, daemon: Any, nobody: Any, base: Path
) -> None:
    _give(_database(root, "moving"), "daemon")
    daemon.create_table(make_table("moving", "t"))
    closed = base / "closed-area"
    closed.mkdir()
    daemons = base / "daemon-area"
    daemons.mkdir()
    _give(daemons, "daemon")
    nobodys = base / "nobody-moves"
    nobodys.mkdir()
    _give(nobodys, "nobody")

    table = daemon.get_table("moving", "t")
    before = table.sd.location
    table.sd.location = f"file:{closed}/t"
    with pytest.raises(hms.MetaException, match=f'inode="{closed}"'):  # the new parent
        daemon.alter_table("moving", "t", table)
    assert root.get_table("moving", "t").sd.location == before
    table.sd.location = f"file:{daemons}/t"
    daemon.alter_table("moving", "t", table)
    assert root.get_table("moving", "t").sd.location == f"file:{daemons}/t"

    table = nobody.get_table("moving", "t")
    table.sd.location = f"file:{nobodys}/t"  # nobody may write there, not where it is now
    with pytest.raises(hms.MetaException, match=f'inode="{daemons}"'):  # the old parent
        nobody.alter_table("moving", "t", table)
    assert root.get_table("moving", "t").sd.location == f"file:{daemons}/t"


def test_partitions_need_the_table_directory(root: Any, daemon: Any, nobody: Any) -> None:
    _give(_database(root, "parts"), "daemon")
    daemon.create_table(make_table("parts", "pt", keys=[("day", "string")]))
    table_dir = Path(root.get_table("parts", "pt").sd.location.removeprefix("file:"))
    daemon.add_partition(make_partition("parts", "pt", ["d1"]))
    part_dir = table_dir / "day=d1"
    assert part_dir.is_dir()

    with pytest.raises(hms.MetaException, match=DENIED.format(user="nobody")):
        nobody.add_partition(make_partition("parts", "pt", ["d2"]))
    with pytest.raises(hms.MetaException, match=DENIED.format(user="nobody")):
        nobody.append_partition("parts", "pt", ["d3"])
    with pytest.raises(hms.MetaException, match=f'inode="{table_dir}"'):
        nobody.drop_partition("parts", "pt", ["d1"], True)
    request = hms.DropPartitionsRequest(dbName="parts", tblName="pt", deleteData=True,
                                        parts=hms.RequestPartsSpec(names=["day=d1"]))  # fmt: skip
    with pytest.raises(hms.MetaException, match=DENIED.format(user="nobody")):
        nobody.drop_partitions_req(request)
    partition = root.get_partition("parts", "pt", ["d1"])
    partition.parameters = {"k": "v"}
    with pytest.raises(hms.MetaException, match=DENIED.format(user="nobody")):
        nobody.alter_partition("parts", "pt", partition)
    renamed = make_partition("parts", "pt", ["d9"])
    with pytest.raises(hms.MetaException, match=DENIED.format(user="nobody")):
        nobody.rename_partition("parts", "pt", ["d1"], renamed)
    assert root.get_partition_names("parts", "pt", -1) == ["day=d1"]  # nothing changed
    assert part_dir.is_dir()

    daemon.alter_partition("parts", "pt", partition)
    daemon.drop_partitions_req(request)
    assert root.get_partition_names("parts", "pt", -1) == []
    assert not part_dir.exists()


def test_reads_need_read_on_the_directory(root: Any, daemon: Any, nobody: Any) -> None:
    _give(_database(root, "private"), "daemon", 0o700)
    daemon.create_table(make_table("private", "t"))
    assert daemon.get_table("private", "t").tableName == "t"
    with pytest.raises(hms.MetaException, match="access=EXECUTE"):  # cannot reach it
        nobody.get_table("private", "t")
    with pytest.raises(hms.MetaException, match="access=READ"):
        nobody.get_database("private")


def test_set_ugi_claims_under_no_authentication(base: Path) -> None:
    running = RunningServer(base / "open-server", authorization="storage")
    os.chmod(base / "open-server", 0o755)
    try:
        client = running.client()
        with pytest.raises(hms.MetaException, match="made as no user"):
            client.create_database(hms.Database(name="anon", description="", parameters={}))
        client.set_ugi("root", [])
        db_dir = _database(client, "claimed")
        _give(db_dir, "daemon")
        client.set_ugi("daemon", ["root"])  # claimed groups are not believed
        client.create_table(make_table("claimed", "t"))
        client.set_ugi("nobody", ["daemon"])
        with pytest.raises(hms.MetaException, match=DENIED.format(user="nobody")):
            client.drop_table("claimed", "t", True)
        client.set_ugi("no-such-user-x9", [])
        with pytest.raises(hms.MetaException, match="no-such-user-x9 is not known"):
            client.drop_table("claimed", "t", True)
        client.set_ugi("daemon", [])
        client.drop_table("claimed", "t", True)
        assert client.get_all_tables("claimed") == []
        client.close()
    finally:
        running.stop()


def test_data_roots_apply_as_well(base: Path) -> None:
    roots = base / "roots"
    inside = roots / "inside"
    inside.mkdir(parents=True)
    os.chmod(roots, 0o755)
    outside = base / "outside"
    outside.mkdir()
    for place in (inside, outside):
        _give(place, "daemon")
    running = RunningServer(roots / "rooted-server", authorization="storage",
                            data_roots=f"file:{roots}")  # fmt: skip
    os.chmod(roots / "rooted-server", 0o755)
    try:
        client = running.client()
        client.set_ugi("daemon", [])
        # permitted by the file system, refused by the data roots
        with pytest.raises(hms.MetaException, match="outside the data roots"):
            _database(client, "out", outside / "out.db")
        _database(client, "inn", inside / "inn.db")
        # inside the roots, refused by the file system
        client.set_ugi("nobody", [])
        with pytest.raises(hms.MetaException, match=DENIED.format(user="nobody")):
            client.create_table(make_table("inn", "t"))
        client.close()
    finally:
        running.stop()


def test_reads_are_not_checked_when_auth_reads_is_false(base: Path) -> None:
    running = RunningServer(base / "reads-server", authorization="storage",
                            extra_config={AUTH_READS: "false"})  # fmt: skip
    os.chmod(base / "reads-server", 0o755)
    try:
        client = running.client()
        client.set_ugi("daemon", [])
        _give(base / "reads-server" / "warehouse", "daemon")
        db_dir = _database(client, "hidden")
        os.chmod(db_dir, 0o700)
        client.create_table(make_table("hidden", "t"))
        client.set_ugi("nobody", [])
        assert client.get_table("hidden", "t").tableName == "t"
        assert client.get_database("hidden").name == "hidden"
        # changes are still checked
        with pytest.raises(hms.MetaException, match="user=nobody, access=WRITE"):
            client.drop_table("hidden", "t", True)
        client.close()
    finally:
        running.stop()
