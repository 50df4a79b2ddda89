"""Worker processes under a supervisor: one call cannot stall every other client.

The supervisor (the process ``metastore-server serve`` starts) binds the port and accepts; it
never runs a metastore call. Each worker is a process of its own (``serve --worker-channel-fd``)
with its own catalog on the shared store, serving its connections with threads. The two talk
over a Unix socket pair:

* the supervisor hands each accepted connection to a worker (the file descriptor travels with
  ``SCM_RIGHTS``): to the live worker with the fewest connections among those that have
  reported within ``_FRESH_S`` of the latest report, so a worker stuck in a call (holding the
  interpreter lock, say) gets no new client, even on a machine so loaded that every report
  is late; one whose longest call in flight has run ``_LONG_CALL_S`` or more comes after all
  others (a call stuck in native code may let its worker report now and then, between two
  stretches in C);
* each worker reports every ``HEARTBEAT_S`` how many connections it serves and how long its
  longest call in flight has run.

A worker is ready once it has reported: it has opened the store and receives connections. The
port is bound at once (a port in use fails the start) but listens only once a worker is ready,
so a client that can connect is answered at once; none is handed to a worker that is not ready
(one dying at start takes nobody's connection with it). While no worker is ready (all being
replaced) the supervisor accepts nothing: new connections wait in the kernel's queue.

A worker that dies is replaced. With ``call_timeout`` > 0, a worker whose longest call has run
longer, or that has not reported for that long (or for ``SILENCE_LIMIT_S``, whichever is
shorter: a worker that cannot report is stuck in native code, holding every connection it
serves), is killed and replaced: the client of that call
loses its connection; other clients of that worker do too (their calls were held up by it
anyway) and reconnect, as Hive's and Spark's clients do.

SIGTERM or SIGINT (Ctrl-C in a terminal, which the workers get at the same time): stop
accepting, ask the workers to stop (they finish calls in flight, up to ``STOP_TIMEOUT_S``) and
wait for them to exit by themselves; only one still running then is killed. A worker stopping
is never replaced, nor killed when its channel ends before its process does. One line tells
how each worker ended (``worker_stopped`` with exit code 0 when clean).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import structlog

from metastore_server import metrics, stop_signals

log = structlog.get_logger(__name__)

#: How often a worker reports.
HEARTBEAT_S = 0.25
#: A worker that reported within this long gets new connections.
_FRESH_S = 1.0
#: A worker whose longest call in flight has run this long gets new connections only when every
#: fresh worker has such a call.
_LONG_CALL_S = 2 * HEARTBEAT_S
#: How long workers may take to finish their calls once asked to stop.
STOP_TIMEOUT_S = 10.0
#: Workers failing to start (gone before they were ready) this many times in a row stop the
#: server (a store that cannot be reached, say).
_MAX_EARLY_DEATHS = 5
#: With a call timeout, a worker not ready this long after its start is replaced.
START_LIMIT_S = 120.0
#: Connections the kernel queues for the port until the supervisor accepts them.
BACKLOG = 128
#: A worker silent this long (its interpreter held: a call stuck in native code) is replaced
#: even when the call timeout is longer (a call in Python code lets its worker report).
SILENCE_LIMIT_S = 30.0


@dataclass
class _Worker:
    """One worker process as the supervisor sees it."""

    process: subprocess.Popen[bytes]
    channel: socket.socket
    started: float
    last_report: float
    connections: int = 0
    oldest_call_s: float = 0.0
    pending: bytes = b""
    handed: int = field(default=0)
    #: Whether it has reported (its store is open and it receives connections).
    ready: bool = False

    @property
    def pid(self) -> int:
        return self.process.pid


def least_busy_fresh(ready: Sequence[_Worker]) -> list[_Worker]:
    """The workers a new connection may go to, least busy first: those that reported within
    ``_FRESH_S`` of the latest report of any. Measured against the latest report, not the
    clock, so that on a loaded machine, where every report is late, a worker stuck in a call
    (whose reports stopped) is still passed over for one whose reports are only late. Those
    with a call in flight for ``_LONG_CALL_S`` or more come last, whatever their count."""
    if not ready:
        return []
    latest = max(worker.last_report for worker in ready)
    fresh = [worker for worker in ready if latest - worker.last_report <= _FRESH_S]
    return sorted(fresh, key=lambda worker: (worker.oldest_call_s >= _LONG_CALL_S,
                                             worker.connections + worker.handed))  # fmt: skip


class Supervisor:
    """Binds ``host:port``, runs ``workers`` worker processes, hands them connections."""

    def __init__(
        self,
        host: str,
        port: int,
        workers: int,
        worker_command: Sequence[str],
        *,
        call_timeout: float = 300.0,
        on_stop: Sequence[Callable[[], None]] = (),
    ) -> None:
        self._host, self._port = host, port
        self._count = workers
        self._command = list(worker_command)
        self._call_timeout = call_timeout
        self._workers: list[_Worker] = []
        self._stopping = threading.Event()
        #: Taken (never released) by the first request to stop: later ones do nothing.
        self._stop_claim = threading.Lock()
        self._stop_reason = ""
        self._on_stop = list(on_stop)
        self._early_deaths = 0
        self._selector = selectors.DefaultSelector()
        self._listener: socket.socket | None = None
        self._listening = False
        self._accepting = False
        #: Accepted connections no ready worker could take yet (handed over first).
        self._held: list[socket.socket] = []
        self.failed: str | None = None
        #: (ready, starting) workers as of the last turn of the loop (read by other threads).
        self._counts = (0, 0)

    @property
    def address(self) -> tuple[str, int]:
        """(host, port) bound."""
        assert self._listener is not None
        host, port = self._listener.getsockname()[:2]
        return host, port

    def run(self) -> int:
        """Serve until asked to stop; 0 on a clean stop, 1 when workers cannot start. OSError
        when the port cannot be bound (or, taken meanwhile, listened on)."""
        self._listener = bind(self._host, self._port)
        for _ in range(self._count):
            self._spawn()
        log.info("supervisor_started", host=self.address[0], port=self.address[1],
                 workers=self._count, call_timeout=self._call_timeout)  # fmt: skip
        try:
            while not self._stopping.is_set():
                for key, _events in self._selector.select(timeout=HEARTBEAT_S):
                    if key.data is None:
                        self._accept()
                    else:
                        self._read_report(key.data)
                self._watch()
                self._follow_readiness()
                self._note_counts()
        finally:
            self._shut_down()
        return 0 if self.failed is None else 1

    def stop(self, reason: str = "asked") -> None:
        """Ask :meth:`run` to stop, for ``reason`` (logged by :meth:`run`), calling the
        ``on_stop`` callbacks first. Safe from a signal handler, even one run while another
        runs: only the first request does anything (a lock taken without waiting)."""
        if not self._stop_claim.acquire(blocking=False):
            return
        self._stop_reason = reason
        for callback in self._on_stop:
            callback()
        self._stopping.set()

    def serving_problem(self) -> str | None:
        """Why connections cannot be served now (None: a worker is ready and the port
        listens); safe from any thread."""
        if self._stopping.is_set():
            return "the server is stopping"
        ready, starting = self._counts
        if ready == 0 or not self._listening:
            return f"no worker is ready ({starting} of {self._count} starting)"
        return None

    def _note_counts(self) -> None:
        """Keep the worker counts for other threads, and in the metrics when they change."""
        ready = sum(1 for worker in self._workers if worker.ready)
        counts = (ready, len(self._workers) - ready)
        if counts != self._counts:
            self._counts = counts
            metrics.workers(counts[0], counts[1], self._count)

    # -- workers ---------------------------------------------------------------------------

    def _spawn(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        command = [*self._command, "--worker-channel-fd", str(theirs.fileno())]
        with stop_signals.blocked():  # the worker takes them once it can stop cleanly
            process = subprocess.Popen(command, pass_fds=(theirs.fileno(),),
                                       stdin=subprocess.DEVNULL)  # fmt: skip
        theirs.close()
        ours.setblocking(False)
        now = time.monotonic()
        worker = _Worker(process, ours, started=now, last_report=now - _FRESH_S)
        self._workers.append(worker)
        self._selector.register(ours, selectors.EVENT_READ, worker)
        log.info("worker_started", pid=process.pid)

    def _retire(self, worker: _Worker, reason: str, kind: str = "exited") -> None:
        """Forget a worker (killing it if it runs) and start another. One that goes before it
        was ready failed to start: five in a row stop the server. ``kind``: the reason's label
        in the metrics (exited, call_timeout, silent, start_timeout). While stopping, only its
        channel is no longer read: the worker may still be finishing calls in flight, and
        :meth:`_shut_down` waits for it."""
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(worker.channel)
        if self._stopping.is_set():
            return
        worker.channel.close()
        if worker.process.poll() is None:
            worker.process.kill()
        code = worker.process.wait()
        self._workers.remove(worker)
        metrics.process_gone(worker.pid)
        log.warning("worker_replaced", pid=worker.pid, reason=reason, exit_code=code,
                    connections=worker.connections)  # fmt: skip
        metrics.worker_restarted(kind)
        if not worker.ready:
            self._early_deaths += 1
            if self._early_deaths >= _MAX_EARLY_DEATHS:
                self.failed = f"workers keep exiting at start ({self._early_deaths} in a row)"
                log.error("workers_fail_to_start", count=self._early_deaths)
                self.stop(self.failed)
                return
        self._spawn()

    def _read_report(self, worker: _Worker) -> None:
        try:
            data = worker.channel.recv(4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._retire(worker, "exited")
            return
        worker.pending += data
        *lines, worker.pending = worker.pending.split(b"\n")
        for line in lines:
            parts = line.split()
            if len(parts) == 2:
                worker.connections, worker.oldest_call_s = int(parts[0]), float(parts[1])
                worker.last_report = time.monotonic()
                worker.handed = 0  # the report counts them now
                if not worker.ready:
                    worker.ready = True
                    self._early_deaths = 0
                    log.info("worker_ready", pid=worker.pid,
                             seconds=round(worker.last_report - worker.started, 3))  # fmt: skip

    def _watch(self) -> None:
        now = time.monotonic()
        for worker in list(self._workers) if not self._stopping.is_set() else []:
            if worker.process.poll() is not None:
                self._retire(worker, "exited")
                continue
            if self._call_timeout <= 0:
                continue
            if not worker.ready:  # it holds no connection: given time to start under load
                if now - worker.started > START_LIMIT_S:
                    self._retire(worker, f"not ready after {START_LIMIT_S:g}s", "start_timeout")
                continue
            silent = now - worker.last_report
            silence_limit = min(self._call_timeout, SILENCE_LIMIT_S)
            if worker.oldest_call_s > self._call_timeout:
                self._retire(worker, f"a call ran past {self._call_timeout:g}s", "call_timeout")
            elif silent > silence_limit:
                self._retire(worker, f"no report for {silent:.1f}s", "silent")

    # -- connections -----------------------------------------------------------------------

    def _ready_workers(self) -> list[_Worker]:
        return [w for w in self._workers if w.ready and w.process.poll() is None]

    def _follow_readiness(self) -> None:
        """Listen once a worker is ready (until then connections are refused), and accept only
        while one is and none is held (meanwhile they wait in the kernel's queue)."""
        assert self._listener is not None
        if self._held and self._ready_workers():
            self._hand_held()
        can_accept = not self._held and bool(self._ready_workers())
        if can_accept and not self._listening:
            self._listener.listen(BACKLOG)
            self._listening = True
            log.info("supervisor_listening", host=self.address[0], port=self.address[1],
                     workers=self._count)  # fmt: skip
        if can_accept and not self._accepting:
            self._selector.register(self._listener, selectors.EVENT_READ, None)
        elif self._accepting and not can_accept:
            self._selector.unregister(self._listener)
        self._accepting = can_accept

    def _accept(self) -> None:
        assert self._listener is not None
        while True:
            try:
                client, _address = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                log.warning("accept_failed", error=f"{type(exc).__name__}: {exc}")
                return
            if not self._hand_over(client):
                self._held.append(client)  # to the next ready worker; accept no more till then
                return

    def _hand_held(self) -> None:
        while self._held and self._hand_over(self._held[0]):
            self._held.pop(0)

    def _hand_over(self, client: socket.socket) -> bool:
        """Give ``client`` to the least busy ready worker that reported lately
        (:func:`least_busy_fresh`); False when none could take it."""
        for worker in least_busy_fresh(self._ready_workers()):
            try:
                socket.send_fds(worker.channel, [b"C"], [client.fileno()])
            except OSError:
                continue
            worker.handed += 1
            client.close()
            return True
        return False

    # -- stopping --------------------------------------------------------------------------

    def _shut_down(self) -> None:
        log.info("supervisor_stopping", reason=self._stop_reason or "asked",
                 workers=len(self._workers))  # fmt: skip
        if self._listener is not None:
            if self._accepting:
                with contextlib.suppress(KeyError, ValueError):
                    self._selector.unregister(self._listener)
                self._accepting = False
            self._listener.close()
        for client in self._held:
            client.close()
        self._held.clear()
        self._stop_workers()
        self._workers.clear()
        self._note_counts()
        self._selector.close()
        log.info("supervisor_stopped")

    def _stop_workers(self) -> None:
        """SIGTERM every worker (SIGINT after Ctrl-C), wait up to ``STOP_TIMEOUT_S`` for them
        to exit (they finish their calls in flight), kill those still running; one line for
        each."""
        # Once is enough: a worker takes it even if sent while it is being forked (its stop
        # signals are blocked then, see stop_signals.blocked), and takes one stop only.
        deadline = time.monotonic() + STOP_TIMEOUT_S
        running = list(self._workers)
        # After Ctrl-C (which the workers got too) the same signal: a worker that has not yet
        # taken its own then stops for the reason the user gave, whichever arrives first.
        sent = signal.SIGINT if self._stop_reason == "SIGINT" else signal.SIGTERM
        for worker in running:
            with contextlib.suppress(OSError):
                worker.process.send_signal(sent)
        while running and time.monotonic() < deadline:
            time.sleep(0.01)
            running = [w for w in running if w.process.poll() is None]
        for worker in self._workers:
            overran = worker.process.poll() is None
            if overran:
                worker.process.kill()
            code = worker.process.wait()
            worker.channel.close()
            metrics.process_gone(worker.pid)
            if overran:
                overrun = f"still running {STOP_TIMEOUT_S:g}s after asked to stop"
                log.warning("worker_killed", pid=worker.pid, exit_code=code,
                            connections=worker.connections, reason=overrun)  # fmt: skip
            elif code == 0:
                log.info("worker_stopped", pid=worker.pid, exit_code=code)
            else:
                log.warning("worker_gone", pid=worker.pid, exit_code=code)


def bind(host: str, port: int) -> socket.socket:
    """A non-blocking TCP socket bound to ``host:port`` that does not listen yet: connections
    to it are refused until :meth:`socket.socket.listen`."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


def worker_command(argv: Sequence[str]) -> list[str]:
    """The command line of a worker: this program with the same arguments."""
    return [sys.executable, "-m", "metastore_server", *argv]


class WorkerLink:
    """A worker's end of its channel: connections in, reports out."""

    def __init__(self, fd: int) -> None:
        self._channel = socket.socket(fileno=fd)
        self._channel.setblocking(True)
        os.set_inheritable(fd, False)

    def receive(self) -> socket.socket | None:
        """The next connection handed over; None when the supervisor is gone."""
        while True:
            try:
                _message, fds, _flags, _address = socket.recv_fds(self._channel, 16, 8)
            except OSError:
                return None
            if not fds and not _message:
                return None
            if fds:
                for extra in fds[1:]:
                    os.close(extra)
                return socket.socket(fileno=fds[0])

    def report(self, connections: int, oldest_call_s: float) -> bool:
        """Tell the supervisor how this worker is; False when it is gone."""
        try:
            self._channel.sendall(b"%d %.3f\n" % (connections, oldest_call_s))
        except OSError:
            return False
        return True

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._channel.shutdown(socket.SHUT_RDWR)
        self._channel.close()
