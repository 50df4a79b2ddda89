"""Freshness of load answers (the spec's ``ETag`` and ``If-None-Match``): a table's (view's)
ETag names the version of its metadata (the metadata file's location) and the form it is
answered in (``snapshots=all`` or ``refs``: the spec asks distinct tags for them), so that a
client holding the current version gets a 304 with no body."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

#: The forms of a load answer, as ``snapshots`` names them (create and commit answer ``all``).
ALL_SNAPSHOTS = "all"


def etag(kind: str, metadata_location: str | None, form: str = ALL_SNAPSHOTS) -> str | None:
    """The strong entity tag of an answer holding the metadata at ``metadata_location``
    (None: a staged create, no version yet): a quoted digest of what it is, its metadata
    file and its form, never a path the client did not have."""
    if not metadata_location:
        return None
    digest = hashlib.sha256(f"{kind}\x00{form}\x00{metadata_location}".encode()).hexdigest()
    return f'"{digest[:40]}"'


def matches(if_none_match: str | None, tag: str | None) -> bool:
    """Whether ``If-None-Match`` names ``tag`` (RFC 9110's weak comparison: a ``W/`` a proxy
    added is ignored; ``*`` matches any current version)."""
    if not if_none_match or tag is None or len(if_none_match) > 8192:
        return False
    for candidate in if_none_match.split(","):
        candidate = candidate.strip()
        if candidate == "*" or candidate.removeprefix("W/") == tag:
            return True
    return False


def may_answer_not_modified(config: Mapping[str, Any]) -> bool:
    """Whether a 304 may stand for an answer whose ``config`` is this: not once it would carry
    vended credentials (``storage-credentials``, none vended yet): the credentials the client
    holds may have expired though the metadata has not changed. The hook credential vending
    must keep true."""
    return not any(key.startswith(("s3.access-key-id", "s3.session-token", "storage-credentials"))
                   for key in config)  # fmt: skip
