"""Limits a real HBase has, on the HBase test double (``support.hbase_double``) and as the HBase
backend lives with them: the rows one scanner call may examine before it outlives the scanner
RPC timeout, and the largest cell (KeyValue) a put may carry."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator

import happybase
import pytest
from metastore_server.storage.hbase import HBaseStore
from metastore_server.storage.port import Put, TableSpec, ValueTooLargeError
from support.hbase_double import SCAN_TIMEOUT_MESSAGE, HBaseDouble

T = "t"
BUDGET = 5
HBASE_THRIFT = importlib.import_module("Hbase_thrift")  # loaded by happybase from its IDL
_PREFIXES = iter(range(1, 10**9))
#: Rows whose d:s is 0x07 (every 10th row): a filter on it passes over 9 rows between results.
SELECTIVE = b"SingleColumnValueFilter('d', 's', =, 'binary:\x07', true, true)"


@pytest.fixture(scope="module")
def double() -> Iterator[HBaseDouble]:
    with HBaseDouble(scan_rows_per_call=BUDGET, max_cell_bytes=1000) as running:
        yield running


@pytest.fixture
def store(double: HBaseDouble) -> Iterator[HBaseStore]:
    opened = HBaseStore.from_url(double.url(prefix=f"l{next(_PREFIXES)}_", connect_retries=0))
    opened.ensure_tables([TableSpec(T, ("c", "d"))])
    yield opened
    double.heal()
    opened.close()


def rows(store: HBaseStore, n: int = 40) -> None:
    """Rows r000..; d:s is the row number's last digit, c:v the number."""
    assert store.mutate(
        [Put(T, b"r%03d" % i, {b"c:v": b"%d" % i, b"d:s": bytes([i % 10])}) for i in range(n)]
    )


def accepted(n: int = 40) -> list[bytes]:
    return [b"r%03d" % i for i in range(n) if i % 10 == 7]


# -- the double: scanner calls that examine too many rows ----------------------------------------


def test_a_scanner_call_past_its_row_budget_fails_and_breaks_the_scanner(double, store) -> None:
    rows(store)
    table = store.settings.table_name(T)
    with contextlib.closing(happybase.Connection(*double.address)) as connection:
        client = connection.client
        scan = HBASE_THRIFT.TScan(filterString=SELECTIVE)
        scanner = client.scannerOpenWithScan(table, scan, {})
        with pytest.raises(HBASE_THRIFT.IOError) as failed:
            client.scannerGetList(scanner, 2)  # two results are 11 rows apart
        assert SCAN_TIMEOUT_MESSAGE in failed.value.message.decode()
        assert "DoNotRetryIOException" in SCAN_TIMEOUT_MESSAGE
        with pytest.raises(HBASE_THRIFT.IOError, match="OutOfOrderScannerNextException"):
            client.scannerGet(scanner)  # unusable from then on
        client.scannerClose(scanner)


def test_scans_within_the_budget_never_hit_it(double, store) -> None:
    rows(store)
    table = store.settings.table_name(T)
    with contextlib.closing(happybase.Connection(*double.address)) as connection:
        client = connection.client
        everything = b"SingleColumnValueFilter('d', 's', <, 'binary:\x0a', true, true)"
        scanner = client.scannerOpenWithScan(table, HBASE_THRIFT.TScan(filterString=everything), {})
        got = []
        while batch := client.scannerGetList(scanner, BUDGET):
            got += [item.row for item in batch]
        assert len(got) == 40
        client.scannerClose(scanner)


# -- the store: a filtered scan goes on without its filter ----------------------------------------


