"""The permission checks of ``--authorization storage``: POSIX mode bits judged for a user
other than the server's, and the calls the storage authorizer checks."""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from metastore_server.api.areas import DECLARED
from metastore_server.api.authorization import AUTHORIZATION_CHOICES
from metastore_server.api.authorization.storage import CHANGES, NOT_CHECKED, READS
from metastore_server.catalog.data import permissions
from metastore_server.catalog.data.filesystems import FileSystems
from metastore_server.catalog.data.permissions import (
    READ,
    WRITE,
    NotCheckable,
    PermissionDenied,
    Principal,
    StoragePermissions,
    UnknownUser,
    allows,
)
from metastore_server.thrift_api import hms

ALICE = Principal("alice", uid=1001, gids=frozenset({1001, 50}))
ROOT_LIKE = Principal("hive", uid=1002, gids=frozenset({1002}), superuser=True)


@pytest.mark.parametrize(
    ("mode", "uid", "gid", "access", "allowed"),
    [
        (0o700, 1001, 0, WRITE, True),  # owner bits
        (0o077, 1001, 50, WRITE, False),  # the owner's bits alone count for the owner
        (0o070, 0, 50, WRITE, True),  # group bits for a member
        (0o707, 0, 50, WRITE, False),  # a member gets the group's bits, not the others'
        (0o007, 0, 0, WRITE, True),  # others
        (0o755, 0, 0, WRITE, False),
        (0o755, 0, 0, READ, True),
        (0o711, 0, 0, READ, False),
    ],
)
def test_mode_bits_are_judged_by_the_first_class_that_applies(
    mode: int, uid: int, gid: int, access: str, allowed: bool
) -> None:
    assert allows(stat.S_IFDIR | mode, uid, gid, ALICE, access) is allowed


def test_a_superuser_is_never_refused() -> None:
    assert allows(stat.S_IFDIR, 0, 0, ROOT_LIKE, WRITE)


def test_a_user_the_os_does_not_know_is_refused_by_name() -> None:
    with pytest.raises(UnknownUser, match="user no-such-user-x9 is not known"):
        permissions.principal("no-such-user-x9")


def test_root_and_named_superusers_are_superusers() -> None:
    assert permissions.principal("root").superuser
    assert permissions.principal("nobody", superusers=["nobody"]).superuser
    assert not permissions.principal("nobody").superuser


def test_nearest_existing_ancestor(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    assert permissions.nearest_existing(str(tmp_path / "a" / "b" / "c")) == str(tmp_path / "a")
    assert permissions.nearest_existing(str(tmp_path / "a")) == str(tmp_path / "a")


def test_the_refusal_names_user_access_and_inode_as_hdfs(tmp_path: Path) -> None:
    st = os.stat(tmp_path)
    message = str(permissions.denial(ALICE, WRITE, str(tmp_path), st))
    assert message.startswith(
        "org.apache.hadoop.security.AccessControlException: Permission denied: "
        f'user=alice, access=WRITE, inode="{tmp_path}":'
    )
    assert message.endswith(stat.filemode(st.st_mode))


def test_object_stores_are_refused_not_passed() -> None:
    checks = StoragePermissions(FileSystems(), superusers=["hive"])
    nobody = Principal("nobody", uid=65534, gids=frozenset({65534}))
    with pytest.raises(NotCheckable, match="s3a keeps no owner, group and mode bits"):
        checks.check("s3a://bucket/warehouse/t", nobody, WRITE)
    with pytest.raises(NotCheckable):
        checks.check_delete("s3a://bucket/warehouse/t", nobody)
    checks.check("s3a://bucket/warehouse/t", ROOT_LIKE, WRITE)  # the superuser passes


@pytest.fixture()
def open_dir() -> Iterator[Path]:
    """A directory every user may reach (pytest's own are closed to others)."""
    made = Path(tempfile.mkdtemp(prefix="storage-permissions-"))
    os.chmod(made, 0o755)
    yield made
    shutil.rmtree(made, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give directories other owners")
def test_local_checks_follow_posix(open_dir: Path) -> None:
    nobody = permissions.principal("nobody")
    tmp_path = open_dir
    base = tmp_path / "base"
    base.mkdir(mode=0o755)
    parent = base / "db.db"
    parent.mkdir()
    child = parent / "t"
    child.mkdir()
    os.chmod(parent, 0o755)
    with pytest.raises(PermissionDenied, match="access=WRITE"):
        permissions.check_local_delete(str(child), nobody)
    with pytest.raises(PermissionDenied, match="access=WRITE"):  # a new path: its ancestor
        permissions.check_local(str(parent / "new" / "deeper"), nobody, WRITE)
    os.chown(parent, nobody.uid, -1)
    os.chown(child, nobody.uid, -1)
    permissions.check_local_delete(str(child), nobody)
    permissions.check_local(str(parent / "new" / "deeper"), nobody, WRITE)
    # a sticky parent another user owns: owning the child is enough, not otherwise
    os.chown(parent, 0, -1)
    os.chmod(parent, 0o1777)
    permissions.check_local_delete(str(child), nobody)
    os.chown(child, 0, -1)
    os.chmod(child, 0o777)
    with pytest.raises(PermissionDenied, match="sticky bit is set on the parent dir"):
        permissions.check_local_delete(str(child), nobody)
    # search on every directory above: a closed ancestor refuses everything below it
    os.chmod(base, 0o700)
    with pytest.raises(PermissionDenied, match=f'access=EXECUTE, inode="{base}"'):
        permissions.check_local(str(child), nobody, READ)
    # links are resolved: a link to a directory is judged by the target's bits
    os.chmod(base, 0o755)
    link = tmp_path / "link"
    link.symlink_to(child)
    os.chmod(child, 0o755)
    with pytest.raises(PermissionDenied, match=f'inode="{child}"'):
        permissions.check_local(str(link), nobody, WRITE)


# -- what the storage authorizer checks --------------------------------------------------------

#: Methods named as changing a database, table or partition (or an index's table).
_CHANGE = re.compile(
    r"^(create|alter|drop|add|append|rename|exchange|truncate)_.*"
    r"(database|table|partition|index)"
)


def test_storage_is_a_mode() -> None:
    assert "storage" in AUTHORIZATION_CHOICES


def test_every_served_change_of_a_database_table_or_partition_is_checked() -> None:
    served = [name for name in hms.ThriftHiveMetastore.thrift_services if name in DECLARED]
    changes = {name for name in served if _CHANGE.match(name)}
    unaccounted = changes - set(CHANGES) - set(NOT_CHECKED)
    assert not unaccounted, f"changes the storage authorizer does not check: {unaccounted}"
    assert set(CHANGES) | set(NOT_CHECKED) | set(READS) <= set(served)
    assert not set(CHANGES) & set(NOT_CHECKED)
    # the forms of each call are all there
    families = (
        "drop_table", "create_table", "alter_table", "add_partition", "drop_partition",
        "alter_partition", "append_partition", "drop_database", "create_database",
    )  # fmt: skip
    for family in families:
        forms = {name for name in served if name.startswith(family)}
        assert forms <= set(CHANGES), forms - set(CHANGES)
