"""``IntentRows.undo_all``: entries undone newest first in batches of entries touching
distinct rows, a note's undoing run in its turn, ``between`` after each batch."""

from __future__ import annotations

from collections.abc import Sequence

from metastore_server.storage.intent_entries import RowImage
from metastore_server.storage.intent_rows import IntentRows


def _entry(*keys: bytes) -> list[RowImage]:
    return [RowImage("t", key, False, {b"c:x": b"old"}, {b"c:x": None}) for key in keys]


def test_batches_break_where_a_row_comes_again_and_at_a_note() -> None:
    seen: list[object] = []
    rows = IntentRows(reads=None, write=None)  # type: ignore[arg-type]

    def undo(images: Sequence[RowImage]) -> None:
        seen.append(sorted(row.key for row in images))

    rows.undo = undo  # type: ignore[method-assign]
    steps = [_entry(b"a"), _entry(b"b", b"c"), _entry(b"a"), lambda: seen.append("note"),
             _entry(b"d"), _entry(b"e")]  # fmt: skip
    rows.undo_all(steps, lambda: seen.append("|"))
    assert seen == [[b"a", b"b", b"c"], "|", [b"a"], "|", "note", [b"d", b"e"], "|"]
