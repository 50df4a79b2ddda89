"""One call on a connection: its arguments read within the connection's limits (in the
layout the client's generation sends), the handler method run, and the reply written in the
layout the client reads, its store requests bounded by a share of the call timeout
(``storage.deadline``: a store that does not answer makes the call answer an error before its
worker would be replaced). Errors of a call never drop the connection: an exception the method
declares is returned as such, an HMS exception it does not declare becomes a MetaException when
the method declares that, and anything else becomes a TApplicationException. Every call
produces one audit line."""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, cast

import structlog
from thriftpy2.protocol import TCyBinaryProtocol
from thriftpy2.thrift import TApplicationException, TException, TMessageType, TType
from thriftpy2.transport import TTransportException
from thriftpy2.transport.memory import TCyMemoryBuffer

from metastore_server.api.areas import DECLARED
from metastore_server.api.audit_fields import result_size, split_audit_target
from metastore_server.api.caller_fields import stamp_caller
from metastore_server.api.listing_replies import kept
from metastore_server.audit import audit_call, collecting_extras
from metastore_server.caller import Session, serving
from metastore_server.server.decode_meter import charge
from metastore_server.server.generations import (
    ClientGeneration,
    needs_both_layouts,
    shape_result,
)
from metastore_server.server.kept_wire import (
    KEPT_CALLS,
    LARGEST,
    WIRE_KEPT_CALLS,
    KeptReply,
    ToKeep,
    WireReplies,
    reply_header,
)
from metastore_server.server.text_check import undecoded_field
from metastore_server.server.transport_limits import DecodeLimitExceeded, LimitedSocket
from metastore_server.storage import committed_reads, deadline
from metastore_server.storage.port import ValueTooLargeError
from metastore_server.thrift_api import hms
from metastore_server.wire.adds import decode_call
from metastore_server.wire.encoded import EncodedNames, EncodedStructs
from metastore_server.wire.layouts import write_both_layouts
from metastore_server.wire.stored_replies import (
    binary_reply_size,
    send_stored_partitions,
    stored_answer,
    structs_reply_size,
)

log = structlog.get_logger(__name__)

#: The exceptions the IDL declares: answered as themselves, never logged as a server error.
_HMS_EXCEPTIONS = tuple(
    value
    for value in vars(hms).values()
    if isinstance(value, type)
    and issubclass(value, TException)
    and not issubclass(value, TApplicationException)
)


class InvalidMessage(Exception):
    """A message the server answered but cannot read on from: its connection is closed."""


@dataclass
class _Call:
    """One call being served: what its audit line and reply need."""

    api: str
    seqid: int
    peer: str
    started: float
    reader: LimitedSocket | None
    generation: ClientGeneration
    #: Who the connection is: authenticated (SASL) or claimed (set_ugi).
    session: Session

    def audit(self, outcome: str, **fields: Any) -> None:
        """Write the call's audit line (``user=`` only for an authenticated user; with
        ``real_user=`` when a proxy user acts for it)."""
        audit_call(method=self.api, peer=self.peer, ms=_ms(self.started), outcome=outcome,
                   user=self.session.authenticated_user, real_user=self.session.real_user,
                   **fields)  # fmt: skip


class _Dispatching(Protocol):
    """A handler (``api.handler.MetastoreHandler``): its dispatch table."""

    calls: dict[str, Callable[..., Any]]


class _Authorizing(Protocol):
    """A handler with an authorizer (``api.handler.MetastoreHandler``)."""

    def authorize(self, api: str, values: dict[str, Any]) -> None: ...


