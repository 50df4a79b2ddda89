"""The storage port's contract: every backend must pass all of it (see conftest.py). Where a
backend declares a weaker guarantee (``atomic_batches``, ``snapshot_scans``, conditions on empty
values), the test checks the weaker promise the port states for it."""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from metastore_server.storage.port import Condition, Delete, Put, StoragePort, TableSpec
from support.hbase_filter_language import parse_filter

T = "t"
OTHER = "other"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _tables(store: StoragePort) -> None:
    store.ensure_tables([TableSpec(T, ("c", "d")), TableSpec(OTHER)])


def put(store: StoragePort, key: bytes, columns: dict[bytes, bytes], table: str = T) -> None:
    assert store.mutate([Put(table, key, columns)])


def keys(rows) -> list[bytes]:
    return [key for key, _ in rows]


# -- tables, get, put, delete -------------------------------------------------------------------


def test_ensure_tables_is_idempotent_and_keeps_rows(store: StoragePort) -> None:
    put(store, b"k", {b"c:a": b"1"})
    store.ensure_tables([TableSpec(T, ("c", "d")), TableSpec(OTHER)])
    assert store.get(T, b"k") == {b"c:a": b"1"}


def test_unknown_table_is_an_error(store: StoragePort) -> None:
    with pytest.raises(KeyError):
        store.get("missing", b"k")


def test_unknown_family_is_rejected_and_nothing_applied(store: StoragePort) -> None:
    with pytest.raises(ValueError):
        store.mutate([Put(T, b"a", {b"c:x": b"1"}), Put(T, b"b", {b"zz:x": b"1"})])
    assert store.get(T, b"a") is None


def test_get_absent_row(store: StoragePort) -> None:
    assert store.get(T, b"nope") is None


def test_put_then_get_and_merge_columns(store: StoragePort) -> None:
    put(store, b"k", {b"c:a": b"1", b"d:b": b"2"})
    put(store, b"k", {b"c:a": b"one", b"c:z": b""})
    assert store.get(T, b"k") == {b"c:a": b"one", b"c:z": b"", b"d:b": b"2"}


def test_tables_are_separate(store: StoragePort) -> None:
    put(store, b"k", {b"c:a": b"1"})
    assert store.get(OTHER, b"k") is None
    assert list(store.scan(OTHER)) == []


def test_delete_whole_row(store: StoragePort) -> None:
    put(store, b"k", {b"c:a": b"1", b"d:b": b"2"})
    assert store.mutate([Delete(T, b"k")])
    assert store.get(T, b"k") is None
    assert list(store.scan(T)) == []


def test_delete_columns_and_last_column_removes_row(store: StoragePort) -> None:
    put(store, b"k", {b"c:a": b"1", b"d:b": b"2"})
    assert store.mutate([Delete(T, b"k", [b"c:a", b"c:never"])])
    assert store.get(T, b"k") == {b"d:b": b"2"}
    assert store.mutate([Delete(T, b"k", [b"d:b"])])
    assert store.get(T, b"k") is None
    assert list(store.scan(T)) == []


def test_delete_absent_row_is_fine(store: StoragePort) -> None:
    assert store.mutate([Delete(T, b"ghost"), Delete(T, b"ghost", [b"c:a"])])
    assert store.get(T, b"ghost") is None


def test_get_many_keeps_order_and_skips_absent(store: StoragePort) -> None:
    for key in (b"a", b"b", b"c"):
        put(store, key, {b"c:v": key})
    many = [b"c", b"zz", b"a", b"b"]
    assert store.get_many(T, many) == [(b"c", {b"c:v": b"c"}), (b"a", {b"c:v": b"a"}),
                                       (b"b", {b"c:v": b"b"})]
    assert store.get_many(T, []) == []
    assert keys(store.get_many(T, [b"k%04d" % i for i in range(1200)] + [b"a"])) == [b"a"]