@pytest.mark.parametrize("reverse", [False, True])
def test_a_filtered_scan_that_times_out_goes_on_unfiltered(double, store, reverse) -> None:
    rows(store)
    before = len(double.scans)
    got = list(store.scan(T, filter=SELECTIVE, columns=[b"c:v"], batch_size=3, reverse=reverse))
    keys = [key for key, _ in got]
    assert keys == sorted(keys, reverse=reverse)
    assert set(accepted()) <= set(keys)  # a superset, as the port allows
    assert len(keys) == len(set(keys))
    assert all(set(row) == {b"c:v"} for _, row in got)
    sent = double.scans[before:]
    assert sent[0].filterString == SELECTIVE
    assert len(sent) == 2  # once unfiltered, for the rest of that scan
    assert sent[1].filterString is None and sent[1].caching == 3
    assert sent[1].columns == [b"c:v"]


def test_a_limited_filtered_scan_keeps_every_accepted_row_up_to_the_last(double, store) -> None:
    rows(store)
    got = [key for key, _ in store.scan(T, filter=SELECTIVE, limit=4, batch_size=2)]
    assert len(got) == 4 and got == sorted(got)
    assert set(accepted()) & set(b"r%03d" % i for i in range(int(got[-1][1:]) + 1)) <= set(got)


def test_an_unfiltered_scan_never_times_out(double, store) -> None:
    rows(store, n=BUDGET * 3)
    timeouts = double.scan_timeouts
    assert len(list(store.scan(T, batch_size=BUDGET * 10))) == BUDGET * 3  # rows given: fast
    assert double.scan_timeouts == timeouts


# -- cells: HBase refuses a KeyValue over hbase.client.keyvalue.maxsize ---------------------------


def test_the_double_refuses_cells_over_its_limit(double, store) -> None:
    table = store.settings.table_name(T)
    too_big = b"x" * 1000
    with contextlib.closing(happybase.Connection(*double.address)) as connection:
        client = connection.client
        put = HBASE_THRIFT.Mutation(isDelete=False, column=b"c:v", value=too_big)
        batch = HBASE_THRIFT.BatchMutation(row=b"r", mutations=[put])
        for call in (
            lambda: client.mutateRow(table, b"r", [put], {}),
            lambda: client.mutateRows(table, [batch], {}),
            lambda: client.checkAndPut(table, b"r", b"c:v", None, put, {}),
        ):
            with pytest.raises(HBASE_THRIFT.IllegalArgument) as refused:
                call()
            assert b"java.lang.IllegalArgumentException: KeyValue size too large" in (
                refused.value.message
            )
        fits = b"x" * (1000 - 20 - len(b"r") - len(b"cv"))
        client.mutateRow(table, b"r", [HBASE_THRIFT.Mutation(column=b"c:v", value=fits)], {})
    assert store.get(T, b"r") == {b"c:v": fits}


def test_the_store_refuses_a_cell_over_the_limit_before_sending_it(double) -> None:
    url = double.url(prefix=f"l{next(_PREFIXES)}_", connect_retries=0, max_cell_bytes=1000)
    with HBaseStore.from_url(url) as store:
        store.ensure_tables([TableSpec(T, ("c", "d"))])
        sent = sum(double.calls[m] for m in ("mutateRow", "mutateRows", "checkAndPut"))
        with pytest.raises(ValueTooLargeError) as refused:
            store.mutate([Put(T, b"r1", {b"c:v": b"small"}), Put(T, b"r2", {b"d:s": b"x" * 990})])
        message = str(refused.value)
        assert store.settings.table_name(T).decode() in message
        assert "column d:s" in message and "1,014 bytes" in message and "1,000" in message
        assert sum(double.calls[m] for m in ("mutateRow", "mutateRows", "checkAndPut")) == sent
        assert store.get(T, b"r1") is None  # nothing of the batch was sent
        assert store.mutate([Put(T, b"r2", {b"d:s": b"x" * 976})])  # exactly at the limit


def test_the_default_cell_limit_is_hbases() -> None:
    from metastore_server.storage.hbase import HBaseSettings

    assert HBaseSettings().max_cell_bytes == 10_485_760
    assert HBaseSettings.from_url("hbase://hb?max_cell_bytes=5").max_cell_bytes == 5
    with pytest.raises(ValueError, match="max_cell_bytes"):
        HBaseSettings(max_cell_bytes=0)


# -- HBase 1.2.x: a reversed scan with a filter fails on the region server ------------------------

