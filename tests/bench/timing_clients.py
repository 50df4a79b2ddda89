"""The benchmarks' timing clients (``--client``): thriftpy2 with replies skipped or decoded,
Hive's Java client in a child JVM, and a framed reader that only drains the replies. Each
times its own calls: ``timed(method, *args)`` gives the result's size and milliseconds."""

from __future__ import annotations

import contextlib
import socket
import struct
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from partition_dataset import SERVICE, hms
from thrift_wire import encode_call, read_reply
from thriftpy2.thrift import TApplicationException, TMessageType, TType, args_to_kwargs

if TYPE_CHECKING:
    from bench_targets import Target


def raw_call(client: Any, method: str, *args: Any) -> int:
    """Call ``method`` and read the reply without decoding it (``read_reply``); the size of the
    result."""
    spec = getattr(SERVICE, method + "_args").thrift_spec
    client._send(method, **args_to_kwargs(spec, *args))
    return read_reply(client, method)


def decoded_call(client: Any, method: str, *args: Any) -> int:
    """Call ``method`` through the decoding client; the size of the result."""
    result = getattr(client, method)(*args)
    if isinstance(result, hms.PartitionValuesResponse):
        return len(result.partitionValues or [])
    return result if isinstance(result, int) else len(result)


class PythonClient:
    """A thriftpy2 client timing its own calls (``decode``: replies decoded, else skipped)."""

    def __init__(self, target: Target, decode: bool) -> None:
        self._client = target.client()
        self._call = decoded_call if decode else raw_call

    def timed(self, method: str, *args: Any) -> tuple[int, float]:
        """(size of the result, milliseconds) of one call."""
        t0 = time.perf_counter()
        size = self._call(self._client, method, *args)
        return size, (time.perf_counter() - t0) * 1000

    def close(self) -> None:
        """Close the connection."""
        self._client.close()


JAVA_CLIENT = Path(__file__).resolve().parent / "java" / "MetastoreBenchClient.java"


class JavaClientError(Exception):
    """A call the Java client reported as failed (the server's exception, by class name)."""


class JavaClient:
    """``MetastoreBenchClient.java`` in a child JVM: one call per line, timed in Java.

    ``mode`` is ``decode`` (replies decoded into Hive's Java objects) or ``skip`` (walked
    without building objects); see the Java file.
    """

    def __init__(self, target: Target, mode: str, timeout_s: float) -> None:
        self._timeout_s = timeout_s
        self._proc = subprocess.Popen(
            [
                "java",
                "-cp",
                java_classpath(),
                str(JAVA_CLIENT),
                target.host,
                str(target.port),
                mode,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        first = self._line()
        if first != "ready":
            self.close()
            raise RuntimeError(f"the Java bench client did not start: {first!r}")

    def _line(self) -> str:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            code = self._proc.wait(timeout=self._timeout_s)
            raise RuntimeError(f"the Java bench client exited ({code})")
        return line.rstrip("\n")

    def timed(self, method: str, *args: Any) -> tuple[int, float]:
        """(size of the result, milliseconds measured in the JVM) of one call."""
        fields = [method, *(str(a) for a in args)]
        if any("\t" in f or "\n" in f for f in fields):
            raise ValueError("the Java bench client takes no tab or newline in arguments")
        assert self._proc.stdin is not None
        self._proc.stdin.write("\t".join(fields) + "\n")
        self._proc.stdin.flush()
        status, _, rest = self._line().partition("\t")
        if status != "ok":
            raise JavaClientError(rest)
        size, nanos = rest.split("\t")
        return int(size), int(nanos) / 1e6

    def close(self) -> None:
        """End the JVM (closing its input ends its loop)."""
        with contextlib.suppress(Exception):
            assert self._proc.stdin is not None
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


def java_classpath() -> str:
    """The jars of the installed pyspark wheel (Hive's metastore client and libthrift)."""
    from support.reference_hms import find_pyspark_jars

    jars = find_pyspark_jars()
    if jars is None:
        raise RuntimeError("the Java client needs pyspark's jars (pip install pyspark)")
    return str(jars / "*")


CLIENT_DESCRIPTIONS = {
    "python": "Python thriftpy2, replies read but not decoded",
    "python-decode": "Python thriftpy2, replies decoded",
    "java": "Hive's Java client (pyspark jars), replies decoded",
    "java-skip": "Hive's Java client (pyspark jars), replies walked with TProtocolUtil.skip",
    "drain": "framed replies read whole off the socket, not decoded (framed transport)",
}


class DrainClient:
    """Frames read off the socket whole, nothing decoded but the result's list header (or
    count): framed transport, so the reply's length is known before it is read. It times how
    fast a server answers and sends, with no client decoding in the way."""

    def __init__(self, target: Target) -> None:
        self._sock = socket.create_connection((target.host, target.port), timeout=600)
        self._buffer = bytearray(1 << 20)

    def timed(self, method: str, *args: Any) -> tuple[int, float]:
        """(size of the result, milliseconds) of one call."""
        body = encode_call(method, args, seqid=1)
        t0 = time.perf_counter()
        self._sock.sendall(struct.pack("!i", len(body)) + body)
        (length,) = struct.unpack("!i", self._read(4)[:4])
        frame = self._read(length)
        ms = (time.perf_counter() - t0) * 1000
        return _result_size(frame), ms

    def _read(self, n: int) -> memoryview:
        if len(self._buffer) < n:
            self._buffer = bytearray(n)
        view = memoryview(self._buffer)
        got = 0
        while got < n:
            k = self._sock.recv_into(view[got:n])
            if not k:
                raise ConnectionError("the server closed the connection")
            got += k
        return view

    def close(self) -> None:
        """Close the connection."""
        self._sock.close()


def _result_size(frame: memoryview) -> int:
    """The element count (or i32 value) of a reply frame's result field."""
    (version,) = struct.unpack_from("!i", frame, 0)
    (name_length,) = struct.unpack_from("!i", frame, 4)
    pos = 8 + name_length + 4
    if version & 0xFF == TMessageType.EXCEPTION:
        raise TApplicationException(message="the server answered an application exception")
    ftype, fid = struct.unpack_from("!bh", frame, pos)
    pos += 3
    if fid == 0 and ftype in (TType.LIST, TType.SET):
        return struct.unpack_from("!bi", frame, pos)[1]
    if fid == 0 and ftype == TType.I32:
        return struct.unpack_from("!i", frame, pos)[0]
    if fid == 0 and ftype == TType.STRUCT:  # get_partition_values: its first field's rows
        ftype, fid = struct.unpack_from("!bh", frame, pos)
        if fid == 1 and ftype == TType.LIST:
            return struct.unpack_from("!bi", frame, pos + 3)[1]
    raise RuntimeError(f"a declared exception (result field {fid})")


CLIENTS = ("python", "python-decode", "java", "java-skip", "drain")


def open_client(kind: str, target: Target) -> PythonClient | JavaClient | DrainClient:
    """A timing client of ``kind`` (one of CLIENTS) connected to ``target``."""
    if kind == "drain":
        return DrainClient(target)
    if kind.startswith("java"):
        return JavaClient(
            target, "skip" if kind == "java-skip" else "decode", target.timeout_ms / 1000
        )
    return PythonClient(target, decode=kind == "python-decode")