def test_large_values(store: StoragePort) -> None:
    big = os.urandom(6 * 1024 * 1024)
    put(store, b"big", {b"c:blob": big, b"c:small": b"s"})
    assert store.get(T, b"big") == {b"c:blob": big, b"c:small": b"s"}
    assert list(store.scan(T)) == [(b"big", {b"c:blob": big, b"c:small": b"s"})]


# -- scans ------------------------------------------------------------------------------------

BINARY_KEYS = [b"\x00", b"\x00\x00", b"\x00\xff", b"\x01", b"a", b"a\x00", b"a\x00\x00",
               b"a\x01", b"a\xff", b"ab", b"\x7f", b"\x80", b"\xfe\xff", b"\xff", b"\xff\x00",
               b"\xff\xff", b"\xff\xff\xff"]


@pytest.fixture
def binary(store: StoragePort) -> list[bytes]:
    shuffled = BINARY_KEYS[::2] + BINARY_KEYS[1::2]
    assert store.mutate([Put(T, key, {b"c:v": key}) for key in shuffled])
    return sorted(BINARY_KEYS)


def test_scan_is_in_unsigned_byte_order(store: StoragePort, binary: list[bytes]) -> None:
    rows = list(store.scan(T))
    assert keys(rows) == binary
    assert all(row == {b"c:v": key} for key, row in rows)


def test_scan_bounds_are_half_open(store: StoragePort, binary: list[bytes]) -> None:
    within_a = [b"a", b"a\x00", b"a\x00\x00", b"a\x01", b"ab"]
    assert keys(store.scan(T, b"a", b"a\xff")) == within_a
    assert keys(store.scan(T, b"\x00\x00", b"\x01")) == [b"\x00\x00", b"\x00\xff"]
    assert keys(store.scan(T, b"\xff")) == [b"\xff", b"\xff\x00", b"\xff\xff", b"\xff\xff\xff"]
    assert keys(store.scan(T, b"", b"\x00\x00")) == [b"\x00"]
    assert keys(store.scan(T, b"a", b"a")) == []
    assert keys(store.scan(T, b"b", b"a")) == []
    assert keys(store.scan(T, b"", b"")) == []


def test_scan_bounds_match_a_model(store: StoragePort, binary: list[bytes]) -> None:
    probes = [b""] + binary + [b"\x00\x01", b"a\x00\x01", b"zz", b"\xff\xff\xff\xff"]
    for start in probes:
        for stop in [*probes, None]:
            expected = [k for k in binary if start <= k and (stop is None or k < stop)]
            assert keys(store.scan(T, start, stop)) == expected, (start, stop)


def test_scan_reverse(store: StoragePort, binary: list[bytes]) -> None:
    assert keys(store.scan(T, reverse=True)) == binary[::-1]
    expected = [b"ab", b"a\x01", b"a\x00\x00", b"a\x00", b"a"]
    assert keys(store.scan(T, b"a", b"a\xff", reverse=True)) == expected


def test_scan_limit(store: StoragePort, binary: list[bytes]) -> None:
    assert keys(store.scan(T, limit=3)) == binary[:3]
    assert keys(store.scan(T, reverse=True, limit=2)) == binary[::-1][:2]
    assert keys(store.scan(T, b"a", limit=100)) == [k for k in binary if k >= b"a"]
    assert list(store.scan(T, limit=0)) == []


def test_scan_columns_subset(store: StoragePort) -> None:
    put(store, b"1", {b"c:a": b"1a", b"c:b": b"1b", b"d:x": b"1x"})
    put(store, b"2", {b"c:b": b"2b"})
    put(store, b"3", {b"c:a": b"3a"})
    assert list(store.scan(T, columns=[b"c:a", b"d:x"])) == [
        (b"1", {b"c:a": b"1a", b"d:x": b"1x"}),
        (b"3", {b"c:a": b"3a"}),
    ]
    assert list(store.scan(T, columns=[b"c:a"], limit=2)) == [
        (b"1", {b"c:a": b"1a"}),
        (b"3", {b"c:a": b"3a"}),
    ]


