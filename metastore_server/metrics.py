"""The server's metrics (Prometheus, through ``prometheus_client``), and fb303's counters made
from the same figures.

``serve`` runs several processes (a supervisor, its workers, the REST catalog's process): it
makes a private directory (:func:`metrics_directory`) and names it in
``PROMETHEUS_MULTIPROC_DIR`` before anything records, so that every process it starts writes
its figures there and whoever reads them (``/metrics``, ``getCounters``) sees them all added
up (:func:`collect`). A process started without it (a test, a tool) keeps them in memory.

Recording costs little where it happens on every call: :func:`record_call` (from the audit
line) observes one histogram child kept per method, and counts an error by its type. The
metrics are made on first use (:func:`storage.telemetry.lazy`). No label takes a value a
client chooses: a method the IDL does not name is ``unknown``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import structlog

from metastore_server.storage.telemetry import INTENTS, LATENCY_BUCKETS, STORE_SECONDS, lazy

log = structlog.get_logger(__name__)

#: The variable naming the directory every process of a server writes its figures to.
ENV = "PROMETHEUS_MULTIPROC_DIR"

CALL_SECONDS = "metastore_api_call_duration_seconds"
ERRORS = "metastore_api_errors"
OPEN_CONNECTIONS = "metastore_open_connections"
WORKERS = "metastore_workers"
WORKERS_DESIRED = "metastore_workers_desired"
RESTARTS = "metastore_worker_restarts"
CACHE_LOOKUPS = "metastore_listing_cache_lookups"
CACHE_BYTES = "metastore_listing_cache_bytes"
REST_REQUESTS = "metastore_rest_requests"
REST_SECONDS = "metastore_rest_request_duration_seconds"
#: Every metric of ours (the names as declared; counters are exported with ``_total``).
NAMES = (CALL_SECONDS, ERRORS, OPEN_CONNECTIONS, WORKERS, WORKERS_DESIRED, RESTARTS,
         CACHE_LOOKUPS, CACHE_BYTES, REST_REQUESTS, REST_SECONDS, STORE_SECONDS, INTENTS)
#: The content type of Prometheus's text format, as ``generate_latest`` writes it.
TEXT_FORMAT = "text/plain; version=0.0.4; charset=utf-8"
#: The method label of a call whose method the IDL does not name.
UNKNOWN = "unknown"
#: Why a worker is replaced (``metastore_worker_restarts_total``'s reasons).
RESTART_REASONS = ("exited", "call_timeout", "silent", "start_timeout")


class _Calls:
    """The metrics of metastore calls, with each method's histogram child kept."""

    def __init__(self) -> None:
        from prometheus_client import Counter, Histogram, values

        from metastore_server.thrift_api import hms

        if os.environ.get(ENV) and not getattr(values.ValueClass, "_multiprocess", False):
            log.warning("metrics_not_shared", detail=f"prometheus_client was loaded before "
                        f"{ENV} was set: this process's figures are not exported")  # fmt: skip
        self.seconds = Histogram(CALL_SECONDS, "Time to answer a metastore call (its reply "
                                 "written), by method; _count: the calls", ["method"],
                                 buckets=LATENCY_BUCKETS)  # fmt: skip
        self.errors = Counter(ERRORS, "Metastore calls answered with an error, by method and "
                              "error (the exception's type)", ["method", "error"])  # fmt: skip
        self.known = frozenset(hms.ThriftHiveMetastore.thrift_services)
        self.timers: dict[str, Any] = {}
        self.failures: dict[tuple[str, str], Any] = {}

    def timer(self, method: str) -> Any:
        """The histogram child of ``method`` (kept for the methods the IDL names)."""
        if method not in self.known:
            return self.seconds.labels(UNKNOWN)
        child = self.timers[method] = self.seconds.labels(method)
        return child

    def error(self, method: str, outcome: str) -> Any:
        """The error counter child of ``method`` and ``outcome`` (kept, up to
        ``_KEPT_ERRORS`` of them)."""
        key = (method if method in self.known else UNKNOWN, outcome)
        child = self.failures.get(key)
        if child is None:
            child = self.errors.labels(*key)
            if len(self.failures) < _KEPT_ERRORS:
                self.failures[key] = child
        return child


_calls = lazy(_Calls)
#: Error counter children kept (methods times the error types they meet: a few hundred).
_KEPT_ERRORS = 4096


def record_call(method: str, ms: float, outcome: str) -> None:
    """Note a call of ``method`` that took ``ms`` and ended in ``outcome`` (``ok``, or the
    error's type). Never raises."""
    try:
        calls = _calls()
        timer = calls.timers.get(method)
        if timer is None:
            timer = calls.timer(method)
        timer.observe(ms / 1000.0)
        if outcome != "ok":
            (calls.failures.get((method, outcome)) or calls.error(method, outcome)).inc()
    except Exception:  # noqa: BLE001, S110 - a figure lost fails no call
        pass


