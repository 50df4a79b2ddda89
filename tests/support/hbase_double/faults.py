"""The HBase test double's fault injection (see the package docstring): failed writes, dropped
connections, a crash at the n-th write, a gateway restart, a region server pause, a gateway that
takes calls but does not answer them (``stall``); and the state they keep. Mixed into
``HBaseDouble`` (``FaultHooks``); the call guard (``calls.Guard``) runs the ``_maybe_*`` /
``_wait_for_regions`` checks before each call."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from support.hbase_double.idl import io_error

_WRITE_CALLS = frozenset({"mutateRow", "mutateRows", "mutateRowTs", "mutateRowsTs", "checkAndPut",
                          "atomicIncrement", "deleteAll", "deleteAllRow", "deleteAllTs",
                          "deleteAllRowTs"})  # fmt: skip
#: Calls the gateway answers without a region server.
_GATEWAY_CALLS = frozenset({"getTableNames", "getColumnDescriptors", "isTableEnabled",
                            "getTableRegions"})  # fmt: skip


class Drop(Exception):
    """Raised by a hook: close the client's connection without answering."""


@dataclass
class _DropRule:
    method: str | None
    when: str
    count: int


@dataclass
class _StallRule:
    methods: frozenset[str] | None
    released: threading.Event
    delay_s: float | None


class FaultHooks:
    """The fault hooks of ``HBaseDouble`` and their state (``_init_faults``)."""

    # of the double (``server.HBaseDouble``): also _listen(port) and disconnect_all()
    port: int
    _lock: threading.RLock
    _closed: threading.Event
    _listener: socket.socket | None
    _acceptor: threading.Thread | None

    def _init_faults(self) -> None:
        self._write_budget: int | None = None
        #: Write calls received since ``count_writes`` (see ``crash_before_write``).
        self.writes = 0
        self._crash: tuple[int, Callable[[], None]] | None = None
        self._regions_back = 0.0
        self._regions_give_up_s: float | None = None
        self._drops: list[_DropRule] = []
        self._restarts = 0  # the latest restart_gateway's number (only it listens again)
        self._stall: _StallRule | None = None
        #: Calls that waited in a stall (see ``stall``).
        self.stalled = 0

    def fail_writes_after(self, rows: int) -> None:
        """Let ``rows`` more row writes succeed, then fail every write with IOError."""
        with self._lock:
            self._write_budget = rows

    def restart_gateway(self, down_s: float) -> None:
        """A Thrift gateway restart: stop listening and cut every connection at once (a call
        being served may land without its answer), then listen again on the same port after
        ``down_s`` seconds; the data stays. A restart while one is under way starts over (the
        gateway comes back ``down_s`` after the last)."""
        with self._lock:
            self._restarts += 1
            number = self._restarts
            listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
        if self._acceptor is not None:
            self._acceptor.join()
        self.disconnect_all()

        def back() -> None:
            time.sleep(down_s)
            with self._lock:
                if self._closed.is_set() or number != self._restarts:
                    return  # stopped, or restarted again meanwhile
                self._listen(self.port)

        threading.Thread(target=back, name="hbase-double-restart", daemon=True).start()

    def pause_regions(self, seconds: float, *, give_up_s: float | None = None) -> None:
        """A region server restarting: for ``seconds`` every table call waits (as the
        gateway's HBase client waits for the regions to open again), and one that has waited
        ``give_up_s`` fails as the gateway's client gives up (IOError, RetriesExhausted)."""
        with self._lock:
            self._regions_back = time.monotonic() + seconds
            self._regions_give_up_s = give_up_s

    def regions_paused(self) -> bool:
        """Whether table calls still wait for the regions (``pause_regions``)."""
        with self._lock:
            return time.monotonic() < self._regions_back

    def _wait_for_regions(self, method: str) -> None:
        if method in _GATEWAY_CALLS:
            return
        with self._lock:
            back, give_up = self._regions_back, self._regions_give_up_s
        waited = 0.0
        while time.monotonic() < back:
            if give_up is not None and waited >= give_up:
                raise io_error(
                    "org.apache.hadoop.hbase.client.RetriesExhaustedException: Failed after "
                    f"attempts=36, exceptions: NotServingRegionException (injected by the HBase "
                    f"double in {method})"
                )
            time.sleep(0.05)
            waited += 0.05

    def count_writes(self) -> None:
        """Start counting write calls afresh (``writes``)."""
        with self._lock:
            self.writes = 0

    def crash_before_write(self, nth: int, crash: Callable[[], None]) -> None:
        """When the ``nth`` write call (counted from now: mutateRow(s), checkAndPut,
        atomicIncrement, deleteAll*) arrives, call ``crash`` (a test kills the writing process
        there) and close that connection without doing the write."""
        with self._lock:
            self.writes = 0
            self._crash = (nth, crash)

    def heal(self) -> None:
        """Undo ``fail_writes_after``, pending ``drop_connection`` rules and a ``stall`` (the
        calls it holds are then done, their answers sent to whoever still listens)."""
        with self._lock:
            self._write_budget = None
            self._drops.clear()
            stall, self._stall = self._stall, None
        if stall is not None:
            stall.released.set()

    def stall(self, methods: set[str] | None = None, *, delay_s: float | None = None) -> None:
        """HBase's master and region servers down behind a gateway that still answers: the
        gateway takes calls (those named in ``methods``; None: every call that needs a region
        server) but answers none until ``heal`` (or ``delay_s`` later), as its own HBase client
        retries inside; then each call is done (a write lands late) and answered."""
        with self._lock:
            old = self._stall
            self._stall = _StallRule(None if methods is None else frozenset(methods),
                                     threading.Event(), delay_s)  # fmt: skip
        if old is not None:
            old.released.set()

    def _maybe_stall(self, method: str) -> None:
        with self._lock:
            rule = self._stall
        if rule is None:
            return
        if rule.methods is None and method in _GATEWAY_CALLS:
            return
        if rule.methods is not None and method not in rule.methods:
            return
        with self._lock:
            self.stalled += 1
        started = time.monotonic()
        while not rule.released.wait(0.05) and not self._closed.is_set():
            if rule.delay_s is not None and time.monotonic() - started >= rule.delay_s:
                return

    def drop_connection(
        self, method: str | None = None, *, when: str = "after", count: int = 1
    ) -> None:
        """Close the connection of the next ``count`` calls of ``method`` (None: any call),
        ``before`` doing it or ``after`` (done, but never answered)."""
        if when not in ("before", "after"):
            raise ValueError("when is 'before' or 'after'")
        with self._lock:
            self._drops.append(_DropRule(method, when, count))

    def _maybe_crash(self, method: str) -> None:
        if method not in _WRITE_CALLS:
            return
        with self._lock:
            self.writes += 1
            rule = self._crash
            if rule is None or self.writes != rule[0]:
                return
            self._crash = None
        rule[1]()
        raise Drop(method)

    def _maybe_drop(self, method: str, when: str) -> None:
        with self._lock:
            for rule in self._drops:
                if rule.when == when and rule.method in (None, method) and rule.count > 0:
                    rule.count -= 1
                    self._drops = [r for r in self._drops if r.count > 0]
                    raise Drop(method)

    def _spend(self) -> None:
        """Count one row write against the failure budget (IOError once it is spent)."""
        with self._lock:
            if self._write_budget is None:
                return
            if self._write_budget <= 0:
                raise io_error("java.io.IOException: write failed (injected by the HBase double)")
            self._write_budget -= 1