def test_scan_key_filter(store: StoragePort, binary: list[bytes]) -> None:
    seen: list[bytes] = []

    def odd_last_byte(key: bytes) -> bool:
        seen.append(key)
        return key[-1] % 2 == 1

    expected = [k for k in binary if k[-1] % 2 == 1]
    assert keys(store.scan(T, key_filter=odd_last_byte)) == expected
    assert seen == binary  # once per row of the range, in scan order
    assert keys(store.scan(T, key_filter=odd_last_byte, limit=2)) == expected[:2]
    assert keys(store.scan(T, reverse=True, key_filter=odd_last_byte, limit=3)) == (
        expected[::-1][:3]
    )
    assert list(store.scan(T, key_filter=odd_last_byte, columns=[b"c:v"])) == [
        (k, {b"c:v": k}) for k in expected
    ]
    assert keys(store.scan(T, b"a", b"b", key_filter=lambda key: False)) == []


def test_scan_empty_table(store: StoragePort) -> None:
    assert list(store.scan(T)) == []
    assert list(store.scan(T, b"a", b"b", reverse=True, limit=5)) == []


def test_scan_sees_a_snapshot(backend, store: StoragePort) -> None:
    if not backend.snapshot_scans:
        pytest.skip(f"{backend.name} scans are not snapshots (snapshot_scans = False)")
    assert store.mutate([Put(T, b"%03d" % i, {b"c:v": b"old"}) for i in range(300)])
    scan = store.scan(T)
    first = next(scan)
    assert store.mutate([Delete(T, b"%03d" % i) for i in range(300)]
                        + [Put(T, b"%03d" % i, {b"c:v": b"new"}) for i in range(0, 300, 2)])
    rest = list(scan)
    assert [first, *rest] == [(b"%03d" % i, {b"c:v": b"old"}) for i in range(300)]
    assert len(list(store.scan(T))) == 150


def test_abandoned_scans_do_not_block_anything(store: StoragePort, binary: list[bytes]) -> None:
    for _ in range(100):
        scan = store.scan(T)
        next(scan)
        del scan
    never_started = [store.scan(T) for _ in range(100)]
    put(store, b"after", {b"c:v": b"x"})
    assert b"after" in keys(store.scan(T))
    assert len(never_started) == 100


# -- mutate, conditions, increments ------------------------------------------------------------


def test_mutate_is_atomic_across_rows_and_tables(store: StoragePort) -> None:
    put(store, b"gone", {b"c:a": b"1"})
    assert store.mutate([Put(T, b"x", {b"c:a": b"1"}), Put(OTHER, b"y", {b"c:a": b"2"}),
                         Delete(T, b"gone")])
    assert store.get(T, b"x") == {b"c:a": b"1"}
    assert store.get(OTHER, b"y") == {b"c:a": b"2"}
    assert store.get(T, b"gone") is None


def test_mutate_applies_ops_in_order(store: StoragePort) -> None:
    assert store.mutate([Put(T, b"k", {b"c:a": b"1", b"c:b": b"2"}), Delete(T, b"k", [b"c:a"]),
                         Put(T, b"k", {b"c:c": b"3"})])
    assert store.get(T, b"k") == {b"c:b": b"2", b"c:c": b"3"}
    assert store.mutate([Delete(T, b"k"), Put(T, b"k", {b"c:d": b"4"})])
    assert store.get(T, b"k") == {b"c:d": b"4"}


def test_failing_condition_applies_nothing(store: StoragePort) -> None:
    put(store, b"lock", {b"c:version": b"1"})
    ops = [Put(T, b"lock", {b"c:version": b"2"}), Put(OTHER, b"data", {b"c:v": b"x"}),
           Delete(T, b"lock", [b"c:version"])]
    assert not store.mutate(ops, Condition(T, b"lock", b"c:version", b"0"))
    assert not store.mutate(ops, Condition(T, b"lock", b"c:version", None))
    assert store.get(T, b"lock") == {b"c:version": b"1"}
    assert store.get(OTHER, b"data") is None


