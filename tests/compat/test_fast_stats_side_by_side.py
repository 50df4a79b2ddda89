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

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.fast_stats_scenario import run_stats_scenario, steps
from support.golden import Golden
from support.net import MetastoreEndpoint

from metastore_server.thrift_api import hms, make_client

pytestmark = pytest.mark.compat

GOLDEN = Golden(
    Path(__file__).parent / "golden" / "fast-stats-hms-2.3.10.json",
    "Outcomes of tests/support/fast_stats_scenario.py on the reference Hive Metastore 2.3.10 "
    "(pyspark wheel jars, Derby).",
    key="outcomes",
)
Outcomes = dict[str, dict[str, Any]]
STEPS = [step.name for step in steps(hms)]


def _run(endpoint: MetastoreEndpoint, work: Path) -> Outcomes:
    lake = work / "lake"
    client = make_client(endpoint.host, endpoint.port)
    try:
        return run_stats_scenario(hms, client, lake)
    finally:
        client.close()


@pytest.fixture(scope="module")
def live_reference(tmp_path_factory: pytest.TempPathFactory) -> Outcomes | None:
    return GOLDEN.live(tmp_path_factory, "fast-stats", _run)


@pytest.fixture(scope="module")
def reference(live_reference: Outcomes | None) -> Outcomes:
    return GOLDEN.reference(live_reference)


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outcomes]:
    with GOLDEN.ours(tmp_path_factory, "fast-stats", _run) as states:
        yield states


def test_golden_is_current(live_reference: Outcomes | None) -> None:
    GOLDEN.check_current(live_reference)


@pytest.mark.parametrize("name", STEPS)
def test_same_statistics_after_each_step(name: str, reference: Outcomes, ours: Outcomes) -> None:
    assert ours[name] == reference[name]
