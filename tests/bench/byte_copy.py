"""The byte-copy limit of a reply: a loopback server that answers every call with the same
Thrift reply, encoded beforehand, so that the time a client sees is the least any server
could take to send that reply (read the request, write the bytes) on this machine and
through this client.

The limit runs in a process of its own (:class:`ByteCopyProcess`), as the servers it is set
against do. A thread in the client's process was measured to be unfair to them: the
scheduler then mostly runs it on the client's CPU, where a round trip of a small call took
16 to 20 us, against 55 to 61 us for the same server in a process on the other CPU (two
wake-ups across CPUs on this virtual machine), whatever the server does.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
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


class ByteCopyProcess:
    """``with ByteCopyProcess(reply) as port:`` a :class:`PreEncodedServer` in a child process
    of its own (on ``cpus`` when given, else placed by the scheduler as any server process
    is), until the block ends."""

    def __init__(self, reply: bytes, cpus: set[int] | None = None) -> None:
        self.reply = reply
        self._cpus = cpus
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> int:
        here = Path(__file__).resolve().parent
        path = [str(here), str(here.parent), str(here.parents[1])]
        code = f"import sys; sys.path[:0] = {path!r}; import byte_copy as b; b.serve_from_stdin()"
        cpus = self._cpus
        self._process = subprocess.Popen(
            [sys.executable, "-c", code],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            preexec_fn=None if cpus is None else lambda: os.sched_setaffinity(0, cpus),
        )
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.write(len(self.reply).to_bytes(8, "big") + self.reply)
        self._process.stdin.flush()
        line = self._process.stdout.readline()
        if not line.strip().isdigit():
            self.__exit__()
            raise RuntimeError("the byte-copy server did not start")
        return int(line)

    def __exit__(self, *exc_info: object) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        assert process.stdin is not None
        with contextlib.suppress(OSError):
            process.stdin.close()  # its end of input: it stops
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def serve_from_stdin() -> None:
    """The child of :class:`ByteCopyProcess`: read the reply (8-byte length, then the bytes)
    from standard input, print the port, serve until standard input ends."""
    size = int.from_bytes(sys.stdin.buffer.read(8), "big")
    reply = sys.stdin.buffer.read(size)
    with PreEncodedServer(reply) as port:
        print(port, flush=True)
        sys.stdin.buffer.read()


def encode_reply(method: str, success: Any) -> bytes:
    """The REPLY message (binary protocol, sequence id 0) carrying ``success`` as
    ``method``'s result, as a server sends it."""
    out = TMemoryBuffer()
    proto = TBinaryProtocol(out)
    proto.write_message_begin(method, TMessageType.REPLY, 0)
    proto.write_struct(getattr(SERVICE, method + "_result")(success=success))
    proto.write_message_end()
    return out.getvalue()