def test_passing_condition_applies_everything(store: StoragePort) -> None:
    put(store, b"lock", {b"c:version": b"1"})
    ops = [Put(T, b"lock", {b"c:version": b"2"}), Put(OTHER, b"data", {b"c:v": b"x"})]
    assert store.mutate(ops, Condition(T, b"lock", b"c:version", b"1"))
    assert store.get(T, b"lock") == {b"c:version": b"2"}
    assert store.get(OTHER, b"data") == {b"c:v": b"x"}


def test_condition_on_absent_column_and_row(backend, store: StoragePort) -> None:
    create = [Put(T, b"new", {b"c:owner": b"me"})]
    assert store.mutate(create, Condition(T, b"new", b"c:owner", None))
    assert not store.mutate(create, Condition(T, b"new", b"c:owner", None))
    assert store.mutate([Put(T, b"new", {b"c:n": b"1"})],
                        Condition(T, b"new", b"d:other", None))
    assert not store.mutate([Put(T, b"x", {b"c:n": b"1"})],
                            Condition(T, b"absent", b"c:owner", b"v"))
    if backend.exact_empty_checks:
        assert not store.mutate([Put(T, b"x", {b"c:n": b"1"})],
                                Condition(T, b"absent", b"c:owner", b""))
    else:
        with pytest.raises(ValueError, match="empty"):
            store.mutate([Put(T, b"x", {b"c:n": b"1"})], Condition(T, b"absent", b"c:owner", b""))
    assert store.get(T, b"new") == {b"c:owner": b"me", b"c:n": b"1"}
    assert store.get(T, b"x") is None


def test_condition_on_a_value_guards_several_rows_and_columns(store: StoragePort) -> None:
    put(store, b"tbl", {b"c:version": b"1", b"c:o": b"old", b"d:stale": b"s"})
    ops = [Put(T, b"tbl", {b"c:o": b"new", b"c:version": b"2", b"c:id": b"7"}),
           Delete(T, b"tbl", [b"d:stale"]), Put(OTHER, b"p1", {b"c:v": b"1"}),
           Put(OTHER, b"p2", {b"c:v": b"2"})]
    assert not store.mutate(ops, Condition(T, b"tbl", b"c:version", b"2"))
    assert store.get(OTHER, b"p1") is None
    assert store.mutate(ops, Condition(T, b"tbl", b"c:version", b"1"))
    assert store.get(T, b"tbl") == {b"c:o": b"new", b"c:version": b"2", b"c:id": b"7"}
    assert store.get_many(OTHER, [b"p1", b"p2"]) == [(b"p1", {b"c:v": b"1"}),
                                                     (b"p2", {b"c:v": b"2"})]
    assert not store.mutate(ops, Condition(T, b"tbl", b"c:version", b"1"))


def test_several_conditions_all_hold_or_nothing_is_written(store: StoragePort) -> None:
    put(store, b"p1", {b"c:o": b"there"})
    create = [Put(T, b"p1", {b"c:o": b"new"}), Put(T, b"p2", {b"c:o": b"new"})]
    both_absent = [Condition(T, b"p1", b"c:o", None), Condition(T, b"p2", b"c:o", None)]
    if not store.atomic_batches:
        with pytest.raises(ValueError, match="one condition"):
            store.mutate(create, both_absent)
        assert store.mutate(create[1:], both_absent[1:])  # one in a list is one condition
        assert store.get(T, b"p2") == {b"c:o": b"new"}
        return
    assert not store.mutate(create, both_absent)
    assert store.get(T, b"p1") == {b"c:o": b"there"} and store.get(T, b"p2") is None
    assert store.mutate(create[1:], both_absent[1:])
    assert not store.mutate(create[1:], both_absent[1:])
    assert store.mutate([Put(T, b"p3", {b"c:o": b"x"})], [])  # no condition at all
    assert store.get(T, b"p2") == {b"c:o": b"new"}


