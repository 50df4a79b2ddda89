"""HMS's checks and answers on bad calls: the steps of :mod:`support.hms_semantics_scenario`
(settings clients read, tables HMS refuses to create or alter, column type changes, empty and
missing names, exception types and messages) sent to the reference Hive Metastore 2.3.10 and to
our server, compared step by step as ``test_side_by_side`` compares its scenario.

Where HMS 2.3 fails on a call instead of answering it (an internal or protocol error, a dropped
connection, or a MetaException carrying a Java exception's text such as a NullPointerException:
mostly null names reaching its code) we answer an exception the method declares, in our words;
such a step checks only that. Steps where
we differ on purpose are listed with the reason in ``deliberate_differences_semantics.txt``.

When the reference metastore cannot run here (no isolated network namespace, no java), the
outcomes recorded from it in ``golden/semantics-hms-2.3.10.json`` are used instead. Re-record
them (inside ``unshare -n``) with ``COMPAT_UPDATE_GOLDEN=1 pytest tests/compat/<this file>``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.golden import Golden, listed
from support.hms_scenario import Step, comparable, differences, run_scenario
from support.hms_semantics_scenario import semantics_scenario
from support.net import MetastoreEndpoint

thrift_api = pytest.importorskip(
    "metastore_server.thrift_api", reason="metastore_server.thrift_api is not importable"
)
hms = thrift_api.hms

pytestmark = pytest.mark.compat

GOLDEN = Golden(
    Path(__file__).parent / "golden" / "semantics-hms-2.3.10.json",
    "Outcomes of tests/support/hms_semantics_scenario.py on the reference Hive Metastore 2.3.10 "
    "(pyspark wheel jars, Derby), normalized.",
)
DELIBERATE = Path(__file__).parent / "deliberate_differences_semantics.txt"
STEPS = semantics_scenario(hms, "<WH>")
Outcomes = dict[str, dict[str, Any]]


def _run(endpoint: MetastoreEndpoint, _work: Path | None = None) -> Outcomes:
    """Run the whole scenario against one server."""
    return run_scenario(
        hms,
        lambda: thrift_api.make_client(endpoint.host, endpoint.port),
        endpoint.warehouse_dir,
        semantics_scenario(hms, endpoint.warehouse_dir),
    )


@pytest.fixture(scope="module")
def live_reference_outcomes(tmp_path_factory: pytest.TempPathFactory) -> Outcomes | None:
    """Outcomes from a fresh reference metastore, or None when it cannot run here."""
    return GOLDEN.live(tmp_path_factory, "semantics", _run)


@pytest.fixture(scope="module")
def reference_outcomes(live_reference_outcomes: Outcomes | None) -> Outcomes:
    """Live reference outcomes, else the recorded golden ones, else skip."""
    return GOLDEN.reference(live_reference_outcomes)


@pytest.fixture(scope="module")
def our_outcomes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outcomes]:
    """Outcomes from a fresh instance of our server."""
    with GOLDEN.ours(tmp_path_factory, "semantics", _run) as outcomes:
        yield outcomes


def _changed(recorded: Outcomes, live: Outcomes) -> list[str]:
    return [s.name for s in STEPS
            if comparable(s, recorded.get(s.name)) != comparable(s, live.get(s.name))]  # fmt: skip


def test_golden_is_current(live_reference_outcomes: Outcomes | None) -> None:
    """The recorded reference outcomes still match what the reference metastore answers."""
    GOLDEN.check_current(live_reference_outcomes, _changed)


DELIBERATE_DIFFERENCES = listed(DELIBERATE)


def _declared(method: str) -> set[str]:
    """Names of the exceptions the IDL declares for ``method``."""
    result = getattr(hms.ThriftHiveMetastore, f"{method}_result")
    return {spec[2].__name__ for fid, spec in result.thrift_spec.items() if fid != 0}


def test_every_deliberate_difference_is_a_step() -> None:
    """The list names steps of the scenario only."""
    names = {s.name for s in STEPS}
    assert sorted(set(DELIBERATE_DIFFERENCES) - names) == []


@pytest.mark.parametrize("step", STEPS, ids=[s.name for s in STEPS])
def test_same_outcome(step: Step, reference_outcomes: Outcomes, our_outcomes: Outcomes) -> None:
    """Our server answers this call like the reference metastore."""
    if step.compare == "none":
        pytest.skip("recorded only")
    theirs = reference_outcomes.get(step.name) or {}
    ours = our_outcomes.get(step.name) or {}
    if _fails_internally(theirs) and step.name not in DELIBERATE_DIFFERENCES:
        allowed = _declared(step.method) | ({None} if theirs["error"] == "transport" else set())
        assert ours.get("error") in allowed, (
            f"HMS fails internally ({theirs.get('message')}); ours must be a declared "
            f"exception, got {ours}"
        )
        assert not str(ours.get("message", "")).startswith("java."), ours
        return
    expected, actual = comparable(step, theirs), comparable(step, ours)
    if actual != expected:
        diff = "\n  ".join(differences(expected, actual))
        if step.name in DELIBERATE_DIFFERENCES:
            pytest.xfail(f"deliberate: {DELIBERATE_DIFFERENCES[step.name]}\n  {diff}")
        pytest.fail(f"{step.method}{_show_args(step)}\n  {diff}", pytrace=False)
    if step.name in DELIBERATE_DIFFERENCES:
        pytest.fail(f"{step.name} now matches the reference: remove it from {DELIBERATE.name}")


def _fails_internally(outcome: dict[str, Any]) -> bool:
    """Whether HMS failed on the call rather than answering it: an internal or protocol error,
    a dropped connection, or a MetaException carrying a Java exception's text."""
    error, message = outcome.get("error"), str(outcome.get("message", ""))
    return error in ("TApplicationException", "transport") or (
        error == "MetaException" and message.startswith("java.")
    )


def _show_args(step: Step) -> str:
    text = repr(step.args)
    return text if len(text) < 300 else text[:300] + "...)"
