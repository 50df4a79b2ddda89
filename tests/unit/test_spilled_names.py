"""Names sorted through runs on disk (``catalog/reads/spilled_names.py``) come out exactly as a
sort in memory, whole or limited, and their reply body is the same bytes."""

from __future__ import annotations

import random

import pytest
from metastore_server.storage.row_scan import length_prefixed

from metastore_server.catalog.reads.spilled_names import MergedNames, NameSorter


def _names(count: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    alphabet = "ab/=%9é-"
    return list(
        {("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) + str(i)).encode()
         for i in range(count)}
    )  # fmt: skip


@pytest.mark.parametrize("run_names", [1, 3, 64, 1000, 10_000])
@pytest.mark.parametrize("limit", [None, 0, 1, 250, 5000])
def test_runs_merge_to_the_sorted_names(run_names: int, limit: int | None) -> None:
    names = _names(2000, run_names)
    sorter = NameSorter(run_names)
    for start in range(0, len(names), 300):  # in batches, as a scan gives them
        sorter.add(names[start : start + 300])
    answer = sorter.sorted(limit)
    wanted = sorted(names)[:limit] if limit is not None else sorted(names)
    assert len(answer) == len(wanted)
    spilled = run_names < len(names)
    assert isinstance(answer, MergedNames) == (spilled and (limit is None or limit >= 2000))
    assert answer.replayable == (not isinstance(answer, MergedNames))
    body = b"".join(answer.body_chunks())
    assert body == length_prefixed(wanted)
    assert answer.body_size() == len(body)


def test_a_merged_answer_decodes_and_deletes_its_runs() -> None:
    names = _names(500, 7)
    sorter = NameSorter(50)
    for start in range(0, len(names), 50):
        sorter.add(names[start : start + 50])
    answer = sorter.sorted(None)
    assert isinstance(answer, MergedNames) and len(answer.runs.files) == 10
    assert answer.decode() == [name.decode() for name in sorted(names)]
    assert all(run.closed for run in answer.runs.files)