def test_rows_that_must_be_absent_are_all_written_or_none(store: StoragePort) -> None:
    if not store.atomic_batches:
        pytest.skip("one condition a mutate without atomic batches")
    put(store, b"r5", {b"c:o": b"there"})
    keys = [b"r%d" % i for i in range(10)]  # the present one half-way through
    create = [Put(T, key, {b"c:o": b"new", b"c:n": key}) for key in keys]
    absent = [Condition(T, key, b"c:o", None) for key in keys]
    assert not store.mutate(create, absent)
    assert store.get_many(T, keys) == [(b"r5", {b"c:o": b"there"})]
    put(store, b"r5", {b"c:n": b"no object"})  # present, without the column checked
    store.mutate([Delete(T, b"r5", [b"c:o"])])
    assert store.mutate(create, absent)
    assert store.get_many(T, keys) == [(key, {b"c:o": b"new", b"c:n": key}) for key in keys]


def test_condition_with_a_replaced_row_and_a_rename(store: StoragePort) -> None:
    put(store, b"old", {b"c:o": b"v1", b"d:x": b"1"})
    put(store, b"target", {b"c:o": b"v0", b"c:extra": b"e", b"d:x": b"0"})
    rename = [Put(T, b"new", {b"c:o": b"v1"}), Delete(T, b"old")]
    assert store.mutate(rename, Condition(T, b"new", b"c:o", None))
    assert store.get(T, b"old") is None and store.get(T, b"new") == {b"c:o": b"v1"}
    assert not store.mutate(rename, Condition(T, b"new", b"c:o", None))
    replace = [Delete(T, b"target"), Put(T, b"target", {b"c:o": b"v2"})]
    assert store.mutate(replace, Condition(T, b"target", b"c:o", b"v0"))
    assert store.get(T, b"target") == {b"c:o": b"v2"}


def test_condition_on_a_row_the_ops_do_not_touch(store: StoragePort) -> None:
    put(store, b"lock", {b"c:holder": b"me"})
    assert store.mutate([Put(OTHER, b"a", {b"c:v": b"1"})],
                        Condition(T, b"lock", b"c:holder", b"me"))
    assert not store.mutate([Put(OTHER, b"b", {b"c:v": b"1"})],
                            Condition(T, b"lock", b"c:holder", b"you"))
    assert store.mutate([Put(OTHER, b"c", {b"c:v": b"1"})],
                        Condition(T, b"free", b"c:holder", None))
    assert not store.mutate([Put(OTHER, b"d", {b"c:v": b"1"})],
                            Condition(T, b"lock", b"c:holder", None))
    assert keys(store.scan(OTHER)) == [b"a", b"c"]
    assert store.get(T, b"lock") == {b"c:holder": b"me"}
    assert store.get(T, b"free") is None


