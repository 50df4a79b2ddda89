"""Every method of our IDL is served by exactly one area of ``metastore_server/api/`` (one module
per area, composed in ``api/handler.py``), and nothing else is served."""

from __future__ import annotations

from pathlib import Path

from metastore_server.api.handler import AREAS, MetastoreHandler, calls_of
from metastore_server.thrift_api import hms

_LIST = Path(__file__).parents[1] / "integration" / "unserved_methods_4x.txt"
#: In our IDL but not served yet (the HMS 4.x methods listed in unserved_methods_4x.txt).
UNSERVED = {
    line.strip()
    for line in _LIST.read_text().splitlines()
    if line.strip() and not line.startswith("#")
}


def test_each_idl_method_is_served_by_one_area() -> None:
    served = [name for area in AREAS for name in calls_of(area)]
    assert sorted(name for name in set(served) if served.count(name) > 1) == []
    assert set(served) == set(hms.ThriftHiveMetastore.thrift_services) - UNSERVED


def test_the_handler_has_each_method_of_each_area() -> None:
    for area in AREAS:
        for name in calls_of(area):
            method = getattr(MetastoreHandler, name)
            assert method.__doc__ == getattr(area, name).__doc__, name


def test_each_area_says_what_it_raises() -> None:
    for area in AREAS:
        assert area.__doc__ is not None and "Raises" in area.__doc__, area.__name__
