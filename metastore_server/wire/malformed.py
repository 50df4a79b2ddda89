"""A message that breaks the Thrift protocol's structure: refused, answered, then its
connection closed (the reader cannot tell where the next message begins)."""

from __future__ import annotations

from thriftpy2.transport import TTransportException


class MalformedMessage(TTransportException):
    """An incoming message breaks the protocol's structure (see ``walk``); ``method`` and
    ``seqid`` are those of its header when that could be read."""

    def __init__(self, reason: str, method: str | None = None, seqid: int | None = None) -> None:
        self.reason = reason
        self.method = method
        self.seqid = seqid
        super().__init__(TTransportException.UNKNOWN, f"malformed message: {reason}")
