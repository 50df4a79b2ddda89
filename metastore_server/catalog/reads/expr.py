"""What ``get_partitions_by_expr`` can read in its expression bytes.

Hive's own client sends a Kryo-serialized expression that only Hive's Java code can evaluate;
other clients (and Hive 4's MSCK) send text. Two text forms are understood exactly:

* the MSCK form ``(k1='v1' AND k2='v2') OR (...)``: keys and values path-escaped as in partition
  names, every partition key given: this is a list of partition names;
* Hive's display form of a partition predicate, ``((ds = '2024-01-01') and (hr > 3))``, which is
  in the filter dialect (LIKE there is SQL's LIKE, as Hive evaluates it).

Anything else is not understood here; the caller then answers a superset and says so
(``hasUnknownPartitions``), which HMS allows and Hive handles by filtering itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_MSCK_PAIR = re.compile(r"([^=()' ]+)='([^']*)'")


def expression_text(expr: bytes | str | None) -> str | None:
    """The expression as text, or None when it is not UTF-8 text (e.g. Kryo bytes)."""
    if expr is None:
        return ""
    if isinstance(expr, str):
        return expr
    try:
        text = expr.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if any(ord(ch) < 0x20 and ch not in "\t\n\r" for ch in text):
        return None
    return text


def msck_partition_names(text: str, key_names: Sequence[str]) -> list[str] | None:
    """The partition names an MSCK-form expression lists, or None if ``text`` is not one.

    Each group must give every partition key once (in any order); the names come out with the
    keys in table order, values still escaped as in partition names.
    """
    if not text.startswith("(") or not key_names:
        return None
    found = []
    for group in text.split(" OR "):
        if not (group.startswith("(") and group.endswith(")")):
            return None
        spec: dict[str, str] = {}
        for pair in group[1:-1].split(" AND "):
            match = _MSCK_PAIR.fullmatch(pair)
            if match is None or match[1].lower() in spec:
                return None
            spec[match[1].lower()] = match[2]
        if sorted(spec) != sorted(key_names):
            return None
        found.append("/".join(f"{key}={spec[key]}" for key in key_names))
    return found
