"""The Thrift IDL: loading, 2.3.10 wire compatibility, list-keyed maps, packaging."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import threading
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from thriftpy2.protocol import TCompactProtocolFactory, TCyBinaryProtocolFactory
from thriftpy2.protocol.binary import TBinaryProtocolFactory
from thriftpy2.server import TThreadedServer
from thriftpy2.thrift import TProcessor, TType
from thriftpy2.transport import (
    TBufferedTransportFactory,
    TFramedTransportFactory,
    TServerSocket,
)
from thriftpy2.utils import deserialize, serialize

from metastore_server import thrift_api
from metastore_server.thrift_api import fb303, hms, hms23

REPO = Path(__file__).resolve().parents[2]
#: HMS 2.3.10's methods, structs, field ids and enums, machine-readable (facts).
SCHEMA_PATH = REPO / "tests" / "compat" / "golden" / "hms-2.3.10-thrift-schema.json"
#: HMS 4.x's (the standalone metastore's IDL at the commit the file names), same format.
SCHEMA_4_PATH = REPO / "tests" / "compat" / "golden" / "hms-4.x-thrift-schema.json"

#: Where HMS 3 changed a 2.3 layout in place: our IDL follows 4.x, the 2.3 layout is
#: declared in hive_metastore_2_3_wire.thrift (the struct, or the call's args/result).
_LAYOUTS_2_3 = {"AddDynamicPartitions", "GetOpenTxnsResponse", "InsertEventRequestData"}
_CALLS_2_3 = {"add_dynamic_partitions", "get_open_txns", "get_partition_names"}
#: Calls whose 4.x form only adds arguments or declared exceptions (2.3 clients unaffected).
_WIDENED_SINCE_2_3 = {
    "create_table_with_constraints",
    "delete_partition_column_statistics",
    "delete_table_column_statistics",
    "get_partitions_by_names",
}
#: Where our IDL differs from 4.x's and why (nothing else may).
_DIFFERENT_FROM_4 = {
    # declared as 2.3's string: the same bytes on the wire, and a 2.3 client's statistics
    # keep decoding (the text check lets these fields be any bytes)
    **{(s, f): "binary" for s, f in [
        ("BinaryColumnStatsData", 4), ("BooleanColumnStatsData", 4),
        ("DateColumnStatsData", 5), ("DecimalColumnStatsData", 5),
        ("DoubleColumnStatsData", 5), ("LongColumnStatsData", 5),
        ("StringColumnStatsData", 5)]},
    ("LockComponent", 7): "same wire (bool); 2.3's name isAcid kept",
    ("Table", 22): "i8 is the same wire type as byte",
    ("FileMetadata", 1): "i8 is the same wire type as byte",
    ("FileMetadata", 2): "i8 is the same wire type as byte",
}  # fmt: skip

_SCALARS = {
    TType.BOOL: "bool",
    TType.BYTE: "i8",
    TType.I16: "i16",
    TType.I32: "i32",
    TType.I64: "i64",
    TType.DOUBLE: "double",
    TType.STRING: "string",
    TType.BINARY: "binary",
}


# --------------------------------------------------------------------------- helpers


def _norm_json(t: dict) -> tuple:
    """Comparable form of a type from the JSON facts."""
    kind = t["type"]
    if kind == "string":
        return ("binary",) if t.get("binary") else ("string",)
    if kind in ("list", "set"):
        return (kind, _norm_json(t["elem"]))
    if kind == "map":
        return ("map", _norm_json(t["key"]), _norm_json(t["value"]))
    if kind == "struct":
        return ("struct", t["struct"])
    if kind == "enum":
        return ("enum", t["enum"])
    return (kind,)


def _norm_spec(ttype: int, spec: Any) -> tuple:
    """Comparable form of a thriftpy2 type spec."""
    if ttype == TType.STRUCT:
        return ("struct", spec.__name__)
    if ttype == TType.I32 and isinstance(spec, type):
        return ("enum", spec.__name__)
    if ttype in (TType.LIST, TType.SET):
        kind = "list" if ttype == TType.LIST else "set"
        return (kind, _norm_elem(spec))
    if ttype == TType.MAP:
        return ("map", _norm_elem(spec[0]), _norm_elem(spec[1]))
    return (_SCALARS[ttype],)


def _norm_elem(spec: Any) -> tuple:
    if isinstance(spec, int):
        return _norm_spec(spec, None)
    return _norm_spec(spec[0], spec[1])


def _fields_of(cls: type) -> dict[int, tuple[str, tuple, bool]]:
    """{id: (name, normalised type, required)} of a thriftpy2 struct."""
    out = {}
    for fid, field in cls.thrift_spec.items():
        if len(field) == 3:
            ttype, name, required = field
            spec = None
        else:
            ttype, name, spec, required = field
        out[fid] = (name, _norm_spec(ttype, spec), bool(required))
    return out


def _expected_fields(fields: list[dict]) -> dict[int, tuple[str, tuple, bool]]:
    return {f["id"]: (f["name"], _norm_json(f["t"]), f["req"] == "required") for f in fields}


@pytest.fixture(scope="module")
def schema() -> dict:
    """The machine-readable HMS 2.3.10 facts."""
    return json.loads(SCHEMA_PATH.read_text())


def _sample(ttype: int, spec: Any, depth: int = 0) -> Any:
    """A non-default value of every field, recursively (list map keys as tuples)."""
    if ttype == TType.STRUCT:
        return _populate(spec, depth + 1)
    if ttype == TType.I32 and isinstance(spec, type):
        return min(v for k, v in vars(spec).items() if k.isupper() and isinstance(v, int))
    if ttype in (TType.LIST, TType.SET):
        e_type, e_spec = (spec, None) if isinstance(spec, int) else spec
        return [_sample(e_type, e_spec, depth)]
    if ttype == TType.MAP:
        k_type, k_spec = (spec[0], None) if isinstance(spec[0], int) else spec[0]
        v_type, v_spec = (spec[1], None) if isinstance(spec[1], int) else spec[1]
        key = _sample(k_type, k_spec, depth)
        if isinstance(key, list):
            key = tuple(key)
        return {key: _sample(v_type, v_spec, depth)}
    return {
        TType.BOOL: True,
        TType.BYTE: 7,
        TType.I16: -3,
        TType.I32: 123456,
        TType.I64: 2**40 + 5,
        TType.DOUBLE: 2.5,
        TType.STRING: "välue",
        TType.BINARY: b"\x00\xffbin",
    }[ttype]


#: How deep a populated struct goes (a Table holds a materialized view's source Tables).
_MAX_SAMPLE_DEPTH = 8


def _populate(cls: type, depth: int = 0) -> Any:
    obj = cls()
    for field in cls.thrift_spec.values():
        ttype, name = field[0], field[1]
        spec = field[2] if len(field) == 4 else None
        if depth >= _MAX_SAMPLE_DEPTH and ttype in (TType.STRUCT, TType.LIST, TType.MAP):
            continue
        setattr(obj, name, _sample(ttype, spec, depth))
    return obj


def _nested_struct_names(cls: type, seen: set[str] | None = None) -> set[str]:
    seen = set() if seen is None else seen
    if cls.__name__ in seen:
        return seen
    seen.add(cls.__name__)

    def walk(ttype: int, spec: Any) -> None:
        if ttype == TType.STRUCT:
            _nested_struct_names(spec, seen)
        elif ttype in (TType.LIST, TType.SET) and not isinstance(spec, int):
            walk(*spec)
        elif ttype == TType.MAP:
            for part in spec:
                if not isinstance(part, int):
                    walk(*part)

    for field in cls.thrift_spec.values():
        if len(field) == 4:
            walk(field[0], field[2])
    return seen


def _skewed() -> Any:
    return hms.SkewedInfo(
        skewedColNames=["a", "b"],
        skewedColValues=[["1", "x"], ["2", "y"]],
        skewedColValueLocationMaps={("1", "x"): "/w/t/a=1/b=x", ("2", "y"): "/w/t/a=2/b=y"},
    )


# --------------------------------------------------------------------------- loading


def test_idl_loads_from_package_dir() -> None:
    assert (thrift_api.IDL_DIR / "hive_metastore.thrift").is_file()
    assert (thrift_api.IDL_DIR / "fb303.thrift").is_file()
    assert hms.__name__ == "hive_metastore_thrift"
    assert thrift_api.ThriftHiveMetastore is hms.ThriftHiveMetastore
    assert "get_table" in hms.ThriftHiveMetastore.thrift_services
    assert "getStatus" in fb303.FacebookService.thrift_services
    assert issubclass(hms.ThriftHiveMetastore, fb303.FacebookService)
    assert fb303.fb_status.ALIVE == 2
    assert hms.DDL_TIME == "transient_lastDdlTime"


def test_structs_are_picklable() -> None:
    import pickle

    table = hms.Table(tableName="t", dbName="d", sd=hms.StorageDescriptor(skewedInfo=_skewed()))
    assert pickle.loads(pickle.dumps(table)) == table


def test_documented_defaults() -> None:
    assert hms.Table().temporary is False
    assert hms.Table().ownerType == hms.PrincipalType.USER
    assert hms.Table().writeId == -1
    assert hms.Partition().writeId == -1
    request = hms.DropPartitionsRequest()
    assert request.ifExists is True and request.needResult is True
    values = hms.PartitionValuesRequest()
    assert (values.applyDistinct, values.ascending, values.maxParts) == (True, True, -1)
    assert hms.PartitionsByExprRequest().maxParts == -1
    assert hms.AddPartitionsRequest().needResult is True
    assert hms.GetTableRequest().engine == "hive"
    assert hms.GetPartitionsByFilterRequest().maxParts == -1
    assert hms.LockComponent().operationType == hms.DataOperationType.UNSET
    assert hms.ThriftHiveMetastore.get_partitions_args().max_parts == -1
    assert hms.ThriftHiveMetastore.get_partitions_by_filter_args().max_parts == -1


def test_newer_hive_additions_present() -> None:
    table = _fields_of(hms.Table)
    assert table[16] == ("creationMetadata", ("struct", "CreationMetadata"), False)
    assert hms.GetOpenTxnsResponse.thrift_spec[2][0] == TType.LIST
    assert table[17] == ("catName", ("string",), False)
    assert table[18] == ("ownerType", ("enum", "PrincipalType"), False)
    assert table[19] == ("writeId", ("i64",), False)
    assert table[22] == ("accessType", ("i8",), False)
    assert _fields_of(hms.Database)[11] == ("type", ("enum", "DatabaseType"), False)
    assert _fields_of(hms.SerDeInfo)[7] == ("serdeType", ("enum", "SerdeType"), False)
    assert _fields_of(hms.PartitionsByExprRequest)[12][0] == "excludeParamKeyPattern"
    assert hms.ClientCapability.INSERT_ONLY_TABLES == 2
    services = hms.ThriftHiveMetastore.thrift_services
    for name in (
        "get_partitions_by_filter_req",
        "get_partitions_req",
        "get_partitions_by_names_req",
        "get_partitions_ps_with_auth_req",
        "get_partition_names_ps_req",
        "get_partition_names_req",
        "get_partitions_spec_by_expr",
        "get_database_req",
    ):
        assert name in services
    result = _fields_of(hms.ThriftHiveMetastore.get_partitions_by_filter_req_result)
    assert result[0] == ("success", ("list", ("struct", "Partition")), False)
    assert [result[i][1] for i in (1, 2)] == [
        ("struct", "MetaException"),
        ("struct", "NoSuchObjectException"),
    ]


# --------------------------------------------------------------------------- 2.3.10 facts


_SERVICES = {
    "ThriftHiveMetastore": hms.ThriftHiveMetastore,
    "FacebookService": fb303.FacebookService,
}


def _method_problems(methods: dict, service_of: Any) -> list[str]:
    """How our calls differ from ``methods`` (schema facts); ``service_of(name, method)`` is
    the service that declares a call (None: not checked)."""
    problems = []
    for name, method in methods.items():
        service = service_of(name, method)
        if service is None:
            continue
        if name not in service.thrift_services:
            problems.append(f"missing method {name}")
            continue
        args = _fields_of(getattr(service, f"{name}_args"))
        if args != _expected_fields(method["args"]):
            problems.append(f"{name} args: {args} != {_expected_fields(method['args'])}")
        result_cls = getattr(service, f"{name}_result")
        if method["oneway"]:
            if not getattr(result_cls, "oneway", False):
                problems.append(f"{name} should be oneway")
            continue
        result = _fields_of(result_cls)
        expected = _expected_fields(method["result"])
        if result != expected:
            problems.append(f"{name} result/throws: {result} != {expected}")
    return problems


def _service_2_3(name: str, method: dict) -> Any:
    if name in _WIDENED_SINCE_2_3:
        return None
    return hms23.HiveMetastore23Wire if name in _CALLS_2_3 else _SERVICES[method["service"]]


def test_every_method_matches_hms_2_3_10(schema: dict) -> None:
    problems = _method_problems(schema["methods"], _service_2_3)
    assert not problems, "\n".join(problems)
    own = set(hms.ThriftHiveMetastore.thrift_services) | set(fb303.FacebookService.thrift_services)
    assert len(own) >= len(schema["methods"])


#: Where our IDL differs from 2.3.10's outside the 2.3 layouts, and why (nothing else may).
_DIFFERENT_FROM_2_3: dict[tuple[str, int], str] = {
    ("Table", 16): "HMS 4's creationMetadata (a struct); 2.3.10's catName string there is "
    "skipped when it comes, and we never send one (see the IDL)",
}


def _struct_problems(structs: dict, class_of: Any, differs: dict) -> list[str]:
    """How our structs differ from ``structs`` (schema facts): kind, and each field's name,
    type and requiredness, except the (struct, field id) pairs in ``differs`` (which must
    differ)."""
    problems = []
    meta = hms.__thrift_meta__
    unions = {cls.__name__ for cls in meta["unions"]}
    exceptions = {cls.__name__ for cls in meta["exceptions"]}
    for name, struct in structs.items():
        cls = class_of(name)
        if cls is None:
            problems.append(f"missing {struct['kind']} {name}")
            continue
        if cls.__module__ == hms.__name__:
            if (struct["kind"] == "union") != (name in unions):
                problems.append(f"{name}: kind should be {struct['kind']}")
            if (struct["kind"] == "exception") != (name in exceptions):
                problems.append(f"{name}: kind should be {struct['kind']}")
        actual = _fields_of(cls)
        for fid, field in _expected_fields(struct["fields"]).items():
            if (name, fid) in differs:
                if actual.get(fid) is None or actual[fid] == field:
                    problems.append(f"{name}.{fid} is listed as different but is not")
            elif actual.get(fid) != field:
                problems.append(f"{name}.{fid}: {actual.get(fid)} != {field}")
    return problems


def test_every_struct_matches_hms_2_3_10(schema: dict) -> None:
    def class_of(name: str) -> Any:
        return getattr(hms23 if name in _LAYOUTS_2_3 else hms, name, None)

    problems = _struct_problems(schema["structs"], class_of, _DIFFERENT_FROM_2_3)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", [SCHEMA_PATH, SCHEMA_4_PATH], ids=["2.3.10", "4.x"])
def test_every_enum_matches(path: Path) -> None:
    for name, values in json.loads(path.read_text())["enums"].items():
        enum = getattr(fb303 if name == "fb_status" else hms, name)
        for number, label in values.items():
            assert getattr(enum, label) == int(number), f"{name}.{label}"


def test_fields_beyond_2_3_10_are_optional(schema: dict) -> None:
    for name, struct in schema["structs"].items():
        if name in _LAYOUTS_2_3:
            continue
        known = {f["id"] for f in struct["fields"]}
        for fid, (field, _, required) in _fields_of(getattr(hms, name)).items():
            assert fid in known or not required, f"{name}.{field} must be optional"


# --------------------------------------------------------------------------- list-keyed maps

_WRITERS = {
    "cython-binary": TCyBinaryProtocolFactory,
    "python-binary": TBinaryProtocolFactory,
    "ours-binary": thrift_api.binary_protocol_factory,
    "output-binary": thrift_api.output_binary_protocol_factory,
}
_PAIRS = [(w, "binary") for w in _WRITERS] + [
    ("compact", "compact"),
    ("ours-compact", "compact"),
]


def _writer(name: str) -> Any:
    if name == "compact":
        return TCompactProtocolFactory()
    if name == "ours-compact":
        return thrift_api.compact_protocol_factory()
    return _WRITERS[name]()


def _reader(kind: str) -> Any:
    if kind == "binary":
        return thrift_api.binary_protocol_factory()
    return thrift_api.compact_protocol_factory()


@pytest.mark.parametrize(("writer", "reader"), _PAIRS)
def test_skewed_info_round_trip(writer: str, reader: str) -> None:
    original = _skewed()
    data = serialize(original, _writer(writer))
    decoded = deserialize(hms.SkewedInfo(), data, _reader(reader))
    assert decoded == original
    assert decoded.skewedColValueLocationMaps[("2", "y")] == "/w/t/a=2/b=y"


def test_pure_python_transport_is_supported() -> None:
    """Without a Cython transport the binary reader falls back to thriftpy2's Python one."""
    from thriftpy2.transport.memory import TMemoryBuffer

    original = _populate(hms.Table)
    data = serialize(original, TCyBinaryProtocolFactory())
    protocol = thrift_api.binary_protocol_factory().get_protocol(TMemoryBuffer(data))
    decoded = protocol.read_struct(hms.Table())
    assert decoded == original


