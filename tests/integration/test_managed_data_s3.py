"""Managed data on S3 through s3fs, against a real S3 API server (moto's server mode on
127.0.0.1 with IAM enforced): create, drop, rename, trash, and a drop refused for want of
permission that changes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.our_server import OurServer
from support.s3_server import Credentials, MotoS3, S3Endpoint

from metastore_server.thrift_api import hms, make_client

from .conftest import make_partition, make_table

pytest.importorskip("s3fs", reason="the S3 tests need s3fs (hbase-metastore[s3])")


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Endpoint]:
    with MotoS3(tmp_path_factory.mktemp("moto")) as endpoint:
        yield endpoint


def _s3_options(s3: S3Endpoint, creds: Credentials) -> dict[str, dict[str, object]]:
    return {"s3": {"key": creds.key, "secret": creds.secret, "endpoint_url": s3.url}}


_dbs = iter(range(10**6))


def _database(conn, s3: S3Endpoint, scheme: str = "s3a") -> tuple[str, str]:
    """A database located in the bucket; (its name, its key prefix)."""
    name = f"lake{next(_dbs)}"
    prefix = f"wh/{name}.db"
    conn.create_database(hms.Database(name=name, description="", parameters={},
                                      locationUri=f"{scheme}://{s3.bucket}/{prefix}"))  # fmt: skip
    return name, prefix


def _partitions(conn, db: str, table: str, *values: str, location: str | None = None) -> None:
    conn.add_partitions([make_partition(db, table, [v], location) for v in values])


def test_managed_table_lifecycle(start_server, s3: S3Endpoint) -> None:
    conn = start_server(fs_options=_s3_options(s3, s3.admin)).client()
    db, prefix = _database(conn, s3)
    conn.create_table(make_table(db, "t", keys=[("ds", "string")]))
    assert conn.get_table(db, "t").sd.location == f"s3a://{s3.bucket}/{prefix}/t"
    for key in ("t/ds=1/part-0", "t/ds=2/part-0", "t2/part-0", "t_x/part-0"):
        s3.put(f"{prefix}/{key}")  # what Spark wrote; t2 and t_x are neighbours, not inside
    s3.put("outside/ds=3/part-0")
    _partitions(conn, db, "t", "1", "2")
    _partitions(conn, db, "t", "3", location=f"s3a://{s3.bucket}/outside/ds=3")
    s3.put(f"{prefix}/t/", b"")  # directory markers, as Hadoop's S3A writes them
    s3.put(f"{prefix}/t/ds=2/", b"")

    conn.drop_partition(db, "t", ["1"], True)
    assert [k for k in s3.keys(f"{prefix}/t/") if not k.endswith("/")] == [
        f"{prefix}/t/ds=2/part-0"
    ]

    renamed = conn.get_table(db, "t")
    renamed.tableName = "t3"
    conn.alter_table(db, "t", renamed)
    assert s3.keys(f"{prefix}/t/") == []
    assert s3.keys(f"{prefix}/t3/") == [f"{prefix}/t3/ds=2/part-0"]
    assert conn.get_table(db, "t3").sd.location == f"s3a://{s3.bucket}/{prefix}/t3"
    locations = sorted(p.sd.location for p in conn.get_partitions(db, "t3", -1))
    assert locations == [f"s3a://{s3.bucket}/outside/ds=3", f"s3a://{s3.bucket}/{prefix}/t3/ds=2"]

    conn.drop_table(db, "t3", True)
    assert s3.keys(f"{prefix}/t3") == []
    assert s3.keys("outside/") == []  # a partition outside the table's directory goes too
    assert s3.keys(f"{prefix}/") == [f"{prefix}/t2/part-0", f"{prefix}/t_x/part-0"]


def test_external_table_keeps_its_objects(start_server, s3: S3Endpoint) -> None:
    conn = start_server(fs_options=_s3_options(s3, s3.admin)).client()
    db, _ = _database(conn, s3, scheme="s3")
    table = make_table(db, "e", keys=[("ds", "string")], tableType="EXTERNAL_TABLE",
                       parameters={"EXTERNAL": "TRUE"})  # fmt: skip
    table.sd.location = f"s3://{s3.bucket}/external/e"
    s3.put("external/e/ds=1/part-0")
    conn.create_table(table)
    _partitions(conn, db, "e", "1")
    conn.drop_partition(db, "e", ["1"], True)
    conn.drop_table(db, "e", True)
    assert s3.keys("external/e/") == ["external/e/ds=1/part-0"]


def test_a_table_in_a_missing_bucket_is_refused(start_server, s3: S3Endpoint) -> None:
    conn = start_server(fs_options=_s3_options(s3, s3.admin)).client()
    db, _ = _database(conn, s3)
    table = make_table(db, "nowhere")
    table.sd.location = "s3a://no-such-bucket/t"
    with pytest.raises(hms.MetaException) as refused:
        conn.create_table(table)
    assert refused.value.message == (
        "s3a://no-such-bucket/t is not a directory or unable to create one "
        "(bucket no-such-bucket does not exist)"
    )
    assert conn.get_all_tables(db) == []


def test_a_drop_without_delete_permission_is_refused_and_changes_nothing(
    start_server, s3: S3Endpoint
) -> None:
    writer = start_server(fs_options=_s3_options(s3, s3.admin))
    conn = writer.client()
    db, prefix = _database(conn, s3)
    conn.create_table(make_table(db, "t", keys=[("ds", "string")]))
    _partitions(conn, db, "t", "1")
    s3.put(f"{prefix}/t/ds=1/part-0")
    conn.close()
    writer.stop()

    reader = start_server(storage=writer.config.storage, fs_options=_s3_options(s3, s3.reader))
    conn = reader.client()
    with pytest.raises(hms.MetaException) as refused:
        conn.drop_partition(db, "t", ["1"], True)
    assert refused.value.message.startswith(
        f"Table partition not deleted since s3a://{s3.bucket}/{prefix}/t/ds=1 is not writable"
    )
    with pytest.raises(hms.MetaException) as refused:
        conn.drop_table(db, "t", True)
    assert refused.value.message.startswith(
        f"Table metadata not deleted since s3a://{s3.bucket}/{prefix}/t"
    )
    renamed = conn.get_table(db, "t")
    renamed.tableName = "t2"
    with pytest.raises(hms.InvalidOperationException, match="failed to move data"):
        conn.alter_table(db, "t", renamed)
    assert conn.get_partition_names(db, "t", -1) == ["ds=1"]
    assert conn.get_all_tables(db) == ["t"]
    assert s3.keys(f"{prefix}/") == [f"{prefix}/t/ds=1/part-0"]
    conn.drop_table(db, "t", False)  # metadata alone needs no permission on the data
    assert s3.keys(f"{prefix}/") == [f"{prefix}/t/ds=1/part-0"]


def test_dropped_objects_go_to_the_trash_unless_purged(start_server, s3: S3Endpoint) -> None:
    trash = f"s3://{s3.bucket}/.trash"
    conn = start_server(fs_options=_s3_options(s3, s3.admin), trash_root=trash).client()
    db, prefix = _database(conn, s3)
    conn.create_table(make_table(db, "t", keys=[("ds", "string")]))
    _partitions(conn, db, "t", "1", "2")
    s3.put(f"{prefix}/t/ds=1/part-0")
    s3.put(f"{prefix}/t/ds=2/part-0")
    conn.drop_partition(db, "t", ["1"], True)
    assert s3.keys(".trash/") == [f".trash/Current/{s3.bucket}/{prefix}/t/ds=1/part-0"]
    assert s3.keys(f"{prefix}/t/") == [f"{prefix}/t/ds=2/part-0"]  # moved, not copied
    purge = hms.EnvironmentContext(properties={"ifPurge": "TRUE"})
    conn.drop_table_with_environment_context(db, "t", True, purge)
    assert s3.keys(f"{prefix}/t/") == []
    assert len(s3.keys(".trash/")) == 1
    conn.create_table(make_table(db, "u"))
    s3.put(f"{prefix}/u/part-0")
    conn.drop_table(db, "u", True)  # whole tables go to the trash too
    assert s3.keys(f"{prefix}/u") == []
    assert f".trash/Current/{s3.bucket}/{prefix}/u/part-0" in s3.keys(".trash/")


def test_credentials_and_endpoint_from_the_standard_aws_variables(
    s3: S3Endpoint, tmp_path: Path
) -> None:
    """A server process configured only by AWS_* variables (no S3 flags)."""
    with OurServer(tmp_path, env=s3.admin.env(s3.url)) as endpoint:
        conn = make_client(endpoint.host, endpoint.port)
        try:
            db, prefix = _database(conn, s3)
            conn.create_table(make_table(db, "t"))
            s3.put(f"{prefix}/t/part-0")
            conn.drop_table(db, "t", True)
            assert s3.keys(f"{prefix}/") == []
        finally:
            conn.close()