class CallProcessor:
    """Reads one call from a protocol, runs the handler method, writes the reply."""

    def __init__(self, service: Any, handler: object, *, binary_output: bool = True,
                 call_timeout: float = 0.0) -> None:  # fmt: skip
        self._service = service
        self._call_timeout = call_timeout
        self._handler = handler
        self._binary_output = binary_output
        #: Thread id -> monotonic start of the call it is serving (from its message's start).
        self._in_flight: dict[int, float] = {}
        #: The handler's dispatch table: IDL method name -> the area method serving it.
        self.calls: dict[str, Callable[..., Any]] = cast(_Dispatching, handler).calls
        #: Method -> its argument names (see ``_argument_names``).
        self._arg_names: dict[str, tuple[str, ...]] = {}
        token = getattr(handler, "change_token", None)
        #: Replies of small reads kept as sent (binary protocol only: see ``kept_wire``).
        self.wire_replies = WireReplies(token) if token is not None and binary_output else None

    def oldest_call_age(self) -> float:
        """Seconds the longest-running call in flight has run (0 when none)."""
        starts = list(self._in_flight.values())
        return time.monotonic() - min(starts) if starts else 0.0

    def process(
        self,
        iprot: Any,
        oprot: Any,
        peer: str,
        frame_writer: Callable[[bytes], None] | None = None,
        reader: LimitedSocket | None = None,
        generation: ClientGeneration | None = None,
        *,
        session: Session | None = None,
    ) -> None:
        """Serve one message. Raises transport errors (the connection is then closed).

        ``frame_writer`` (framed transport) writes to the socket under the transport: a big
        partition list is then sent as its frame header and chunks, not gathered whole in the
        transport's frame buffer first. ``reader`` (the socket under ``iprot``) meters the
        decoding of the arguments and is told when the message has been read. ``generation``
        is what the connection's client has shown of its HMS generation (see
        :mod:`metastore_server.server.generations`). ``session`` is who the connection is
        (authenticated or claimed; :mod:`metastore_server.caller`): current while the handler
        runs, and its authenticated user is named on the audit lines."""
        api, msg_type, seqid = iprot.read_message_begin()
        me = threading.get_ident()
        self._in_flight[me] = time.monotonic()
        call = _Call(api, seqid, peer, time.perf_counter(), reader,
                     generation if generation is not None else ClientGeneration(),
                     session if session is not None else Session())  # fmt: skip
        try:
            with deadline.for_call(self._call_timeout), committed_reads.call_scope():
                self._process(call, msg_type, iprot, oprot, frame_writer)
        finally:
            self._in_flight.pop(me, None)

    def _process(
        self,
        call: _Call,
        msg_type: int,
        iprot: Any,
        oprot: Any,
        frame_writer: Callable[[bytes], None] | None,
    ) -> None:
        api, reader = call.api, call.reader
        if msg_type not in (TMessageType.CALL, TMessageType.ONEWAY):
            # The rest cannot be trusted: answer, then let the connection close.
            error = TApplicationException(
                TApplicationException.INVALID_MESSAGE_TYPE, f"Invalid message type {msg_type}"
            )
            self._send_exception(oprot, api, error, call.seqid)
            call.audit("invalid_message_type")
            raise InvalidMessage(f"invalid message type {msg_type}")
        method = self.calls.get(api)
        if method is None:
            iprot.skip(TType.STRUCT)
            iprot.read_message_end()
            if reader is not None:
                reader.message_read()
            error = TApplicationException(
                TApplicationException.UNKNOWN_METHOD, f"Invalid method name: '{api}'"
            )
            self._send_exception(oprot, api, error, call.seqid)
            call.audit("unknown_method")
            return
        to_keep = None
        if api in WIRE_KEPT_CALLS and self._keeps(call, frame_writer):
            assert self.wire_replies is not None and reader is not None
            hit, to_keep = self.wire_replies.look_up(api, reader, iprot.trans,
                                                     call.generation.newer)  # fmt: skip
            if hit is not None:
                self._send_kept(call, hit, iprot)
                return
        args = self._read_arguments(call, iprot, oprot)
        not_text = undecoded_field(args) if reader is None or reader.may_hold_bad_text() else None
        if not_text is not None:  # refused before the handler sees it: nothing is written
            method = functools.partial(_refuse_text, not_text)
        arg_names = self._argument_names(api, args)
        values = {name: getattr(args, name, None) for name in arg_names}
        call.generation.observe(api, values)
        stamp_caller(DECLARED[api].stamp, values, call.session)
        replies = getattr(self._handler, "listing_replies", None)
        if replies is not None and api in KEPT_CALLS and not_text is None:
            method = kept(replies, api, method)
        if getattr(self._handler, "authorizer", None) is not None and not_text is None:
            # Only under --authorization: no wrapper on the hot path when it is off.
            authorizing = cast(_Authorizing, self._handler)
            method = _authorized(authorizing.authorize, api, values, method)
        db, table = split_audit_target(values)
        result = getattr(self._service, api + "_result")()
        with serving(call.session):
            outcome, error_text, rows, app_error, extras = self._run(
                api, method, [values[name] for name in arg_names], result
            )
        try:
            if to_keep is not None and app_error is None and outcome == "ok":
                self._reply_and_keep(call, result, to_keep, oprot, db, table, rows)
            elif not getattr(result, "oneway", False):
                self._reply(call, result, app_error, oprot, frame_writer)
        finally:
            # After the reply is written: ``ms`` is the whole call, sending included.
            call.audit(outcome, db=db, table=table, rows=rows, error=error_text, extras=extras)

    def _keeps(self, call: _Call, frame_writer: Callable[[bytes], None] | None) -> bool:
        """Whether this call's reply may be kept as sent, or answered from one kept."""
        return (
            self.wire_replies is not None
            and call.reader is not None
            and frame_writer is None
            and getattr(self._handler, "authorizer", None) is None
        )

    def _send_kept(self, call: _Call, kept: KeptReply, iprot: Any) -> None:
        """Answer with a kept reply (its arguments were taken off the connection)."""
        assert call.reader is not None
        iprot.read_message_end()
        call.reader.message_read()
        if kept.newer:
            call.generation.newer = True  # what the call that made it showed
        try:
            call.reader.write(reply_header(call.api, call.seqid) + kept.body)
        finally:
            call.audit("ok", db=kept.db, table=kept.table, rows=kept.rows,
                       extras={"reply_cache": "hit"})  # fmt: skip

    def _reply_and_keep(self, call: _Call, result: Any, to_keep: ToKeep, oprot: Any,
                        db: str | None, table: str | None, rows: int | None) -> None:  # fmt: skip
        """Write the answer as one block made in memory, and keep it (see ``kept_wire``);
        an answer too large to keep is written as any other."""
        api, seqid, reader = call.api, call.seqid, call.reader
        assert reader is not None and self.wire_replies is not None
        answer = result.success
        if stored_answer(result):
            if isinstance(answer, EncodedNames) and not answer.replayable:
                self._reply(call, result, None, oprot, None)
                return
            size = (
                structs_reply_size(answer, api, seqid, call.generation.newer)
                if isinstance(answer, EncodedStructs)
                else binary_reply_size(answer, api, seqid)
            )
            if size > LARGEST:
                self._reply(call, result, None, oprot, None)
                return
            chunks: list[bytes] = []
            send_stored_partitions(oprot, api, result, seqid, True, None, chunks.append,
                                   call.generation.newer)  # fmt: skip
            message = b"".join(chunks)
        else:
            buffer = TCyMemoryBuffer()
            memory = TCyBinaryProtocol(buffer)
            memory.write_message_begin(api, TMessageType.REPLY, seqid)
            shape_result(api, result, call.generation).write(memory)
            memory.write_message_end()
            message = buffer.getvalue()
        reader.write(message)
        self.wire_replies.keep(to_keep, message, newer=call.generation.newer, db=db,
                               table=table, rows=rows)  # fmt: skip

    def _argument_names(self, api: str, args: Any) -> tuple[str, ...]:
        """The names of ``api``'s arguments in their IDL order (worked out once a method)."""
        names = self._arg_names.get(api)
        if names is None:
            names = self._arg_names[api] = tuple(spec[1] for spec in args.thrift_spec.values())
        return names

    def _read_arguments(self, call: _Call, iprot: Any, oprot: Any) -> Any:
        """The call's arguments, decoded within the connection's limits."""
        api, reader = call.api, call.reader
        args = getattr(self._service, api + "_args")()
        if reader is not None:
            # The walker follows the whole message first: one without list-keyed maps (all
            # but a skewed table's) is decoded by thriftpy2's Cython decoder alone.
            reader.read_ahead()
            iprot.lists_as_keys = reader.may_hold_list_keys()
        try:
            if reader is None:
                self._decode(api, args, iprot, None)
            else:
                with reader.meter.active():
                    self._decode(api, args, iprot, reader)
        except DecodeLimitExceeded as exc:
            # The rest of the message is not read: answer (if the client still listens), close.
            error = TApplicationException(TApplicationException.PROTOCOL_ERROR, exc.message)
            with contextlib.suppress(OSError, TTransportException):
                self._send_exception(oprot, api, error, call.seqid)
            call.audit("decode_limit_exceeded")
            raise
        iprot.read_message_end()
        if reader is not None:
            reader.message_read()
        return args

    def _decode(self, api: str, args: Any, iprot: Any, reader: LimitedSocket | None) -> None:
        """Read the arguments as the method declares (``wire.adds.decode_call``); an add's
        partitions may stay the wire bytes they came as only on the binary protocol without
        authorization (the checks read decoded partitions)."""
        walked = (
            reader
            if reader is not None
            and self._binary_output
            and getattr(self._handler, "authorizer", None) is None
            else None
        )
        decode_call(DECLARED[api].decode, api, args, iprot, walked, charge)

    def _run(
        self, api: str, method: Callable[..., Any], arguments: list[Any], result: Any
    ) -> tuple[str, str | None, int | None, TApplicationException | None, dict[str, object]]:
        """Run the handler method into ``result``: (outcome, error text, rows, the
        application error to send instead of ``result``, audit extras)."""
        outcome, error_text, rows = "ok", None, None
        extras: dict[str, object] = {}
        app_error: TApplicationException | None = None
        try:
            with collecting_extras() as extras:
                result.success = method(*arguments)
            rows = result_size(result.success)
        except TApplicationException as exc:
            outcome, error_text, app_error = "application_error", exc.message, exc
        except Exception as exc:  # noqa: BLE001 - every error must become a Thrift answer
            outcome, error_text = type(exc).__name__, _message(exc)
            if not isinstance(exc, _HMS_EXCEPTIONS + (ValueTooLargeError,)):
                log.exception("handler_error", method=api)  # (a refused size is no bug)
            if not self._declare(result, exc):
                app_error = TApplicationException(TApplicationException.INTERNAL_ERROR, error_text)
        return outcome, error_text, rows, app_error, extras

    def _reply(
        self,
        call: _Call,
        result: Any,
        app_error: TApplicationException | None,
        oprot: Any,
        frame_writer: Callable[[bytes], None] | None,
    ) -> None:
        """Write the answer: the application error, or the result in the shape the
        connection's client reads."""
        api, seqid = call.api, call.seqid
        if app_error is not None:
            self._send_exception(oprot, api, app_error, seqid)
        elif stored_answer(result):
            socket_writer = call.reader.write if call.reader is not None else None
            send_stored_partitions(oprot, api, result, seqid, self._binary_output,
                                   frame_writer, socket_writer, call.generation.newer)  # fmt: skip
        elif needs_both_layouts(api, result, call.generation, self._binary_output):
            write_both_layouts(api, result, seqid, oprot.trans.write)
            oprot.trans.flush()
        else:
            oprot.write_message_begin(api, TMessageType.REPLY, seqid)
            shape_result(api, result, call.generation).write(oprot)
            oprot.write_message_end()
            oprot.trans.flush()

    @staticmethod
    def _declare(result: Any, exc: Exception) -> bool:
        """Put ``exc`` in the result's matching exception field (or a MetaException one)."""
        fields = [spec for fid, spec in sorted(result.thrift_spec.items()) if fid != 0]
        for spec in fields:
            if isinstance(exc, spec[2]):
                setattr(result, spec[1], exc)
                return True
        for spec in fields:
            if spec[2] is hms.MetaException:
                setattr(result, spec[1], hms.MetaException(message=_message(exc)))
                return True
        return False

    @staticmethod
    def _send_exception(oprot: Any, api: str, exc: TApplicationException, seqid: int) -> None:
        oprot.write_message_begin(api, TMessageType.EXCEPTION, seqid)
        exc.write(oprot)
        oprot.write_message_end()
        oprot.trans.flush()


def _authorized(
    authorize: Callable[[str, dict[str, Any]], None],
    api: str,
    values: dict[str, Any],
    method: Callable[..., Any],
) -> Callable[..., Any]:
    """``method``, run only once ``authorize`` lets the caller make the call (its refusal is
    the call's answer, declared like any error of the method)."""

    def checked(*arguments: Any) -> Any:
        authorize(api, values)
        return method(*arguments)

    return checked


def _refuse_text(field: str, *_args: object) -> None:
    """The answer to a request holding a string that is not UTF-8 (an InvalidObjectException,
    or the MetaException of a call that does not declare it)."""
    raise hms.InvalidObjectException(message=f"{field} is not valid UTF-8 text")


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


def _message(exc: Exception) -> str:
    message = getattr(exc, "message", None)
    if isinstance(message, str) and message:
        return message
    text = str(exc)
    return text if text else type(exc).__name__
