"""The HBase store's connection to its Thrift (1) gateway: a pool, and one request at a time.

Calls go through a ``happybase.ConnectionPool``; each call borrows a connection only for the
duration of one Thrift request, so a lazily consumed scan holds none between batches (its
scanner id is global to the gateway). A pooled connection the server has closed is replaced
before use. On a connection lost mid-call (a gateway restarting, say), idempotent calls (gets,
scans, puts of known values, deletes, table metadata), and any call not yet sent, are tried
again on a fresh connection, at once and then backing off (``connect_retries`` more tries,
``retry_backoff_ms`` doubling up to 5 s: about 6 s in all by default; the policy is
``storage.retrying``'s). Compare-and-set (``checkAndPut``) and ``atomicIncrement`` are never
retried once sent: the error then says the outcome is unknown (the intent of the call's
transaction then rolls back whatever landed; a scan resumes after the last row it returned:
``storage.hbase_scans``). A server that cannot be reached when the pool opens is retried the
same way before ``HBaseUnavailableError`` names the address.

Within a client call (``storage.deadline``), each request's socket timeout is what is left of
the call's limit (at most ``timeout_ms``), and no retry starts past it: a gateway that takes
requests but never answers (HBase's master and region servers down) makes the call answer
``HBaseTimeoutError`` before its worker would be replaced.

HBase's answers and errors map to the port's: ``row_of`` makes a row of a Thrift result, and a
refusal is ``HBaseError`` (or ValueError for an illegal argument).
"""

from __future__ import annotations

import collections
import contextlib
import importlib
import select
import socket
import time
from collections.abc import Callable
from operator import methodcaller
from typing import Any, TypeVar

import happybase
import structlog
import tenacity
from metastore_server.storage import deadline, retrying, telemetry
from metastore_server.storage.hbase_settings import HBaseSettings
from metastore_server.storage.port import Row, StorageError
from thriftpy2.protocol.exc import TProtocolException
from thriftpy2.thrift import TApplicationException
from thriftpy2.transport import TTransportException

log = structlog.get_logger(__name__)

#: HBase's Thrift (1) IDL, as happybase loaded it (its structs: Mutation, TScan...).
THRIFT: Any = importlib.import_module("Hbase_thrift")

T = TypeVar("T")
#: Seconds of a call's limit below which it has run out (a request's least socket timeout).
_TIME_UP_S = 0.01

_CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    TTransportException,
    TProtocolException,
    OSError,
    EOFError,
)
try:  # the compiled binary protocol's own error (a reply that is no Thrift at all)
    from thriftpy2.protocol.cybin import ProtocolError as _CyProtocolError

    _CONNECTION_ERRORS += (_CyProtocolError,)
except ImportError:  # pragma: no cover - pure-Python thriftpy2
    pass
#: What opening the pool retries: a gateway that cannot be reached, or refuses the first call.
_OPENING_ERRORS: tuple[type[BaseException], ...] = (*_CONNECTION_ERRORS, TApplicationException)


class HBaseError(StorageError):
    """HBase refused a call, or answered in a way the store cannot use."""


class HBaseUnavailableError(HBaseError):
    """The HBase Thrift gateway could not be reached, or the connection was lost."""


class HBaseTimeoutError(HBaseUnavailableError):
    """HBase did not answer within the call's time limit (``storage.deadline``)."""


class _Lost(Exception):
    """A call's connection lost (``error``), before the request was sent or after."""

    def __init__(self, what: str, error: BaseException, *, sent: bool, idempotent: bool) -> None:
        super().__init__(what, error)
        self.what, self.error, self.sent = what, error, sent
        #: Whether the call may be tried again: it cannot have taken effect, or may twice.
        self.retryable = idempotent or not sent


