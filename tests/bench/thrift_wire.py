"""Thrift messages of the benchmarks at the byte level: calls encoded before the clock starts,
and replies read off a thriftpy2 client's connection without building their result."""

from __future__ import annotations

import struct
from typing import Any

import bench_path  # noqa: F401 - puts the repository on sys.path
from thriftpy2.protocol import TBinaryProtocol
from thriftpy2.protocol import binary as pybin
from thriftpy2.thrift import TApplicationException, TMessageType, TType, args_to_kwargs
from thriftpy2.transport import TMemoryBuffer

from metastore_server.thrift_api import ThriftHiveMetastore as SERVICE


def encode_call(method: str, args: tuple[Any, ...], seqid: int = 0) -> bytes:
    """The CALL message of ``method(*args)``, binary protocol (buffered transport)."""
    spec = getattr(SERVICE, method + "_args")
    out = TMemoryBuffer()
    proto = TBinaryProtocol(out)
    proto.write_message_begin(method, TMessageType.CALL, seqid)
    proto.write_struct(spec(**args_to_kwargs(spec.thrift_spec, *args)))
    proto.write_message_end()
    return out.getvalue()


def read_reply(client: Any, method: str, *, count: bool = True) -> int:
    """Read ``method``'s reply off ``client``'s connection without building its result; with
    ``count``, the size of the result (else -1).

    The result's list header gives the number of elements (partitions, names); a number result
    is returned as is. Without ``count`` the result is skipped whole. Elements are skipped by
    thriftpy2's Cython protocol. Declared exceptions are decoded and raised, as is an
    application exception.
    """
    iprot = client._iprot
    _name, mtype, _seqid = iprot.read_message_begin()
    if mtype == TMessageType.EXCEPTION:
        app_error = TApplicationException()
        iprot.read_struct(app_error)
        iprot.read_message_end()
        raise app_error
    result_spec = getattr(SERVICE, method + "_result").thrift_spec
    size = -1
    error: BaseException | None = None
    while True:
        ftype, fid = pybin.read_field_begin(iprot.trans)
        if ftype == TType.STOP:
            break
        if fid == 0 and count:
            size = _read_result_size(iprot, ftype, result_spec)
        elif fid != 0 and fid in result_spec and ftype == TType.STRUCT:
            error = result_spec[fid][2]()
            iprot.read_struct(error)
        else:
            iprot.skip(ftype)
    iprot.read_message_end()
    if error is not None:
        raise error
    return size


def _read_result_size(iprot: Any, ftype: int, result_spec: dict[int, Any]) -> int:
    """Read the result field (of type ``ftype``); its element count or number, -1 for others."""
    trans = iprot.trans
    if ftype in (TType.LIST, TType.SET):
        etype, size = pybin.read_list_begin(trans)
        for _ in range(size):
            iprot.skip(etype)
        return size
    if ftype == TType.I32:
        return struct.unpack("!i", trans.read(4))[0]
    if ftype == TType.STRUCT:  # get_partition_values: rows of values
        response = result_spec[0][2]()
        iprot.read_struct(response)
        return len(response.partitionValues or [])
    iprot.skip(ftype)
    return -1