def test_compare_and_set_race_has_one_winner(store: StoragePort) -> None:
    results: list[bool] = []
    barrier = threading.Barrier(8)

    def claim(worker: int) -> None:
        barrier.wait()
        ops = [Put(T, b"leader", {b"c:who": b"%d" % worker})]
        results.append(store.mutate(ops, Condition(T, b"leader", b"c:who", None)))

    threads = [threading.Thread(target=claim, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False] * 7 + [True]


def counter(value: bytes) -> int:
    return struct.unpack(">q", value)[0]


def test_increment_from_zero(store: StoragePort) -> None:
    assert store.increment(T, b"ctr", b"c:n") == 1
    assert store.increment(T, b"ctr", b"c:n", 41) == 42
    assert store.increment(T, b"ctr", b"c:n", -50) == -8
    assert store.increment(T, b"ctr", b"c:other", 0) == 0
    row = store.get(T, b"ctr")
    assert row is not None
    assert counter(row[b"c:n"]) == -8
    assert row[b"c:n"] == struct.pack(">q", -8)


def test_increment_keeps_other_columns(store: StoragePort) -> None:
    put(store, b"ctr", {b"c:name": b"x"})
    assert store.increment(T, b"ctr", b"d:n", 5) == 5
    assert store.get(T, b"ctr") == {b"c:name": b"x", b"d:n": struct.pack(">q", 5)}


def test_concurrent_increments_are_exact(store: StoragePort) -> None:
    seen: list[int] = []
    lock = threading.Lock()

    def work() -> None:
        mine = [store.increment(T, b"ctr", b"c:n") for _ in range(200)]
        with lock:
            seen.extend(mine)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(seen) == list(range(1, 1601))
    row = store.get(T, b"ctr")
    assert row is not None and counter(row[b"c:n"]) == 1600


def test_concurrent_writers_and_scanners(backend, store: StoragePort) -> None:
    """Each writer moves its rows one by one to new keys (delete + put in one mutate), so any
    snapshot holds exactly WRITERS * OWNED rows. Without atomic batches and snapshot scans, a
    scan sees each row whole and in order, between one fewer and one more row per writer."""
    exact = backend.atomic_batches and backend.snapshot_scans
    writers, owned, rounds = 4, 25, 30
    assert store.mutate([Put(T, b"w%d-g0000-%02d" % (w, i), {b"c:v": b"0"})
                         for w in range(writers) for i in range(owned)])
    errors: list[BaseException] = []
    done = threading.Event()

    def writer(w: int) -> None:
        try:
            for generation in range(rounds):
                for i in range(owned):
                    old = b"w%d-g%04d-%02d" % (w, generation, i)
                    new = b"w%d-g%04d-%02d" % (w, generation + 1, i)
                    assert store.mutate([Delete(T, old), Put(T, new, {b"c:v": b"%d" % i})])
        except BaseException as error:
            errors.append(error)

    def scanner() -> None:
        try:
            while not done.is_set():
                rows = list(store.scan(T))
                if exact:
                    assert len(rows) == writers * owned
                else:
                    assert abs(len(rows) - writers * owned) <= writers
                assert keys(rows) == sorted(set(keys(rows)))
                assert len(list(store.scan(T, reverse=True, limit=7))) == 7
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(writers)]
    readers = [threading.Thread(target=scanner) for _ in range(2)]
    for thread in threads + readers:
        thread.start()
    for thread in threads:
        thread.join()
    done.set()
    for thread in readers:
        thread.join()
    assert errors == []
    final = keys(store.scan(T))
    assert final == sorted(b"w%d-g%04d-%02d" % (w, rounds, i)
                           for w in range(writers) for i in range(owned))


# -- durability -------------------------------------------------------------------------------


def test_data_survives_close_and_reopen(backend, store: StoragePort) -> None:
    put(store, b"k", {b"c:a": b"1"})
    store.increment(T, b"ctr", b"c:n", 7)
    store.close()
    again = backend.open()
    try:
        assert again.get(T, b"k") == {b"c:a": b"1"}
        assert again.increment(T, b"ctr", b"c:n") == 8
    finally:
        again.close()


CRASH_WRITER = """
from metastore_server.storage.port import Put, TableSpec
store.ensure_tables([TableSpec("crash", ("c",))])
i = 0
while True:
    key = b"k%08d" % i
    store.mutate([Put("crash", key, {b"c:v": key * 64})])
    print("ack", key.decode(), flush=True)
    i += 1
"""


def test_acknowledged_writes_survive_sigkill(backend) -> None:
    if backend.open_source is None:
        pytest.skip(f"{backend.name} cannot be opened from another process")
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    child = subprocess.Popen([sys.executable, "-c", backend.open_source + CRASH_WRITER],
                             stdout=subprocess.PIPE, env=env, text=True)
    assert child.stdout is not None
    lines: list[str] = []
    try:
        while len(lines) < 300:
            line = child.stdout.readline()
            assert line, "the writer died before it was killed"
            if line.startswith("ack "):
                lines.append(line)
    finally:
        child.send_signal(signal.SIGKILL)
        lines += child.stdout.read().splitlines(keepends=True)
        child.wait()
    complete = [line.split()[1] for line in lines if line.startswith("ack ") and "\n" in line]
    assert len(complete) >= 300
    reopened = backend.open()
    try:
        reopened.ensure_tables([TableSpec("crash", ("c",))])
        for key in complete:
            expected = key.encode() * 64
            assert reopened.get("crash", key.encode()) == {b"c:v": expected}, key
    finally:
        reopened.close()