class HBaseConnection:
    """The pooled connections to one HBase Thrift gateway, and the calls made on them."""

    def __init__(self, settings: HBaseSettings) -> None:
        self.settings = settings
        self._doomed_scanners: collections.deque[int] = collections.deque()
        self._closed = False
        self._pool = self._open_pool()
        #: The retries of a call whose connection was lost (one call at a time per thread).
        self._resending = retrying.policy(
            retrying.hbase_resending(settings.connect_retries, settings.retry_backoff_ms),
            retry=tenacity.retry_if_exception(lambda e: isinstance(e, _Lost) and e.retryable),
            left=deadline.remaining,
            before_sleep=self._retry_lost,
        )

    def _open_pool(self) -> happybase.ConnectionPool:
        """A pool whose first connection answered; retried with backoff while unreachable
        (``retrying.hbase_opening``)."""
        s = self.settings
        started = time.monotonic()

        def unreachable(state: tenacity.RetryCallState) -> None:
            assert state.outcome is not None
            log.warning(
                "storage.hbase_unreachable",
                address=s.address,
                attempt=state.attempt_number,
                retry_in_s=round(state.upcoming_sleep, 3),
                error=str(state.outcome.exception()),
            )

        opening = retrying.policy(
            retrying.hbase_opening(s.connect_retries, s.retry_backoff_ms),
            retry=tenacity.retry_if_exception_type(_OPENING_ERRORS),
            before_sleep=unreachable,
        )
        try:
            return opening(self._first_pool)
        except _OPENING_ERRORS as last:
            raise HBaseUnavailableError(
                f"cannot reach the HBase Thrift gateway at {s.address} ({s.connect_retries + 1} "
                f"attempts in {time.monotonic() - started:.1f} s; last error: {last}). Is the "
                f"HBase Thrift server running there ('hbase thrift start -p {s.port}', "
                f"{s.transport} transport, {s.protocol} protocol)?"
            ) from last

    def _first_pool(self) -> happybase.ConnectionPool:
        """A new pool, once its first connection answered (one try of ``_open_pool``)."""
        s = self.settings
        pool = happybase.ConnectionPool(
            s.pool_size,
            host=s.host,
            port=s.port,
            timeout=s.timeout_ms,
            transport=s.transport,
            protocol=s.protocol,
        )
        with pool.connection(timeout=s.timeout_ms / 1000) as connection:
            connection.client.getTableNames()
        return pool

    def call(self, what: str, request: Callable[[Any], T], *, idempotent: bool) -> T:
        """Run one Thrift request (``request`` given the client) on a pooled connection,
        mapping errors and retrying (see the module); measured by ``what``."""
        self._close_doomed_scanners()
        started = time.perf_counter()
        try:
            return self._request(what, request, idempotent=idempotent)
        finally:
            telemetry.store_operation(what, time.perf_counter() - started)

    def _request(self, what: str, request: Callable[[Any], T], *, idempotent: bool) -> T:
        """``request`` on a pooled connection; on a connection lost, again on a fresh one (at
        once, then backing off: ``retrying.hbase_resending``) as long as the call cannot have
        taken effect or may take effect twice (a gateway restarting)."""
        if self._closed:
            raise RuntimeError("the store is closed")
        left = deadline.remaining()
        if left is not None and left <= 0:
            raise self._out_of_time(what, None)
        try:
            return self._resending(lambda: self._try(what, request, idempotent))
        except _Lost as lost:
            s = self.settings
            where = f"the HBase Thrift gateway at {s.address}"
            left = deadline.remaining()
            if left is not None and left <= _TIME_UP_S and isinstance(lost.error, TimeoutError):
                raise self._out_of_time(what, lost) from lost.error
            if not lost.sent:
                message = f"cannot reach {where} for {what}: {lost.error}"
            elif idempotent:  # retried until the tries ran out
                message = (
                    f"lost the connection to {where} during {what}, and again on "
                    f"{s.connect_retries + 1} fresh connections: {lost.error}"
                )
            else:
                message = (
                    f"lost the connection to {where} during {what}; not retried, so "
                    f"whether it took effect is unknown: {lost.error}"
                )
            raise HBaseUnavailableError(message) from lost.error

    def _out_of_time(self, what: str, lost: _Lost | None) -> HBaseTimeoutError:
        """The error of a request that did not end within the call's limit."""
        limit = deadline.seconds()
        gateway = f"the HBase Thrift gateway at {self.settings.address}"
        if lost is None:
            said = f"{what} was not sent to {gateway}: earlier requests used it up"
        elif lost.sent:
            said = (
                f"{gateway} took {what} but gave no answer (are HBase's master and region "
                f"servers up?)" + ("" if lost.retryable else "; whether it took effect is unknown")
            )
        else:
            said = f"{gateway} did not take {what}: {lost.error}"
        return HBaseTimeoutError(f"HBase did not answer within this call's time limit "
                                 f"({limit:g} s): {said}")  # fmt: skip

    def _try(self, what: str, request: Callable[[Any], T], idempotent: bool) -> T:
        """One try of ``_request``: HBase's errors mapped to the port's; a lost connection is
        ``_Lost`` (retried by ``_request`` when it may be)."""
        s = self.settings
        sent = False
        wait_s = s.timeout_ms / 1000
        left = deadline.remaining()
        if left is not None:
            wait_s = max(min(wait_s, left), _TIME_UP_S)
        try:
            with self._pool.connection(timeout=wait_s) as connection:
                if _peer_closed(connection):
                    _reconnect(connection)
                _bound(connection, wait_s)
                sent = True
                return request(connection.client)
        except THRIFT.IOError as error:
            raise HBaseError(f"HBase failed {what}: {_text(error.message)}") from error
        except THRIFT.IllegalArgument as error:
            raise ValueError(f"HBase refused {what}: {_text(error.message)}") from error
        except THRIFT.AlreadyExists as error:
            raise HBaseError(f"HBase refused {what}: {_text(error.message)}") from error
        except TApplicationException as error:
            raise HBaseError(
                f"the HBase Thrift gateway failed {what}: {_text(error.message)}"
            ) from error
        except happybase.NoConnectionsAvailable as error:
            raise HBaseError(
                f"no pooled HBase connection came free for {what} within "
                f"{s.timeout_ms} ms (pool_size={s.pool_size})"
            ) from error
        except _CONNECTION_ERRORS as error:
            raise _Lost(what, error, sent=sent, idempotent=idempotent) from error

    def _retry_lost(self, state: tenacity.RetryCallState) -> None:
        """Log a retry of a call whose connection was lost."""
        assert state.outcome is not None
        lost = state.outcome.exception()
        assert isinstance(lost, _Lost)
        log.warning("storage.hbase_retry", call=lost.what, address=self.settings.address,
                    error=str(lost.error), retry_in_s=state.upcoming_sleep)  # fmt: skip

    def close_scanner(self, scanner: int) -> None:
        """Close a scanner now (best effort: an error is ignored; not measured)."""
        with contextlib.suppress(StorageError, ValueError, RuntimeError):
            self._request("scannerClose", lambda c: c.scannerClose(scanner), idempotent=False)

    def abandon_scanner(self, scanner: int) -> None:
        """Close a scanner at the next call (best effort; where no request may be sent now)."""
        self._doomed_scanners.append(scanner)

    def _close_doomed_scanners(self) -> None:
        """Close the scanners of scans abandoned since the last call (best effort)."""
        while True:
            try:
                scanner = self._doomed_scanners.popleft()
            except IndexError:
                return
            with contextlib.suppress(StorageError, ValueError):
                self._request(
                    "scannerClose", methodcaller("scannerClose", scanner), idempotent=False
                )

    @property
    def closed(self) -> bool:
        """Whether ``close`` was called (every call then raises RuntimeError)."""
        return self._closed

    def close(self) -> None:
        """Close the pooled connections (after closing abandoned scanners). Idempotent."""
        if self._closed:
            return
        with contextlib.suppress(StorageError, ValueError, RuntimeError):
            self._close_doomed_scanners()
        self._closed = True
        queue = getattr(self._pool, "_queue", None)
        for connection in list(getattr(queue, "queue", ())):
            with contextlib.suppress(Exception):
                connection.close()


