"""The byte-copy limit of a reply: a loopback server that answers every call with the same
Thrift reply, encoded beforehand, so that the time a client sees is the least any server
could take to send that reply (read the request, write the bytes) on this machine and
through this client.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType
from typing import Any

from partition_dataset import SERVICE
from support.net import LOOPBACK
from thriftpy2.protocol import TBinaryProtocol, TCyBinaryProtocol
from thriftpy2.thrift import TMessageType, TType
from thriftpy2.transport import TCyBufferedTransport, TMemoryBuffer, TSocket


class PreEncodedServer:
    """``with PreEncodedServer(reply) as port:`` serves ``reply`` (a whole REPLY message,
    binary protocol, buffered transport) to every call on 127.0.0.1:port, one connection at a
    time, until the block ends. The request is read (and its arguments skipped) first."""

    def __init__(self, reply: bytes) -> None:
        self.reply = reply
        self._listener = socket.create_server((LOOPBACK, 0))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True, name="byte-copy")

    @property
    def port(self) -> int:
        """The port it listens on."""
        return int(self._listener.getsockname()[1])

    def __enter__(self) -> int:
        self._thread.start()
        return self.port

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            socket.create_connection((LOOPBACK, self.port), timeout=1).close()
        self._thread.join(timeout=10)
        self._listener.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with conn:
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self._answer(conn)

    def _answer(self, conn: socket.socket) -> None:
        """Answer the calls of one connection until it closes."""
        sock = TSocket(sock=conn)
        proto = TCyBinaryProtocol(TCyBufferedTransport(sock))
        while not self._stop.is_set():
            try:
                proto.read_message_begin()
                proto.skip(TType.STRUCT)
                proto.read_message_end()
                conn.sendall(self.reply)
            except Exception:  # noqa: BLE001 - the client went away
                return


def encode_reply(method: str, success: Any) -> bytes:
    """The REPLY message (binary protocol, sequence id 0) carrying ``success`` as
    ``method``'s result, as a server sends it."""
    out = TMemoryBuffer()
    proto = TBinaryProtocol(out)
    proto.write_message_begin(method, TMessageType.REPLY, 0)
    proto.write_struct(getattr(SERVICE, method + "_result")(success=success))
    proto.write_message_end()
    return out.getvalue()
