"""Lens's chunked list encoding of long comma lists in table parameters.

Hive keeps a table parameter value in a column of 4000 characters, so Lens splits a long list
over several parameters: ``<key>.size`` = N and ``<key>0`` ... ``<key>{N-1}`` (the index appended
directly, no dot). The items are joined by ``,``; the comma after an item stays in that item's
chunk, so reading is the plain concatenation of the chunks in order. A chunk is closed before an
item would make it reach ``MAX_PARAM_LENGTH`` characters; an item longer than that gets a chunk
of its own. An empty list is just ``<key>.size`` = 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

MAX_PARAM_LENGTH = 3999


def encode_list(
    key: str, items: Iterable[str], *, max_length: int = MAX_PARAM_LENGTH
) -> dict[str, str]:
    """The parameters that store ``items`` under ``key``.

    Unlike Lens, no empty first chunk is written when the first item alone is too long (Lens
    reads both the same way).
    """
    items = list(items)
    chunks: list[str] = []
    parts: list[str] = []
    length = 0
    for position, item in enumerate(items):
        if parts and length + len(item) >= max_length:
            chunks.append("".join(parts))
            parts, length = [], 0
        separator = "," if position < len(items) - 1 else ""
        parts.append(item + separator)
        length += len(item) + len(separator)
    if parts:
        chunks.append("".join(parts))
    props = {f"{key}.size": str(len(chunks))}
    props.update((f"{key}{index}", chunk) for index, chunk in enumerate(chunks))
    return props


def decode_list(props: Mapping[str, str], key: str) -> list[str]:
    """The items stored under ``key``: the chunks concatenated and split on ``,``, each item
    stripped of surrounding spaces; trailing empty items are dropped (as Java's split does).

    A plain ``<key>`` value is read when ``<key>.size`` is missing; no value at all is an empty
    list. ValueError if the size is not a non-negative integer or a chunk is missing.
    """
    size_text = props.get(f"{key}.size")
    if size_text is None:
        joined = props.get(key, "")
    else:
        if not (size_text.isascii() and size_text.isdigit()):
            raise ValueError(f"{key}.size is not a count: {size_text!r}")
        chunks = []
        for index in range(int(size_text)):
            chunk = props.get(f"{key}{index}")
            if chunk is None:
                raise ValueError(f"{key}.size is {size_text} but {key}{index} is missing")
            chunks.append(chunk)
        joined = "".join(chunks)
    if not joined:
        return []
    items = [item.strip() for item in joined.split(",")]
    while items and not items[-1]:
        items.pop()
    return items
