"""``metastore-server serve``: the server in one process, or a supervisor and its worker
processes, and beside them the Iceberg REST catalog's process when ``--rest-port`` is given;
``/health``, ``/ready`` and ``/metrics`` on ``--metrics-port``. Every process of a server
writes its metrics to one directory (``metastore_server.metrics.metrics_directory``)."""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import structlog

from metastore_server import metrics, stop_signals
from metastore_server.cli import errors
from metastore_server.distribution import install_hint
from metastore_server.server.config import ServerConfig
from metastore_server.storage.hbase import HBaseError

log = structlog.get_logger(__name__)


def serve(
    config: ServerConfig,
    argv: Sequence[str] = (),
    worker_channel_fd: int = -1,
    rest_process: bool = False,
) -> int:
    """Run the server until SIGTERM or SIGINT; 0 on a clean stop. With ``config.workers``,
    a supervisor runs that many worker processes (each this program with ``argv`` and
    ``--worker-channel-fd``); a worker serves the connections handed over on that channel.
    With ``config.rest_port``, the Iceberg REST catalog runs in a process of its own beside
    them (this program with ``argv`` and ``--rest-process``)."""
    if rest_process or worker_channel_fd >= 0:
        return _serve_started_by_serve(config, worker_channel_fd, rest_process)
    if config.rest_port:
        missing = _rest_extra_missing()
        if missing is not None:
            return errors.report(f"--rest-port: {missing}", errors.USAGE)
    # Before anything records: every process started from here writes its figures there.
    with metrics.metrics_directory():
        built = _build(config)
        if isinstance(built, int):
            return built
        server, close = built
        with _rest_beside(config, argv) as sibling:
            if config.workers > 0:
                close()  # the store opened fine: the workers open their own
                return _supervise(config, argv, sibling)
            return _serve_alone(config, server, close, sibling)


def _serve_started_by_serve(config: ServerConfig, channel_fd: int, rest_process: bool) -> int:
    """A worker (``channel_fd``) or the REST catalog's process: until it serves, a stop signal
    ends its start, cleanly (exit code 0), as one while it serves ends that
    (``metastore_server/stop_signals.py``)."""
    stop_signals.take_at_start()  # taken already by ``python -m metastore_server``
    try:
        if rest_process:
            return _serve_rest_catalog(config)
        built = _build(config)
        return built if isinstance(built, int) else _serve_as_worker(*built, channel_fd)
    except stop_signals.StoppedAtStart as stopped:
        log.info("stopped_at_start", reason=str(stopped))
        return 0
    finally:
        stop_signals.ignore()


def _build(config: ServerConfig) -> tuple[Any, Callable[[], None]] | int:
    """The server of ``config`` and what closes its store; the exit code when it cannot be
    built."""
    from metastore_server.server.app import build_server, tune_garbage_collector

    try:
        server, close = build_server(config)
    except ValueError as exc:
        return errors.report(str(exc), errors.USAGE)
    except (OSError, HBaseError) as exc:
        return errors.report(errors.store_problem(config.storage, exc), errors.USAGE)
    tune_garbage_collector()
    return server, close


def _monitoring(config: ServerConfig, serving: Callable[[], str | None]) -> Any:
    """The started ``/health``, ``/ready`` and ``/metrics`` server of ``--metrics-port``
    (None when not asked for); OSError when its port cannot be bound."""
    if not config.metrics_port:
        return None
    from metastore_server.server.monitoring import MonitoringServer, StoreHealth, readiness

    check = readiness(serving, StoreHealth(config.storage))
    monitor = MonitoringServer(config.host, config.metrics_port, check)
    monitor.start()
    return monitor


def _metrics_port_problem(config: ServerConfig, exc: OSError) -> int:
    problem = errors.bind_problem(config.host, config.metrics_port, exc, "--metrics-port")
    return errors.report(f"--metrics-port: {problem}", errors.USAGE)


@contextlib.contextmanager
def _rest_beside(config: ServerConfig, argv: Sequence[str]) -> Iterator[Any]:
    """The REST catalog's process runs while the block does (when ``config.rest_port``): the
    block gets its ``RestSibling`` (None without ``--rest-port``)."""
    if not config.rest_port:
        yield None
        return
    from metastore_server.rest.sibling import RestSibling

    sibling = RestSibling(argv)
    sibling.start()
    try:
        yield sibling
    finally:
        sibling.stop()


def _serve_rest_catalog(config: ServerConfig) -> int:
    """The REST catalog's process (``--rest-process``): 0 on a clean stop, 2 when it cannot
    be set up or listen."""
    from metastore_server.rest.process import run_rest_catalog

    try:
        listened = run_rest_catalog(config)
    except (ValueError, OSError, HBaseError) as exc:
        return errors.report(f"REST catalog: {exc}", errors.USAGE)
    if not listened:
        return errors.report(f"REST catalog: cannot serve on {config.host}:{config.rest_port} "
                             "(the port in use?)", errors.USAGE)  # fmt: skip
    return 0