# -- filters, batch sizes, reverse bounds, large values ------------------------------------------


def scvf(family: str, qualifier: str, op: str, comparator: bytes) -> bytes:
    """One SingleColumnValueFilter as filter-language bytes (a quote doubled)."""
    value = comparator.replace(b"'", b"''")
    return (f"SingleColumnValueFilter('{family}', '{qualifier}', {op}, '".encode()
            + value + b"', true, true)")  # fmt: skip


@pytest.fixture
def scored(store: StoragePort) -> dict[bytes, dict[bytes, bytes]]:
    """40 rows with binary keys (0x00 and 0xFF inside), a score in d:s, some without one."""
    rows = {}
    for i in range(40):
        key = bytes([i % 3 * 0x7F, i, 0xFF if i % 2 else 0x00])
        row = {b"c:v": b"%02d" % i}
        if i % 5:
            row[b"d:s"] = bytes([i * 6])
        rows[key] = row
    assert store.mutate([Put(T, key, row) for key, row in rows.items()])
    return dict(sorted(rows.items()))


def accepted(rows: dict[bytes, dict[bytes, bytes]], filter_text: bytes) -> list[bytes]:
    test = parse_filter(filter_text)
    return [key for key, row in rows.items() if test(row)]


FILTERS = [
    scvf("d", "s", "<", b"binary:\x78"),
    scvf("d", "s", ">=", b"binary:\x78") + b" OR " + scvf("c", "v", "=", b"binary:07"),
    b"(" + scvf("c", "v", "=", b"binaryprefix:1") + b") AND "
    + scvf("d", "s", "!=", b"binary:\x60"),
    scvf("c", "v", "=", b"regexstring:^(1|2).$"),
    scvf("c", "v", "<", b"binary:"),  # nothing
]


def test_filters_scans_says_whether_the_store_runs_the_filter(backend, store, scored) -> None:
    """The flag EXPLAIN reads: the filter is run (exactly the accepted rows) or ignored."""
    filter_text = FILTERS[0]
    expected = accepted(scored, filter_text)
    assert 0 < len(expected) < len(scored)
    assert store.filters_scans == backend.applies_filters
    got = keys(store.scan(T, filter=filter_text))
    assert got == (expected if store.filters_scans else list(scored))


@pytest.mark.parametrize("filter_text", FILTERS)
def test_filtered_scans_return_a_superset(backend, store: StoragePort, scored, filter_text):
    expected = accepted(scored, filter_text)
    got = keys(store.scan(T, filter=filter_text))
    assert got == sorted(got) and set(expected) <= set(got)
    assert all(store.get(T, key) == scored[key] for key in got[:3])
    if backend.applies_filters:
        assert got == expected
    low, high = sorted(scored)[5], sorted(scored)[30]
    within = [k for k in expected if low <= k < high]
    got = keys(store.scan(T, low, high, filter=filter_text))
    assert set(within) <= set(got) and all(low <= k < high for k in got)
    if backend.applies_filters:
        assert got == within


def test_a_filter_tests_the_whole_row_when_columns_narrow_it(backend, store, scored) -> None:
    filter_text = scvf("d", "s", ">=", b"binary:\x78")
    expected = accepted(scored, filter_text)
    rows = list(store.scan(T, columns=[b"c:v"], filter=filter_text))
    assert {key for key, _ in rows} >= set(expected)
    assert all(row == {b"c:v": scored[key][b"c:v"]} for key, row in rows)
    if backend.applies_filters:
        assert keys(rows) == expected
    only_filter_column = list(store.scan(T, columns=[b"d:s"], filter=filter_text))
    assert all(set(row) == {b"d:s"} for _, row in only_filter_column)


