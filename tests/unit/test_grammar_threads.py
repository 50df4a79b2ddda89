"""The filter grammar parsed by many threads at once, first use included: pyparsing works out
how many arguments a parse action takes on its first calls, without a lock, and a race there
made filters fail with "missing 1 required positional argument" under load. Each try runs in a
fresh interpreter, as the race is on first use."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

RACE = """
import sys, threading
sys.path.insert(0, {root!r})
from metastore_server.planner.grammar import parse_filter
barrier = threading.Barrier(8)
failures = []
def work():
    barrier.wait()
    try:
        for _ in range(3):
            parse_filter("ds > '2024' and hr between 1 and 5 or region in ('a', 'b') and (x = 1)")
    except Exception as exc:
        failures.append(repr(exc))
threads = [threading.Thread(target=work) for _ in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(len(failures), failures[:1])
"""


def test_first_parses_in_many_threads_at_once_all_succeed() -> None:
    root = str(Path(__file__).resolve().parents[2])
    for _ in range(8):
        done = subprocess.run([sys.executable, "-c", RACE.format(root=root)],
                              capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
        assert done.stdout.startswith("0 "), done.stdout