def _rest_extra_missing() -> str | None:
    """Why the REST catalog cannot run here (a library of the ``rest`` extra missing)."""
    try:
        import pyiceberg  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        return f"{exc.name} is not installed ({install_hint('rest')})"
    return None


class StopOnce:
    """Stops a server once, whatever asks first: SIGTERM, SIGINT (Ctrl-C), or ``__call__``,
    which runs ``before`` at once (it must be safe in a signal handler), or a stop signal that
    came while the process started (:func:`stop_signals.taken_at_start`); a stopper thread then
    logs ``event`` with the reason and stops the server (``server.stop`` lets calls in flight
    finish). A signal handler only takes a lock without waiting and sets an event only that
    thread waits for: nothing it does can deadlock with the code it interrupts, nor with a
    second signal, which does nothing."""

    def __init__(self, server: Any, event: str, before: Callable[[], None] | None = None) -> None:
        self._claim = threading.Lock()
        self._asked = threading.Event()
        self._reason = ""
        self._before = before
        self._thread = threading.Thread(target=self._stop, args=(server, event),
                                        name="stopper", daemon=True)  # fmt: skip
        self._thread.start()
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        if (taken := stop_signals.taken_at_start()) is not None:  # its raise was swallowed
            self(taken)

    def __call__(self, reason: str) -> None:
        """Ask for the stop (the first request counts)."""
        if self._claim.acquire(blocking=False):
            self._reason = reason
            if self._before is not None:
                self._before()
            self._asked.set()

    def _on_signal(self, signum: int, _frame: object) -> None:
        self(signal.Signals(signum).name)

    def _stop(self, server: Any, event: str) -> None:  # the stopper thread
        self._asked.wait()
        log.info(event, reason=self._reason)
        server.stop()


def _serve_alone(
    config: ServerConfig, server: Any, close: Callable[[], None], sibling: Any = None
) -> int:
    """Serve in this process (``--workers 0``) until SIGTERM or SIGINT."""
    StopOnce(server, "server_stopping", sibling.begin_stop if sibling is not None else None)
    try:
        server.start()
    except OSError as exc:
        close()
        return errors.report(errors.bind_problem(config.host, config.port, exc), errors.USAGE)
    try:
        monitor = _monitoring(config, lambda: "the server is stopping" if server.closing else None)
    except OSError as exc:
        server.stop()
        close()
        return _metrics_port_problem(config, exc)
    try:
        server.serve_forever()
    finally:
        if monitor is not None:
            monitor.stop()
        server.stop()
        close()
    return 0


def _supervise(config: ServerConfig, argv: Sequence[str], sibling: Any = None) -> int:
    from metastore_server.server.supervisor import Supervisor, worker_command

    on_stop = [sibling.begin_stop] if sibling is not None else []
    supervisor = Supervisor(config.host, config.port, config.workers, worker_command(argv),
                            call_timeout=config.call_timeout, on_stop=on_stop)  # fmt: skip

    def request_stop(signum: int, _frame: object) -> None:
        supervisor.stop(signal.Signals(signum).name)  # logged by the supervisor

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    try:
        monitor = _monitoring(config, supervisor.serving_problem)
    except OSError as exc:
        return _metrics_port_problem(config, exc)
    try:
        return supervisor.run()
    except OSError as exc:  # the port taken, say
        return errors.report(errors.bind_problem(config.host, config.port, exc), errors.USAGE)
    finally:
        if monitor is not None:
            monitor.stop()


def _serve_as_worker(server: Any, close: Callable[[], None], channel_fd: int) -> int:
    """Serve the connections the supervisor hands over, reporting on the same channel; stop
    on SIGTERM/SIGINT or when the supervisor is gone."""
    from metastore_server.server.supervisor import HEARTBEAT_S, WorkerLink

    link = WorkerLink(channel_fd)
    stop = StopOnce(server, "worker_stopping")

    def receive() -> None:
        while (client := link.receive()) is not None:
            try:
                address = client.getpeername()
                peer = f"{address[0]}:{address[1]}"
            except OSError:
                client.close()
                continue
            if not server.admit(client, peer):
                return
        stop("the supervisor is gone")

    def report() -> None:
        while not server.closing:
            if not link.report(server.open_connections, server.processor.oldest_call_age()):
                stop("the supervisor is gone")
                return
            time.sleep(HEARTBEAT_S)

    threading.Thread(target=receive, name="handed-over", daemon=True).start()
    threading.Thread(target=report, name="report", daemon=True).start()
    try:
        server.serve_handed_over()
    finally:
        server.stop()
        link.close()
        close()
    return 0
