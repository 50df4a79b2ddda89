"""Answers of the names listings kept while the store is unchanged.

Engines list the same names again and again: every schema browser and query planner starts
with ``get_all_databases``, ``get_all_tables`` or ``get_table_meta``, every SHOW PARTITIONS
with ``get_partition_names``. An answer is kept with the store's change token read before it
was made (``StoragePort.change_token``: any commit, by any process on the store, changes it),
and a later call with the same arguments under the same token gets it again, its bytes already
made: a kept list of names is held as ``EncodedNames``, so the server writes the whole reply as
one block. A call inside a write transaction, or on a store without a token (HBase), is never
kept or answered from here. Memory is bounded (least recently used answers go first); the
handler's authorization check runs before, so nothing is answered that the caller may not ask.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from metastore_server import audit
from metastore_server.catalog import BoundedCache, EncodedNames, EncodedStructs

#: Bytes of kept answers (about) before the least recently used go.
DEFAULT_MAX_BYTES = 32 * 1024 * 1024
#: An answer larger than this is not kept (a huge listing would push out every other).
_LARGEST = 8 * 1024 * 1024
#: Bytes an entry costs besides its names (key, objects).
_OVERHEAD = 256

Answer = EncodedNames | EncodedStructs


class ListingReplies:
    """Answers by (method, arguments), each valid for one change token; thread-safe, LRU,
    bounded in bytes."""

    def __init__(self, token: Callable[[], int | None], max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self._token = token
        self._kept: BoundedCache[tuple[int, Answer]] = BoundedCache(max_bytes)

    @property
    def held(self) -> int:
        """Bytes of the answers kept (about)."""
        return self._kept.held

    def answer(self, method: str, arguments: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        """The kept answer of ``method(*arguments)`` if the store is unchanged since it was
        made, else ``make()`` (kept when it is a list of names or encoded structs)."""
        token = self._token()
        key = _key(method, arguments)
        if token is None or key is None:
            return make()
        entry = self._kept.get(key)
        if entry is not None and entry[0] == token:
            audit.note(reply_cache="hit")
            return entry[1]
        made = make()
        kept = _encoded(made)
        if kept is None:
            return made
        size = _size(kept)
        if size <= _LARGEST:
            self._kept.put(key, (token, kept), size)
        return kept


def _key(method: str, arguments: tuple[Any, ...]) -> Hashable | None:
    """The entry's key: the method and its arguments (lists as tuples); None when an argument
    is of no kind a key can hold."""
    key: list[Any] = [method]
    for value in arguments:
        if isinstance(value, list):
            value = tuple(value)
        if not isinstance(value, str | int | tuple | None):
            return None
        key.append(value)
    return tuple(key)


def kept(replies: ListingReplies, method: str, call: Callable[..., Any]) -> Callable[..., Any]:
    """``call`` (the handler's method ``method``) answered through ``replies``."""

    def answered(*arguments: Any) -> Any:
        return replies.answer(method, arguments, lambda: call(*arguments))

    return answered


def _encoded(answer: Any) -> Answer | None:
    """``answer`` as it is kept: a list of names as ``EncodedNames`` (its body made now)."""
    if isinstance(answer, EncodedStructs) or (
        isinstance(answer, EncodedNames) and answer.replayable
    ):
        return answer
    if isinstance(answer, list) and all(type(name) is str for name in answer):
        return EncodedNames([name.encode("utf-8") for name in answer])
    return None


def _size(answer: Answer) -> int:
    items = answer.names if isinstance(answer, EncodedNames) else answer.blobs
    return _OVERHEAD + sum(map(len, items)) * 2 + 64 * len(items)
