"""A TEST DOUBLE of an HBase Thrift (1) server. It is NOT HBase.

It stands in for a real HBase Thrift gateway in CI, where no HBase runs: a thriftpy2 server of
the ``Hbase`` service loaded from happybase's own ``Hbase.thrift`` (the IDL happybase speaks),
listening on 127.0.0.1, its tables kept in an embedded ``SqliteStore``. It answers the calls
happybase and ``storage.hbase`` make, with HBase's semantics where they matter to a client:

* tables: getTableNames, createTable (AlreadyExists; families from the descriptors, ``c:``
  or ``c``), deleteTable (only when disabled), enable/disable/isTableEnabled,
  getColumnDescriptors, getTableRegions (one region); a ``ns:table`` name needs a namespace
  the double knows (``default``, ``hbase``, or ``add_namespace``).
* reads: get, getRow(s), getRow(s)WithColumns (missing rows left out, columns as
  ``family:qualifier`` or a whole ``family``).
* writes: mutateRow(s) (per row the deletes land first, then the puts, as two steps, as the
  HBase gateway does; mutateRows applies every row's deletes, then every row's puts),
  deleteAll, deleteAllRow, atomicIncrement (8-byte big-endian longs, wrapping like Java),
  checkAndPut (an absent expected value, or an empty one, holds for a missing or empty cell,
  as in HBase). Unknown families are IOError (NoSuchColumnFamilyException).
* scans: scannerOpenWithScan (TScan startRow / stopRow / reversed / columns / filterString /
  batchSize / sortColumns; caching is the client's business), scannerOpen, scannerOpenWithStop,
  scannerOpenWithPrefix, scannerGet, scannerGetList, scannerClose. Scanner ids are global to
  the server (any connection may use one), as in the HBase gateway; a scanner left alone for
  ``scanner_lease_s`` is dropped. A reversed scan walks from startRow (inclusive) down to
  stopRow (exclusive). The filter sees only the columns the scan selects (HBase's
  SingleColumnValueFilter gotcha). Filters: ``hbase_filter_language`` (the subset
  ``storage.filters`` emits). An unknown filter fails the call the way HBase's gateway does:
  scannerOpenWithScan declares only IOError, so HBase's IllegalArgumentException reaches the
  client as a TApplicationException (INTERNAL_ERROR) naming it.

Row keys: a row key (put, get, or a scan's start / stop row) longer than ``MAX_ROW_KEY``
(32,767 bytes, Short.MAX_VALUE) is refused as HBase's client classes refuse it
(``java.lang.IllegalArgumentException: Row length ... is > 32767``): IllegalArgument from the
writes that declare it, IOError from the reads and scans (which declare only IOError).

Scanner RPC timeout: a real region server answers one scannerGetList by walking rows until it
has ``nbRows`` the filter accepts, and a call that passes over too many rows the filter rejects
outlives the scanner RPC timeout. The double counts that time in rows: a scannerGetList (or
scannerGet) that would pass over more than ``scan_rows_per_call`` rejected rows (default
``DEFAULT_SCAN_ROWS_PER_CALL`` = 100, as test tables hold hundreds of rows where real ones hold
millions; None: no limit) fails with IOError ``org.apache.hadoop.hbase.DoNotRetryIOException:
Failed after retry of OutOfOrderScannerNextException: was there a rpc timeout?``
(``SCAN_TIMEOUT_MESSAGE``), and the scanner fails every later call the same way. A scan
without a filter never hits it.
``scan_rows_examined`` lists the rows each call examined, ``scan_timeouts`` counts failures.

Cell size: a put (mutateRow(s), checkAndPut) of a cell whose KeyValue (row + family +
qualifier + value + ``CELL_OVERHEAD`` bytes) is longer than ``max_cell_bytes`` (default
``MAX_CELL_BYTES``, 10,485,760, hbase.client.keyvalue.maxsize) is refused as HBase's client
refuses it: IllegalArgument ``java.lang.IllegalArgumentException: KeyValue size too large``.

Table operations: a real HBase master takes about a second to create, enable, disable or
delete a table; the double takes ``table_ddl_s`` seconds (default 0, so the suite stays fast)
and lists the tables createTable made in ``tables_created`` (a test asserts the suite creates
its tables once per table prefix).

HBase 1.2.x's reverse-scan bug (``reverse_filter_bug``, off by default): a reversed scan with a
filter fails on the region server (``java.lang.IllegalStateException: requestSeek cannot be
called on ReversedKeyValueHeap``), seen by the client as IOError ``DoNotRetryIOException:
Failed after retry of OutOfOrderScannerNextException`` (``REVERSE_SCAN_BUG_MESSAGE``) at the
scanner's first scannerGetList; ``reverse_scan_failures`` counts them.

Not emulated: versions and timestamps (one version per cell; TCell timestamps are the write
clock), TTLs, regions and splits, same-millisecond delete/put masking.

Hooks for tests: ``fail_writes_after(n)`` (the next n row writes succeed, later ones raise
IOError until ``heal()``), ``drop_connection(method, when=..., count=...)`` (close the client's
connection before or after doing a call, without answering), ``crash_before_write(n, crash)``
(call ``crash``, which kills the writing process, when the n-th write call arrives; ``writes``
counts them), ``restart_gateway(down_s)``, ``pause_regions(seconds, give_up_s=...)`` (a region
server restarting), ``stall(methods, delay_s=...)`` (a gateway that takes calls but answers none
until ``heal()``: HBase's master and region servers down; ``stalled`` counts them), ``calls`` (a
Counter of method names), ``scans`` (the TScan objects received) and ``scanner_batches`` (the
nbRows asked for).

Modules, one job each: ``server`` (``HBaseDouble``: listening, connections, the backing
store; ``storage_url``, ``running_double``), ``calls`` (the service calls on tables, rows and
writes, and the guard running the hooks before each call), ``scanners`` (scanners and the scan
budget), ``faults`` (the hooks and their state), ``limits`` (row key and cell size checks),
``tables`` (table names, families, column selection, Thrift rows), ``idl`` (the Thrift IDL and
HBase's exceptions).

Use: ``with HBaseDouble() as double: url = double.url(prefix="t_")``, or
``with running_double() as (host, port): url = storage_url(host, port)``, or as a process of
its own: ``cd tests && python -m support.hbase_double --port 9090`` (``__main__``).
"""

from support.hbase_double.idl import HBASE_IDL, hbase_thrift, illegal_argument, io_error
from support.hbase_double.limits import CELL_OVERHEAD, MAX_CELL_BYTES, MAX_ROW_KEY
from support.hbase_double.scanners import (
    DEFAULT_SCAN_ROWS_PER_CALL,
    REVERSE_SCAN_BUG_MESSAGE,
    SCAN_TIMEOUT_MESSAGE,
)
from support.hbase_double.server import HBaseDouble, running_double, storage_url

__all__ = [
    "CELL_OVERHEAD",
    "DEFAULT_SCAN_ROWS_PER_CALL",
    "HBASE_IDL",
    "MAX_CELL_BYTES",
    "MAX_ROW_KEY",
    "REVERSE_SCAN_BUG_MESSAGE",
    "SCAN_TIMEOUT_MESSAGE",
    "HBaseDouble",
    "hbase_thrift",
    "illegal_argument",
    "io_error",
    "running_double",
    "storage_url",
]