def test_plain_thriftpy2_still_cannot_decode_list_keys() -> None:
    """Guards the reason for the custom protocols; drop them once this fails."""
    data = serialize(_skewed(), TCyBinaryProtocolFactory())
    with pytest.raises(TypeError):
        deserialize(hms.SkewedInfo(), data, TCyBinaryProtocolFactory())


def test_unaffected_structs_use_the_fast_reader() -> None:
    assert thrift_api.needs_key_fix(hms.Table)
    assert thrift_api.needs_key_fix(hms.ThriftHiveMetastore.add_partitions_args)
    assert not thrift_api.needs_key_fix(hms.FieldSchema)
    assert not thrift_api.needs_key_fix(hms.Database)
    assert not thrift_api.needs_key_fix(hms.ThriftHiveMetastore.get_partitions_by_filter_args)


@pytest.mark.parametrize(("writer", "reader"), _PAIRS)
@pytest.mark.parametrize("struct", ["Table", "Partition", "AddPartitionsRequest", "PartitionSpec"])
def test_fully_populated_struct_round_trip(struct: str, writer: str, reader: str) -> None:
    original = _populate(getattr(hms, struct))
    data = serialize(original, _writer(writer))
    decoded = deserialize(getattr(hms, struct)(), data, _reader(reader))
    assert decoded == original