#: Rows whose d:s is below 5: half the rows, at most 5 rejected in a row (within the budget).
HALF = b"SingleColumnValueFilter('d', 's', <, 'binary:\x05', true, true)"


@contextlib.contextmanager
def reverse_filter_bug(double: HBaseDouble) -> Iterator[None]:
    double.reverse_filter_bug = True
    try:
        yield
    finally:
        double.reverse_filter_bug = False


def test_the_double_fails_reversed_filtered_scans_as_hbase_1_2_does(double, store) -> None:
    rows(store)
    table = store.settings.table_name(T)
    failures = double.reverse_scan_failures
    with reverse_filter_bug(double), contextlib.closing(
        happybase.Connection(*double.address)
    ) as connection:
        client = connection.client

        def first(**scan: object) -> list[bytes]:
            scanner = client.scannerOpenWithScan(table, HBASE_THRIFT.TScan(**scan), {})
            try:
                return [item.row for item in client.scannerGetList(scanner, 3)]
            finally:
                client.scannerClose(scanner)

        with pytest.raises(HBASE_THRIFT.IOError) as failed:
            first(filterString=HALF, reversed=True)
        message = failed.value.message.decode()
        assert "requestSeek cannot be called on ReversedKeyValueHeap" in message
        assert "OutOfOrderScannerNextException" in message
        assert first(filterString=HALF) == [b"r000", b"r001", b"r002"]  # forward: fine
        assert first(reversed=True) == [b"r039", b"r038", b"r037"]  # no filter: fine
    assert double.reverse_scan_failures == failures + 1


def latest_accepted(
    store: HBaseStore, start: bytes, stop: bytes | None, n: int, batch: int
) -> list[bytes]:
    """The ``n`` highest keys in the range whose row HALF accepts, as a caller reads them: a
    reversed filtered scan of ``n`` rows, each row re-checked, on from the last key until it
    has ``n`` (the port's contract for a limited filtered scan)."""
    found: list[bytes] = []
    while len(found) < n:
        asked = n - len(found)
        got = list(store.scan(T, start, stop, reverse=True, limit=asked, filter=HALF,
                              batch_size=batch))  # fmt: skip
        found += [key for key, row in got if row[b"d:s"][0] < 5]
        if len(got) < asked:  # the range is done
            break
        stop = got[-1][0]  # a reversed scan's next part ends below the last key
    return found[:n]


@pytest.mark.parametrize(
    ("start", "stop", "limit", "batch"),
    [(b"", None, None, 4), (b"r005", b"r031", None, 3), (b"", None, 6, 2), (b"r010", None, 1, 1)],
)
def test_a_reversed_filtered_scan_on_hbase_1_2_gives_the_right_rows(
    double, store, start, stop, limit, batch
) -> None:
    rows(store)
    upper = int(stop[1:]) if stop else 40
    lower = int(start[1:]) if start else 0
    accepted_keys = [b"r%03d" % i for i in reversed(range(lower, upper)) if i % 10 < 5]
    before, failures = len(double.scans), double.reverse_scan_failures
    with reverse_filter_bug(double):
        got = list(store.scan(T, start, stop, reverse=True, limit=limit, filter=HALF,
                              batch_size=batch))  # fmt: skip
        latest = latest_accepted(store, start, stop, limit or 40, batch)
    keys = [key for key, _ in got]
    assert keys == sorted(set(keys), reverse=True)  # in order, each once
    assert all(start <= key and (stop is None or key < stop) for key in keys)
    assert limit is None or len(keys) <= limit
    # every accepted row down to the last one returned; and what a caller reads is exact
    down_to_last = [key for key in accepted_keys if key >= keys[-1]]
    assert [key for key, row in got if row[b"d:s"][0] < 5] == down_to_last
    assert latest == accepted_keys[:limit]
    assert double.reverse_scan_failures > failures  # the bug was met, and gone round
    retried = double.scans[before:][-1]
    assert retried.reversed and retried.filterString is None
