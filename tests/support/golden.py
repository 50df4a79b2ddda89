"""What the side-by-side suites share: a scenario's outcomes on the reference Hive Metastore,
live where it can run and recorded in a golden file otherwise, and on our server.

A suite makes one :class:`Golden` and three module fixtures of it: ``live`` (the reference's
outcomes, or None where it cannot run; recorded when ``COMPAT_UPDATE_GOLDEN`` is set),
``reference`` (live, else recorded, else the test is skipped) and ``ours``; and a test that the
recorded outcomes are still what the reference answers (:meth:`Golden.check_current`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from .net import MetastoreEndpoint
from .our_server import OurServer
from .reference_hms import ReferenceHms, reference_hms_unavailable_reason

#: Runs a scenario against a server (its endpoint, and a scratch directory of the run's own).
Runner = Callable[[MetastoreEndpoint, Path], dict[str, Any]]


class Golden:
    """The golden file of one scenario: ``path``, what it holds (``about``) under ``key``."""

    def __init__(self, path: Path, about: str, key: str = "outcomes") -> None:
        self.path = path
        self.about = about
        self.key = key

    def recorded(self) -> dict[str, Any] | None:
        """The recorded outcomes; None when there is no golden file."""
        if not self.path.exists():
            return None
        return json.loads(self.path.read_text())[self.key]

    def live(
        self, tmp_path_factory: pytest.TempPathFactory, name: str, run: Runner
    ) -> dict[str, Any] | None:
        """The outcomes of a fresh reference metastore (None where it cannot run here),
        written to the golden file when ``COMPAT_UPDATE_GOLDEN`` is set."""
        if reference_hms_unavailable_reason() is not None:
            return None
        work = tmp_path_factory.mktemp(f"{name}-reference")
        with ReferenceHms(work) as endpoint:
            outcomes = run(endpoint, work)
        if os.environ.get("COMPAT_UPDATE_GOLDEN"):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            doc = {"about": self.about, self.key: outcomes}
            self.path.write_text(json.dumps(doc, indent=1) + "\n")
        return outcomes

    def reference(self, live: dict[str, Any] | None) -> dict[str, Any]:
        """Live outcomes, else the recorded ones, else skip the test."""
        if live is not None:
            return live
        recorded = self.recorded()
        if recorded is None:
            pytest.skip(f"no golden file and {reference_hms_unavailable_reason()}")
        return recorded

    @contextmanager
    def ours(
        self, tmp_path_factory: pytest.TempPathFactory, name: str, run: Runner
    ) -> Iterator[dict[str, Any]]:
        """The outcomes of a fresh instance of our server (kept running until the end)."""
        work = tmp_path_factory.mktemp(f"{name}-ours")
        with OurServer(work / "server") as endpoint:
            yield run(endpoint, work)

    def check_current(
        self,
        live: dict[str, Any] | None,
        changed: Callable[[dict[str, Any], dict[str, Any]], list[str]] | None = None,
    ) -> None:
        """Fail when the recorded outcomes are no longer what the reference answers (skip
        where it cannot run); ``changed`` names the steps that differ (default: any)."""
        if live is None:
            pytest.skip(str(reference_hms_unavailable_reason()))
        recorded = self.recorded()
        assert recorded is not None, f"missing {self.path}; record it with COMPAT_UPDATE_GOLDEN=1"
        differing = changed(recorded, live) if changed else (
            [] if recorded == live else sorted(k for k in set(recorded) | set(live)
                                               if recorded.get(k) != live.get(k)))  # fmt: skip
        assert not differing, (
            f"re-record {self.path.name} (COMPAT_UPDATE_GOLDEN=1); changed: {differing}"
        )


def listed(path: Path) -> dict[str, str]:
    """Step name -> reason of a list file (``name -- reason`` lines, ``#`` comments)."""
    entries = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, reason = line.partition(" -- ")
            entries[name.strip()] = reason.strip()
    return entries
