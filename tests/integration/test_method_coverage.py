"""Every method of HMS 2.3.10 (from its Thrift schema) is called once, with no arguments: only
the methods listed in ``unserved_methods.txt`` may answer "Invalid method name"."""

from __future__ import annotations

import json
from pathlib import Path

from thriftpy2.thrift import TApplicationException

SCHEMA = Path(__file__).parents[1] / "compat" / "golden" / "hms-2.3.10-thrift-schema.json"
UNSERVED = Path(__file__).with_name("unserved_methods.txt")


def _listed() -> set[str]:
    lines = UNSERVED.read_text().splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def test_only_the_listed_methods_are_unserved(start_server) -> None:
    methods = json.loads(SCHEMA.read_text())["methods"]
    conn = start_server().client()
    unserved = set()
    for name, spec in sorted(methods.items()):
        if spec["oneway"]:
            continue
        try:
            getattr(conn, name)()
        except TApplicationException as exc:
            if exc.type == TApplicationException.UNKNOWN_METHOD:
                unserved.add(name)
        except Exception:  # noqa: BLE001, S110 - any other answer means the method is served
            pass
    listed = _listed()
    assert sorted(unserved - listed) == [], "answer these, or list them in unserved_methods.txt"
    assert sorted(listed - unserved) == [], "served now: take them off unserved_methods.txt"
    assert len(methods) == 167