class _Server:
    """The metrics recorded now and then: connections, workers, the listing cache, REST."""

    def __init__(self) -> None:
        from prometheus_client import Counter, Gauge, Histogram

        def gauge(name: str, text: str, labels: tuple[str, ...] = ()) -> Any:
            return Gauge(name, text, labels, multiprocess_mode="livesum")

        self.connections = gauge(OPEN_CONNECTIONS, "Client connections open (Thrift)")
        self.workers = gauge(WORKERS, "Worker processes, by state (ready, starting)", ("state",))
        self.desired = gauge(WORKERS_DESIRED, "Worker processes the server runs (--workers)")
        self.restarts = Counter(RESTARTS, "Workers replaced, by reason (exited, call_timeout, "
                                "silent, start_timeout)", ["reason"])  # fmt: skip
        self.lookups = Counter(CACHE_LOOKUPS, "Listing cache look-ups, by result (hit, miss)",
                               ["result"])  # fmt: skip
        for reason in RESTART_REASONS:  # shown at 0 from the start
            self.restarts.labels(reason)
        for result in ("hit", "miss"):
            self.lookups.labels(result)
        self.cache_bytes = gauge(CACHE_BYTES, "Bytes of listings the listing caches keep")
        self.rest = Counter(REST_REQUESTS, "REST catalog requests, by route, method and status",
                            ["route", "method", "status"])  # fmt: skip
        self.rest_seconds = Histogram(REST_SECONDS, "Time to answer a REST catalog request, by "
                                      "route and method", ["route", "method"],
                                      buckets=LATENCY_BUCKETS)  # fmt: skip


_server = lazy(_Server)


def _quietly(record: Any) -> None:
    try:
        record(_server())
    except Exception:  # noqa: BLE001, S110 - a figure lost fails nothing
        pass


def connection_opened() -> None:
    """Count a client connection in."""
    _quietly(lambda m: m.connections.inc())


def connection_closed() -> None:
    """Count a client connection out."""
    _quietly(lambda m: m.connections.dec())


def workers(ready: int, starting: int, desired: int) -> None:
    """Set the supervisor's worker figures."""

    def record(m: _Server) -> None:
        m.workers.labels("ready").set(ready)
        m.workers.labels("starting").set(starting)
        m.desired.set(desired)

    _quietly(record)


def worker_restarted(reason: str) -> None:
    """Count a worker replaced for ``reason``."""
    _quietly(lambda m: m.restarts.labels(reason).inc())


def listing_cache_lookup(hit: bool) -> None:
    """Count a listing cache look-up."""
    _quietly(lambda m: m.lookups.labels("hit" if hit else "miss").inc())


def listing_cache_bytes(change: int) -> None:
    """Add ``change`` (negative: taken out) to the bytes the listing caches keep."""
    _quietly(lambda m: m.cache_bytes.inc(change))


def rest_request(route: str, method: str, status: int, seconds: float) -> None:
    """Note a REST request (``route``: its path template, never the path itself)."""

    def record(m: _Server) -> None:
        m.rest.labels(route, method, str(status)).inc()
        m.rest_seconds.labels(route, method).observe(seconds)

    _quietly(record)


# -- the directory of a server's processes ------------------------------------------------


@contextlib.contextmanager
def metrics_directory() -> Iterator[str]:
    """A private directory (0700) named in ``PROMETHEUS_MULTIPROC_DIR`` while the block runs
    (for the processes it starts too), removed afterwards."""
    previous = os.environ.get(ENV)
    path = tempfile.mkdtemp(prefix="metastore-metrics-")
    os.environ[ENV] = path
    try:
        yield path
    finally:
        if previous is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = previous
        shutil.rmtree(path, ignore_errors=True)


def process_gone(pid: int) -> None:
    """Forget the live figures (open connections, cache bytes) of a process that ended."""
    path = os.environ.get(ENV)
    if not path:
        return
    from prometheus_client import multiprocess

    with contextlib.suppress(OSError):
        multiprocess.mark_process_dead(pid, path)


def _registry() -> Any:
    """The registry to read: the shared directory's figures, or this process's."""
    from prometheus_client import REGISTRY, CollectorRegistry, multiprocess

    path = os.environ.get(ENV)
    if not path or not os.path.isdir(path):
        return REGISTRY
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path)
    return registry


def collect() -> list[Any]:
    """The metric families of ours, every process's figures added up."""
    return [family for family in _registry().collect() if family.name in NAMES]


def exposition() -> tuple[bytes, str]:
    """(body, content type) of ``/metrics``: our metrics in Prometheus's text format."""
    from prometheus_client import CollectorRegistry, generate_latest

    families = collect()

    class _Ours:
        def collect(self) -> list[Any]:
            return families

    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Ours())
    return generate_latest(registry), TEXT_FORMAT


def fb303_counters() -> dict[str, int]:
    """fb303's counters, from the figures of ``/metrics``: each method called, under its own
    name, with its calls (HMS's counters, as its handler counts each call under the method's
    name), ``total_api_calls`` and ``open_connections`` (HMS's metric names), and every
    counter, gauge and histogram count of ``/metrics`` under its sample's name and labels
    (``metastore_api_errors_total{error="NoSuchObjectException",method="get_table"}``)."""
    counters: dict[str, int] = {}
    total = 0
    for family in collect():
        for sample in family.samples:
            if family.type == "histogram" and not sample.name.endswith("_count"):
                continue
            value = int(sample.value)
            labels = ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items()))
            counters[f"{sample.name}{{{labels}}}" if labels else sample.name] = value
            if sample.name == CALL_SECONDS + "_count":
                method = sample.labels.get("method", UNKNOWN)
                counters[method] = value
                total += value
            elif sample.name == OPEN_CONNECTIONS:
                counters["open_connections"] = value
    counters["total_api_calls"] = total
    return counters