def test_populated_table_covers_every_nested_struct() -> None:
    names = _nested_struct_names(hms.Table)
    for expected in ("StorageDescriptor", "SkewedInfo", "SerDeInfo", "Order", "FieldSchema"):
        assert expected in names
    assert {"PrincipalPrivilegeSet", "PrivilegeGrantInfo", "ColumnStatisticsData"} <= names
    table = _populate(hms.Table)
    assert table.sd.skewedInfo.skewedColValueLocationMaps


def test_unknown_and_mistyped_fields_are_skipped() -> None:
    """A field id we do not declare, or one with another wire type, is skipped, not fatal."""
    writer_struct = hms.GetTableResult(table=_populate(hms.Table))
    data = serialize(writer_struct, TCyBinaryProtocolFactory())
    # decode as a struct whose field 1 is a string: the table (a struct on the wire) is skipped
    decoded = deserialize(hms.MetaException(), data, thrift_api.binary_protocol_factory())
    assert decoded.message is None
    decoded = deserialize(hms.Version(), data, thrift_api.binary_protocol_factory())
    assert decoded.version is None


# --------------------------------------------------------------------------- RPC over loopback


class _EchoHandler:
    def __init__(self, table: Any) -> None:
        self.table = table
        self.received: list[Any] = []

    def get_table(self, dbname: str, tbl_name: str) -> Any:
        return self.table

    def create_table(self, tbl: Any) -> None:
        self.received.append(tbl)

    def getStatus(self) -> int:
        return fb303.fb_status.ALIVE


