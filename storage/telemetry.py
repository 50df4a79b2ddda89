"""The store's figures for the server's metrics (``metastore_server.metrics`` exports them):
how long store operations take, and what became of HBase's intents.

Metrics are ``prometheus_client`` objects made on first use, not at import: whether a
process writes them to ``PROMETHEUS_MULTIPROC_DIR`` (a served server's processes) or keeps
them in memory (a test, a tool) is settled by then (``serve`` sets the variable before
anything records). :func:`lazy` is how every room makes its metrics.

Timing:

* HBase: every request to the Thrift gateway (``HBaseConnection.call``), by request
  (``get``, ``get_many``, ``scan`` for a scanner opened or a batch fetched, ``checkAndPut``,
  ``mutateRow(s)``, ``atomicIncrement``, ...): a network round trip costs far more than its
  timing.
* The embedded store: one ``get``, ``get_many``, ``mutate`` and ``increment`` in
  ``SAMPLE_EVERY`` (they take microseconds, so timing each would cost a share of them), and
  every ``commit`` (the write to disk). Scans are not timed (they are read as the call goes).
"""

from __future__ import annotations

import functools
import itertools
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast

#: Bucket bounds (seconds) of the latency histograms: from 0.1 ms (a cached small call) to
#: 5 minutes (the call timeout).
LATENCY_BUCKETS = (
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
    1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
)  # fmt: skip
#: The embedded store times one operation in this many.
SAMPLE_EVERY = 16

STORE_SECONDS = "metastore_store_operation_duration_seconds"
INTENTS = "metastore_hbase_intents"

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


def lazy(build: Callable[[], T]) -> Callable[[], T]:
    """A function answering what ``build`` makes, made once, on the first call."""
    made: list[T] = []
    lock = threading.Lock()

    def get() -> T:
        if made:
            return made[0]
        with lock:
            if not made:
                made.append(build())
        return made[0]

    return get


class _StoreMetrics:
    """The store's metrics, with a child per operation kept (a label lookup costs more than
    the observation)."""

    def __init__(self) -> None:
        from prometheus_client import Counter, Histogram

        self.seconds = Histogram(STORE_SECONDS, "Time a store operation took, by operation "
                                 "(the embedded store's: one in SAMPLE_EVERY, and every commit)",
                                 ["op"], buckets=LATENCY_BUCKETS)  # fmt: skip
        self.intents = Counter(INTENTS, "HBase intents (each a call's change): committed, "
                               "rolled back by their writer, or rolled back for a dead writer",
                               ["outcome"])  # fmt: skip
        self.children: dict[str, Any] = {}

    def timer(self, op: str) -> Any:
        child = self.children.get(op)
        if child is None:
            child = self.children[op] = self.seconds.labels(op)
        return child


_metrics = lazy(_StoreMetrics)


def store_operation(op: str, seconds: float) -> None:
    """Note that a store operation ``op`` took ``seconds`` (never raises)."""
    try:
        _metrics().timer(op).observe(seconds)
    except Exception:  # noqa: BLE001, S110 - a figure lost fails no store operation
        pass


def intent(outcome: str) -> None:
    """Count an HBase intent's ``outcome``: ``commit``, ``rollback`` or ``recovery``."""
    try:
        _metrics().intents.labels(outcome).inc()
    except Exception:  # noqa: BLE001, S110 - a figure lost fails no store operation
        pass


def sampled(op: str, every: int = SAMPLE_EVERY) -> Callable[[F], F]:
    """Decorate a store method so that one call in ``every`` is timed as ``op``."""

    def decorate(method: F) -> F:
        tick = itertools.count()

        @functools.wraps(method)
        def timed(*args: Any, **kwargs: Any) -> Any:
            if next(tick) % every:
                return method(*args, **kwargs)
            started = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                store_operation(op, time.perf_counter() - started)

        return cast(F, timed)  # functools.wraps keeps the method's signature

    return decorate
