"""Our IDL as is goes through the Apache Thrift compiler (``thrift``, Debian's thrift-compiler)
for other languages: Node.js, Java and Python code is generated with the fb303 include resolved,
and the generated Python compiles. Skipped without the compiler."""

from __future__ import annotations

import compileall
from pathlib import Path

import pytest

from .conftest import generate, thrift_compiler

if thrift_compiler() is None:
    pytest.skip("needs thrift (apt-get install thrift-compiler)", allow_module_level=True)


@pytest.mark.parametrize(
    ("language", "outputs"),
    [
        ("js:node", ["gen-nodejs/ThriftHiveMetastore.js", "gen-nodejs/FacebookService.js"]),
        (
            "java:generated_annotations=suppress",
            [
                "gen-java/org/hbasemetastore/thrift/ThriftHiveMetastore.java",
                "gen-java/org/hbasemetastore/thrift/GetPartitionTimelinesRequest.java",
                "gen-java/org/hbasemetastore/fb303/FacebookService.java",
            ],
        ),
        (
            "py",
            [
                "gen-py/hbase_metastore/hive_metastore/ThriftHiveMetastore.py",
                "gen-py/hbase_metastore/fb303/FacebookService.py",
            ],
        ),
    ],
)
def test_idl_generates(language: str, outputs: list[str], tmp_path: Path) -> None:
    out = generate(language, tmp_path)
    for name in outputs:
        assert (out / name).is_file(), name


def test_generated_python_compiles(tmp_path: Path) -> None:
    out = generate("py", tmp_path) / "gen-py"
    assert compileall.compile_dir(str(out), quiet=1)
