"""The same Thrift calls sent to the reference Hive Metastore 2.3.x and to our server.

Every step of :mod:`support.hms_scenario` (databases, tables, partitions, partition filters,
functions, renames, drops, and their error cases) runs once against a fresh reference
metastore and once against a fresh instance of our server; each step is then one test that
compares the two outcomes: the normalized result, or the exception type and message.

When the reference metastore cannot run here (no isolated network namespace, no java), the
outcomes recorded from it in ``golden/hms-2.3.10.json`` are used instead. Re-record them
(inside ``unshare -n``) with ``COMPAT_UPDATE_GOLDEN=1 pytest tests/compat``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import typed_filters
from support.golden import Golden, listed
from support.hms_scenario import (
    GENERATED_PREFIX,
    Step,
    comparable,
    differences,
    run_scenario,
    scenario,
)
from support.net import MetastoreEndpoint

thrift_api = pytest.importorskip(
    "metastore_server.thrift_api", reason="metastore_server.thrift_api is not importable"
)

pytestmark = pytest.mark.compat

GOLDEN = Golden(
    Path(__file__).parent / "golden" / "hms-2.3.10.json",
    "Outcomes of tests/support/hms_scenario.py on the reference Hive Metastore 2.3.10 (pyspark "
    "wheel jars, Derby), normalized.",
)
STEPS = scenario(thrift_api.hms, "<WH>")
Outcomes = dict[str, dict[str, Any]]


def _run(endpoint: MetastoreEndpoint, _work: Path | None = None) -> Outcomes:
    """Run the whole scenario against one server."""
    return run_scenario(
        thrift_api.hms,
        lambda: thrift_api.make_client(endpoint.host, endpoint.port),
        endpoint.warehouse_dir,
    )


@pytest.fixture(scope="module")
def live_reference_outcomes(tmp_path_factory: pytest.TempPathFactory) -> Outcomes | None:
    """Outcomes from a fresh reference metastore, or None when it cannot run here."""
    return GOLDEN.live(tmp_path_factory, "compat", _run)


@pytest.fixture(scope="module")
def reference_outcomes(live_reference_outcomes: Outcomes | None) -> Outcomes:
    """Live reference outcomes, else the recorded golden ones, else skip."""
    return GOLDEN.reference(live_reference_outcomes)


@pytest.fixture(scope="module")
def our_outcomes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outcomes]:
    """Outcomes from a fresh instance of our server."""
    with GOLDEN.ours(tmp_path_factory, "compat", _run) as outcomes:
        yield outcomes


def _changed(recorded: Outcomes, live: Outcomes) -> list[str]:
    return [s.name for s in STEPS
            if comparable(s, recorded.get(s.name)) != comparable(s, live.get(s.name))]  # fmt: skip


def test_golden_is_current(live_reference_outcomes: Outcomes | None) -> None:
    """The recorded reference outcomes still match what the reference metastore answers."""
    GOLDEN.check_current(live_reference_outcomes, _changed)


KNOWN_DIFFERENCES = listed(Path(__file__).parent / "known_differences.txt")
DELIBERATE_DIFFERENCES = listed(Path(__file__).parent / "deliberate_differences.txt")


GENERATED_TREES = dict(enumerate(tree for _, tree in typed_filters.generated_filters()))
JDO_REFUSAL = "Filtering is supported only on partition keys of type string"


def _generated_tree(step: Step) -> typed_filters.Tree | None:
    if not step.name.startswith(GENERATED_PREFIX):
        return None
    return GENERATED_TREES[int(step.name[len(GENERATED_PREFIX) :].split("[", 1)[0])]


@pytest.mark.parametrize("step", STEPS, ids=[s.name for s in STEPS])
def test_same_outcome(step: Step, reference_outcomes: Outcomes, our_outcomes: Outcomes) -> None:
    """Our server answers this call like the reference metastore."""
    if step.compare == "none":
        pytest.skip("recorded only: the reference behaviour is not worth imitating")
    expected = comparable(step, reference_outcomes.get(step.name))
    actual = comparable(step, our_outcomes.get(step.name))
    tree = _generated_tree(step)
    if tree is not None:
        # Generated filters are also checked against an independent oracle; where the reference
        # refuses one (its JDO fallback cannot filter date or bigint keys), the oracle decides.
        correct = {"ok": typed_filters.expected_values(tree)}
        assert actual == correct, f"{step.args[2]}: ours {actual}, correct {correct}"
        if expected.get("message", "") == JDO_REFUSAL:
            return
    listed = "known_differences.txt" if step.name in KNOWN_DIFFERENCES else None
    if step.name in DELIBERATE_DIFFERENCES:
        listed = "deliberate_differences.txt"
    if actual != expected:
        diff = "\n  ".join(differences(expected, actual))
        if step.name in DELIBERATE_DIFFERENCES:
            pytest.xfail(f"deliberate: {DELIBERATE_DIFFERENCES[step.name]}\n  {diff}")
        if listed:
            pytest.xfail(f"known difference: {step.method}{_show_args(step)}\n  {diff}")
        pytest.fail(f"{step.method}{_show_args(step)}\n  {diff}", pytrace=False)
    if listed:
        pytest.fail(f"{step.name} now matches the reference: remove it from {listed}")


def _show_args(step: Step) -> str:
    """Short rendering of a step's arguments for assertion messages."""
    text = repr(step.args)
    return text if len(text) < 300 else text[:300] + "...)"
