"""Puts the repository and ``tests/`` on ``sys.path``, so that a benchmark run as a script
imports ``metastore_server`` and ``support``: import it before them."""

from __future__ import annotations

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
for _path in (REPO_ROOT, REPO_ROOT / "tests"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))
