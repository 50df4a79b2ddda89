"""How HMS 4 trims the partitions a read request answers: parameter keys kept or left out by SQL
``LIKE`` patterns (``includeParamKeyPattern``/``excludeParamKeyPattern``), and the column lists
left out (``skipColumnSchemaForPartition``: HMS's direct SQL answers each ``sd.cols`` empty).
Hive 4's client sets the three fields on every partition read request
(``MetaStoreUtils.createThriftPartitionsReq``: the patterns empty and the flag false unless
configured); a ``GetProjectionsSpec`` carries the patterns too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from metastore_server.thrift_api import hms


def like_regex(pattern: str) -> re.Pattern[str]:
    """A parameter-key pattern (SQL ``LIKE``: ``%`` any text, ``_`` one character) as a
    regular expression, matched against the whole key."""
    parts = [".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern]
    return re.compile("".join(parts), re.DOTALL)


def filter_parameter_keys(
    parts: list[hms.Partition], include: str | None, exclude: str | None
) -> list[hms.Partition]:
    """Keep in each partition's parameters the keys that match ``include`` and do not match
    ``exclude`` (HMS's ``PARAM_KEY LIKE ? AND PARAM_KEY NOT LIKE ?``); an unset or empty
    pattern filters nothing. Changes ``parts`` in place and answers them."""
    keep = like_regex(include) if include else None
    drop = like_regex(exclude) if exclude else None
    if keep is None and drop is None:
        return parts
    for part in parts:
        part.parameters = {
            key: value
            for key, value in (part.parameters or {}).items()
            if (keep is None or keep.fullmatch(key)) and (drop is None or not drop.fullmatch(key))
        }
    return parts


def trims(req: object) -> bool:
    """Whether a read request asks for its partitions trimmed (see the module)."""
    return bool(
        getattr(req, "skipColumnSchemaForPartition", None)
        or getattr(req, "includeParamKeyPattern", None)
        or getattr(req, "excludeParamKeyPattern", None)
    )


def trimmed(parts: list[hms.Partition], req: object) -> list[hms.Partition]:
    """``parts`` trimmed as a read request asks (changed in place; see the module)."""
    filter_parameter_keys(
        parts,
        getattr(req, "includeParamKeyPattern", None),
        getattr(req, "excludeParamKeyPattern", None),
    )
    if getattr(req, "skipColumnSchemaForPartition", None):
        without_columns(parts)
    return parts


def without_columns(parts: Iterable[hms.Partition]) -> None:
    """Leave the column list out of each partition's storage descriptor (an empty list, as
    HMS's direct SQL answers with ``skipColumnSchemaForPartition``)."""
    for part in parts:
        if part.sd is not None:
            part.sd.cols = []