@pytest.fixture(params=["buffered-binary", "framed-binary", "buffered-compact", "framed-compact"])
def rpc(request: pytest.FixtureRequest) -> Iterator[tuple[Any, _EchoHandler]]:
    framed = request.param.startswith("framed")
    compact = request.param.endswith("compact")
    handler = _EchoHandler(_populate(hms.Table))
    listener = TServerSocket(host="127.0.0.1", port=0, client_timeout=10000)
    listener.listen()
    port = listener.sock.getsockname()[1]
    listener.listen = lambda: None  # already listening on the ephemeral port
    server = TThreadedServer(
        TProcessor(hms.ThriftHiveMetastore, handler),
        listener,
        iprot_factory=(
            thrift_api.compact_protocol_factory()
            if compact
            else thrift_api.binary_protocol_factory()
        ),
        oprot_factory=(
            thrift_api.output_compact_protocol_factory()
            if compact
            else thrift_api.output_binary_protocol_factory()
        ),
        itrans_factory=TFramedTransportFactory() if framed else TBufferedTransportFactory(),
        daemon=True,
    )
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    client = thrift_api.make_client(
        "127.0.0.1", port, framed=framed, compact=compact, timeout_ms=10000
    )
    try:
        yield client, handler
    finally:
        client.close()
        server.close()
        listener.close()
        thread.join(timeout=5)


