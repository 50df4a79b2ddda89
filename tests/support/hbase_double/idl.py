"""The HBase test double's Thrift service: the ``Hbase`` IDL happybase ships (the one it
speaks), loaded once, and the HBase exceptions the double raises through it."""

from __future__ import annotations

from pathlib import Path

import happybase
import thriftpy2

HBASE_IDL = Path(happybase.__file__).with_name("Hbase.thrift")
hbase_thrift = thriftpy2.load(str(HBASE_IDL), module_name="hbase_double_thrift")


def io_error(message: str) -> Exception:
    """An HBase IOError (the Thrift exception, not Python's)."""
    return hbase_thrift.IOError(message=message)


def illegal_argument(message: str) -> Exception:
    """An HBase IllegalArgument."""
    return hbase_thrift.IllegalArgument(message=message)
