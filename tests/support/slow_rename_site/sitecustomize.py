"""Test fault: in a server process started with this folder on PYTHONPATH, a partition rename,
once it has checked that its new partition is absent, creates the file named by
``METASTORE_TEST_RENAME_CHECKED`` and pauses half a second before writing: a test waiting for
that file knows its own call to another process lands between the rename's check and write."""

from __future__ import annotations

import os
import time
from pathlib import Path

from metastore_server.catalog.partitions.altering import Altering

PAUSE_S = 0.5
_original = Altering._altered


def _slow_altered(self: Altering, *args: object, **kwargs: object) -> object:
    marker = os.environ.get("METASTORE_TEST_RENAME_CHECKED")
    if marker:
        Path(marker).touch()
        time.sleep(PAUSE_S)
    return _original(self, *args, **kwargs)


Altering._altered = _slow_altered  # type: ignore[method-assign]