@pytest.mark.parametrize("limit", [1, 3, 7, 100])
def test_reverse_limited_filtered_scans(backend, store, scored, limit: int) -> None:
    filter_text = FILTERS[1]
    expected = accepted(scored, filter_text)[::-1]
    stop = sorted(scored)[35]
    expected = [k for k in expected if k < stop]
    got = keys(store.scan(T, b"\x01", stop, reverse=True, limit=limit, filter=filter_text))
    expected = [k for k in expected if k >= b"\x01"]
    assert got == sorted(got, reverse=True) and len(got) <= limit
    if got:  # every accepted row down to the last one returned came
        assert [k for k in expected if k >= got[-1]] == [k for k in got if k in expected]
    if backend.applies_filters:
        assert got == expected[:limit]
    else:
        assert len(got) == min(limit, len([k for k in scored if b"\x01" <= k < stop]))


@pytest.mark.parametrize("batch_size", [1, 2, 3, 7, 1000])
def test_batch_sizes_do_not_change_results(store, scored, batch_size: int) -> None:
    everything = list(scored.items())
    assert list(store.scan(T, batch_size=batch_size)) == everything
    assert list(store.scan(T, reverse=True, batch_size=batch_size)) == everything[::-1]
    assert keys(store.scan(T, limit=5, batch_size=batch_size)) == list(scored)[:5]
    assert keys(store.scan(T, reverse=True, limit=9, batch_size=batch_size)) == (
        list(scored)[::-1][:9]
    )
    assert keys(store.scan(T, columns=[b"d:s"], batch_size=batch_size)) == [
        key for key, row in scored.items() if b"d:s" in row
    ]
    with pytest.raises(ValueError):
        store.scan(T, batch_size=0)


def test_reverse_scan_bounds_match_a_model(store: StoragePort, binary: list[bytes]) -> None:
    probes = [b"", b"\x00", b"\x00\x00", b"\x00\x01", b"\x01", b"a", b"a\x00", b"a\x00\x01",
              b"a\xff", b"ab", b"\x80", b"\xff", b"\xff\x00", b"\xff\xff", b"\xff\xff\xff\xff"]
    for start in probes:
        for stop in [*probes, None]:
            expected = [k for k in binary if start <= k and (stop is None or k < stop)][::-1]
            assert keys(store.scan(T, start, stop, reverse=True)) == expected, (start, stop)
            assert keys(store.scan(T, start, stop, reverse=True, limit=2, batch_size=1)) == (
                expected[:2]
            ), (start, stop)


def test_one_mib_values_in_scans_and_batches(store: StoragePort) -> None:
    values = {b"big%d" % i: os.urandom(1024 * 1024) for i in range(4)}
    assert store.mutate([Put(T, key, {b"c:blob": value, b"d:n": key})
                         for key, value in values.items()])  # fmt: skip
    rows = list(store.scan(T, batch_size=2))
    assert [(k, r[b"c:blob"]) for k, r in rows] == sorted(values.items())
    assert [k for k, _ in store.get_many(T, [b"big3", b"big0"])] == [b"big3", b"big0"]
    assert store.get(T, b"big2") == {b"c:blob": values[b"big2"], b"d:n": b"big2"}
    assert keys(store.scan(T, reverse=True, limit=1, columns=[b"d:n"])) == [b"big3"]


def test_increment_refuses_a_column_that_is_no_counter(store: StoragePort) -> None:
    put(store, b"k", {b"c:v": b"short"})
    with pytest.raises(ValueError):
        store.increment(T, b"k", b"c:v")
    assert store.increment(T, b"k", b"c:n", 2**62) == 2**62
    assert store.increment(T, b"k", b"c:n", -(2**62) - 5) == -5
    assert store.get(T, b"k") == {b"c:v": b"short", b"c:n": struct.pack(">q", -5)}