def _bound(connection: Any, seconds: float) -> None:
    """Let the next request on ``connection`` wait ``seconds`` for its answer at most."""
    sock = getattr(getattr(connection, "transport", None), "sock", None)
    if sock is not None and not isinstance(sock, socket.socket):  # a TSocket (pure Python)
        sock = getattr(sock, "sock", None)
    if isinstance(sock, socket.socket) and sock.gettimeout() != seconds:
        sock.settimeout(seconds)


def row_of(result: Any) -> Row:
    """The row of a Thrift ``TRowResult`` (its columns, mapped or sorted)."""
    if result.columns is not None:
        return {name: cell.value for name, cell in result.columns.items()}
    return {column.columnName: column.cell.value for column in result.sortedColumns or ()}


def _text(message: str | bytes | None) -> str:
    """The first line of a Thrift error message (happybase leaves it as bytes)."""
    if isinstance(message, bytes):
        message = message.decode("utf-8", "replace")
    lines = (message or "").strip().splitlines()
    return lines[0] if lines else "(no message)"


def _peer_closed(connection: Any) -> bool:
    """Whether the server closed this idle pooled connection (or left bytes on it): then it
    must be replaced before a request is sent on it. No round trip."""
    sock = getattr(getattr(connection, "transport", None), "sock", None)
    if sock is not None and not isinstance(sock, socket.socket):  # a TSocket (pure Python)
        sock = getattr(sock, "sock", None)
    if not isinstance(sock, socket.socket):
        return False
    try:
        poller = select.poll()
        poller.register(sock, select.POLLIN | select.POLLERR | select.POLLHUP)
        return bool(poller.poll(0))
    except (OSError, ValueError):
        return True


def _reconnect(connection: Any) -> None:
    """Open a pooled connection afresh (a new Thrift client on a new socket)."""
    refresh = getattr(connection, "_refresh_thrift_client", None)
    connection.close()
    if refresh is not None:
        refresh()
    connection.open()
