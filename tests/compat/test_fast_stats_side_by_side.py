"""Fast statistics side by side: the calls and file writes of
:mod:`support.fast_stats_scenario` sent to the reference Hive Metastore 2.3.10 and to our server,
each with a directory of its own outside its warehouse, comparing after every step the outcome
and the parameters shown (``numFiles``, ``totalSize``, ``COLUMN_STATS_ACCURATE``,
``DO_NOT_UPDATE_STATS`` and the rest).

Without the reference metastore here, the outcomes recorded from it in
``golden/fast-stats-hms-2.3.10.json`` are used (re-record inside ``unshare -n`` with
``COMPAT_UPDATE_GOLDEN=1``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.fast_stats_scenario import run_stats_scenario, steps
from support.our_server import OurServer
from support.reference_hms import ReferenceHms, reference_hms_unavailable_reason

from metastore_server.thrift_api import hms, make_client

pytestmark = pytest.mark.compat

GOLDEN = Path(__file__).parent / "golden" / "fast-stats-hms-2.3.10.json"
Outcomes = dict[str, dict[str, Any]]
STEPS = [step.name for step in steps(hms)]


def _run(host: str, port: int, lake: Path) -> Outcomes:
    client = make_client(host, port)
    try:
        return run_stats_scenario(hms, client, lake)
    finally:
        client.close()


@pytest.fixture(scope="module")
def live_reference(tmp_path_factory: pytest.TempPathFactory) -> Outcomes | None:
    if reference_hms_unavailable_reason() is not None:
        return None
    work = tmp_path_factory.mktemp("fast-stats-reference")
    with ReferenceHms(work) as endpoint:
        outcomes = _run(endpoint.host, endpoint.port, work / "lake")
    if os.environ.get("COMPAT_UPDATE_GOLDEN"):
        doc = {"about": "Outcomes of tests/support/fast_stats_scenario.py on the reference Hive "
               "Metastore 2.3.10 (pyspark wheel jars, Derby).", "outcomes": outcomes}  # fmt: skip
        GOLDEN.write_text(json.dumps(doc, indent=1) + "\n")
    return outcomes


@pytest.fixture(scope="module")
def reference(live_reference: Outcomes | None) -> Outcomes:
    if live_reference is not None:
        return live_reference
    if not GOLDEN.exists():
        pytest.skip(f"no golden file and {reference_hms_unavailable_reason()}")
    return json.loads(GOLDEN.read_text())["outcomes"]


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outcomes]:
    work = tmp_path_factory.mktemp("fast-stats-ours")
    with OurServer(work / "server") as endpoint:
        yield _run(endpoint.host, endpoint.port, work / "lake")


def test_golden_is_current(live_reference: Outcomes | None) -> None:
    if live_reference is None:
        pytest.skip(str(reference_hms_unavailable_reason()))
    assert GOLDEN.exists(), f"record {GOLDEN.name} with COMPAT_UPDATE_GOLDEN=1"
    assert json.loads(GOLDEN.read_text())["outcomes"] == live_reference


@pytest.mark.parametrize("name", STEPS)
def test_same_statistics_after_each_step(name: str, reference: Outcomes, ours: Outcomes) -> None:
    assert ours[name] == reference[name]
