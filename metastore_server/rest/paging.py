"""Paging of the catalog's lists (the spec's ``pageToken``, ``pageSize`` and
``next-page-token``): a list is in name order, and a page token is the last name a page gave,
encoded (opaque to clients, and checked when it comes back: a token that is not one is a
400). A request with neither parameter gets the whole list (``next-page-token`` null), as the
spec asks; one with either gets at most ``pageSize`` names (at most ``MAX_PAGE_SIZE``)."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from metastore_server.rest.errors import bad_request

#: The most names one page holds (a larger ``pageSize`` is taken as this bound).
MAX_PAGE_SIZE = 1000
#: A page's size when paging is asked without a ``pageSize``.
DEFAULT_PAGE_SIZE = 100
#: The longest page token taken (a name is at most a few hundred characters).
MAX_TOKEN_CHARS = 2048
_VERSION = 1


@dataclass(frozen=True)
class Page:
    """What a request asks of a list: the names after ``after`` (None: from the start), at
    most ``size`` of them (None: all, no paging)."""

    after: str | None = None
    size: int | None = None


#: The whole list (no paging asked).
WHOLE = Page()


def requested(query: Mapping[str, str]) -> Page:
    """The page ``query`` asks for; 400 for a token this server did not make or a size that
    is not a positive whole number."""
    token, size_text = query.get("pageToken"), query.get("pageSize")
    if token is None and size_text is None:
        return Page()
    size = DEFAULT_PAGE_SIZE
    if size_text is not None:
        if not size_text.isascii() or not size_text.isdigit() or int(size_text[:8]) < 1:
            raise bad_request(f"pageSize must be a whole number of at least 1, not "
                              f"{size_text[:40]!r}")  # fmt: skip
        size = min(int(size_text[:8]), MAX_PAGE_SIZE)
    return Page(after=_decode(token) if token else None, size=size)


def token_after(name: str) -> str:
    """The page token of the names after ``name``."""
    text = json.dumps({"v": _VERSION, "after": name}, separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _decode(token: str) -> str:
    """The name a page token holds; 400 unless it is one this server makes."""
    refused = bad_request("Invalid pageToken: pass the next-page-token of the previous page")
    if len(token) > MAX_TOKEN_CHARS or not token.isascii():
        raise refused
    try:
        document = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError, RecursionError):
        raise refused from None
    if (not isinstance(document, dict) or document.get("v") != _VERSION
            or not isinstance(document.get("after"), str)):  # fmt: skip
        raise refused
    return str(document["after"])


def of_names(names: Sequence[str], page: Page) -> tuple[list[str], str | None]:
    """The page of a sorted list of names, and the next page's token (None: the last)."""
    return collect(names, page, list)


def collect(
    names: Sequence[str], page: Page, keep: Callable[[Sequence[str]], Sequence[str]],
    chunk: int = 500,
) -> tuple[list[str], str | None]:
    """The page of those of the sorted ``names`` that ``keep`` (given a chunk, answering the
    names it keeps, in order) keeps, asking it a chunk at a time, only as far as the page
    needs; and the next page's token (None: no more)."""
    ordered = sorted(names)
    start = 0
    if page.after is not None:
        start = next((i for i, name in enumerate(ordered) if name > page.after), len(ordered))
    found: list[str] = []
    for begin in range(start, len(ordered), chunk):
        found += keep(ordered[begin : begin + chunk])
        if page.size is not None and len(found) > page.size:
            break
    if page.size is None or len(found) <= page.size:
        return found, None
    kept = found[: page.size]
    return kept, token_after(kept[-1])
