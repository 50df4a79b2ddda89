"""A directory moved for a metadata change (a table or partition renamed, partitions
exchanged): renamed, or copied where the file system cannot rename, before the change; the
copy's source deleted after it, or the move undone when the change failed. See
``docs/managed-data.md``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable

import structlog

from metastore_server import audit
from metastore_server.catalog.data import files as data_files
from metastore_server.catalog.data.deletions import report_failure
from metastore_server.catalog.data.files import reason
from metastore_server.catalog.data.filesystems import Place
from metastore_server.thrift_api import hms

log = structlog.get_logger(__name__)


class Move:
    """A directory moved for a metadata change: ``prepare`` before the change, then
    ``commit`` after it, or ``rollback`` when it failed."""

    def __init__(self, source: Place, target: Place, what: str) -> None:
        self.source, self.target, self.what = source, target, what
        self._moved = False
        self._renamed = False

    def prepare(self) -> None:
        """Rename the data, or copy it where the file system cannot rename; raises (having
        removed a partial copy) when that fails."""
        try:
            self._renamed = data_files.move_tree(self.source, self.target)
        except Exception:
            self._discard_copy()
            raise
        self._moved = True

    def commit(self) -> None:
        """Finish after the metadata change: a copied source is deleted (a failure is logged
        and audited; the data is whole at the new place)."""
        if not self._moved or self._renamed:
            return
        try:
            data_files.remove_tree(self.source)
            error = "still present after delete" if data_files.exists(self.source) else None
        except Exception as exc:  # noqa: BLE001 - reported, never raised after a commit
            error = reason(exc)
        if error is not None:
            report_failure(self.source, f"old location of {self.what} after a move", error)

    def rollback(self) -> None:
        """Undo ``prepare`` after the metadata change failed."""
        if not self._moved:
            return
        self._moved = False
        if not self._renamed:
            self._discard_copy()
            return
        try:
            os.rename(self.target.path, self.source.path)
        except Exception as exc:  # noqa: BLE001
            report_failure(self.target, f"moving {self.what} back", reason(exc))

    def note(self) -> bytes:
        """What ``undo_noted`` needs to undo this move after its process died."""
        return json.dumps({"source": self.source.uri, "target": self.target.uri,
                           "what": self.what}).encode()  # fmt: skip

    def _discard_copy(self) -> None:
        try:
            if data_files.exists(self.target):
                data_files.remove_tree(self.target)
        except Exception as exc:  # noqa: BLE001
            report_failure(self.target, f"partial copy of {self.what}", reason(exc))



def noted(payload: bytes) -> tuple[str, str, str]:
    """(source, target, what) of a move's ``note``."""
    found = json.loads(payload)
    return found["source"], found["target"], found["what"]


def undo_after_crash(source: Place, target: Place, what: str) -> str:
    """Undo a move whose process died before its change committed; what was done. Data at
    the target and none at the source: moved back; at both: the target is a copy, removed."""
    at_target, at_source = data_files.exists(target), data_files.exists(source)
    if not at_target:
        return "nothing to undo"
    if at_source:
        data_files.remove_tree(target)
        return "copy removed"
    data_files.move_tree(target, source)
    if data_files.exists(target):
        data_files.remove_tree(target)  # copied back (another device, an object store)
    return "moved back"


def undo_noted(find_place: Callable[[str], Place | None], payload: bytes) -> None:
    """Undo a move of a process that died before its change committed (``Move.note``), for
    whoever rolls that change back; ``find_place`` resolves a location."""
    source, target, what = noted(payload)
    src, dst = find_place(source), find_place(target)
    if src is None or dst is None:
        raise ValueError(f"no file system serves {source} or {target}")
    done = undo_after_crash(src, dst, what)
    log.warning("data_move_undone", source=source, target=target, what=what, done=done,
                reason="its change was rolled back after its server process died")  # fmt: skip
    audit.append("data_move_undone", f"{target} -> {source}: {done}")


def move_refused(subject: str, detail: str) -> hms.InvalidOperationException:
    """HMS's refusal of a rename of ``subject`` whose data cannot be moved."""
    return hms.InvalidOperationException(
        message=f"Alter Table operation for {subject} failed to move data due to: '{detail}' "
        "See hive log file for details."
    )
