"""Every method of HMS 4.x (from its Thrift schema), called by a client the Apache Thrift
compiler generates from our IDL (which follows 4.x's layouts): only the methods listed in
``tests/integration/unserved_methods_4x.txt`` may answer "Invalid method name", and every answer
decodes in 4.x's layouts, required fields included. Calls carry no arguments: most answer an
error, which shows the method is served. Skipped without the compiler."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import generate, thrift_compiler

if thrift_compiler() is None:
    pytest.skip("needs thrift (apt-get install thrift-compiler)", allow_module_level=True)
thrift = pytest.importorskip("thrift", reason="needs the Apache Thrift Python library")

from thrift.protocol import TBinaryProtocol  # noqa: E402
from thrift.Thrift import TApplicationException, TException  # noqa: E402
from thrift.transport import TSocket, TTransport  # noqa: E402

GOLDEN = Path(__file__).parents[1] / "compat" / "golden"
UNSERVED = Path(__file__).parents[1] / "integration" / "unserved_methods_4x.txt"


def _listed() -> set[str]:
    lines = UNSERVED.read_text().splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Our IDL compiled to Python by the Thrift compiler: the generated service module."""
    out = generate("py", tmp_path_factory.mktemp("gen")) / "gen-py"
    sys.path.insert(0, str(out))
    try:
        yield importlib.import_module("hbase_metastore.hive_metastore.ThriftHiveMetastore")
    finally:
        sys.path.remove(str(out))
        for name in [n for n in sys.modules if n.startswith("hbase_metastore")]:
            del sys.modules[name]


def _validate(value: Any, seen: int = 0) -> None:
    """Raise when a decoded struct (or one inside it) lacks a required field."""
    assert seen < 50
    if isinstance(value, (list, set, tuple)):
        for item in value:
            _validate(item, seen + 1)
    elif isinstance(value, dict):
        for item in value.values():
            _validate(item, seen + 1)
    elif hasattr(value, "validate") and hasattr(value, "thrift_spec"):
        value.validate()
        for spec in value.thrift_spec[1:] if isinstance(value.thrift_spec, tuple) else []:
            if spec is not None:
                _validate(getattr(value, spec[2], None), seen + 1)


def test_every_hms4_method_answers_in_4x_layouts(server, generated) -> None:
    methods = json.loads((GOLDEN / "hms-4.x-thrift-schema.json").read_text())["methods"]
    socket = TSocket.TSocket(server.host, server.port)
    socket.setTimeout(30000)
    transport = TTransport.TBufferedTransport(socket)
    client = generated.Client(TBinaryProtocol.TBinaryProtocol(transport))
    transport.open()
    unserved, undecoded = set(), {}
    try:
        for name, spec in sorted(methods.items()):
            if spec["oneway"]:
                continue
            try:
                _validate(getattr(client, name)(*[None] * len(spec["args"])))
            except TApplicationException as exc:
                if exc.type == TApplicationException.UNKNOWN_METHOD:
                    unserved.add(name)
            except TException as exc:  # a declared exception: served, and it decoded
                _validate(exc)
            except Exception as exc:  # noqa: BLE001 - an answer the 4.x client cannot read
                undecoded[name] = f"{type(exc).__name__}: {exc}"
                transport.close()
                transport.open()
    finally:
        transport.close()
    listed = _listed()
    assert undecoded == {}
    assert sorted(unserved - listed) == [], "answer these, or list them in unserved_methods_4x.txt"
    assert sorted(listed - unserved) == [], "served now: take them off unserved_methods_4x.txt"
    assert len(methods) == 293