def test_rpc_round_trip(rpc: tuple[Any, _EchoHandler]) -> None:
    client, handler = rpc
    assert client.getStatus() == fb303.fb_status.ALIVE
    assert client.get_table("db", "t") == handler.table
    client.create_table(handler.table)
    assert handler.received == [handler.table]


# --------------------------------------------------------------------------- packaging


def _copy_sources(target: Path) -> Path:
    """Copy what a build of the repo reads (pyproject, readme, package dirs) to ``target``."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    roots = {name.split(".")[0] for name in config.get("packages", [])}
    roots |= {path.split("/")[0] for path in config.get("package-dir", {}).values()}
    target.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (REPO / name).is_file():
            shutil.copy2(REPO / name, target / name)
    for root in sorted(roots):
        if (REPO / root).is_dir():
            shutil.copytree(
                REPO / root, target / root, ignore=shutil.ignore_patterns("__pycache__")
            )
    return target


def _can_build_wheels() -> bool:
    import setuptools

    major, minor = (int(part) for part in setuptools.__version__.split(".")[:2])
    return (major, minor) >= (70, 1) or importlib.util.find_spec("wheel") is not None


def test_package_data_includes_idl(tmp_path: Path) -> None:
    """The setuptools config maps metastore_server.idl to thrift/ and ships *.thrift."""
    source = _copy_sources(tmp_path / "src")
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import setuptools; setuptools.setup()",
            "-q",
            "build_py",
            "--build-lib",
            str(tmp_path / "lib"),
        ],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    idl = tmp_path / "lib" / "metastore_server" / "idl"
    assert (idl / "hive_metastore.thrift").is_file()
    assert (idl / "fb303.thrift").is_file()
    # thrift/ is no Python package: in a checkout, `import thrift` finds Apache Thrift (which
    # pyiceberg and other Hive clients import), not our IDL folder.
    assert not (idl / "__init__.py").exists()


def test_wheel_ships_the_idl(tmp_path: Path) -> None:
    """A wheel built from the repo (offline, no build isolation) carries both IDL files."""
    if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode:
        pytest.skip("pip is not available")
    if not _can_build_wheels():
        pytest.skip("setuptools < 70.1 without the 'wheel' package cannot build wheels offline")
    source = _copy_sources(tmp_path / "src")
    out = tmp_path / "wheels"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-q",
            str(source),
            "-w",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    (wheel,) = out.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "metastore_server/idl/hive_metastore.thrift" in names
    assert "metastore_server/idl/fb303.thrift" in names
    assert "metastore_server/thrift_api.py" in names


def test_every_package_folder_is_shipped() -> None:
    """A package folder missing from pyproject's list would be left out of a wheel."""
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
                 ["packages"])  # fmt: skip
    found = {
        ".".join(init.parent.relative_to(REPO).parts)
        for init in (REPO / "metastore_server").rglob("__init__.py")
    }
    # The three pure rooms keep their own folders and install under our namespace.
    found |= {
        "metastore_server." + ".".join(init.parent.relative_to(REPO).parts)
        for top in ("planner", "storage", "timeline")
        for init in (REPO / top).rglob("__init__.py")
    }
    assert found - listed == set()
    assert not {name for name in listed if not name.startswith("metastore_server")}


# --------------------------------------------------------------------------- 4.x facts


@pytest.fixture(scope="module")
def schema4() -> dict:
    """The machine-readable HMS 4.x facts."""
    return json.loads(SCHEMA_4_PATH.read_text())


def test_every_method_matches_hms_4(schema4: dict) -> None:
    problems = _method_problems(schema4["methods"], lambda _, m: _SERVICES[m["service"]])
    assert not problems, "\n".join(problems)
    assert len(schema4["methods"]) == 293


def test_every_struct_matches_hms_4(schema4: dict) -> None:
    problems = _struct_problems(
        schema4["structs"], lambda name: getattr(hms, name, None), _DIFFERENT_FROM_4
    )
    assert not problems, "\n".join(problems)


def test_newer_methods_are_4x_less_2_3(schema: dict, schema4: dict) -> None:
    from metastore_server.server.generations import NEWER_METHODS

    assert set(schema4["methods"]) - set(schema["methods"]) == NEWER_METHODS
